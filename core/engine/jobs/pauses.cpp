#include "core/engine/jobs/pauses.h"

#include "core/engine/jobs/tableargs.h"
#include "core/model/error.h"
#include "core/state/statestore.h"

namespace driftless::core {

bool PauseSet::contains(const std::string &pipeline, const TableRef &table) const
{
    std::lock_guard lock(m_mutex);
    return m_keys.count({pipeline, table}) > 0;
}

bool PauseSet::assign(std::set<Key> paused)
{
    std::lock_guard lock(m_mutex);
    if (paused == m_keys)
        return false;
    m_keys = std::move(paused);
    return true;
}

std::set<PauseSet::Key> PauseSet::keys() const
{
    std::lock_guard lock(m_mutex);
    return m_keys;
}

std::set<PauseSet::Key> readPauses(StateStore &store)
{
    std::set<PauseSet::Key> out;
    for (const auto &p : store.pausedTables())
        out.insert({p.pipeline, p.table});
    return out;
}

std::string pausedMessage(Strategy strategy)
{
    if (strategy == Strategy::Cdc)
        return "paused: its changes are not applied while the pipeline's other tables stream; Resume re-copies it "
               "through the guarded merge";
    return "paused: skipped by the scheduler until resumed; its checkpoint stays";
}

namespace {

std::string resumedMessage(const TableKey &key)
{
    const std::string name = key.display();
    switch (key.strategy) {
    case Strategy::Cdc:
        return "resumed " + name +
               ": it is re-copied through the guarded merge while the stream goes on (only rows "
               "that differ are written; rows the source no longer has are removed)";
    case Strategy::Cursor:
        return "resumed " + name + ": its next pass runs at once and catches up from its cursor";
    case Strategy::FullRefresh:
        break;
    }
    return "resumed " + name + ": its next pass runs at once and reloads it";
}

std::string pausedNow(const TableKey &key)
{
    const std::string name = key.display();
    if (key.strategy == Strategy::Cdc)
        return "paused " + name +
               ": its changes are no longer applied while the pipeline's other tables stream; "
               "Resume re-copies it through the guarded merge";
    return "paused " + name + ": the scheduler skips it until resumed; its state and checkpoint stay";
}

} // namespace

std::vector<PauseChange> setTablesPaused(StateStore &store, const Workspace &ws, const std::string &pipeline,
                                         const std::vector<std::string> &tables, bool pause)
{
    const PipelineSpec *p = ws.pipeline(pipeline);
    if (!p)
        throw ConfigError("no pipeline named '" + pipeline + "'");
    std::vector<const TableSpec *> chosen;
    for (const auto &name : tables) {
        const TableRef ref = resolveTableArgument(ws, *p, name);
        const TableSpec *found = nullptr;
        for (const auto &t : p->tables)
            if (t.table == ref)
                found = &t;
        if (!found)
            throw ConfigError("pipeline '" + pipeline + "' has no table " + ref.display());
        chosen.push_back(found);
    }
    if (chosen.empty())
        for (const auto &t : p->tables)
            chosen.push_back(&t);

    std::vector<PauseChange> out;
    for (const TableSpec *t : chosen) {
        PauseChange c;
        c.key = {pipeline, t->table, t->strategy};
        c.changed = store.setPaused(pipeline, t->table, pause);
        if (!c.changed) {
            c.message = c.key.display() + (pause ? " is already paused" : " is not paused");
            out.push_back(std::move(c));
            continue;
        }
        c.message = pause ? pausedNow(c.key) : resumedMessage(c.key);
        // The status shows it at once, also when no engine runs; a running one confirms it.
        store.setTableState(pipeline, t->table, t->strategy, pause ? TableState::Paused : TableState::Idle,
                            pause ? pausedMessage(t->strategy) : "resumed; waiting for the sync");
        store.addEvent(Level::Info, pipeline, t->table.display(), pause ? "paused" : "resumed", c.message);
        out.push_back(std::move(c));
    }
    return out;
}

} // namespace driftless::core
