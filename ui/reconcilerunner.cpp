#include "ui/reconcilerunner.h"
#include "ui/displayformat.h"

#include "core/model/error.h"

#include <QThreadPool>

#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace driftless::ui
{

/// One reconcile or repair, as the worker needs it: plain values only.
struct ReconcileRunner::Request {
    enum class Kind { Reconcile, RepairKeys, RepairTable };
    Kind kind = Kind::Reconcile;
    QString pipeline;
    QStringList tables;
    std::int64_t reportId = 0;
    QString table;
    std::vector<core::CanonicalKey> keys;
};

namespace
{

/// Opens the workspace, which must exist (WorkspaceState never creates one), saying so in the
/// page's words when it does not.
std::unique_ptr<core::WorkspaceState> openStore(const QString &path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path.toStdString(), ec))
        throw core::Error(core::ErrorKind::Permanent,
                          ReconcileRunner::tr("there is no workspace file at %1").arg(path).toStdString());
    return std::make_unique<core::WorkspaceState>(path.toStdString());
}

std::vector<std::string> toStd(const QStringList &list)
{
    std::vector<std::string> out;
    for (const auto &s : list)
        out.push_back(s.toStdString());
    return out;
}

} // namespace

ReconcileRunner::ReconcileRunner(QObject *parent) : QObject(parent), m_mailbox(Mailbox<ReconcileRunner>::create(this))
{
}

ReconcileRunner::~ReconcileRunner()
{
    m_mailbox->close();
    // A comparison still running stops after its table; nobody waits for it.
    m_stop.request_stop();
}

void ReconcileRunner::setSnapshot(const EngineSnapshot &snapshot)
{
    bool changed = false;
    if (snapshot.statePath != m_path) {
        m_path = snapshot.statePath;
        m_workspace.reset();
        ++m_generation;
        changed = true;
    }
    // An unreadable file keeps the last workspace: its pipelines still exist.
    if (snapshot.workspace && !sameWorkspace(snapshot.workspace, m_workspace)) {
        m_workspace = snapshot.workspace;
        changed = true;
    }
    if (!changed)
        return;
    emit workspaceChanged();
    reloadSummaries();
}

void ReconcileRunner::reloadSummaries()
{
    if (m_path.isEmpty()) {
        emit summariesReady({}, QString());
        return;
    }
    if (m_reading) {
        m_readAgain = true;
        return;
    }
    startSummaryRead();
}

void ReconcileRunner::startSummaryRead()
{
    m_reading = true;
    m_readAgain = false;
    QThreadPool::globalInstance()->start([mailbox = m_mailbox, generation = m_generation, path = m_path] {
        std::vector<core::ReconcileSummary> rows;
        QString error;
        try {
            rows = openStore(path)->reconcileSummaries(kSummaryLimit);
        } catch (const std::exception &e) {
            error = describe(e);
        }
        mailbox->post([generation, rows = std::move(rows), error](ReconcileRunner &r) mutable {
            r.onSummariesRead(generation, std::move(rows), error);
        });
    });
}

void ReconcileRunner::onSummariesRead(std::uint64_t generation, std::vector<core::ReconcileSummary> rows,
                                      const QString &error)
{
    m_reading = false;
    if (generation == m_generation)
        emit summariesReady(rows, error);
    if (m_readAgain || generation != m_generation)
        reloadSummaries();
}

void ReconcileRunner::loadReport(std::int64_t id)
{
    if (m_path.isEmpty())
        return;
    QThreadPool::globalInstance()->start([mailbox = m_mailbox, generation = m_generation, path = m_path, id] {
        std::shared_ptr<const core::ReconcileReport> report;
        QString error;
        try {
            const auto store = openStore(path);
            if (auto r = store->loadReport(id))
                report = std::make_shared<const core::ReconcileReport>(std::move(*r));
            else
                error = tr("report %1 is not in the workspace file").arg(id);
        } catch (const std::exception &e) {
            error = describe(e);
        }
        mailbox->post([generation, id, report, error](ReconcileRunner &r) {
            if (generation == r.m_generation)
                emit r.reportReady(id, report, error);
        });
    });
}

std::uint64_t ReconcileRunner::reconcile(const QString &pipeline, const QStringList &tables)
{
    Request request;
    request.kind = Request::Kind::Reconcile;
    request.pipeline = pipeline;
    request.tables = tables;
    return startJob(std::move(request));
}

std::uint64_t ReconcileRunner::repairKeys(std::int64_t reportId, const QString &table,
                                          const std::vector<core::CanonicalKey> &keys)
{
    if (keys.empty())
        return 0;
    Request request;
    request.kind = Request::Kind::RepairKeys;
    request.reportId = reportId;
    request.table = table;
    request.keys = keys;
    return startJob(std::move(request));
}

