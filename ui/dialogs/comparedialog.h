#pragma once

#include "core/model/workspace.h"

#include <QDialog>

#include <cstdint>

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace driftless::ui {

class ReconcileRunner;

/// Compare Tables: two tables of any two endpoints of the workspace, no pipeline needed, compared
/// as `driftless-cli compare` does (the same checksums, bisection and report as a
/// reconciliation). The DBA picks each side's endpoint and table (the table lists are read from
/// the endpoints through the engine's door as each is chosen; a name can always be typed), and
/// optionally the key columns, the columns and a WHERE condition.
///
/// - The comparison runs in the engine (ReconcileRunner::compare, a job of the engine's API), never
///   on the UI thread; Stop asks it to stop, and nothing is stored then.
/// - Done, the report is stored and listed on the Reconciliation page like any other, and the
///   dialog closes. A comparison that could not run (a table that does not exist, an endpoint out
///   of reach, a key that does not match) says why here, and the dialog stays open to correct it.
///
/// Thread affinity: UI thread. Takes a copy of the workspace's endpoints.
class CompareDialog final : public QDialog {
    Q_OBJECT
public:
    explicit CompareDialog(ReconcileRunner *runner, QWidget *parent = nullptr);

    QComboBox *leftEndpointCombo() const { return m_leftEndpoint; }
    QComboBox *leftTableCombo() const { return m_leftTable; }
    QComboBox *rightEndpointCombo() const { return m_rightEndpoint; }
    QComboBox *rightTableCombo() const { return m_rightTable; }
    QLineEdit *keyEdit() const { return m_key; }
    QLineEdit *columnsEdit() const { return m_columns; }
    QLineEdit *whereEdit() const { return m_where; }
    QPushButton *compareButton() const { return m_compare; }
    QPushButton *stopButton() const { return m_stop; }
    /// What went wrong, or where the comparison is.
    QLabel *statusLabel() const { return m_status; }

    /// Chooses both sides, as a user would in the combos and table fields.
    void choose(const QString &leftEndpoint, const QString &leftTable, const QString &rightEndpoint,
                const QString &rightTable);
    /// True while its comparison runs.
    bool running() const { return m_job != 0; }
    /// The report the last comparison stored, or 0.
    std::int64_t reportId() const { return m_reportId; }

public slots:
    /// Starts the comparison (the Compare button).
    void start();
    /// Closes the dialog; a comparison it runs is stopped (nothing is stored).
    void reject() override;

private:
    void readTables(QComboBox *endpoint, QComboBox *table, std::uint64_t &generation);
    void setRunning(bool running);
    void showProblem(const QString &text);
    void onProgress(std::uint64_t job, const QString &table, const QString &phase);
    void onFinished(std::uint64_t job, std::int64_t reportId, const QString &error);

    ReconcileRunner *m_runner;
    core::Workspace m_workspace;
    QComboBox *m_leftEndpoint;
    QComboBox *m_leftTable;
    QComboBox *m_rightEndpoint;
    QComboBox *m_rightTable;
    QLineEdit *m_key;
    QLineEdit *m_columns;
    QLineEdit *m_where;
    QLabel *m_about;
    QLabel *m_status;
    QProgressBar *m_progress;
    QPushButton *m_compare = nullptr;
    QPushButton *m_stop = nullptr;
    QPushButton *m_close = nullptr;
    std::uint64_t m_job = 0;
    std::int64_t m_reportId = 0;
    /// Table lists asked of each side's endpoint: a reply for an earlier choice is dropped.
    std::uint64_t m_leftRead = 0, m_rightRead = 0;
};

} // namespace driftless::ui
