#include "core/engine/twoway/conflicts.h"

#include "core/base/copytext.h"
#include "core/db/pgcatalog.h"
#include "core/db/pgconnection.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/twoway/twoway.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

namespace driftless::core {

namespace {

using json = nlohmann::json;
using Values = std::vector<std::optional<std::string>>;

/// Keys per lookup: one round trip for a busy batch, few enough for the key index to be probed.
constexpr size_t kKeysPerLookup = 1000;

bool isOwnColumn(const std::string &name)
{
    return name.rfind("_driftless_", 0) == 0;
}

Values parseLine(std::string_view line)
{
    std::vector<std::string_view> fields;
    copytext::split(line, fields);
    Values out;
    out.reserve(fields.size());
    for (auto f : fields) {
        if (copytext::isNull(f)) {
            out.emplace_back(std::nullopt);
            continue;
        }
        std::string v;
        copytext::unescape(f, v);
        out.emplace_back(std::move(v));
    }
    return out;
}

json rowJson(const std::vector<std::string> &columns, const std::optional<Values> &v)
{
    if (!v)
        return nullptr;
    json o = json::object();
    for (size_t c = 0; c < columns.size() && c < v->size(); ++c) {
        if (isOwnColumn(columns[c]))
            continue;
        o[columns[c]] = (*v)[c] ? json((*(*v)[c])) : json(nullptr);
    }
    return o;
}

std::string typeOf(const ConflictScope &scope, size_t c)
{
    return c < scope.columnTypes.size() && !scope.columnTypes[c].empty() ? scope.columnTypes[c]
                                                                         : std::string("timestamptz");
}

/// Postgres: the rows by unnest() of the keys' text arrays, cast to the key columns' types.
class PgConflictTarget final : public ConflictTarget {
public:
    explicit PgConflictTarget(PgConnection &c) : m_c(c) {}

    std::map<size_t, Held> rowsFor(const ConflictScope &scope, const RowSet &rows, const std::vector<size_t> &picked,
                                   const std::vector<int> &keyIdx, const std::vector<size_t> &synced,
                                   bool commitTime) override
    {
        const auto &cols = scope.columns;
        std::string arrays, names, on, select;
        for (size_t i = 0; i < keyIdx.size(); ++i) {
            const std::string n = "k" + std::to_string(i + 1);
            arrays += (i ? ", $" : "$") + std::to_string(i + 1) + "::text[]";
            names += n + ", ";
            on += (i ? " AND t." : "t.") + quoteIdent(scope.keyColumns[i]) + " = k." + n + "::" + scope.keyTypes[i];
        }
        for (size_t c : synced)
            select += ", " + pgOutputText("t." + quoteIdent(cols[c]));
        // The commit time of the transaction that wrote the target's row (NULL when unknown).
        if (commitTime)
            select += ", (extract(epoch FROM pg_xact_commit_timestamp(t.xmin)) * 1000000)::bigint::text";
        // FOR UPDATE: the rows stay as read until the batch commits. Without the lock a writer's
        // commit between this read and the merge would be overwritten by a change judged against
        // the row it replaced (a lost edit on this side only, never queued); with it, the writer
        // waits and its change carries the merged row as its before-image.
        const std::string sql = "SELECT k.ord" + select + " FROM unnest(" + arrays + ") WITH ORDINALITY AS k(" + names +
                                "ord) JOIN " + scope.targetSql + " t ON " + on + " FOR UPDATE OF t";
        Params params;
        for (auto &a : pgKeyArrays(rows, picked, 0, picked.size(), keyIdx))
            params.emplace_back(std::move(a));
        auto res = m_c.execParams(sql, params);
        std::map<size_t, Held> out;
        for (int i = 0; i < res.rows(); ++i) {
            Held h;
            h.values.resize(cols.size());
            for (size_t s = 0; s < synced.size(); ++s)
                h.values[synced[s]] = res.optText(i, static_cast<int>(s) + 1);
            if (commitTime)
                if (auto us = res.optText(i, static_cast<int>(synced.size()) + 1))
                    h.commitUs = std::stoll(*us);
            out[picked[static_cast<size_t>(res.toInt(i, 0)) - 1]] = std::move(h);
        }
        return out;
    }

