#include "ui/resources.h"

#include <QtGlobal>

#include <mutex>

// Q_INIT_RESOURCE declares the generated initialiser, which lives in the global namespace, so it
// must be expanded outside ours.
static void initDriftlessResources()
{
    Q_INIT_RESOURCE(driftless);
    Q_INIT_RESOURCE(docs);
}

namespace driftless::ui {

void initResources()
{
    static std::once_flag once;
    std::call_once(once, initDriftlessResources);
}

} // namespace driftless::ui
