#include "core/engine/scheduler.h"

#include "core/engine/log.h"
#include "core/model/error.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace driftless::core {

namespace {
using Clock = std::chrono::steady_clock;

struct JobState {
    Clock::time_point due;
    bool running = false;
    bool done = false;    ///< `once` mode: finished (successfully or out of attempts)
    int failures = 0;
    bool inError = false;
};
} // namespace

Scheduler::Scheduler(std::vector<TableJob> jobs, EngineObserver &observer, Options options)
    : m_jobs(std::move(jobs)), m_observer(observer), m_options(options)
{
}

int Scheduler::run(std::stop_token stop)
{
    std::mutex mutex;
    std::condition_variable_any cv;
    std::vector<JobState> states(m_jobs.size());
    const auto start = Clock::now();
    for (auto &s : states)
        s.due = start;

    auto allDone = [&] {
        return std::all_of(states.begin(), states.end(), [](const JobState &s) { return s.done; });
    };

    auto worker = [&] {
        std::unique_lock lock(mutex);
        for (;;) {
            if (stop.stop_requested() || (m_options.once && allDone()))
                return;
            // The earliest due job nobody runs.
            int pick = -1;
            for (size_t i = 0; i < states.size(); ++i) {
                if (states[i].running || states[i].done)
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
            const TableJob &job = m_jobs[static_cast<size_t>(pick)];
            lock.unlock();

            const TableKey key = job.key();
            bool ok = false, transient = false, cancelled = false;
            std::string message;
            long long rows = 0;
            m_observer.runStarted(key);
            try {
                TableSync sync(job, m_observer);
                auto outcome = sync.runOnce(stop);
                rows = outcome.rowsWritten;
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
            if (cancelled) {
                m_observer.runFinished(key, "cancelled", rows, {});
                m_observer.tableState(key, st.inError ? "error" : "idle", "stopped", std::nullopt);
                st.done = true;
            } else if (ok) {
                m_observer.runFinished(key, "ok", rows, {});
                m_observer.tableState(key, "ok", "", std::nullopt);
                if (st.inError)
                    m_observer.event("info", key, "recovered", "syncing again");
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
                    m_observer.tableState(key, giveUp ? "error" : "retrying",
                                          giveUp ? message
                                                 : message + " (retry " + std::to_string(st.failures) + " in " +
                                                       std::to_string(backoff.count()) + "s)",
                                          std::nullopt);
                    if (st.failures == 1 || giveUp)
                        m_observer.event("warn", key, "sync_failed", message);
                    if (giveUp) {
                        st.inError = true;
                        st.done = true;
                    }
                } else {
                    m_observer.tableState(key, "error", message, std::nullopt);
                    if (!st.inError)
                        m_observer.event("error", key, "sync_failed", message);
                    st.inError = true;
                    st.due = now + std::chrono::minutes(5);
                    if (m_options.once)
                        st.done = true;
                }
            }
            cv.notify_all();
        }
    };

    const int n = std::max(1, std::min<int>(m_options.maxParallel, static_cast<int>(m_jobs.size())));
    {
        std::vector<std::jthread> workers;
        for (int i = 0; i < n; ++i)
            workers.emplace_back(worker);
        // The ticker: lets observers sample lag and flush once a second.
        std::unique_lock lock(mutex);
        while (!stop.stop_requested() && !(m_options.once && allDone())) {
            lock.unlock();
            m_observer.tick();
            lock.lock();
            cv.wait_for(lock, stop, std::chrono::seconds(1), [&] { return m_options.once && allDone(); });
        }
        lock.unlock();
        cv.notify_all();
    }
    m_observer.tick();
    int errors = 0;
    for (auto &s : states)
        errors += s.inError ? 1 : 0;
    return errors;
}

} // namespace driftless::core
