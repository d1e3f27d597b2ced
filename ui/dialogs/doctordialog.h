#pragma once

#include "core/engine/commands/doctor.h"

#include <QDialog>

#include <cstdint>
#include <vector>

class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTreeWidget;

namespace driftless::ui {

class EngineDoor;

/// The doctor in the app: the checks of `driftless-cli doctor` for one pipeline or one endpoint
/// (or the whole workspace), run through the engine's door where the engine runs, so never on
/// the UI thread. Each finding is listed with its severity, worst first; the selected one's fix
/// and exact SQL are shown below with Copy SQL. Check Again runs them anew. A finding whose fix is
/// a setting of the workspace (heartbeat: 1m on a pipeline) offers Apply Setting…, which asks the
/// window that opened the doctor to show the change and store it (settingRequested()).
///
/// Object names: doctorDialog, doctorFindings, doctorSummary, doctorFix, doctorSql, copySql,
/// checkAgain, showPassed, applySetting.
class DoctorDialog : public QDialog {
    Q_OBJECT
public:
    DoctorDialog(EngineDoor *door, core::DoctorScope scope, QWidget *parent = nullptr);

    /// Runs the checks (again); a reply to an earlier run is then dropped.
    void check();
    bool checking() const { return m_checking; }
    /// The findings of the last run, in the order the engine gave them.
    const std::vector<core::Finding> &findings() const { return m_findings; }
    /// The title's words for the scope: "pipeline orders", "endpoint app", "the workspace".
    QString scopeText() const;

    QTreeWidget *findingsView() const { return m_view; }
    QLabel *summaryLabel() const { return m_summary; }
    QPlainTextEdit *sqlView() const { return m_sql; }
    QPushButton *copySqlButton() const { return m_copy; }
    QPushButton *checkAgainButton() const { return m_again; }
    QCheckBox *showPassedBox() const { return m_showPassed; }
    /// Enabled when the selected finding's fix is a setting.
    QPushButton *applySettingButton() const { return m_apply; }
    /// The finding selected, or null.
    const core::Finding *selectedFinding() const;

signals:
    /// A run ended: its findings are in findings(), or it failed (summaryLabel() says why).
    void checked(bool ok);
    /// Apply Setting… was clicked for `finding` (it has a setting).
    void settingRequested(const core::Finding &finding);

protected:
    /// Remembers the size the DBA gave the window.
    void done(int result) override;

private:
    void showFindings();
    void showSelected();

    EngineDoor *m_door;
    core::DoctorScope m_scope;
    std::vector<core::Finding> m_findings;
    std::uint64_t m_run = 0;
    bool m_checking = false;
    QLabel *m_summary;
    QTreeWidget *m_view;
    QLabel *m_fix;
    QPlainTextEdit *m_sql;
    QPushButton *m_copy;
    QPushButton *m_again;
    QCheckBox *m_showPassed;
    QPushButton *m_apply;
};

} // namespace driftless::ui
