#include "core/engine/slots/slotguard.h"

#include "core/base/clock.h"
#include "core/db/pgcatalog.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/jobs/tableargs.h"
#include "core/engine/jobs/tablejob.h"
#include "core/model/duration.h"
#include "core/model/error.h"
#include "core/state/statestore.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace driftless::core {

std::vector<GuardBreach> slotGuardBreaches(const Workspace &ws, const std::vector<SourceSlots> &sources)
{
    std::vector<GuardBreach> out;
    for (const auto &ss : sources) {
        const Endpoint *e = ws.endpoint(ss.source);
        if (!e || !e->slotGuard || e->slotGuard->action != SlotGuard::Action::Fallback)
            continue;
        const SlotGuard &g = *e->slotGuard;
        for (const auto &s : ss.replicationSlots) {
            if (s.owner.empty())
                continue;
            std::string reason;
            if (s.walStatus == WalStatus::Lost)
                reason = "the slot was invalidated (wal_status lost): the WAL it needed is gone";
            else if (g.maxRetained > 0 && s.retainedBytes && *s.retainedBytes > g.maxRetained)
                reason = "the slot holds " + humanBytes(*s.retainedBytes) + " of WAL, past max_retained " +
                         humanBytes(g.maxRetained);
            else if (g.minSafeWal && s.safeWalSize && *s.safeWalSize < *g.minSafeWal)
                reason = "only " + humanBytes(std::max<std::int64_t>(0, *s.safeWalSize)) +
                         " of WAL may be written before the slot is invalidated, below min_safe_wal " +
                         humanBytes(*g.minSafeWal);
            if (!reason.empty())
                out.push_back({s.owner, ss.source, s.slot, reason});
        }
    }
    return out;
}

std::string fallbackCursorFor(const TableSpec &spec, const TableSchema &schema)
{
    if (spec.fallbackCursor)
        return schema.columnIndex(*spec.fallbackCursor) >= 0 ? *spec.fallbackCursor : std::string();
    // Only columns whose name says they change on every write: created_at would miss updates.
    for (const char *name : {"updated_at", "modified_at", "last_modified", "last_updated", "updated_on", "modified_on",
                             "changed_at", "last_modified_at", "mtime"}) {
        const int i = schema.columnIndex(name);
        if (i < 0)
            continue;
        const auto &c = schema.columns[static_cast<size_t>(i)];
        if (!c.isArray && (c.baseType == "timestamptz" || c.baseType == "timestamp"))
            return name;
    }
    return {};
}