    /// Read by the target's server as the column's type (the text of either side's output; a
    /// NULL stays unknown).
    std::pair<std::optional<std::int64_t>, std::optional<std::int64_t>>
    timestampsUs(const std::string &type, const std::optional<std::string> &mine,
                 const std::optional<std::string> &theirs) override
    {
        if (!mine || !theirs)
            return {};
        // An infinite timestamp has no epoch (and would abort the batch's transaction): unknown.
        auto us = [&](const std::string &p) {
            const std::string v = p + "::" + type;
            return "(CASE WHEN isfinite(" + v + ") THEN (extract(epoch FROM " + v + ") * 1000000)::bigint END)::text";
        };
        auto res = m_c.execParams("SELECT " + us("$1") + ", " + us("$2"), {mine, theirs});
        auto read = [&](int c) -> std::optional<std::int64_t> {
            if (auto t = res.optText(0, c))
                return std::stoll(*t);
            return std::nullopt;
        };
        return {read(0), read(1)};
    }

    /// Each incoming value read by this server as the column's type and printed back as rowsFor()
    /// prints the column (the type's output, pgOutputText()): the input a COPY of that text into
    /// the table would get, so a MariaDB `1` reads as the boolean `t`, a DATETIME as the timestamp
    /// in UTC (the session's zone). One query for all of them.
    void spellIncoming(const ConflictScope &scope, const std::vector<size_t> &synced,
                       const std::vector<Values *> &values) override
    {
        if (synced.empty())
            return;
        json all = json::array();
        for (const Values *v : values) {
            json row = json::array();
            for (size_t c : synced)
                row.push_back(c < v->size() && (*v)[c] ? json(*(*v)[c]) : json(nullptr));
            all.push_back(std::move(row));
        }
        std::string select;
        for (size_t s = 0; s < synced.size(); ++s)
            select += ", " + pgOutputText("(e.r->>" + std::to_string(s) + ")::" +
                                          (synced[s] < scope.columnTypes.size() && !scope.columnTypes[synced[s]].empty()
                                               ? scope.columnTypes[synced[s]]
                                               : std::string("text")));
        auto res = m_c.execParams("SELECT e.ord" + select +
                                      " FROM json_array_elements($1::json) WITH ORDINALITY AS e(r, ord) ORDER BY e.ord",
                                  {all.dump()});
        for (int i = 0; i < res.rows() && static_cast<size_t>(i) < values.size(); ++i) {
            Values &v = *values[static_cast<size_t>(i)];
            for (size_t s = 0; s < synced.size(); ++s)
                if (synced[s] < v.size())
                    v[synced[s]] = res.optText(i, static_cast<int>(s) + 1);
        }
    }

private:
    PgConnection &m_c;
};

std::mutex &countsMutex()
{
    static std::mutex m;
    return m;
}
std::map<std::tuple<std::string, std::string, std::string>, long long> &counts()
{
    static std::map<std::tuple<std::string, std::string, std::string>, long long> m;
    return m;
}

} // namespace

std::string resolveOriginName(const std::string &direction)
{
    return "driftless_" + direction + "_resolve";
}

void countConflicts(const std::string &pipeline, const std::string &table, const std::string &outcome, long long n)
{
    if (n <= 0)
        return;
    std::lock_guard lock(countsMutex());
    counts()[{pipeline, table, outcome}] += n;
}

std::vector<ConflictCountSample> conflictCountsSnapshot()
{
    std::lock_guard lock(countsMutex());
    std::vector<ConflictCountSample> out;
    for (const auto &[k, n] : counts())
        out.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), n});
    return out;
}

