#pragma once

#include "core/engine/status/statusreport.h"
#include "core/model/workspace.h"

#include <vector>

class QMessageBox;
class QString;
class QWidget;

namespace driftless::ui {

/// What the sync does with a recovery request once it is left: what the question says of it.
enum class RecoverSync {
    Running, ///< the app's engine runs: it is restarted so the pipeline takes the request now
    Stopped, ///< nothing runs here: the next Start Sync takes it
    Agent,   ///< an agent's engine: it takes it when it next starts the pipeline
};

/// The question asked before a pipeline whose source changed is recovered (RecoverRunner),
/// saying what will happen by the kind of its source (docs/failover.md): on Postgres a new slot
/// and a comparison by diff, on MariaDB a reload; on both, rows the new server lacks are removed.
/// `tables` are the workspace's (the pipeline's CDC ones are named); `workspace` may be null.
/// Object names: recoverConfirmation, its accept button confirmRecover; Cancel is the default.
/// Not yet shown; deletes itself when closed.
QMessageBox *makeRecoverConfirmation(QWidget *parent, const QString &pipeline, const core::Workspace *workspace,
                                     const std::vector<core::TableReport> &tables, RecoverSync sync);

} // namespace driftless::ui
