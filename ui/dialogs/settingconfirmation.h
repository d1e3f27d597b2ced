#pragma once

class QMessageBox;
class QWidget;

namespace driftless::ui {

struct SettingChange;

/// The question asked before a doctor finding's setting is stored: where, the key, its value
/// before and after, and the workspace file's lines that change. Object name
/// applySettingConfirmation, its accept button confirmApplySetting. Not yet shown; deletes itself
/// when closed.
QMessageBox *makeSettingConfirmation(QWidget *parent, const SettingChange &change);

} // namespace driftless::ui
