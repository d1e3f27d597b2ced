#include "core/engine/run/scheduler.h"

#include "core/base/log.h"
#include "core/engine/cdc/cdcsources.h"
#include "core/engine/endpoints/connectionpool.h"
#include "core/model/error.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace driftless::core {

namespace {
using Clock = std::chrono::steady_clock;

struct JobState {
    Clock::time_point due;
    bool running = false;
    bool paused = false;   ///< paused, and the observer was told
    std::stop_source pass; ///< stops the pass under way (the table was paused)
    bool done = false;     ///< `once` mode: finished (successfully or out of attempts)
    int failures = 0;
    bool inError = false;
    /// A schema change paused the table (its pass found it): the reason, logged once.
    std::string schemaPause;
};
} // namespace

Scheduler::Scheduler(std::vector<TableJob> jobs, EngineObserver &observer, Options options)
    : m_jobs(std::move(jobs)), m_observer(observer), m_options(options)
{
}

namespace {

/// Why the forward direction of a two-way pipeline failed last, by the two-way pipeline's name,
/// while it waits to try again. Its reverse direction waits for it (its slot, its tables, where it
/// starts reading), and says why: waiting without the reason would look like progress.
class ForwardFailures {
public:
    struct Failure {
        std::string why;
        bool transient = false; ///< it retries by itself (a server down), no DBA needed
    };
    void failed(const std::string &pipeline, Failure failure)
    {
        std::lock_guard lock(m_mutex);
        m_last[pipeline] = std::move(failure);
    }
    void retrying(const std::string &pipeline)
    {
        std::lock_guard lock(m_mutex);
        m_last.erase(pipeline);
    }
    std::optional<Failure> last(const std::string &pipeline) const
    {
        std::lock_guard lock(m_mutex);
        auto it = m_last.find(pipeline);
        if (it == m_last.end())
            return std::nullopt;
        return it->second;
    }

private:
    mutable std::mutex m_mutex;
    std::map<std::string, Failure> m_last;
};

/// Runs one pipeline's CDC tables: a long-lived stream, restarted after transient errors with
/// backoff, retried every 5 minutes after permanent ones (which turn its tables red).
void runCdcGroup(std::vector<TableJob> jobs, EngineObserver &observer, bool once, std::stop_token stop,
                 std::atomic<int> &errors, std::condition_variable_any &wake, std::shared_ptr<const PauseSet> pauses,
                 ForwardFailures &forwardFailures)
{
    int failures = 0;
    std::mutex m;
    const auto &twoWay = jobs.front().twoWay;
    const bool forward = twoWay && !twoWay->reverse;
    std::string lastBlocked; ///< the reverse direction's last "the forward direction cannot start"
    while (!stop.stop_requested()) {
        if (forward)
            forwardFailures.retrying(twoWay->pipeline);
        for (const auto &j : jobs)
            observer.runStarted(j.key());
        std::string message;
        bool transient = false;
        TableState failed = TableState::Error;
        try {
            const std::vector<StoppedTable> stopped = runCdcPipeline(jobs, observer, once, pauses, stop);
            // The tables an error stopped stay red (P4); the others' run went well.
            auto stoppedFor = [&](const TableJob &j) -> const StoppedTable * {
                for (const auto &s : stopped)
                    if (s.table == j.spec.table)
                        return &s;
                return nullptr;
            };
            for (const auto &j : jobs) {
                if (const auto *s = stoppedFor(j))
                    observer.runFinished(j.key(), "error", 0, s->message);
                else
                    observer.runFinished(j.key(), stop.stop_requested() ? "cancelled" : "ok", 0, {});
            }
            if (once || stop.stop_requested()) {
                for (const auto &j : jobs)
                    if (!stoppedFor(j)) // a stopped one said so and stays red
                        observer.tableState(j.key(), stop.stop_requested() ? TableState::Idle : TableState::Ok, "",
                                            std::nullopt);
                if (once)
                    errors += static_cast<int>(stopped.size());
                break;
            }
            continue;
        } catch (const Cancelled &) {
            break;
        } catch (const CdcRestart &r) {
            // Not a failure: a resumed table needs its load, which needs the pipeline's start.
            for (const auto &j : jobs)
                observer.runFinished(j.key(), "ok", 0, {});
            observer.event(Level::Info, jobs.front().key(), "restart", r.reason);
            continue;
        } catch (const Error &e) {
            if (stop.stop_requested())
                break;
            message = e.describe();
            transient = e.isTransient();
            failed = stoppedState(stopKindOf(e));
        } catch (const std::exception &e) {
            if (stop.stop_requested())
                break;
            message = std::string("internal error: ") + e.what();
        }
        if (forward)
            forwardFailures.failed(twoWay->pipeline, {message, transient});
        // A reverse direction waiting for its forward direction says why that one fails; red when
        // it cannot go on until the DBA acts, with its fix (the reverse direction still looks
        // again as often as a transient error does, so it starts soon after the fix).
        bool blocked = false;
        if (twoWay && twoWay->reverse && transient) {
            // (Not when it is this direction's own reason too: an endpoint both read is down.)
            if (auto f = forwardFailures.last(twoWay->pipeline); f && f->why != message) {
                message += "; the forward direction " + twoWay->pipeline +
                           (f->transient ? " is retrying: " : " cannot start: ") + f->why;
                blocked = !f->transient;
            }
        }
        ++failures;
        log(LogLevel::Warn, jobs.front().pipeline + " (cdc): " + message);
        for (const auto &j : jobs) {
            observer.runFinished(j.key(), "error", 0, message);
            observer.tableState(j.key(), transient && !blocked ? TableState::Retrying : failed, message, std::nullopt);
        }
        if (blocked ? message != lastBlocked : failures == 1 || !transient)
            observer.event(transient && !blocked ? Level::Warn : Level::Error, jobs.front().key(), "sync_failed",
                           message);
        lastBlocked = blocked ? message : std::string();
        if (once && (!transient || failures >= 3)) {
            errors += static_cast<int>(jobs.size());
            break;
        }
        auto wait =
            transient ? std::chrono::seconds(std::min(60, 1 << std::min(failures - 1, 6))) : std::chrono::seconds(300);
        std::unique_lock lock(m);
        wake.wait_for(lock, stop, wait, [] { return false; });
    }
}

} // namespace