std::uint64_t ReconcileRunner::repairTable(std::int64_t reportId, const QString &table)
{
    Request request;
    request.kind = Request::Kind::RepairTable;
    request.reportId = reportId;
    request.table = table;
    return startJob(std::move(request));
}

void ReconcileRunner::cancel()
{
    if (busy())
        m_stop.request_stop();
}

std::uint64_t ReconcileRunner::startJob(Request request)
{
    if (!m_workspace || m_path.isEmpty() || busy())
        return 0;
    const std::uint64_t job = ++m_lastJob;
    m_job = job;
    m_stop = std::stop_source();
    const bool repair = request.kind != Request::Kind::Reconcile;
    emit jobStarted(job, repair,
                    repair ? request.table : (request.tables.size() == 1 ? request.tables.front() : QString()));

    QThreadPool::globalInstance()->start([mailbox = m_mailbox, generation = m_generation, path = m_path,
                                          workspace = m_workspace, stop = m_stop.get_token(), job,
                                          request = std::move(request)] {
        // Phases of the comparison, posted as they come; `done` counts finished tables.
        int done = 0;
        int total = 0;
        auto onPhase = [&](const std::string &table, std::string_view phase) {
            if (phase == "done")
                ++done;
            mailbox->post([generation, job, table = QString::fromStdString(table),
                           phase = QString::fromUtf8(phase.data(), static_cast<int>(phase.size())), done,
                           total](ReconcileRunner &r) {
                if (generation == r.m_generation)
                    emit r.progress(job, table, phase, done, total);
            });
        };
        /// Compares and stores; returns the report's id (0 when cancelled, with `error` set).
        auto compareAndStore = [&](core::WorkspaceState &store, const std::string &pipeline,
                                   const std::vector<std::string> &tables, QString &error) -> std::int64_t {
            core::ReconcileOptions options;
            options.stop = stop;
            options.onPhase = onPhase;
            auto report = core::reconcile(*workspace, pipeline, tables, options);
            if (stop.stop_requested()) {
                error = tr("cancelled; nothing was stored");
                return 0;
            }
            store.storeReport(report);
            return report.id;
        };

        if (request.kind == Request::Kind::Reconcile) {
            std::int64_t reportId = 0;
            QString error;
            try {
                const std::string pipeline = request.pipeline.toStdString();
                const core::PipelineSpec *spec = workspace->pipeline(pipeline);
                total = request.tables.isEmpty() ? (spec ? static_cast<int>(spec->tables.size()) : 0)
                                                 : static_cast<int>(request.tables.size());
                // Opened first: no comparison runs for a file that cannot take its report.
                const auto store = openStore(path);
                reportId = compareAndStore(*store, pipeline, toStd(request.tables), error);
            } catch (const std::exception &e) {
                error = describe(e);
            }
            mailbox->post([generation, job, reportId, error](ReconcileRunner &r) {
                r.finishJob(job);
                if (generation == r.m_generation) {
                    emit r.reconcileFinished(job, reportId, error);
                    r.reloadSummaries();
                }
            });
            return;
        }

        RepairResult result;
        QString error;
        try {
            const auto store = openStore(path);
            const auto report = store->loadReport(request.reportId);
            if (!report)
                throw core::Error(core::ErrorKind::Permanent,
                                  tr("report %1 is not in the workspace file").arg(request.reportId).toStdString());
            const std::string table = request.table.toStdString();
            total = 1;
            onPhase(table, "repair");
            if (request.kind == Request::Kind::RepairKeys) {
                core::RepairOutcome outcome;
                try {
                    outcome = core::repairKeys(*workspace, report->pipeline, table, request.keys);
                } catch (const core::Error &e) {
                    outcome.pipeline = report->pipeline;
                    outcome.table = table;
                    outcome.keys = static_cast<long long>(request.keys.size());
                    outcome.error = e.describe();
                }
                result.outcomes.push_back(std::move(outcome));
            } else {
                result.outcomes = core::repairReport(*workspace, *report, table);
            }
            store->recordRepair(*report, result.outcomes);
            // Where the table stands now, as a report of its own: what the list shows next.
            done = 0;
            try {
                result.checkReportId = compareAndStore(*store, report->pipeline, {table}, result.checkError);
            } catch (const std::exception &e) {
                result.checkError = describe(e);
            }
        } catch (const std::exception &e) {
            error = describe(e);
        }
        mailbox->post(
            [generation, job, reportId = request.reportId, table = request.table, result, error](ReconcileRunner &r) {
                r.finishJob(job);
                if (generation == r.m_generation) {
                    emit r.repairFinished(job, reportId, table, result, error);
                    r.reloadSummaries();
                }
            });
    });
    return job;
}

void ReconcileRunner::finishJob(std::uint64_t job)
{
    if (m_job == job)
        m_job = 0;
}

} // namespace driftless::ui