ConflictOutcome resolveConflicts(ConflictTarget &target, const ConflictScope &scope, const ConflictPolicy &policy,
                                 RowSet &rows)
{
    ConflictOutcome out;
    const auto &cols = scope.columns;
    std::vector<int> keyIdx;
    for (const auto &k : scope.keyColumns) {
        auto pos = std::find(cols.begin(), cols.end(), k);
        if (pos == cols.end())
            return out; // a layout without the key cannot be compared; the merge reports it
        keyIdx.push_back(static_cast<int>(pos - cols.begin()));
    }
    std::vector<size_t> checked;
    for (size_t r = 0; r < rows.size(); ++r)
        if (rows.beforeIndex(r) != -1)
            checked.push_back(r);
    if (checked.empty())
        return out;

    // The target's rows of the batch's keys, every synced column as text.
    std::vector<size_t> synced;
    for (size_t c = 0; c < cols.size(); ++c)
        if (!isOwnColumn(cols[c]))
            synced.push_back(c);
    const bool commitClock = policy.usesCommitTime();
    std::map<size_t, Values> held;
    std::map<size_t, std::int64_t> heldCommitUs;
    for (size_t from = 0; from < checked.size(); from += kKeysPerLookup) {
        const std::vector<size_t> picked(
            checked.begin() + static_cast<std::ptrdiff_t>(from),
            checked.begin() + static_cast<std::ptrdiff_t>(std::min(checked.size(), from + kKeysPerLookup)));
        for (auto &[r, h] : target.rowsFor(scope, rows, picked, keyIdx, synced, commitClock)) {
            if (h.commitUs)
                heldCommitUs[r] = *h.commitUs;
            held[r] = std::move(h.values);
        }
    }

    // Each change's base and after-image; a value the source did not send did not change (the
    // base's).
    std::map<size_t, std::pair<std::optional<Values>, std::optional<Values>>> images;
    std::vector<Values *> incoming;
    for (size_t r : checked) {
        auto &[base, after] = images[r];
        if (rows.beforeIndex(r) >= 0)
            base = parseLine(rows.before(r));
        const std::string_view mask = rows.unchangedMask(r);
        if (rows.row(r).op != ChangeOp::Delete) {
            after = parseLine(rows.line(r));
            for (size_t c = 0; c < mask.size() && c < after->size(); ++c)
                if (mask[c] == '1' && base)
                    (*after)[c] = (*base)[c];
        }
        for (auto *v : {&base, &after})
            if (*v)
                incoming.push_back(&**v);
    }
    // Across engines the change spells its values as its own server does: compare them as the
    // target spells the same values.
    if (scope.crossEngine && !incoming.empty())
        target.spellIncoming(scope, synced, incoming);

    std::vector<bool> drop(rows.size(), false);
    std::map<size_t, std::string> newMask;
    for (size_t r : checked) {
        const auto &row = rows.row(r);
        std::optional<Values> tgt;
        if (auto it = held.find(r); it != held.end())
            tgt = it->second;
        const std::optional<Values> &base = images[r].first;
        const std::optional<Values> &after = images[r].second;
        const std::string_view mask = rows.unchangedMask(r);
        auto same = [&](const std::optional<Values> &x, const std::optional<Values> &y) {
            if (!x || !y)
                return !x && !y;
            for (size_t c : synced)
                if (c < x->size() && c < y->size() && (*x)[c] != (*y)[c])
                    return false;
            return true;
        };
        if (same(tgt, base) || same(tgt, after))
            continue; // the target is where the change started from, or the change already arrived
        auto changed = [&](const std::optional<Values> &x) {
            std::vector<size_t> out;
            for (size_t c : synced)
                if (!x || !base || (*x)[c] != (*base)[c])
                    out.push_back(c);
            return out;
        };
        const auto mine = changed(after);
        const auto theirs = changed(tgt);
        std::vector<size_t> overlap;
        std::set_intersection(mine.begin(), mine.end(), theirs.begin(), theirs.end(), std::back_inserter(overlap));

        ConflictPolicy::Rule rule = policy.rule;
        if (rule == ConflictPolicy::Rule::MergeColumns) {
            if (overlap.empty() && row.op == ChangeOp::Update && base && tgt) {
                // Field-level merge: write only what this change changed; the target's own edit
                // of the other columns stays, and comes back the other way the same.
                std::string m(cols.size(), '0');
                for (size_t c = 0; c < cols.size(); ++c) {
                    const bool key = std::find(keyIdx.begin(), keyIdx.end(), static_cast<int>(c)) != keyIdx.end();
                    const bool write = std::find(mine.begin(), mine.end(), c) != mine.end();
                    if ((c < mask.size() && mask[c] == '1') || (!key && !write && !isOwnColumn(cols[c])))
                        m[c] = '1';
                }
                newMask[r] = m;
                ++out.merged;
                continue;
            }
            rule = policy.onOverlap;
        }
        if (rule == ConflictPolicy::Rule::NewerWins) {
            // Which side is later, or nothing (the queue) when the clocks cannot tell.
            std::optional<bool> incomingNewer;
            const NewerWins &nw = policy.newer;
            std::optional<std::int64_t> mineUs, theirsUs;
            if (row.op != ChangeOp::Delete && tgt) {
                if (nw.clock == NewerWins::Clock::CommitTime) {
                    if (rows.commitTime(r))
                        mineUs = rows.commitTime(r);
                    if (auto it = heldCommitUs.find(r); it != heldCommitUs.end())
                        theirsUs = it->second;
                } else if (auto pos = std::find(cols.begin(), cols.end(), nw.column); pos != cols.end()) {
                    const auto c = static_cast<size_t>(pos - cols.begin());
                    std::tie(mineUs, theirsUs) = target.timestampsUs(typeOf(scope, c), (*after)[c], (*tgt)[c]);
                }
            }
            if (mineUs && theirsUs) {
                const std::int64_t apart = *mineUs - *theirsUs;
                if (apart > nw.maxSkewMs * 1000 || -apart > nw.maxSkewMs * 1000)
                    incomingNewer = apart > 0;
            }
            if (!incomingNewer)
                rule = ConflictPolicy::Rule::Manual;
            else
                rule = *incomingNewer == scope.incomingIsSource ? ConflictPolicy::Rule::SourceWins
                                                                : ConflictPolicy::Rule::TargetWins;
        }
        if (rule == ConflictPolicy::Rule::SourceWins) {
            drop[r] = !scope.incomingIsSource;
            ++out.sourceWon;
        } else if (rule == ConflictPolicy::Rule::TargetWins) {
            drop[r] = scope.incomingIsSource;
            ++out.targetWon;
        } else {
            drop[r] = true;
            ++out.queued;
            ConflictRecord rec;
            rec.pipeline = scope.pipeline;
            rec.table = scope.table;
            json key = json::object();
            const Values keyFrom = parseLine(rows.line(r));
            for (size_t i = 0; i < keyIdx.size(); ++i) {
                const auto &v = keyFrom.at(static_cast<size_t>(keyIdx[i]));
                key[scope.keyColumns[i]] = v ? json(*v) : json(nullptr);
            }
            rec.key = key.dump();
            json names = json::array();
            for (size_t c : overlap.empty() ? mine : overlap)
                names.push_back(cols[c]);
            rec.columns = names.dump();
            const json incoming = rowJson(cols, after);
            const json held = rowJson(cols, tgt);
            rec.source = (scope.incomingIsSource ? incoming : held).dump();
            rec.target = (scope.incomingIsSource ? held : incoming).dump();
            rec.base = rowJson(cols, base).dump();
            out.queue.push_back(std::move(rec));
        }
    }
    if (newMask.empty() && std::none_of(drop.begin(), drop.end(), [](bool d) { return d; }))
        return out;
    RowSet kept;
    kept.reserve(rows.size(), rows.bytes());
    for (size_t r = 0; r < rows.size(); ++r) {
        if (drop[r])
            continue;
        auto m = newMask.find(r);
        kept.append(rows.line(r), rows.row(r).op, rows.row(r).version,
                    m != newMask.end() ? std::string_view(m->second) : rows.unchangedMask(r));
        if (rows.commitTime(r))
            kept.setCommitTime(kept.size() - 1, rows.commitTime(r));
    }
    rows = std::move(kept);
    return out;
}