int Scheduler::run(std::stop_token stop)
{
    // Postgres connections kept between passes (closed when the run ends, after the workers).
    ConnectionPool pool(std::chrono::seconds(30), static_cast<std::size_t>(std::max(1, m_options.maxParallel)));
    std::mutex mutex;
    std::condition_variable_any cv;
    // CDC tables stream per pipeline on threads of their own; the rest run passes on the pool.
    std::map<std::string, std::vector<TableJob>> cdcGroups;
    std::vector<TableJob> passJobs;
    for (auto &j : m_jobs) {
        if (j.spec.strategy == Strategy::Cdc)
            cdcGroups[j.pipeline].push_back(j);
        else
            passJobs.push_back(j);
    }
    m_jobs = std::move(passJobs);
    std::atomic<int> cdcErrors{0};
    std::atomic<int> cdcRunning{static_cast<int>(cdcGroups.size())};
    std::condition_variable_any cdcWake;
    auto pauses = std::make_shared<PauseSet>();
    // Refreshes the pause set; true when it changed. A busy file keeps the last set.
    auto refreshPauses = [&] {
        if (!m_options.pausedTables)
            return false;
        try {
            return pauses->assign(m_options.pausedTables());
        } catch (const std::exception &e) {
            log(LogLevel::Warn, std::string("cannot read the paused tables (keeping the last known): ") + e.what());
            return false;
        }
    };
    refreshPauses();
    ForwardFailures forwardFailures;
    std::vector<std::jthread> cdcThreads;
    for (auto &[name, group] : cdcGroups)
        cdcThreads.emplace_back([&, group = group] {
            runCdcGroup(group, m_observer, m_options.once, stop, cdcErrors, cdcWake, pauses, forwardFailures);
            --cdcRunning;
            cv.notify_all();
        });

    std::vector<JobState> states(m_jobs.size());
    const auto start = Clock::now();
    for (auto &s : states)
        s.due = start;

    auto passesDone = [&] {
        return std::all_of(states.begin(), states.end(), [](const JobState &s) { return s.done; });
    };
    auto allDone = [&] { return passesDone() && cdcRunning.load() == 0; };

    auto worker = [&] {
        std::unique_lock lock(mutex);
        for (;;) {
            if (stop.stop_requested() || (m_options.once && passesDone()))
                return;
            // Paused tables are told so once and skipped; resumed ones are due at once.
            for (size_t i = 0; i < states.size(); ++i) {
                auto &s = states[i];
                if (s.running || s.done)
                    continue;
                const TableJob &j = m_jobs[i];
                const bool paused = pauses->contains(j.pipeline, j.spec.table);
                if (paused && !s.paused) {
                    s.paused = true;
                    m_observer.tableState(j.key(), TableState::Paused, pausedMessage(j.spec.strategy), std::nullopt);
                    if (m_options.once)
                        s.done = true;
                } else if (!paused && s.paused) {
                    s.paused = false;
                    s.due = Clock::now();
                }
            }
            // The earliest due job nobody runs.
            int pick = -1;
            for (size_t i = 0; i < states.size(); ++i) {
                if (states[i].running || states[i].done || states[i].paused)
                    continue;
                if (pick < 0 || states[i].due < states[static_cast<size_t>(pick)].due)
                    pick = static_cast<int>(i);
            }
            if (pick < 0) {
                cv.wait_for(lock, stop, std::chrono::seconds(1), [&] { return false; });
                continue;
            }
            auto &st = states[static_cast<size_t>(pick)];
            if (st.due > Clock::now()) {
                cv.wait_until(lock, stop, st.due, [&] { return false; });
                continue;
            }
            st.running = true;
            st.pass = std::stop_source();
            std::stop_source pass = st.pass;
            const TableJob &job = m_jobs[static_cast<size_t>(pick)];
            lock.unlock();

            const TableKey key = job.key();
            bool ok = false, transient = false, cancelled = false;
            std::string message;
            long long rows = 0;
            std::string schemaPause;
            std::stop_callback stopPass(stop, [pass]() mutable { pass.request_stop(); });
            m_observer.runStarted(key);
            try {
                TableSync sync(job, m_observer, &pool);
                auto outcome = sync.runOnce(pass.get_token());
                rows = outcome.rowsWritten;
                schemaPause = outcome.paused;
                ok = true;
            } catch (const Cancelled &) {
                cancelled = true;
            } catch (const Error &e) {
                cancelled = stop.stop_requested();
                transient = e.isTransient();
                message = e.describe();
            } catch (const std::exception &e) {
                cancelled = stop.stop_requested();
                message = std::string("internal error: ") + e.what();
            }

            lock.lock();
            st.running = false;
            const auto now = Clock::now();
            if (!ok && pass.stop_requested() && !stop.stop_requested()) {
                // Paused mid-pass: what it committed stays, and so does its checkpoint.
                m_observer.runFinished(key, "cancelled", rows, {});
                m_observer.tableState(key, TableState::Paused, pausedMessage(job.spec.strategy), std::nullopt);
                st.paused = true;
                if (m_options.once)
                    st.done = true;
            } else if (cancelled) {
                m_observer.runFinished(key, "cancelled", rows, {});
                m_observer.tableState(key, st.inError ? TableState::Error : TableState::Idle, "stopped", std::nullopt);
                st.done = true;
            } else if (ok && !schemaPause.empty()) {
                // Paused by a schema_changes policy: red until a pass finds nothing to pause
                // for (the DBA changed the policy or the target); it looks again every interval.
                m_observer.runFinished(key, "paused", rows, schemaPause);
                m_observer.tableState(key, TableState::Paused, schemaPause, std::nullopt);
                if (schemaPause != st.schemaPause)
                    m_observer.event(Level::Error, key, "schema_change", schemaPause);
                st.schemaPause = schemaPause;
                st.inError = true;
                st.due = now + job.spec.effectiveEvery();
                if (m_options.once)
                    st.done = true;
            } else if (ok) {
                st.schemaPause.clear();
                m_observer.runFinished(key, "ok", rows, {});
                m_observer.tableState(key, TableState::Ok, "", std::nullopt);
                if (st.inError)
                    m_observer.event(Level::Info, key, "recovered", "syncing again");
                st.failures = 0;
                st.inError = false;
                st.due = now + job.spec.effectiveEvery();
                if (m_options.once)
                    st.done = true;
            } else {
                ++st.failures;
                m_observer.runFinished(key, "error", rows, message);
                log(LogLevel::Warn, key.display() + ": " + message);
                if (transient) {
                    auto backoff = std::chrono::seconds(std::min(60, 1 << std::min(st.failures - 1, 6)));
                    st.due = now + backoff;
                    bool giveUp = m_options.once && st.failures >= m_options.onceAttempts;
                    m_observer.tableState(key, giveUp ? TableState::Error : TableState::Retrying,
                                          giveUp ? message
                                                 : message + " (retry " + std::to_string(st.failures) + " in " +
                                                       std::to_string(backoff.count()) + "s)",
                                          std::nullopt);
                    if (st.failures == 1 || giveUp)
                        m_observer.event(Level::Warn, key, "sync_failed", message);
                    if (giveUp) {
                        st.inError = true;
                        st.done = true;
                    }
                } else {
                    m_observer.tableState(key, TableState::Error, message, std::nullopt);
                    if (!st.inError)
                        m_observer.event(Level::Error, key, "sync_failed", message);
                    st.inError = true;
                    st.due = now + std::chrono::minutes(5);
                    if (m_options.once)
                        st.done = true;
                }
            }
            cv.notify_all();
        }
    };

    const int n =
        m_jobs.empty() ? 0 : std::max(1, std::min<int>(m_options.maxParallel, static_cast<int>(m_jobs.size())));
    {
        std::vector<std::jthread> workers;
        for (int i = 0; i < n; ++i)
            workers.emplace_back(worker);
        // The ticker: lets observers sample lag and flush once a second.
        std::unique_lock lock(mutex);
        while (!stop.stop_requested() && !(m_options.once && allDone())) {
            lock.unlock();
            m_observer.tick();
            pool.closeExpired(); // no session idles on a source longer than the pool's limit
            const bool pausesChanged = refreshPauses();
            lock.lock();
            if (pausesChanged) {
                for (size_t i = 0; i < states.size(); ++i)
                    if (states[i].running && pauses->contains(m_jobs[i].pipeline, m_jobs[i].spec.table))
                        states[i].pass.request_stop();
                cv.notify_all();
            }
            cv.wait_for(lock, stop, std::chrono::seconds(1), [&] { return m_options.once && allDone(); });
        }
        lock.unlock();
        cv.notify_all();
    }
    cdcWake.notify_all();
    cdcThreads.clear(); // joins: they end on stop, or when caught up in `once` mode
    m_observer.tick();
    int errors = cdcErrors.load();
    for (auto &s : states)
        errors += s.inError ? 1 : 0;
    return errors;
}

} // namespace driftless::core
