#include "core/engine/twoway/newerwins.h"

#include "core/db/pgconnection.h"
#include "core/engine/endpoints/connect.h"
#include "core/model/conflictpolicy.h"
#include "core/model/error.h"

#include <map>

namespace driftless::core {

namespace {

/// The type of `column` in `table` when it is a timestamp (with or without time zone); empty
/// when it is some other type; nullopt when the table or the column is missing.
constexpr const char *kColumnType = R"sql(
    SELECT format_type(a.atttypid, a.atttypmod), a.atttypid IN ('timestamptz'::regtype, 'timestamp'::regtype)
    FROM pg_attribute a
    WHERE a.attrelid = to_regclass($1) AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped
)sql";

} // namespace

bool usesCommitTimeClock(const std::optional<std::string> &conflicts)
{
    if (!conflicts)
        return false;
    auto p = ConflictPolicy::parse(*conflicts);
    return p && p->usesCommitTime();
}

void requireCommitTimestamps(PgConnection &c, const std::string &endpoint)
{
    if (c.exec("SELECT current_setting('track_commit_timestamp')").text(0, 0) == "on")
        return;
    throw Error(ErrorKind::Permanent,
                "conflicts: newer_wins with clock commit_time compares the commit times of both sides, but "
                "endpoint " +
                    endpoint + " does not keep them (track_commit_timestamp is off)",
                {},
                "ALTER SYSTEM SET track_commit_timestamp = on; then restart the server (or use newer_wins: "
                "{ column: <a timestamp column> })");
}

std::vector<NewerWinsRefusal> checkNewerWinsColumns(const Workspace &ws)
{
    std::vector<NewerWinsRefusal> out;
    std::map<std::string, PgConnection> pg;
    auto connection = [&](const Endpoint &e) -> PgConnection * {
        auto it = pg.find(e.name);
        if (it == pg.end()) {
            try {
                it = pg.emplace(e.name, connectPostgres(e, "driftless apply", false)).first;
            } catch (const Error &) {
                return nullptr; // an unreachable endpoint is the doctor's finding
            }
        }
        return &it->second;
    };
    for (size_t pi = 0; pi < ws.pipelines.size(); ++pi) {
        const auto &p = ws.pipelines[pi];
        const Endpoint *src = ws.endpoint(p.source);
        const Endpoint *tgt = ws.endpoint(p.target);
        if (!p.twoWay || !src || !tgt || src->kind != EndpointKind::Postgres || tgt->kind != EndpointKind::Postgres)
            continue;
        for (size_t ti = 0; ti < p.tables.size(); ++ti) {
            const auto &t = p.tables[ti];
            auto policy = t.conflicts ? ConflictPolicy::parse(*t.conflicts) : std::nullopt;
            if (!policy || !policy->usesNewer() || policy->newer.clock != NewerWins::Clock::Column)
                continue;
            const std::string &column = policy->newer.column;
            // A table missing from the source is the doctor's finding; one missing from the target
            // is created from the source's columns by the initial load.
            auto side = [&](const Endpoint &e, const TableRef &table) {
                PgConnection *c = connection(e);
                if (!c)
                    return;
                if (c->execParams("SELECT to_regclass($1) IS NULL", {table.quoted()}).toBool(0, 0))
                    return;
                auto r = c->execParams(kColumnType, {table.quoted(), column});
                if (r.rows() == 0)
                    out.push_back({pi, ti,
                                   "newer_wins column " + displayIdent(column) + " is not a column of " +
                                       table.display() + " on endpoint " + e.name +
                                       "; name a timestamp column both sides have (e.g. updated_at)"});
                else if (!r.toBool(0, 1))
                    out.push_back({pi, ti,
                                   "newer_wins column " + displayIdent(column) + " of " + table.display() +
                                       " on endpoint " + e.name + " is " + r.text(0, 0) +
                                       ", not a timestamp; name a timestamp (with or without time zone) column"});
            };
            side(*src, t.table);
            const TargetName tn = resolveTargetName(p, t, tgt->kind);
            side(*tgt, TableRef{tn.schema, tn.name});
        }
    }
    return out;
}

} // namespace driftless::core
