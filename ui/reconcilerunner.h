#pragma once

#include "ui/enginesnapshot.h"

#include "core/engine/reconcile/reconciler.h"
#include "core/model/staterecords.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <vector>

namespace driftless::ui {

class EngineBridge;

/// Reconciliation for the desktop app, through the engine's door (EngineBridge::door(): the
/// app's own engine or an agent's): reads stored reports, starts comparisons and repairs as the
/// API's jobs (POST /api/v1/reconcile and /api/v1/repair) and follows them (GET
/// /api/v1/jobs/ID), so the page works the same on a workspace file and on an agent.
///
/// - setSnapshot() follows EngineBridge: the workspace (endpoints, pipelines) and which engine
///   come from its snapshots; another engine starts a new generation, and every result of the
///   previous one is dropped.
/// - One reconcile or repair at a time (busy()); a repair compares the repaired table again
///   afterwards and stores that as a new report (the API does), so the list shows where the
///   table stands.
/// - Reads of the list and of one report may run beside it; a list read asked for while one
///   runs runs once more when it ends.
///
/// Thread affinity: a UI-thread object. Failures arrive as the error strings of the signals,
/// never as exceptions.
class ReconcileRunner final : public QObject {
    Q_OBJECT
public:
    explicit ReconcileRunner(EngineBridge *engine, QObject *parent = nullptr);
    ~ReconcileRunner() override;

    /// Rows of the list at most (one per table of a report, newest first).
    static constexpr int kSummaryLimit = 200;

    QString statePath() const { return m_path; }
    /// The engine whose door the runner asks (the Compare dialog reads endpoints' tables there).
    EngineBridge *engine() const { return m_engine; }
    std::shared_ptr<const core::Workspace> workspace() const { return m_workspace; }
    /// True while a reconcile or a repair runs.
    bool busy() const { return m_job != 0; }
    std::uint64_t currentJob() const { return m_job; }
    /// True when cancel() was asked of the running or last job.
    bool lastJobCancelled() const { return m_cancelled; }
    /// How often a running job is asked where it is.
    static constexpr int kPollMs = 250;

    struct RepairResult {
        std::vector<core::RepairOutcome> outcomes;
        /// The report of the comparison made after the repair; 0 when none was stored.
        std::int64_t checkReportId = 0;
        /// Why the comparison after the repair failed; empty otherwise.
        QString checkError;
    };

    /// What `driftless-cli compare LEFT RIGHT --key ... --columns ... --where ...` compares.
    struct Comparison {
        QString left;  ///< ENDPOINT:TABLE, read as the source
        QString right; ///< ENDPOINT:TABLE, read as the target
        std::vector<std::string> key, columns;
        QString where;
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
    /// Compares two tables of any two endpoints of the workspace, no pipeline needed (POST
    /// /api/v1/compare), and stores the report under the pseudo-pipeline core::kComparePipeline.
    /// reconcileFinished() ends it; its `error` is set, beside a stored report, when the table
    /// could not be compared (the report keeps why). Returns the job id, or 0 when nothing could
    /// start (no workspace, or busy).
    std::uint64_t compare(const Comparison &comparison);
    /// Repairs `keys` of one table of a stored report.
    std::uint64_t repairKeys(std::int64_t reportId, const QString &table, const std::vector<core::CanonicalKey> &keys);
    /// Repairs every differing row of one table of a stored report (found again when the
    /// report did not keep every key).
    std::uint64_t repairTable(std::int64_t reportId, const QString &table);
    /// Asks what a repair would run (POST /api/v1/repair with "dry_run": true): the whole table
    /// when `keys` is empty (as repairTable()), else those keys (as repairKeys()). Writes nothing;
    /// planReady() brings the plan for the request id returned (0: no engine to ask). May run
    /// beside a job.
    std::uint64_t planRepair(std::int64_t reportId, const QString &table, const std::vector<core::CanonicalKey> &keys);
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
    /// says why; a cancelled comparison stores nothing). A compare() whose table failed has both.
    void reconcileFinished(std::uint64_t job, std::int64_t reportId, const QString &error);
    /// The plan planRepair() asked for; `plan` is null when it could not be made, `error` says why.
    void planReady(std::uint64_t request, std::shared_ptr<const core::RepairPlan> plan, const QString &error);
    /// A repair ended; `error` is set when it could not run at all.
    void repairFinished(std::uint64_t job, std::int64_t reportId, const QString &table,
                        const driftless::ui::ReconcileRunner::RepairResult &result, const QString &error);

private:
    struct Request;
    std::uint64_t startJob(Request request);
    void startSummaryRead();
    void pollJob(std::uint64_t job, std::uint64_t generation, const Request &request, std::int64_t apiJob);
    void finishJob(std::uint64_t job);
    void onSummariesRead(std::uint64_t generation, std::vector<core::ReconcileSummary> rows, const QString &error);

    EngineBridge *m_engine;
    QString m_path;
    std::shared_ptr<const core::Workspace> m_workspace;
    std::uint64_t m_generation = 0;
    std::uint64_t m_lastJob = 0;
    std::uint64_t m_lastPlan = 0;
    std::uint64_t m_job = 0;
    /// The running job's id in the API (0 until it answered).
    std::int64_t m_apiJob = 0;
    /// Steps of the running job already emitted as progress().
    std::size_t m_phasesSeen = 0;
    bool m_cancelled = false;
    bool m_reading = false;
    bool m_readAgain = false;
};

} // namespace driftless::ui
