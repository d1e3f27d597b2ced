#pragma once

#include "ui/dialogs/comparedialog.h"
#include "ui/enginesnapshot.h"
#include "ui/reconcilerunner.h"
#include "ui/widgets/reconciledialog.h"

#include "core/engine/reconcile/reconciler.h"

#include <QMessageBox>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

class QLabel;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSplitter;
class QTableView;
class QTreeView;

namespace driftless::ui {

class ReconcileModel;
class RowDiffModel;

/// Reconciliation: every stored report's tables with their drift, newest first, and below the
/// list the differing rows of the selected table (key, class, column, source value beside the
/// target value).
///
/// - The list is read from the workspace file on a pool thread (ReconcileRunner) when the
///   workspace changes, when the page is shown, every kRefreshMs while it is, and after each job.
/// - "Reconcile now…" asks for a pipeline (and a table) and compares them on a worker, with the
///   reconciler's phases as progress and a Cancel button; the new report is selected when done.
/// - "Compare Tables…" compares two tables of any two endpoints, no pipeline needed
///   (CompareDialog); its report is listed with the others, exportable alike, and repaired by a
///   script to review (`driftless-cli repair ID --sql FILE`), since no pipeline's merge writes it.
/// - "Repair row", "Repair selected" and "Repair table" first ask the engine for the repair's plan
///   and show it (the statements and their row counts, as `repair --dry-run` prints them), then,
///   after OK, run exactly that repair through the guarded merge on a worker, record it in the
///   report, compare the table again and show the outcome (written, deleted, verified, still
///   different).
/// - "Export CSV…" and "Export HTML…" write the shown report as `driftless-cli report ID --csv`
///   and `--html` do.
///
/// Nothing here reads a database or the file on the UI thread.
class ReconcilePage final : public QWidget {
    Q_OBJECT
public:
    explicit ReconcilePage(ReconcileRunner *runner, QWidget *parent = nullptr);

    static constexpr int kRefreshMs = 15'000;

