#include "ui/reconcilerunner.h"

#include "ui/enginebridge.h"
#include "ui/enginedoor.h"

#include <QTimer>
#include <QUrl>

#include <string>
#include <utility>

namespace driftless::ui {

namespace {

/// Why a compare report's table was not compared (its error, or why it was skipped); empty when
/// it was.
QString compareFailure(const nlohmann::json &report)
{
    const core::ReconcileReport parsed = core::reportFromJson(report);
    for (const auto &t : parsed.tables) {
        if (!t.error.empty())
            return QString::fromStdString(t.error);
        if (!t.skipped.empty())
            return ReconcileRunner::tr("not compared: %1").arg(QString::fromStdString(t.skipped));
    }
    return {};
}

} // namespace

/// One reconcile or repair, as the page asked for it.
struct ReconcileRunner::Request {
    enum class Kind { Reconcile, Compare, RepairKeys, RepairTable };
    Kind kind = Kind::Reconcile;
    bool comparison() const { return kind == Kind::Reconcile || kind == Kind::Compare; }
    Comparison compare;
    QString pipeline;
    QStringList tables;
    std::int64_t reportId = 0;
    QString table;
    std::vector<core::CanonicalKey> keys;
};

ReconcileRunner::ReconcileRunner(EngineBridge *engine, QObject *parent) : QObject(parent), m_engine(engine) {}

// A comparison still running goes on in the engine, which stops it when it lets go of the file.
ReconcileRunner::~ReconcileRunner() = default;

void ReconcileRunner::setSnapshot(const EngineSnapshot &snapshot)
{
    bool changed = false;
    if (snapshot.statePath != m_path) {
        m_path = snapshot.statePath;
        m_workspace.reset();
        ++m_generation;
        // The previous engine's door goes with its replies: nothing of it is in flight.
        m_job = 0;
        m_reading = false;
        m_readAgain = false;
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
    if (m_path.isEmpty() || !m_engine->door()) {
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
    m_engine->door()->request(
        "GET", QStringLiteral("/api/v1/reconciles?limit=%1").arg(kSummaryLimit), {}, this,
        [this, generation = m_generation](const EngineDoor::Reply &r) {
            onSummariesRead(generation,
                            r.ok() ? core::summariesFromJson(r.body) : std::vector<core::ReconcileSummary>{}, r.error);
        });
}

void ReconcileRunner::onSummariesRead(std::uint64_t generation, std::vector<core::ReconcileSummary> rows,
                                      const QString &error)
{
    if (generation != m_generation)
        return; // the read of another engine's reports; this one's has its own
    m_reading = false;
    emit summariesReady(rows, error);
    if (m_readAgain)
        reloadSummaries();
}

void ReconcileRunner::loadReport(std::int64_t id)
{
    if (m_path.isEmpty() || !m_engine->door())
        return;
    m_engine->door()->request("GET", QStringLiteral("/api/v1/reconciles/%1").arg(id), {}, this,
                              [this, generation = m_generation, id](const EngineDoor::Reply &r) {
                                  if (generation != m_generation)
                                      return;
                                  std::shared_ptr<const core::ReconcileReport> report;
                                  QString error = r.error;
                                  if (r.ok())
                                      report =
                                          std::make_shared<const core::ReconcileReport>(core::reportFromJson(r.body));
                                  else if (r.status == 404)
                                      error = tr("report %1 is not in the workspace").arg(id);
                                  emit reportReady(id, report, error);
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

std::uint64_t ReconcileRunner::compare(const Comparison &comparison)
{
    Request request;
    request.kind = Request::Kind::Compare;
    request.compare = comparison;
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

std::uint64_t ReconcileRunner::planRepair(std::int64_t reportId, const QString &table,
                                          const std::vector<core::CanonicalKey> &keys)
{
    EngineDoor *door = m_engine->door();
    if (!m_workspace || m_path.isEmpty() || !door)
        return 0;
    const std::uint64_t request = ++m_lastPlan;
    nlohmann::json body = {{"report", reportId}, {"table", table.toStdString()}, {"dry_run", true}};
    if (!keys.empty()) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto &k : keys)
            list.push_back(core::keyJson(k, {}));
        body["keys"] = list;
    }
    door->post(QStringLiteral("/api/v1/repair"), body, this,
               [this, request, generation = m_generation](const EngineDoor::Reply &r) {
                   if (generation != m_generation)
                       return;
                   std::shared_ptr<const core::RepairPlan> plan;
                   if (r.ok())
                       plan = std::make_shared<const core::RepairPlan>(core::repairPlanFromJson(r.body));
                   emit planReady(request, plan, r.error);
               });
    return request;
}

void ReconcileRunner::cancel()
{
    if (!busy() || m_cancelled)
        return;
    m_cancelled = true;
    // Asked when the job's id is known (pollJob), if it is not yet.
    if (m_apiJob)
        m_engine->door()->post(QStringLiteral("/api/v1/jobs/%1/cancel").arg(m_apiJob), nlohmann::json::object(), this,
                               [](const EngineDoor::Reply &) {});
}

std::uint64_t ReconcileRunner::startJob(Request request)
{
    EngineDoor *door = m_engine->door();
    if (!m_workspace || m_path.isEmpty() || !door || busy())
        return 0;
    const std::uint64_t job = ++m_lastJob;
    m_job = job;
    m_apiJob = 0;
    m_phasesSeen = 0;
    m_cancelled = false;
    const bool repair = !request.comparison();
    emit jobStarted(job, repair,
                    repair                                   ? request.table
                    : request.kind == Request::Kind::Compare ? request.compare.left
                    : request.tables.size() == 1             ? request.tables.front()
                                                             : QString());

    nlohmann::json body;
    QString path;
    if (request.kind == Request::Kind::Compare) {
        path = QStringLiteral("/api/v1/compare");
        body = {{"left", request.compare.left.toStdString()},
                {"right", request.compare.right.toStdString()},
                {"key", request.compare.key},
                {"columns", request.compare.columns}};
        if (!request.compare.where.trimmed().isEmpty())
            body["where"] = request.compare.where.trimmed().toStdString();
    } else if (!repair) {
        path = QStringLiteral("/api/v1/reconcile");
        nlohmann::json tables = nlohmann::json::array();
        for (const QString &t : request.tables)
            tables.push_back(t.toStdString());
        body = {{"pipeline", request.pipeline.toStdString()}, {"tables", tables}};
    } else {
        path = QStringLiteral("/api/v1/repair");
        body = {{"report", request.reportId}, {"table", request.table.toStdString()}};
        if (request.kind == Request::Kind::RepairKeys) {
            nlohmann::json keys = nlohmann::json::array();
            for (const auto &k : request.keys)
                keys.push_back(core::keyJson(k, {}));
            body["keys"] = keys;
        }
    }
    door->post(path, body, this, [this, job, generation = m_generation, request](const EngineDoor::Reply &r) {
        if (generation != m_generation || job != m_job)
            return;
        if (!r.ok() || !r.body.contains("job")) {
            const QString error = r.ok() ? tr("the engine did not start the job") : r.error;
            finishJob(job);
            if (request.comparison())
                emit reconcileFinished(job, 0, error);
            else
                emit repairFinished(job, request.reportId, request.table, {}, error);
            return;
        }
        m_apiJob = r.body["job"].get<std::int64_t>();
        if (m_cancelled) {
            m_cancelled = false; // cancel() asks now that the id is known
            cancel();
        }
        pollJob(job, generation, request, m_apiJob);
    });
    return job;
}

void ReconcileRunner::pollJob(std::uint64_t job, std::uint64_t generation, const Request &request, std::int64_t apiJob)
{
    EngineDoor *door = m_engine->door();
    if (generation != m_generation || job != m_job || !door)
        return;
    door->request("GET", QStringLiteral("/api/v1/jobs/%1?phases_from=%2").arg(apiJob).arg(m_phasesSeen), {}, this,
                  [this, job, generation, request, apiJob](const EngineDoor::Reply &r) {
                      if (generation != m_generation || job != m_job)
                          return;
                      const auto again = [this, job, generation, request, apiJob] {
                          QTimer::singleShot(kPollMs, this, [this, job, generation, request, apiJob] {
                              pollJob(job, generation, request, apiJob);
                          });
                      };
                      if (!r.ok()) {
                          // An agent out of reach for a moment: its job goes on; ask again.
                          if (r.status == 0 && !r.certificateRefused) {
                              again();
                              return;
                          }
                          finishJob(job);
                          if (request.comparison())
                              emit reconcileFinished(job, 0, r.error);
                          else
                              emit repairFinished(job, request.reportId, request.table, {}, r.error);
                          return;
                      }
                      // Every step since the last poll, in order: none is missed between two polls.
                      const nlohmann::json phases = r.body.value("phases", nlohmann::json::array());
                      for (const auto &p : phases) {
                          if (!p.is_object())
                              continue;
                          ++m_phasesSeen;
                          emit progress(job, QString::fromStdString(p.value("table", std::string())),
                                        QString::fromStdString(p.value("phase", std::string())), p.value("done", 0),
                                        p.value("total", 0));
                      }
                      const std::string state = r.body.value("state", std::string());
                      if (state == "running") {
                          again();
                          return;
                      }
                      const nlohmann::json &result = r.body.value("result", nlohmann::json());
                      QString error = r.body.contains("error") && r.body["error"].is_string()
                                          ? QString::fromStdString(r.body["error"].get<std::string>())
                                          : QString();
                      finishJob(job);
                      if (request.comparison()) {
                          const std::int64_t reportId =
                              state == "done" && result.is_object() ? result.value("report_id", std::int64_t{0}) : 0;
                          // Two tables compared: why the one table failed, in the report's words.
                          if (request.kind == Request::Kind::Compare && reportId && error.isEmpty())
                              error = compareFailure(result);
                          emit reconcileFinished(job, reportId, error);
                      } else {
                          RepairResult out;
                          if (result.is_object()) {
                              out.outcomes = core::repairFromJson(result);
                              if (result.contains("check_report") && result["check_report"].is_number_integer())
                                  out.checkReportId = result["check_report"].get<std::int64_t>();
                              if (result.contains("check_error") && result["check_error"].is_string())
                                  out.checkError = QString::fromStdString(result["check_error"].get<std::string>());
                          }
                          emit repairFinished(job, request.reportId, request.table, out, error);
                      }
                      reloadSummaries();
                  });
}

void ReconcileRunner::finishJob(std::uint64_t job)
{
    if (m_job == job) {
        m_job = 0;
        m_apiJob = 0;
    }
}

} // namespace driftless::ui