std::vector<std::string> fallBack(StateStore &store, const GuardBreach &b)
{
    std::vector<std::string> lines;
    Workspace ws = store.loadWorkspace();
    PipelineSpec *p = nullptr;
    for (auto &x : ws.pipelines)
        if (x.name == b.pipeline)
            p = &x;
    if (!p)
        throw ConfigError("no pipeline named '" + b.pipeline + "'");
    const Endpoint &src = *ws.endpoint(p->source);
    auto note = [&](Level level, const std::string &table, const std::string &msg) {
        store.addEvent(level, b.pipeline, table, "slot_guard", msg);
        lines.push_back(msg);
    };

    // 1. The source first: end the reader, drop the slot.
    {
        PgConnection c = connectPostgres(src, "driftless slot guard");
        c.execParams("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND "
                     "active_pid IS NOT NULL",
                     {b.slot});
        bool dropped = false;
        for (int i = 0; i < 100 && !dropped; ++i) {
            auto r = c.execParams("SELECT active FROM pg_replication_slots WHERE slot_name = $1", {b.slot});
            if (r.rows() == 0) {
                dropped = true;
                break;
            }
            if (!r.toBool(0, 0)) {
                c.execParams("SELECT pg_drop_replication_slot($1)", {b.slot});
                dropped = true;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        if (!dropped)
            throw Error(ErrorKind::Transient, "slot guard: slot " + b.slot + " on " + b.source +
                                                  " stayed in use after its reader was ended; not dropped yet");
        note(Level::Warn, "",
             "slot guard on " + b.source + ": " + b.reason + "; dropped replication slot " + b.slot +
                 " so the source keeps its disk, and fell back to cursor sync");
    }

    // 2-4. The tables.
    PgConnection c = connectPostgres(src, "driftless slot guard");
    const auto now = wallClockMs();
    for (auto &t : p->tables) {
        if (t.strategy != Strategy::Cdc)
            continue;
        const std::string name = t.table.display();
        std::string cursor;
        try {
            cursor = fallbackCursorFor(t, pgcatalog::describeTable(c, t.table));
        } catch (const Error &e) {
            note(Level::Error, name, name + " could not be read to choose a cursor column: " + e.what());
            continue;
        }
        if (cursor.empty()) {
            note(Level::Error, name,
                 name +
                     " has no cursor column to fall back to: it stays stopped until promoted back to CDC "
                     "(driftless-cli promote " +
                     b.pipeline + " " + name +
                     "); add fallback_cursor: to the table "
                     "to let it fall back next time");
            continue;
        }
        for (const auto &job : jobsFor(ws, b.pipeline))
            if (job.spec.table == t.table)
                createMerger(job.target, {b.pipeline, t.table, job.targetName, Strategy::Cdc})->clearCheckpoint();
        t.strategy = Strategy::Cursor;
        t.cursor = cursor;
        t.fallbackFrom = Strategy::Cdc;
        store.addPendingReconcile({b.pipeline, name, "slot guard fallback", now, true});
        note(Level::Warn, name,
             name + " switched from CDC to cursor sync by " + cursor +
                 "; a full reconciliation follows its first "
                 "pass and repairs what cursor sync cannot see (rows deleted meanwhile). Back to CDC: driftless-cli "
                 "promote " +
                 b.pipeline);
    }
    store.applyWorkspace(ws);
    return lines;
}

std::vector<GuardBreach> enforceSlotGuards(StateStore &store)
{
    const Workspace ws = store.loadWorkspace();
    bool any = false;
    for (const auto &[name, e] : ws.endpoints)
        any = any || (e.slotGuard && e.slotGuard->action == SlotGuard::Action::Fallback);
    if (!any)
        return {};
    auto breaches = slotGuardBreaches(ws, listSlots(ws));
    for (const auto &b : breaches)
        fallBack(store, b);
    return breaches;
}

std::vector<std::string> promoteToCdc(StateStore &store, const std::string &pipeline,
                                      const std::vector<std::string> &tables)
{
    Workspace ws = store.loadWorkspace();
    PipelineSpec *p = nullptr;
    for (auto &x : ws.pipelines)
        if (x.name == pipeline)
            p = &x;
    if (!p)
        throw ConfigError("no pipeline named '" + pipeline + "'");
    std::vector<TableRef> wanted;
    for (const auto &name : tables)
        wanted.push_back(resolveTableArgument(ws, *p, name));
    std::vector<std::string> lines;
    for (auto &t : p->tables) {
        const bool named = std::find(wanted.begin(), wanted.end(), t.table) != wanted.end();
        if (!wanted.empty() && !named)
            continue;
        const std::string name = t.table.display();
        if (!t.fallbackFrom) {
            if (named && t.strategy != Strategy::Cdc)
                throw ConfigError(name + " did not fall back from CDC (it uses " + std::string(toString(t.strategy)) +
                                  "); to change its strategy, edit the workspace YAML and apply it");
            if (named && t.strategy == Strategy::Cdc)
                lines.push_back(name + " already uses CDC: the next run creates its slot if it has none");
            continue;
        }
        for (const auto &job : jobsFor(ws, pipeline))
            if (job.spec.table == t.table)
                createMerger(job.target, {pipeline, t.table, job.targetName, Strategy::Cursor})->clearCheckpoint();
        t.strategy = Strategy::Cdc;
        t.cursor.reset();
        t.fallbackFrom.reset();
        store.clearPendingReconcile(pipeline, name);
        const std::string msg = name + " promoted back to CDC: the next run creates a slot, copies the table "
                                       "through the guarded merge and streams";
        store.addEvent(Level::Info, pipeline, name, "slot_guard", msg);
        lines.push_back(msg);
    }
    if (lines.empty())
        throw ConfigError("pipeline '" + pipeline + "' has no table that fell back from CDC");
    // Tables that stayed on CDC (no cursor column) lost their slot with the others: without it
    // their stream cannot resume, so they load again from the new slot's snapshot too.
    const Endpoint &src = *ws.endpoint(p->source);
    PgConnection c = connectPostgres(src, "driftless promote");
    if (c.execParams("SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", {p->slotName()}).rows() == 0) {
        for (const auto &job : jobsFor(ws, pipeline)) {
            if (job.spec.strategy != Strategy::Cdc)
                continue;
            auto m = createMerger(job.target, {pipeline, job.spec.table, job.targetName, Strategy::Cdc});
            auto cp = m->readCheckpoint();
            if (!cp || cp->position.find("\"stream\"") == std::string::npos)
                continue;
            m->clearCheckpoint();
            const std::string name = job.spec.table.display();
            const std::string msg = name + " lost its slot with the fallback: it is copied again from the new "
                                           "slot's snapshot through the guarded merge";
            store.addEvent(Level::Info, pipeline, name, "slot_guard", msg);
            lines.push_back(msg);
        }
    }
    store.applyWorkspace(ws);
    return lines;
}

} // namespace driftless::core