    ReconcileModel *model() const { return m_model; }
    RowDiffModel *diffModel() const { return m_diffModel; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    QTableView *view() const { return m_view; }
    QTreeView *diffView() const { return m_diffView; }
    QPushButton *reconcileButton() const { return m_reconcile; }
    QPushButton *compareButton() const { return m_compareTables; }
    QPushButton *cancelButton() const { return m_cancel; }
    QPushButton *repairRowButton() const { return m_repairRow; }
    QPushButton *repairSelectedButton() const { return m_repairSelected; }
    QPushButton *repairTableButton() const { return m_repairTable; }
    QPushButton *exportCsvButton() const { return m_exportCsv; }
    QPushButton *exportHtmlButton() const { return m_exportHtml; }
    /// Where Export CSV… and Export HTML… write without asking (tests); empty: a file dialog asks.
    void setExportPath(const QString &path) { m_exportPath = path; }
    /// Writes the shown report to `path` as CSV or HTML (core::reportCsv, core::reportHtml, as
    /// `driftless-cli report ID --csv|--html` does); false, with the reason shown, when it cannot.
    bool exportReport(const QString &path, bool html);
    QProgressBar *progressBar() const { return m_progress; }
    QLabel *progressLabel() const { return m_progressLabel; }
    QLabel *resultLabel() const { return m_result; }
    QLabel *detailsLabel() const { return m_details; }
    /// The repair confirmation while it is open, else null.
    QMessageBox *confirmation() const { return m_confirmation; }
    /// The "Reconcile now" dialog while it is open, else null.
    ReconcileDialog *reconcileDialog() const { return m_dialog; }
    /// The "Compare Tables" dialog while it is open, else null.
    CompareDialog *compareDialog() const { return m_compareDialog; }

    /// The model row of the selected list row, or -1.
    int selectedRow() const;
    void selectTable(std::int64_t reportId, const QString &table);
    /// The report whose rows the grid shows (null while it is read).
    std::shared_ptr<const core::ReconcileReport> shownReport() const { return m_report; }
    /// The keys of the rows selected in the grid, in grid order.
    std::vector<core::CanonicalKey> selectedKeys() const;

public slots:
    void setSnapshot(const driftless::ui::EngineSnapshot &snapshot);
    /// Reads the list again (F5).
    void reload();
    /// Opens the dialog that starts a comparison (the button's action).
    void requestReconcile();
    /// Opens the dialog that compares two tables outside any pipeline.
    void requestCompare();
    void requestRepairRow();
    void requestRepairSelected();
    void requestRepairTable();

signals:
    /// An outcome for the status bar.
    void statusMessage(const QString &message);

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    enum class RepairScope { Row, Selected, Table };
    void showSummaries(const std::vector<core::ReconcileSummary> &rows, const QString &error);
    void showReport(std::int64_t id, std::shared_ptr<const core::ReconcileReport> report, const QString &error);
    void selectionChanged();
    void showSelectedTable();
    void updateButtons();
    void updateSummary();
    void fitColumns();
    /// Asks the engine for the repair's plan; the confirmation opens with it (openConfirmation).
    void confirmRepair(RepairScope scope, std::vector<core::CanonicalKey> keys);
    void onPlanReady(std::uint64_t request, std::shared_ptr<const core::RepairPlan> plan, const QString &error);
    void openConfirmation(RepairScope scope, std::vector<core::CanonicalKey> keys, const core::RepairPlan &plan);
    void requestExport(bool html);
    void onJobStarted(std::uint64_t job, bool repair, const QString &table);
    void onProgress(std::uint64_t job, const QString &table, const QString &phase, int done, int total);
    void onReconcileFinished(std::uint64_t job, std::int64_t reportId, const QString &error);
    void onRepairFinished(std::uint64_t job, std::int64_t reportId, const QString &table,
                          const ReconcileRunner::RepairResult &result, const QString &error);
    void showResult(const QString &level, const QString &text);
    void endJob();
    /// The selected table of the shown report, or null.
    const core::TableReconcile *shownTable() const;

    ReconcileRunner *m_runner;
    ReconcileModel *m_model;
    QSortFilterProxyModel *m_proxy;
    RowDiffModel *m_diffModel;
    QLabel *m_summary;
    QLabel *m_notice;
    QPushButton *m_reconcile;
    QPushButton *m_compareTables;
    QPushButton *m_cancel;
    QProgressBar *m_progress;
    QLabel *m_progressLabel;
    QSplitter *m_splitter;
    QTableView *m_view;
    QLabel *m_details;
    QLabel *m_note;
    QTreeView *m_diffView;
    QPushButton *m_repairRow;
    QPushButton *m_repairSelected;
    QPushButton *m_repairTable;
    QPushButton *m_exportCsv;
    QPushButton *m_exportHtml;
    QString m_exportPath;
    QLabel *m_resultIcon;
    QLabel *m_result;
    QPointer<QMessageBox> m_confirmation;
    QPointer<ReconcileDialog> m_dialog;
    QPointer<CompareDialog> m_compareDialog;
    QTimer m_timer;

    std::shared_ptr<const core::ReconcileReport> m_report;
    /// The list row shown in the grid: report id and table.
    std::optional<std::pair<std::int64_t, QString>> m_shown;
    /// The report id and table the grid holds.
    std::pair<std::int64_t, QString> m_gridOf;
    /// Selected once the list holds it: a report id and a table (empty: its first drifting table).
    std::optional<std::pair<std::int64_t, QString>> m_pendingSelection;
    std::uint64_t m_job = 0;
    /// The plan asked for before a confirmation (0: none), and what it is for.
    std::uint64_t m_planRequest = 0;
    RepairScope m_planScope = RepairScope::Table;
    std::vector<core::CanonicalKey> m_planKeys;
    bool m_jobIsRepair = false;
    QString m_path;
    bool m_loaded = false;
    bool m_readFailed = false;
    std::int64_t m_lastEventId = 0;
};

} // namespace driftless::ui
