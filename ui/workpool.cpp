#include "ui/workpool.h"

#include <QThread>
#include <QThreadPool>

#include <algorithm>

namespace driftless::ui {

QThreadPool *workPool()
{
    // Destroyed at exit like the global pool, waiting for what still runs.
    static QThreadPool pool;
    static const bool made = [] {
        pool.setObjectName(QStringLiteral("driftless-work"));
        pool.setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        return true;
    }();
    (void)made;
    return &pool;
}

} // namespace driftless::ui
