#pragma once

#include "core/engine/status/statusreport.h"

#include <vector>

class QMessageBox;
class QWidget;

namespace driftless::ui {

/// The question asked before a table is paused or resumed, saying what will happen for its
/// strategy (for a CDC table's resume: the guarded re-copy). Object names: pauseConfirmation /
/// resumeConfirmation, its accept button confirmPause / confirmResume. Not yet shown; deletes
/// itself when closed.
QMessageBox *makePauseConfirmation(QWidget *parent, const core::TableReport &table, bool pause, bool engineRunning);
/// The same for several tables at once (a multiple selection, or a whole pipeline): each named,
/// what happens said per strategy. The same object names.
QMessageBox *makePauseConfirmation(QWidget *parent, const std::vector<core::TableReport> &tables, bool pause,
                                   bool engineRunning);
/// The same for every table of `pipeline` at once; `tables` are those the request changes (the
/// first few are named, then how many more). Object names as above; accept button "Pause
/// Pipeline" / "Resume Pipeline".
QMessageBox *makePipelinePauseConfirmation(QWidget *parent, const QString &pipeline,
                                           const std::vector<core::TableReport> &tables, bool pause,
                                           bool engineRunning);

} // namespace driftless::ui