void reportConflicts(EngineObserver &observer, const TableKey &key, const ConflictScope &scope,
                     const ConflictOutcome &o)
{
    countConflicts(scope.pipeline, scope.table, "merged", o.merged);
    countConflicts(scope.pipeline, scope.table, "source_won", o.sourceWon);
    countConflicts(scope.pipeline, scope.table, "target_won", o.targetWon);
    countConflicts(scope.pipeline, scope.table, "queued", o.queued);
    for (const auto &rec : o.queue)
        observer.conflict(rec);
    if (const long long n = o.merged + o.sourceWon + o.targetWon + o.queued)
        observer.event(Level::Info, key, "conflict",
                       std::to_string(n) + " conflicting changes: " + std::to_string(o.merged) + " merged by column, " +
                           std::to_string(o.sourceWon) + " won by the source, " + std::to_string(o.targetWon) +
                           " by the target, " + std::to_string(o.queued) +
                           " queued (driftless-cli conflicts lists them)");
}

ConflictOutcome resolveConflicts(PgConnection &target, const ConflictScope &scope, const ConflictPolicy &policy,
                                 RowSet &rows)
{
    PgConflictTarget t(target);
    return resolveConflicts(t, scope, policy, rows);
}

TableSchema postgresColumnsOf(const Endpoint &endpoint, const TargetName &table)
{
    PgConnection c = connectPostgres(endpoint, "driftless resolve");
    return pgcatalog::describeTable(c, TableRef{table.schema, table.name});
}

