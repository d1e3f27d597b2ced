#include "core/engine/cdc/pg/slotcreation.h"

#include "core/base/log.h"
#include "core/engine/endpoints/connect.h"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

namespace driftless::core {

namespace {

std::string ageText(long long seconds)
{
    if (seconds < 120)
        return std::to_string(seconds) + " s";
    if (seconds < 7200)
        return std::to_string(seconds / 60) + " min " + std::to_string(seconds % 60) + " s";
    return std::to_string(seconds / 3600) + " h " + std::to_string(seconds % 3600 / 60) + " min";
}

} // namespace

std::string slotCreationBlockers(PgConnection &conn, std::chrono::seconds minAge)
{
    // backend_xid and pid are visible to every user; xact_start, state and query only with
    // pg_read_all_stats (or for one's own sessions).
    auto open =
        conn.execParams("SELECT pid, coalesce(usename, ''), coalesce(datname, ''), "
                        "       coalesce(extract(epoch FROM now() - xact_start)::bigint, -1), coalesce(state, ''), "
                        "       left(regexp_replace(coalesce(query, ''), '\\s+', ' ', 'g'), 80), count(*) OVER () "
                        "FROM pg_stat_activity "
                        "WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid() "
                        "  AND (xact_start IS NULL OR xact_start < now() - make_interval(secs => $1::int)) "
                        "ORDER BY xact_start NULLS LAST LIMIT 1",
                        {std::to_string(minAge.count())});
    auto prepared = conn.exec("SELECT count(*), coalesce(extract(epoch FROM now() - min(prepared))::bigint, 0), "
                              "coalesce(min(gid), '') FROM pg_prepared_xacts");
    const long long preparedCount = prepared.toInt(0, 0);
    std::string out;
    if (open.rows() > 0) {
        const long long count = open.toInt(0, 6);
        const std::string pid = open.text(0, 0);
        out = count == 1 ? "1 transaction" : std::to_string(count) + " transactions";
        out += " already open on the source (the oldest: pid " + pid;
        if (!open.text(0, 1).empty())
            out += ", user " + open.text(0, 1);
        if (!open.text(0, 2).empty())
            out += ", database " + open.text(0, 2);
        if (open.toInt(0, 3) >= 0)
            out += ", open for " + ageText(open.toInt(0, 3));
        if (!open.text(0, 4).empty())
            out += ", " + open.text(0, 4);
        if (!open.text(0, 5).empty())
            out += ": " + open.text(0, 5);
        out += ")";
    }
    if (preparedCount > 0) {
        if (!out.empty())
            out += " and ";
        out += std::to_string(preparedCount) + " prepared transaction" + (preparedCount == 1 ? "" : "s") +
               " (the oldest, '" + prepared.text(0, 2) + "', prepared " + ageText(prepared.toInt(0, 1)) + " ago)";
    }
    if (out.empty())
        return out;
    std::string fix;
    if (open.rows() > 0)
        fix = "commit or end it (SELECT pg_terminate_backend(" + open.text(0, 0) + ") ends the session)";
    if (preparedCount > 0)
        fix += std::string(fix.empty() ? "" : "; ") + "finish prepared transactions with COMMIT PREPARED or "
                                                      "ROLLBACK PREPARED (see pg_prepared_xacts)";
    return "waiting for " + out + " to finish: a replication slot can only be created once they end; " + fix;
}

PgReplicationConnection::Slot createSlotWatched(PgReplicationConnection &repl, const std::string &name, bool temporary,
                                                const Endpoint &source, std::stop_token stop,
                                                const std::function<void(const SlotWaitReport &)> &report,
                                                std::chrono::milliseconds every)
{
    std::jthread watcher([&](std::stop_token done) {
        // Only for the timed wait, which ends early when the creation is over (~jthread).
        std::mutex mutex;
        std::condition_variable_any wake;
        std::unique_lock lock(mutex);
        std::optional<PgConnection> conn;
        bool first = true;
        while (!wake.wait_for(lock, done, every, [&] { return done.stop_requested(); })) {
            try {
                if (!conn)
                    conn.emplace(connectPostgres(source, "driftless slot creation watch"));
                std::string blockers = slotCreationBlockers(*conn);
                std::string message = "creating replication slot " + name + ": " +
                                      (blockers.empty() ? std::string("waiting for transactions already running on "
                                                                      "the source to finish")
                                                        : blockers);
                report({message, first});
                first = false;
            } catch (const std::exception &e) {
                // Only a report: the creation itself goes on, and fails on its own if it must.
                log(LogLevel::Warn, "cannot read what slot creation waits for: " + std::string(e.what()));
                conn.reset();
            }
        }
    });
    // A stop request cancels CREATE_REPLICATION_SLOT (the server drops the half-made slot).
    auto cancel = repl.connection().cancelOn(stop);
    return repl.createSlot(name, temporary, true);
}

} // namespace driftless::core
