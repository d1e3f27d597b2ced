#pragma once

#include "ui/enginesnapshot.h"
#include "ui/mailbox.h"

#include "core/engine/reconciler.h"
#include "core/engine/workspacestate.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <stop_token>
#include <vector>

namespace driftless::ui
{

/// Reconciliation for the desktop app: reads stored reports, compares a pipeline's tables
/// (core::reconcile + core::storeReport) and repairs differing keys (core::repairKeys or
/// core::repairReport, then core::recordRepair), always on a pool thread. Each worker opens
/// its own WorkspaceState and its own database connections, which live and die on that thread.
///
/// - setSnapshot() follows EngineBridge: the workspace (endpoints, pipelines) and the state
///   file come from its snapshots; another file starts a new generation, and every result of
///   the previous one is dropped.
/// - One reconcile or repair at a time (busy()); a repair compares the repaired table again
///   afterwards and stores that as a new report, so the list shows where the table stands.
/// - Reads of the list and of one report may run beside it; a list read asked for while one
///   runs runs once more when it ends.
///
/// Thread affinity: a UI-thread object; workers only post to it and never wait for it.
/// Failures arrive as the error strings of the signals, never as exceptions.
class ReconcileRunner final : public QObject
{
    Q_OBJECT
public:
    explicit ReconcileRunner(QObject *parent = nullptr);
    ~ReconcileRunner() override;

    /// Rows of the list at most (one per table of a report, newest first).
    static constexpr int kSummaryLimit = 200;

    QString statePath() const { return m_path; }
    std::shared_ptr<const core::Workspace> workspace() const { return m_workspace; }
    /// True while a reconcile or a repair runs.
    bool busy() const { return m_job != 0; }
    std::uint64_t currentJob() const { return m_job; }
    /// True when cancel() was asked of the running or last job.
    bool lastJobCancelled() const { return m_stop.stop_requested(); }

    struct RepairResult {
        std::vector<core::RepairOutcome> outcomes;
        /// The report of the comparison made after the repair; 0 when none was stored.
        std::int64_t checkReportId = 0;
        /// Why the comparison after the repair failed; empty otherwise.
        QString checkError;
    };

public slots:
    void setSnapshot(const driftless::ui::EngineSnapshot &snapshot);
    /// Reads the newest summaries again.
    void reloadSummaries();
    /// Reads one stored report; reportReady() brings it.
    void loadReport(std::int64_t id);
    /// Compares `tables` of `pipeline` (all when empty) and stores the report. Returns the job
    /// id, or 0 when nothing could start (no workspace, or busy).
    std::uint64_t reconcile(const QString &pipeline, const QStringList &tables = {});
    /// Repairs `keys` of one table of a stored report.
    std::uint64_t repairKeys(std::int64_t reportId, const QString &table, const std::vector<core::CanonicalKey> &keys);
    /// Repairs every differing row of one table of a stored report (found again when the
    /// report did not keep every key).
    std::uint64_t repairTable(std::int64_t reportId, const QString &table);
    /// Asks a running comparison to stop after the table it is on; a repair runs to its end
    /// (it is one transaction).
    void cancel();

signals:
    /// The state file or its workspace changed (pipelines to pick from).
    void workspaceChanged();
    void summariesReady(const std::vector<core::ReconcileSummary> &rows, const QString &error);
    /// `report` is null when it could not be read; `error` says why.
    void reportReady(std::int64_t id, std::shared_ptr<const core::ReconcileReport> report, const QString &error);
    /// A job started (`repair` false: a comparison); `table` is empty for all of a pipeline.
    void jobStarted(std::uint64_t job, bool repair, const QString &table);
    /// Where a job is: the table it works on, the reconciler's phase (checksum, bisect, fetch,
    /// settle, recheck, done, or repair), and how many tables it has done of how many.
    void progress(std::uint64_t job, const QString &table, const QString &phase, int done, int total);
    /// A comparison ended: `reportId` is the stored report (0 when none was stored, `error`
    /// says why; a cancelled comparison stores nothing).
    void reconcileFinished(std::uint64_t job, std::int64_t reportId, const QString &error);
    /// A repair ended; `error` is set when it could not run at all.
    void repairFinished(std::uint64_t job, std::int64_t reportId, const QString &table,
                        const driftless::ui::ReconcileRunner::RepairResult &result, const QString &error);

private:
    struct Request;
    std::uint64_t startJob(Request request);
    void startSummaryRead();
    void finishJob(std::uint64_t job);
    void onSummariesRead(std::uint64_t generation, std::vector<core::ReconcileSummary> rows,
                         const QString &error);

    std::shared_ptr<Mailbox<ReconcileRunner>> m_mailbox;
    QString m_path;
    std::shared_ptr<const core::Workspace> m_workspace;
    std::uint64_t m_generation = 0;
    std::uint64_t m_lastJob = 0;
    std::uint64_t m_job = 0;
    std::stop_source m_stop;
    bool m_reading = false;
    bool m_readAgain = false;
};

} // namespace driftless::ui