std::vector<std::string> spellAsPostgres(const Endpoint &endpoint, const TableSchema &columns,
                                         const std::vector<std::string> &rows)
{
    PgConnection c = connectPostgres(endpoint, "driftless resolve");
    std::vector<std::string> out;
    for (const auto &text : rows) {
        json row = text.empty() ? json(nullptr) : json::parse(text, nullptr, false);
        if (!row.is_object()) {
            out.push_back(text);
            continue;
        }
        Params params;
        std::string select;
        std::vector<std::string> names;
        for (auto it = row.begin(); it != row.end(); ++it) {
            const int i = columns.columnIndex(it.key());
            if (i < 0 || it.value().is_null())
                continue;
            params.emplace_back(it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
            select += (select.empty() ? "" : ", ") + pgOutputText("$" + std::to_string(params.size()) + "::" +
                                                                  columns.columns[static_cast<size_t>(i)].typeSql);
            names.push_back(it.key());
        }
        if (!names.empty()) {
            auto res = c.execParams("SELECT " + select, params);
            for (size_t n = 0; n < names.size(); ++n)
                row[names[n]] = res.text(0, static_cast<int>(n));
        }
        out.push_back(row.dump());
    }
    return out;
}

namespace {

/// A Postgres side: the row's key as parameters, the transaction begun under the resolve origin
/// (or with the marker message first).
class PgResolutionSide final : public ResolutionSide {
public:
    PgResolutionSide(const Endpoint &endpoint, const std::string &direction, const TargetName &table,
                     const std::string &keyJson)
        : m_c(connectPostgres(endpoint, "driftless resolve")), m_key(json::parse(keyJson)),
          m_table(quoteIdent(table.schema) + "." + quoteIdent(table.name))
    {
        markOwnWrites(m_c, resolveOriginName(direction));
        for (auto it = m_key.begin(); it != m_key.end(); ++it) {
            m_params.emplace_back(it.value().is_null() ? std::nullopt
                                                       : std::optional<std::string>(it.value().get<std::string>()));
            m_where +=
                (m_where.empty() ? "" : " AND ") + quoteIdent(it.key()) + " = $" + std::to_string(m_params.size());
        }
        m_c.begin();
    }
    ~PgResolutionSide() override
    {
        if (m_open)
            m_c.rollback();
    }

    std::string lockRow(const std::vector<std::string> &columns) override
    {
        std::string select;
        for (const auto &name : columns)
            select += (select.empty() ? "" : ", ") + pgOutputText(quoteIdent(name));
        auto res = m_c.execParams("SELECT " + (select.empty() ? std::string("1") : select) + " FROM " + m_table +
                                      " WHERE " + m_where + " FOR UPDATE",
                                  m_params);
        if (res.rows() == 0)
            return "null";
        json row = json::object();
        for (size_t i = 0; i < columns.size(); ++i) {
            const auto v = res.optText(0, static_cast<int>(i));
            row[columns[i]] = v ? json(*v) : json(nullptr);
        }
        return row.dump();
    }

    void write(const std::string &rowJson) override
    {
        const json row = json::parse(rowJson);
        if (row.is_null()) {
            m_c.execParams("DELETE FROM " + m_table + " WHERE " + m_where, m_params);
            return;
        }
        Params values;
        std::string names, placeholders, set, keys;
        for (auto it = row.begin(); it != row.end(); ++it) {
            values.emplace_back(it.value().is_null() ? std::nullopt
                                                     : std::optional<std::string>(it.value().get<std::string>()));
            names += (names.empty() ? "" : ", ") + quoteIdent(it.key());
            placeholders += (placeholders.empty() ? "$" : ", $") + std::to_string(values.size());
            if (!m_key.contains(it.key()))
                set += (set.empty() ? "" : ", ") + quoteIdent(it.key()) + " = EXCLUDED." + quoteIdent(it.key());
        }
        for (auto it = m_key.begin(); it != m_key.end(); ++it)
            keys += (keys.empty() ? "" : ", ") + quoteIdent(it.key());
        m_c.execParams("INSERT INTO " + m_table + " (" + names + ") VALUES (" + placeholders + ") ON CONFLICT (" +
                           keys + ") DO " + (set.empty() ? std::string("NOTHING") : "UPDATE SET " + set),
                       values);
    }

    void commit() override
    {
        m_c.commit();
        m_open = false;
    }

private:
    PgConnection m_c;
    json m_key;
    std::string m_table;
    Params m_params;
    std::string m_where;
    bool m_open = true;
};

} // namespace

std::unique_ptr<ResolutionSide> openPgResolutionSide(const Endpoint &endpoint, const std::string &direction,
                                                     const TargetName &table, const std::string &keyJson)
{
    return std::make_unique<PgResolutionSide>(endpoint, direction, table, keyJson);
}

} // namespace driftless::core
