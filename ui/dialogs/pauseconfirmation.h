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

} // namespace driftless::ui
