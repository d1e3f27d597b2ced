#include "core/mergers/pgmerger.h"

#include "core/base/copytext.h"
#include "core/base/testhooks.h"
#include "core/mergers/softdelete.h"
#include "core/model/error.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <set>

namespace driftless::core {

namespace {

constexpr const char *kBookkeeping = R"sql(
CREATE SCHEMA IF NOT EXISTS _driftless;
CREATE TABLE IF NOT EXISTS _driftless.checkpoints (
    pipeline text NOT NULL,
    source_table text NOT NULL,
    target_table text NOT NULL,
    strategy text NOT NULL,
    position text NOT NULL,
    version bigint NOT NULL,
    rows_applied bigint NOT NULL DEFAULT 0,
    batches bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (pipeline, source_table)
);
ALTER TABLE _driftless.checkpoints ADD COLUMN IF NOT EXISTS request text;
)sql";

// A replayed older batch must not move the position back, so the position only follows
// versions at least as new as the stored one.
constexpr const char *kPgUpsertCheckpoint = R"sql(
INSERT INTO _driftless.checkpoints AS c (pipeline, source_table, target_table, strategy, position, version,
                                         rows_applied, batches, updated_at)
VALUES ($1, $2, $3, $4, $5, $6::bigint, $7::bigint, 1, now())
ON CONFLICT (pipeline, source_table) DO UPDATE SET
    target_table = EXCLUDED.target_table,
    strategy = EXCLUDED.strategy,
    position = CASE WHEN EXCLUDED.version >= c.version THEN EXCLUDED.position ELSE c.position END,
    version = GREATEST(c.version, EXCLUDED.version),
    rows_applied = c.rows_applied + EXCLUDED.rows_applied,
    batches = c.batches + 1,
    updated_at = now()
)sql";

/// Keys per lookup of partialRowsWithoutTarget: one round trip for a batch of a busy table, few
/// enough for the planner to probe the key index per key.
constexpr size_t kKeysPerLookup = 1000;

/// Runs DDL that may race with another session doing the same IF NOT EXISTS (which can still
/// fail with a unique violation on the catalog); retries a few times.
void racyDdl(PgConnection &conn, const std::string &sql)
{
    for (int attempt = 0;; ++attempt) {
        try {
            conn.exec(sql);
            return;
        } catch (const SqlError &e) {
            bool race = e.code() == "23505" || e.code() == "42P06" || e.code() == "42P07" || e.code() == "42710";
            if (!race || attempt >= 3)
                throw;
        }
    }
}

/// A bookkeeping name from a target name: readable prefix, hash suffix, within 63 bytes.
std::string bookName(const std::string &prefix, const TargetName &t)
{
    std::string full = t.schema + "." + t.name;
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : full) {
        h ^= c;
        h *= 1099511628211ull;
    }
    std::string readable;
    for (char c : t.name) {
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')
            readable += c;
        else if (c >= 'A' && c <= 'Z')
            readable += static_cast<char>(c - 'A' + 'a');
        if (readable.size() >= 36)
            break;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return prefix + readable + "_" + std::string(hex, 10);
}

constexpr size_t kFlushBytes = 1 << 20;

/// Runs DDL that gives a column its generation expression. False when the target cannot take
/// the expression (a function, type or operator only the source has: SQLSTATE class 42, or a
/// feature it lacks), which leaves an open transaction usable; other errors are thrown.
bool tryGenerationDdl(PgConnection &conn, const std::string &sql)
{
    const bool txn = conn.inTransaction();
    if (txn)
        conn.exec("SAVEPOINT driftless_generated");
    try {
        if (txn)
            conn.exec(sql);
        else
            racyDdl(conn, sql);
        if (txn)
            conn.exec("RELEASE SAVEPOINT driftless_generated");
        return true;
    } catch (const SqlError &e) {
        if (txn)
            conn.exec("ROLLBACK TO SAVEPOINT driftless_generated");
        const bool expression =
            e.code().rfind("42", 0) == 0 && e.code() != "42P06" && e.code() != "42P07" && e.code() != "42710";
        if (!expression && e.code() != "0A000")
            throw;
        return false;
    }
}

/// Appends the COPY text fields of `line` but those `skip` marks (fields past its end are kept).
void appendWithout(std::string_view line, const std::vector<bool> &skip, std::string &out)
{
    size_t field = 0, start = 0;
    bool first = true;
    for (size_t i = 0; i <= line.size(); ++i) {
        if (i < line.size() && line[i] != '\t')
            continue;
        if (field >= skip.size() || !skip[field]) {
            if (!first)
                out += '\t';
            out.append(line.substr(start, i - start));
            first = false;
        }
        ++field;
        start = i + 1;
    }
}

} // namespace

PgMerger::PgMerger(PgConnection conn, MergeTarget target)
    : PgMerger(std::make_shared<PgConnection>(std::move(conn)), std::move(target))
{
}

PgMerger::PgMerger(std::shared_ptr<PgConnection> conn, MergeTarget target)
    : m_conn(std::move(conn)), m_target(std::move(target))
{
    m_targetSql = quoteIdent(m_target.target.schema) + "." + quoteIdent(m_target.target.name);
}

std::string PgMerger::describeTarget() const
{
    return m_conn->describe() + " " + m_target.target.display();
}

std::string PgMerger::stagingTable() const
{
    return "_driftless." + quoteIdent(bookName("stg_", m_target.target));
}

std::string PgMerger::tombstoneTable() const
{
    return "_driftless." + quoteIdent(bookName("tomb_", m_target.target));
}

std::string PgMerger::seenTable() const
{
    return "_driftless." + quoteIdent(bookName("seen_", m_target.target));
}

void PgMerger::ensureBookkeeping(PgConnection &conn)
{
    racyDdl(conn, kBookkeeping);
}

std::string PgMerger::columnTypeSql(const ColumnInfo &c)
{
    if (c.isEnum)
        return quoteIdent(m_target.target.schema) + "." + quoteIdent(c.baseType) + (c.isArray ? "[]" : "");
    if (c.isBuiltinType())
        return c.typeSql;
    // A type from an extension or a user-defined composite/range: use it when the target knows
    // a type of that name, else keep the value in its text form.
    auto r = m_conn->execParams("SELECT to_regtype($1) IS NOT NULL", {c.typeSql});
    return r.toBool(0, 0) ? c.typeSql : std::string(c.isArray ? "text[]" : "text");
}

void PgMerger::ensureTypes()
{
    for (const auto &c : m_source.columns) {
        if (!c.isEnum)
            continue;
        std::string type = quoteIdent(m_target.target.schema) + "." + quoteIdent(c.baseType);
        // The type and its labels in one query; DDL only for what is missing (ADD VALUE locks
        // the type, and this runs on every pass).
        auto labels =
            m_conn->execParams("SELECT e.enumlabel FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
                               "LEFT JOIN pg_enum e ON e.enumtypid = t.oid "
                               "WHERE n.nspname = $1 AND t.typname = $2",
                               {m_target.target.schema, c.baseType});
        if (labels.rows() == 0) {
            std::string list;
            for (const auto &l : c.enumLabels)
                list += (list.empty() ? "" : ", ") + pgLiteral(l);
            racyDdl(*m_conn, "CREATE TYPE " + type + " AS ENUM (" + list + ")");
        } else {
            std::set<std::string> have;
            for (int r = 0; r < labels.rows(); ++r)
                if (!labels.isNull(r, 0))
                    have.insert(labels.text(r, 0));
            for (const auto &l : c.enumLabels)
                if (!have.count(l))
                    m_conn->exec("ALTER TYPE " + type + " ADD VALUE IF NOT EXISTS " + pgLiteral(l));
        }
    }
}

PgMerger::Layout PgMerger::readLayout()
{
    // One round trip for everything prepare() would otherwise create or alter "if not exists":
    // the target's columns (and which it generates), the staging table's columns and NOT NULLs,
    // and whether the bookkeeping tables are there.
    auto r = m_conn->execParams(
        "SELECT 0, a.attname, a.attgenerated <> '' FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped "
        "UNION ALL "
        "SELECT 1, a.attname, a.attnotnull FROM pg_attribute a "
        "WHERE a.attrelid = to_regclass($3) AND a.attnum > 0 AND NOT a.attisdropped "
        "UNION ALL "
        "SELECT 2, 'checkpoints', EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = "
        "to_regclass('_driftless.checkpoints') AND attname = 'request' AND NOT attisdropped) "
        "UNION ALL SELECT 2, 'tombstones', to_regclass($4) IS NOT NULL "
        "UNION ALL SELECT 2, 'seen', to_regclass($5) IS NOT NULL",
        {m_target.target.schema, m_target.target.name, stagingTable(), tombstoneTable(), seenTable()});
    Layout layout;
    for (int i = 0; i < r.rows(); ++i) {
        const int part = r.toInt(i, 0);
        const std::string name = r.text(i, 1);
        const bool flag = r.toBool(i, 2);
        if (part == 0) {
            layout.target.push_back(name);
            if (flag)
                layout.generated.insert(name);
        } else if (part == 1)
            layout.staging.emplace(name, flag);
        else if (name == "checkpoints")
            layout.bookkeeping = flag;
        else if (name == "tombstones")
            layout.tombstones = flag;
        else if (name == "seen")
            layout.seen = flag;
    }
    return layout;
}

bool PgMerger::stagingReady(const Layout &layout) const
{
    if (layout.staging.empty())
        return false;
    for (const char *own : {"_driftless_version", "_driftless_op", "_driftless_unchanged"})
        if (!layout.staging.count(own))
            return false;
    for (const auto &c : m_source.columns)
        if (!layout.staging.count(c.name))
            return false;
    for (const auto &[name, notNull] : layout.staging)
        if (notNull && name.rfind("_driftless_", 0) != 0)
            return false; // a delete stages only its key
    return !m_source.hasPrimaryKey() || (layout.tombstones && layout.seen);
}

bool PgMerger::generatedHere(const ColumnInfo &c) const
{
    // A key column is never left to the target: the merge matches rows on the values it sends.
    if (c.generationExpr.empty())
        return false;
    for (int k : m_source.primaryKey)
        if (m_source.columns[static_cast<size_t>(k)].name == c.name)
            return false;
    return true;
}

std::string PgMerger::columnDdl(const ColumnInfo &c, bool generated)
{
    return quoteIdent(c.name) + " " + columnTypeSql(c) +
           (generated ? " GENERATED ALWAYS AS (" + c.generationExpr + ") STORED" : "");
}

void PgMerger::ensureTable(const Layout &layout)
{
    const auto &have = layout.target;
    m_generated = layout.generated;
    bool altered = false;
    if (have.empty()) {
        // The source's generated columns are generated here too: the target computes them, as
        // Postgres's own logical replication has a subscriber do. Should an expression not work
        // here, the column is a plain one holding the source's values.
        auto create = [&](bool generated) {
            std::string ddl = "CREATE TABLE IF NOT EXISTS " + m_targetSql + " (";
            for (const auto &c : m_source.columns)
                ddl += columnDdl(c, generated && generatedHere(c)) + (c.notNull ? " NOT NULL" : "") + ", ";
            ddl += "_driftless_version bigint NOT NULL DEFAULT 0";
            if (m_target.softDeletes)
                ddl += ", " + std::string(kDeletedAtColumn) + " timestamptz";
            if (m_source.hasPrimaryKey()) {
                ddl += ", PRIMARY KEY (";
                for (size_t i = 0; i < m_source.primaryKey.size(); ++i)
                    ddl += (i ? ", " : "") +
                           quoteIdent(m_source.columns[static_cast<size_t>(m_source.primaryKey[i])].name);
                ddl += ")";
            }
            return ddl + ")";
        };
        bool anyGenerated = false;
        for (const auto &c : m_source.columns)
            anyGenerated = anyGenerated || generatedHere(c);
        if (!anyGenerated || !tryGenerationDdl(*m_conn, create(true)))
            racyDdl(*m_conn, create(false));
        altered = anyGenerated;
    } else {
        auto has = [&](const std::string &n) { return std::find(have.begin(), have.end(), n) != have.end(); };
        if (!has("_driftless_version") && !m_target.adopt)
            throw SchemaError("target table " + m_target.target.display() +
                                  " exists but is not managed by Driftless "
                                  "(it has no _driftless_version column)",
                              "drop or rename it, set target_table to another name, or adopt it with adopt: true on "
                              "the table (its rows are compared with the source and only what differs is copied)");
        if (!has("_driftless_version"))
            adoptTable();
        if (m_target.softDeletes && !has(kDeletedAtColumn))
            m_conn->exec("ALTER TABLE " + m_targetSql + " ADD COLUMN IF NOT EXISTS " + kDeletedAtColumn +
                         " timestamptz");
        for (const auto &c : m_source.columns) {
            if (has(c.name)) {
                // The source stopped generating it (DROP EXPRESSION): from now on it holds what the
                // source writes, so the target must stop computing it. A plain column an older
                // version made for a generated one stays plain and keeps receiving the values.
                if (m_generated.count(c.name) && !c.generated) {
                    m_conn->exec("ALTER TABLE " + m_targetSql + " ALTER COLUMN " + quoteIdent(c.name) +
                                 " DROP EXPRESSION");
                    m_generated.erase(c.name);
                }
                continue;
            }
            // The source gained a column: add it (nullable, so existing rows stay valid; a generated
            // one computes its value for them).
            const std::string add = "ALTER TABLE " + m_targetSql + " ADD COLUMN IF NOT EXISTS ";
            if (generatedHere(c) && tryGenerationDdl(*m_conn, add + columnDdl(c, true))) {
                altered = true;
                continue;
            }
            m_conn->exec(add + columnDdl(c, false));
        }
    }
    if (altered) {
        m_generated.clear();
        auto r = m_conn->execParams("SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND "
                                    "NOT attisdropped AND attgenerated <> ''",
                                    {m_targetSql});
        for (int i = 0; i < r.rows(); ++i)
            m_generated.insert(r.text(i, 0));
    }
}

std::vector<std::string> PgMerger::generatedColumns() const
{
    return {m_generated.begin(), m_generated.end()};
}

void PgMerger::ensureStaging()
{
    // Staging mirrors the target's column types (LIKE), so values convert exactly as they will
    // in the target. UNLOGGED: its rows never outlive the batch's transaction.
    racyDdl(*m_conn,
            "CREATE UNLOGGED TABLE IF NOT EXISTS " + stagingTable() + " (LIKE " + m_targetSql + " EXCLUDING ALL)");
    matchStagingStorage();
    m_conn->exec("ALTER TABLE " + stagingTable() +
                 " ADD COLUMN IF NOT EXISTS _driftless_op \"char\" NOT NULL DEFAULT 'u', "
                 "ADD COLUMN IF NOT EXISTS _driftless_unchanged text");
    // LIKE copied NOT NULLs: a delete stages only its key, so relax them.
    auto nn =
        m_conn->execParams("SELECT a.attname FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attnum > 0 "
                           "AND NOT a.attisdropped AND a.attnotnull AND a.attname NOT LIKE '\\_driftless\\_%'",
                           {stagingTable()});
    for (int r = 0; r < nn.rows(); ++r)
        m_conn->exec("ALTER TABLE " + stagingTable() + " ALTER COLUMN " + quoteIdent(nn.text(r, 0)) + " DROP NOT NULL");
    for (const auto &c : m_source.columns)
        m_conn->exec("ALTER TABLE " + stagingTable() + " ADD COLUMN IF NOT EXISTS " + quoteIdent(c.name) + " " +
                     columnTypeSql(c));
    if (m_source.hasPrimaryKey()) {
        std::string ddl = "CREATE TABLE IF NOT EXISTS " + tombstoneTable() + " (";
        std::string pk;
        for (int k : m_source.primaryKey) {
            const auto &c = m_source.columns[static_cast<size_t>(k)];
            ddl += quoteIdent(c.name) + " " + columnTypeSql(c) + " NOT NULL, ";
            pk += (pk.empty() ? "" : ", ") + quoteIdent(c.name);
        }
        ddl += "_driftless_version bigint NOT NULL, _driftless_deleted_at timestamptz NOT NULL DEFAULT now(), "
               "PRIMARY KEY (" +
               pk + "))";
        racyDdl(*m_conn, ddl);
        ensureSeen();
    }
}

void PgMerger::matchStagingStorage()
{
    // A value is compressed (or not) when it is staged, and the merge copies it into the target
    // as it is: staging must store each column as the target does, or a target column the DBA
    // set to lz4 would get pglz values, and one set to EXTERNAL (kept uncompressed for fast
    // substrings) compressed ones. Checked every time: the target's settings may have changed
    // since the staging table was made.
    const bool compression = m_conn->serverVersion() >= 140000;
    auto r = m_conn->execParams(
        std::string("SELECT s.attname, t.attstorage, ") + (compression ? "t.attcompression::text" : "''") +
            " FROM pg_attribute s JOIN pg_attribute t ON t.attrelid = $2::regclass AND t.attname = s.attname "
            "AND t.attnum > 0 AND NOT t.attisdropped WHERE s.attrelid = $1::regclass AND s.attnum > 0 "
            "AND NOT s.attisdropped AND (s.attstorage <> t.attstorage" +
            (compression ? " OR s.attcompression <> t.attcompression)" : ")"),
        {stagingTable(), m_targetSql});
    std::string alter;
    for (int i = 0; i < r.rows(); ++i) {
        const std::string column = "ALTER COLUMN " + quoteIdent(r.text(i, 0));
        const std::string storage = r.text(i, 1);
        const char *storageName = storage == "p"   ? "PLAIN"
                                  : storage == "e" ? "EXTERNAL"
                                  : storage == "m" ? "MAIN"
                                                   : "EXTENDED";
        alter += (alter.empty() ? "" : ", ") + column + " SET STORAGE " + storageName;
        if (compression) {
            const std::string method = r.text(i, 2);
            alter += ", " + column + " SET COMPRESSION " + (method == "p" ? "pglz" : method == "l" ? "lz4" : "DEFAULT");
        }
    }
    if (!alter.empty())
        m_conn->exec("ALTER TABLE " + stagingTable() + " " + alter);
}

void PgMerger::buildSql()
{
    // Columns the target generates are never written: rows keep their fields, which streamRows
    // leaves out.
    m_columnList.clear();
    m_skipFields.assign(m_source.columns.size(), false);
    m_anySkipped = false;
    for (size_t i = 0; i < m_source.columns.size(); ++i) {
        const auto &c = m_source.columns[i];
        if (m_generated.count(c.name)) {
            m_skipFields[i] = m_anySkipped = true;
            continue;
        }
        m_columnList += (m_columnList.empty() ? "" : ", ") + quoteIdent(c.name);
    }
    m_copyStaging = "COPY " + stagingTable() + " (" + m_columnList +
                    ", _driftless_version, _driftless_op, _driftless_unchanged) FROM STDIN";
    m_copyTarget = "COPY " + m_targetSql + " (" + m_columnList + ", _driftless_version) FROM STDIN";
    m_truncateSql = "TRUNCATE " + stagingTable();
    m_clearSql = "DELETE FROM " + stagingTable();
    if (!m_source.hasPrimaryKey())
        return;
    std::string on, tombOn, set, ins, vals, keys;
    for (int k : m_source.primaryKey) {
        auto q = quoteIdent(m_source.columns[static_cast<size_t>(k)].name);
        on += (on.empty() ? "" : " AND ") + ("t." + q + " = s." + q);
        tombOn += (tombOn.empty() ? "" : " AND ") + ("tb." + q + " = st." + q);
        keys += (keys.empty() ? "" : ", ") + q;
    }
    const bool cdc = m_target.strategy == Strategy::Cdc;
    for (size_t i = 0; i < m_source.columns.size(); ++i) {
        if (m_skipFields[i])
            continue;
        auto q = quoteIdent(m_source.columns[i].name);
        if (cdc) {
            // A column the source did not send (unchanged TOAST) keeps the target's value:
            // never NULL, never a placeholder.
            set += q + " = CASE WHEN substr(s._driftless_unchanged, " + std::to_string(i + 1) + ", 1) = '1' THEN t." +
                   q + " ELSE s." + q + " END, ";
        } else {
            set += q + " = s." + q + ", ";
        }
        ins += q + ", ";
        vals += "s." + q + ", ";
    }
    // Cursor passes re-read their lookback window; rows that come back unchanged are not
    // rewritten (no dead tuples, no WAL). Compared as text, so the test is byte-exact
    // (1.10 vs 1.1, -0 vs 0, citext case) and works for types without equality (json, point).
    // Safe for P2: a cursor table's batches are applied in read order and a restart re-reads
    // with newer versions, so no older, never-applied batch can arrive after a skipped one.
    // Types whose equality is exactly equality of their text form compare natively (cheaper
    // than casting both sides); the rest (numeric 1.10 vs 1.1, float -0, json, citext, arrays,
    // domains, user types) compare as text.
    auto nativeEquality = [](const ColumnInfo &c) {
        static const std::set<std::string> exact{"int2",      "int4",        "int8", "text",  "varchar", "bool", "date",
                                                 "timestamp", "timestamptz", "uuid", "bytea", "oid",     "time"};
        return c.isBuiltinType() && !c.isArray && exact.count(c.baseType) > 0;
    };
    std::string tcols, scols;
    for (size_t i = 0; i < m_source.columns.size(); ++i) {
        if (m_skipFields[i])
            continue; // a function of the columns compared
        const auto &c = m_source.columns[i];
        auto q = quoteIdent(c.name);
        // A nondeterministic collation could call 'a' and 'A' equal: compare strings bytewise.
        const bool string = c.baseType == "text" || c.baseType == "varchar";
        const std::string cast = !nativeEquality(c) ? "::text" : string ? " COLLATE \"C\"" : "";
        tcols += (tcols.empty() ? "" : ", ") + ("t." + q + cast);
        scols += (scols.empty() ? "" : ", ") + ("s." + q + cast);
    }
    const std::string differs = "ROW(" + tcols + ") IS DISTINCT FROM ROW(" + scols + ")";
    // Cursor passes re-read their lookback window; rows that come back unchanged are not
    // rewritten (no dead tuples, no WAL). Compared as text, so the test is byte-exact
    // (1.10 vs 1.1, -0 vs 0, citext case) and works for types without equality (json, point).
    // Safe for P2: a cursor table's batches are applied in read order and a restart re-reads
    // with newer versions, so no older, never-applied batch can arrive after a skipped one.
    // CDC: a change of the same version (a replay, or a later piece of the same transaction)
    // is written only when it changes the row, so replays write nothing.
    // A soft-deleted row is revived by any change that wins the guard, even one carrying the
    // values it already has (a key deleted and inserted again as it was).
    const bool soft = m_target.softDeletes;
    const std::string rewrite = soft ? "(" + differs + " OR t._driftless_deleted_at IS NOT NULL)" : differs;
    std::string changed;
    if (m_target.strategy == Strategy::Cursor)
        changed = " AND " + rewrite;
    else if (m_target.strategy == Strategy::Cdc)
        changed = " AND (s._driftless_version > t._driftless_version OR " + rewrite + ")";
    if (soft)
        set += std::string(kDeletedAtColumn) + " = NULL, ";
    // `deletes: soft`: a delete that wins the guard marks the row and takes its version (so an
    // older insert cannot revive it); a replayed delete, of the version the row has, finds it
    // marked and writes nothing, and the mark keeps the time of the first delete.
    const std::string onDelete =
        soft ? " AND (t._driftless_deleted_at IS NULL OR s._driftless_version > t._driftless_version) THEN UPDATE SET "
               "_driftless_deleted_at = coalesce(t._driftless_deleted_at, now()), _driftless_version = "
               "s._driftless_version"
             : " THEN DELETE";
    // The guard: a change applies only when it is not older than the row (updates AND deletes),
    // and an insert only when it is not older than the key's tombstone. Two changes share a
    // version only when they come from one source transaction (applied in order, in one target
    // transaction) or from reads with no commit between them (same data), so `>=` keeps replays
    // harmless while letting a transaction staged in pieces update its own rows.
    // A partial row (unchanged columns) whose key the target lacks is not inserted: it would
    // need values the source did not send (counted by m_orphanSql and reported).
    auto mergeSql = [&](bool withTombstones, const std::string &changed) {
        std::string using_ = withTombstones
                                 ? "(SELECT st.*, tb._driftless_version AS _driftless_tomb FROM " + stagingTable() +
                                       " st LEFT JOIN " + tombstoneTable() + " tb ON " + tombOn + ")"
                                 : stagingTable();
        std::string tombGuard = withTombstones ? " AND (s._driftless_tomb IS NULL OR s._driftless_version >= "
                                                 "s._driftless_tomb)"
                                               : "";
        return "MERGE INTO " + m_targetSql + " AS t USING " + using_ + " AS s ON " + on +
               " WHEN MATCHED AND s._driftless_version >= t._driftless_version AND s._driftless_op = 'd'" + onDelete +
               " WHEN MATCHED AND s._driftless_version >= t._driftless_version AND s._driftless_op <> 'd'" + changed +
               " THEN UPDATE SET " + set + "_driftless_version = s._driftless_version" +
               " WHEN NOT MATCHED AND s._driftless_op <> 'd' AND s._driftless_unchanged IS NULL" + tombGuard +
               " THEN INSERT (" + ins + "_driftless_version) VALUES (" + vals + "s._driftless_version)";
    };
    m_mergeSql = mergeSql(true, changed);
    m_mergeNoTombSql = mergeSql(false, changed);
    // A snapshot chunk (re-backfill) writes only rows that differ: its version is newer than
    // every row the stream applied before the snapshot, so `>` alone would rewrite them all.
    m_snapshotMergeSql = mergeSql(true, " AND " + rewrite);
    m_snapshotMergeNoTombSql = mergeSql(false, " AND " + rewrite);
    m_seenInsertSql = "INSERT INTO " + seenTable() + " (" + keys + ") SELECT " + keys + " FROM " + stagingTable();
    std::string tb = tombstoneTable();
    m_tombSql = "INSERT INTO " + tb + " AS tb (" + keys + ", _driftless_version) SELECT " + keys +
                ", _driftless_version FROM " + stagingTable() + " WHERE _driftless_op = 'd' ON CONFLICT (" + keys +
                ") DO UPDATE SET _driftless_version = GREATEST(tb._driftless_version, EXCLUDED._driftless_version), "
                "_driftless_deleted_at = now()";
    std::string onSt;
    for (int k : m_source.primaryKey) {
        auto q = quoteIdent(m_source.columns[static_cast<size_t>(k)].name);
        onSt += (onSt.empty() ? "" : " AND ") + ("t." + q + " = st." + q);
    }
    m_orphanSql = "SELECT count(*) FROM " + stagingTable() +
                  " st WHERE st._driftless_unchanged IS NOT NULL AND "
                  "st._driftless_op <> 'd' AND NOT EXISTS (SELECT 1 FROM " +
                  m_targetSql + " t WHERE " + onSt + ")";
}

double PgMerger::targetRowEstimate(bool fresh)
{
    auto now = std::chrono::steady_clock::now();
    if (fresh || now - m_estimateAt > std::chrono::seconds(60)) {
        // reltuples and relpages move only with VACUUM and ANALYZE; the file's size now is
        // current. Without statistics (a new table) a page counts 100 rows (rows of ~80 bytes):
        // too high an estimate only means probing, which never scans the table; a table of
        // narrower rows starts being probed at a tenth of its size rather than a fifth.
        auto r = m_conn->execParams(
            "SELECT (pg_relation_size(c.oid) / current_setting('block_size')::int)::float8 * "
            "CASE WHEN c.relpages > 0 AND c.reltuples > 0 THEN c.reltuples::float8 / c.relpages ELSE 100 END "
            "FROM pg_class c WHERE c.oid = $1::regclass",
            {m_targetSql});
        m_rowEstimate = r.rows() ? std::strtod(r.text(0, 0).c_str(), nullptr) : 0;
        m_estimateAt = now;
    }
    return m_rowEstimate;
}

PgResult PgMerger::execJoinedByKey(bool probe, std::string_view sql, const Params &params)
{
    m_conn->exec(probe ? "SET LOCAL jit = off; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off"
                       : "SET LOCAL jit = off");
    auto r = params.empty() ? m_conn->exec(sql) : m_conn->execParams(sql, params);
    if (probe)
        m_conn->exec("SET LOCAL enable_hashjoin = on; SET LOCAL enable_mergejoin = on");
    return r;
}

void PgMerger::ensureTargetTables(const Layout &layout)
{
    if (layout.target.empty()) // its enum types and the table go there
        racyDdl(*m_conn, "CREATE SCHEMA IF NOT EXISTS " + quoteIdent(m_target.target.schema));
    ensureTypes();
    ensureTable(layout);
    // A full refresh replaces the table wholesale: no staging, no tombstones. One that keeps
    // deleted rows merges instead, as a re-backfill does.
    if (mergesRows() && (layout.target.empty() || !stagingReady(layout)))
        ensureStaging();
    else if (mergesRows())
        matchStagingStorage();
}

void PgMerger::prepare(const TableSchema &source)
{
    requireKeyForSoftDeletes(m_target, source);
    m_source = source;
    // Every pass prepares: what exists already is read in one query, and DDL runs only for what
    // is missing, so a steady pass takes no lock beyond its own writes and logs no DDL.
    const Layout layout = readLayout();
    if (!layout.bookkeeping)
        ensureBookkeeping(*m_conn);
    ensureTargetTables(layout);
    if (mergesRows())
        m_tombstonesMaybe = m_conn->exec("SELECT EXISTS (SELECT 1 FROM " + tombstoneTable() + ")").toBool(0, 0);
    buildSql();
    (void)readCheckpoint(); // the epoch it writes under
}

std::int64_t PgMerger::highestVersion()
{
    const std::string sql =
        "SELECT greatest((SELECT max(_driftless_version) FROM " + m_targetSql + "), " +
        (mergesRows() ? "(SELECT max(_driftless_version) FROM " + tombstoneTable() + "), " : std::string()) +
        "(SELECT version FROM _driftless.checkpoints WHERE pipeline = $1 AND source_table = $2), 0)";
    return m_conn->execParams(sql, {m_target.pipeline, m_target.source.display()}).toInt(0, 0);
}

std::optional<Checkpoint> PgMerger::readCheckpoint()
{
    auto r = m_conn->execParams("SELECT position, version FROM _driftless.checkpoints WHERE pipeline = $1 AND "
                                "source_table = $2",
                                {m_target.pipeline, m_target.source.display()});
    if (r.rows() == 0)
        return std::nullopt;
    return Checkpoint{r.text(0, 0), learnt(r.toInt(0, 1))};
}

void PgMerger::clearCheckpoint()
{
    m_conn->execParams("DELETE FROM _driftless.checkpoints WHERE pipeline = $1 AND source_table = $2",
                       {m_target.pipeline, m_target.source.display()});
}

bool PgMerger::targetEmpty()
{
    return m_conn->exec("SELECT NOT EXISTS (SELECT 1 FROM " + m_targetSql + ")").toBool(0, 0);
}

void PgMerger::writeCheckpointInTransaction(const Checkpoint &cp, long long rows)
{
    m_conn->execParams(kPgUpsertCheckpoint, {m_target.pipeline, m_target.source.display(), m_target.target.display(),
                                             std::string(toString(m_target.strategy)), cp.position,
                                             std::to_string(versioned(cp.version)), std::to_string(rows)});
}

void PgMerger::streamRows(const RowSet &rows, bool staging)
{
    std::string buf;
    buf.reserve(kFlushBytes + 4096);
    char num[32];
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto &row = rows.row(i);
        if (m_anySkipped)
            appendWithout(rows.line(i), m_skipFields, buf);
        else
            buf.append(rows.line(i));
        buf += '\t';
        int n = std::snprintf(num, sizeof num, "%lld", static_cast<long long>(versioned(row.version)));
        buf.append(num, static_cast<size_t>(n));
        if (staging) {
            buf += '\t';
            buf += static_cast<char>(row.op);
            buf += '\t';
            auto mask = rows.unchangedMask(i);
            if (mask.empty())
                buf += "\\N";
            else
                buf.append(mask);
        }
        buf += '\n';
        if (buf.size() >= kFlushBytes) {
            m_conn->putCopyData(buf);
            buf.clear();
        }
    }
    m_conn->putCopyData(buf);
}

long long PgMerger::loadInTransaction(const RowSet &rows)
{
    if (rows.empty())
        return 0;
    m_conn->beginCopyIn(m_copyTarget);
    streamRows(rows, false);
    return m_conn->endCopy();
}

ApplyResult PgMerger::mergeInTransaction(const RowSet &rows)
{
    if (!m_source.hasPrimaryKey())
        throw SchemaError("table " + m_target.source.display() + " has no primary key, so changes cannot be merged",
                          "add a primary key on the source, or use strategy full_refresh");
    ApplyResult res{static_cast<long long>(rows.size()), 0, false};
    if (rows.empty())
        return res;
    bool hasDeletes = false;
    for (size_t i = 0; i < rows.size() && !hasDeletes; ++i)
        hasDeletes = rows.row(i).op == ChangeOp::Delete;
    beginStaging();
    m_conn->beginCopyIn(m_copyStaging);
    streamRows(rows, true);
    m_conn->endCopy();
    if (rows.hasUnchanged())
        res.partialRowsMissing = m_conn->exec(m_orphanSql).toInt(0, 0);
    // The planner sees a freshly filled staging table and a big target, and tends to hash the
    // whole target; when the batch is small next to the table, probing the key index per staged
    // row is several times faster. An empty tombstone table (the common case) is left out of
    // the join.
    res.rowsWritten =
        execJoinedByKey(probesKeys(rows.size()), m_tombstonesMaybe ? m_mergeSql : m_mergeNoTombSql).affected();
    if (hasDeletes) {
        m_conn->exec(m_tombSql);
        m_tombstonesMaybe = true;
    }
    endStaging(rows.size());
    return res;
}

void PgMerger::beginStaging()
{
    if (m_stagingEmptied)
        return;
    m_conn->exec(m_truncateSql);
    m_stagingEmptied = true;
    m_stagedSinceTruncate = 0;
}

void PgMerger::endStaging(size_t rows)
{
    m_stagedSinceTruncate += rows;
    if (m_stagedSinceTruncate < kStagedRowsPerTruncate) {
        m_conn->exec(m_clearSql);
        return;
    }
    m_conn->exec(m_truncateSql);
    m_stagedSinceTruncate = 0;
}

long long PgMerger::truncateInTransaction()
{
    // DELETE rather than TRUNCATE: it needs no ACCESS EXCLUSIVE lock, so readers of the target
    // keep reading the old rows until the transaction commits. Soft deletes mark every live row.
    if (m_target.softDeletes)
        return m_conn
            ->exec("UPDATE " + m_targetSql + " SET " + kDeletedAtColumn + " = now() WHERE " + kDeletedAtColumn +
                   " IS NULL")
            .affected();
    return m_conn->exec("DELETE FROM " + m_targetSql).affected();
}

std::string PgMerger::pendingRequest()
{
    auto r = m_conn->execParams("SELECT coalesce(request, '') FROM _driftless.checkpoints WHERE pipeline = $1 AND "
                                "source_table = $2",
                                {m_target.pipeline, m_target.source.display()});
    return r.rows() ? r.text(0, 0) : std::string();
}

std::map<std::string, std::string> PgMerger::pendingRequests()
{
    auto r = m_conn->execParams("SELECT source_table, request FROM _driftless.checkpoints WHERE pipeline = $1 AND "
                                "request IS NOT NULL",
                                {m_target.pipeline});
    std::map<std::string, std::string> out;
    for (int i = 0; i < r.rows(); ++i)
        out[r.text(i, 0)] = r.text(i, 1);
    return out;
}

void PgMerger::setRequest(const std::string &request)
{
    auto r = m_conn->execParams("UPDATE _driftless.checkpoints SET request = NULLIF($3, '') WHERE pipeline = $1 AND "
                                "source_table = $2",
                                {m_target.pipeline, m_target.source.display(), request});
    if (r.affected() == 0)
        throw Error(ErrorKind::Permanent, m_target.source.display() + " has not been loaded yet", {},
                    "run the sync first: its initial load is a full backfill");
}

std::vector<size_t> PgMerger::partialRowsWithoutTarget(const RowSet &rows)
{
    std::vector<size_t> out;
    if (!rows.hasUnchanged() || !m_source.hasPrimaryKey())
        return out;
    std::vector<size_t> partial;
    for (size_t r = 0; r < rows.size(); ++r)
        if (!rows.unchangedMask(r).empty() && rows.row(r).op != ChangeOp::Delete)
            partial.push_back(r);
    if (partial.empty())
        return out;
    // One query per kKeysPerLookup keys, not one per row: the keys travel as one text[]
    // parameter per key column, cast to the column's type here, and the anti-join probes the
    // target's key index per key (a batch of updates that leave large values unchanged used to
    // cost a round trip per row).
    const auto &pk = m_source.primaryKey;
    std::string arrays, names, on;
    for (size_t i = 0; i < pk.size(); ++i) {
        const auto &k = m_source.columns[static_cast<size_t>(pk[i])];
        const std::string n = "k" + std::to_string(i + 1);
        arrays += (i ? ", $" : "$") + std::to_string(i + 1) + "::text[]";
        names += n + ", ";
        on += (i ? " AND t." : "t.") + quoteIdent(k.name) + " = k." + n + "::" + columnTypeSql(k);
    }
    const std::string sql = "SELECT k.ord FROM unnest(" + arrays + ") WITH ORDINALITY AS k(" + names +
                            "ord) WHERE NOT EXISTS (SELECT 1 FROM " + m_targetSql + " t WHERE " + on + ")";
    for (size_t from = 0; from < partial.size(); from += kKeysPerLookup) {
        const size_t to = std::min(partial.size(), from + kKeysPerLookup);
        Params params;
        for (auto &a : pgKeyArrays(rows, partial, from, to, pk))
            params.emplace_back(std::move(a));
        auto res = m_conn->execParams(sql, params);
        for (int i = 0; i < res.rows(); ++i)
            out.push_back(partial[from + static_cast<size_t>(res.toInt(i, 0)) - 1]);
    }
    std::sort(out.begin(), out.end());
    return out;
}

void PgMerger::ensureSeen()
{
    // UNLOGGED and without an index: appending a chunk's keys costs a fifth of a logged, keyed
    // table, and the one anti-join at the end hashes them anyway. A server crash empties it;
    // seenCount() lets a resumed copy notice and start over.
    std::string ddl = "CREATE UNLOGGED TABLE IF NOT EXISTS " + seenTable() + " (";
    for (size_t i = 0; i < m_source.primaryKey.size(); ++i) {
        const auto &c = m_source.columns[static_cast<size_t>(m_source.primaryKey[i])];
        ddl += (i ? ", " : "") + quoteIdent(c.name) + " " + columnTypeSql(c) + " NOT NULL";
    }
    racyDdl(*m_conn, ddl + ")");
}

long long PgMerger::seenCount()
{
    return m_conn->exec("SELECT count(*) FROM " + seenTable()).toInt(0, 0);
}

long long PgMerger::stageAndMergeSnapshot(const RowSet &rows)
{
    m_conn->beginCopyIn(m_copyStaging);
    streamRows(rows, true);
    m_conn->endCopy();
    return execJoinedByKey(probesKeys(rows.size()), m_tombstonesMaybe ? m_snapshotMergeSql : m_snapshotMergeNoTombSql)
        .affected();
}

ApplyResult PgMerger::mergeSnapshotChunkInTransaction(const RowSet &rows)
{
    if (!m_source.hasPrimaryKey())
        throw SchemaError("table " + m_target.source.display() + " has no primary key, so it cannot be re-backfilled",
                          "add a primary key on the source");
    ApplyResult res{static_cast<long long>(rows.size()), 0, false};
    if (rows.empty())
        return res;
    beginStaging();
    res.rowsWritten = stageAndMergeSnapshot(rows);
    // The keys, committed with the chunk and its checkpoint, so a resumed copy still knows them.
    m_conn->exec(m_seenInsertSql);
    endStaging(rows.size());
    return res;
}

std::pair<ApplyResult, long long> PgMerger::mergeSnapshotScopesInTransaction(const RowSet &rows,
                                                                             const std::vector<SnapshotScope> &scopes,
                                                                             std::int64_t below)
{
    ApplyResult res{static_cast<long long>(rows.size()), 0, false};
    if (scopes.empty())
        return {res, 0};
    beginStaging();
    if (!rows.empty())
        res.rowsWritten = stageAndMergeSnapshot(rows);
    std::string staged;
    for (int k : m_source.primaryKey) {
        auto q = quoteIdent(m_source.columns[static_cast<size_t>(k)].name);
        staged += (staged.empty() ? "" : " AND ") + ("s." + q + " = t." + q);
    }
    long long gone = 0;
    for (const auto &scope : scopes) {
        Params params = scope.params;
        params.push_back(std::to_string(versioned(below)));
        gone += m_conn
                    ->execParams("DELETE FROM " + m_targetSql + " t" +
                                     (scope.usingSql.empty() ? "" : " USING " + scope.usingSql) + " WHERE (" +
                                     scope.whereSql + ") AND t._driftless_version < $" + std::to_string(params.size()) +
                                     "::bigint AND NOT EXISTS (SELECT 1 FROM " + stagingTable() + " s WHERE " + staged +
                                     ")",
                                 params)
                    .affected();
    }
    endStaging(rows.size());
    return {res, gone};
}

long long PgMerger::deleteUnseenInTransaction(std::int64_t version)
{
    std::string on;
    for (int k : m_source.primaryKey) {
        auto q = quoteIdent(m_source.columns[static_cast<size_t>(k)].name);
        on += (on.empty() ? "" : " AND ") + ("s." + q + " = t." + q);
    }
    // Soft deletes: the rows go on as deleted at the snapshot's version; those marked before
    // keep their first time.
    const std::string remove = m_target.softDeletes ? softDeleteSql() + " AND t._driftless_deleted_at IS NULL"
                                                    : "DELETE FROM " + m_targetSql + " t WHERE true";
    long long gone = m_conn
                         ->execParams(remove +
                                          " AND t._driftless_version < $1::bigint AND "
                                          "NOT EXISTS (SELECT 1 FROM " +
                                          seenTable() + " s WHERE " + on + ")",
                                      {std::to_string(versioned(version))})
                         .affected();
    m_conn->exec("TRUNCATE " + seenTable());
    return gone;
}

void PgMerger::clearSeenInTransaction()
{
    m_conn->exec("TRUNCATE " + seenTable());
}

long long PgMerger::deleteOlderInTransaction(std::int64_t version)
{
    const std::string remove = m_target.softDeletes ? softDeleteSql() + " AND t._driftless_deleted_at IS NULL"
                                                    : "DELETE FROM " + m_targetSql + " t WHERE true";
    return m_conn->execParams(remove + " AND t._driftless_version < $1::bigint", {std::to_string(versioned(version))})
        .affected();
}

std::string PgMerger::softDeleteSql() const
{
    return "UPDATE " + m_targetSql + " t SET " + kDeletedAtColumn +
           " = now(), _driftless_version = greatest("
           "t._driftless_version, $1::bigint) WHERE true";
}

void PgMerger::addMissingColumns(const TableSchema &source)
{
    m_source = source;
    ensureTargetTables(readLayout());
    buildSql();
}

namespace {
constexpr const char *kPgKeptComment = "dropped on the source; kept by Driftless, no longer written";
} // namespace

std::string PgMerger::dropColumn(const TableSchema &source, const std::string &column, bool drop)
{
    m_source = source;
    const std::string col = quoteIdent(column);
    if (drop) {
        m_conn->exec("ALTER TABLE " + m_targetSql + " DROP COLUMN IF EXISTS " + col);
        if (mergesRows())
            m_conn->exec("ALTER TABLE IF EXISTS " + stagingTable() + " DROP COLUMN IF EXISTS " + col);
    } else {
        // Rows inserted from now on have no value for it: they get NULL, or the column's default.
        // Checked first: this runs at every start, where DDL would take a lock for nothing.
        // The column's comment marks it as kept, so a restart neither alters it again nor
        // reports the drop again.
        auto nn =
            m_conn->execParams("SELECT a.attnotnull, col_description(a.attrelid, a.attnum) = $3 FROM pg_attribute a "
                               "WHERE a.attrelid = $1::regclass AND a.attname = $2 AND NOT a.attisdropped",
                               {m_targetSql, column, std::string(kPgKeptComment)});
        if (nn.rows() > 0 && nn.toBool(0, 0))
            m_conn->exec("ALTER TABLE " + m_targetSql + " ALTER COLUMN " + col + " DROP NOT NULL");
        if (nn.rows() > 0 && !nn.isNull(0, 1) && nn.toBool(0, 1)) {
            m_source = source;
            buildSql();
            return {};
        }
        m_conn->exec("COMMENT ON COLUMN " + m_targetSql + "." + col + " IS " + pgLiteral(kPgKeptComment));
    }
    m_generated.erase(column);
    buildSql();
    return drop ? "dropped on the target" : "kept on the target, no longer written";
}

std::string PgMerger::widenColumn(const TableSchema &source, const std::string &column)
{
    m_source = source;
    const int i = source.columnIndex(column);
    if (i < 0)
        throw Error(ErrorKind::Permanent, "column " + displayIdent(column) + " is not in the source's schema");
    const auto &c = source.columns[static_cast<size_t>(i)];
    const std::string alter = " ALTER COLUMN " + quoteIdent(column) + " TYPE " + columnTypeSql(c);
    m_conn->exec("ALTER TABLE " + m_targetSql + alter);
    // Staging mirrors the target's types, and the key's bookkeeping tables hold key values.
    if (mergesRows())
        m_conn->exec("ALTER TABLE IF EXISTS " + stagingTable() + alter);
    if (std::find(source.primaryKey.begin(), source.primaryKey.end(), i) != source.primaryKey.end())
        for (const auto &book : {tombstoneTable(), seenTable()})
            m_conn->exec("ALTER TABLE IF EXISTS " + book + alter);
    buildSql();
    return "on the target";
}

std::string PgMerger::renameColumn(const TableSchema &source, const std::string &from, const std::string &to)
{
    const std::string rename = " RENAME COLUMN " + quoteIdent(from) + " TO " + quoteIdent(to);
    m_conn->exec("ALTER TABLE " + m_targetSql + rename);
    // Staging mirrors the target's columns, and the key's bookkeeping tables hold key values;
    // each is renamed where it has the column (it may not exist yet).
    std::vector<std::string> books;
    if (mergesRows())
        books.push_back(stagingTable());
    const int i = source.columnIndex(to);
    if (i >= 0 && std::find(source.primaryKey.begin(), source.primaryKey.end(), i) != source.primaryKey.end()) {
        books.push_back(tombstoneTable());
        books.push_back(seenTable());
    }
    for (const auto &book : books) {
        auto has =
            m_conn->execParams("SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2 AND "
                               "NOT attisdropped",
                               {book, from});
        if (has.rows() > 0)
            m_conn->exec("ALTER TABLE " + book + rename);
    }
    if (m_generated.erase(from))
        m_generated.insert(to);
    m_source = source;
    buildSql();
    return "renamed on the target";
}

ApplyResult PgMerger::commitBatch(const Batch &batch, bool direct)
{
    ApplyResult res;
    m_conn->begin();
    try {
        if (direct) {
            res = {static_cast<long long>(batch.rows.size()), loadInTransaction(batch.rows), true};
        } else {
            res = mergeInTransaction(batch.rows);
        }
        writeCheckpointInTransaction(batch.checkpoint, res.rowsWritten);
        crashPoint("merge.before_commit");
        m_conn->commit();
    } catch (...) {
        m_conn->rollback();
        throw;
    }
    return res;
}

ApplyResult PgMerger::apply(const Batch &batch)
{
    // The batch whose checkpoint is the stored one committed with it already: a replay of it
    // (a retry after a lost reply) has nothing to do.
    if (!batch.rows.empty() && batch.checkpoint.version != 0) {
        if (auto stored = readCheckpoint(); stored && *stored == batch.checkpoint)
            return {static_cast<long long>(batch.rows.size()), 0, false};
    }
    if (batch.directLoad) {
        try {
            return commitBatch(batch, true);
        } catch (const SqlError &e) {
            if (e.code() != "23505")
                throw;
            // A key is already there (a rerun over rows an earlier attempt loaded): merge instead,
            // which is exact, just slower.
        }
    }
    return commitBatch(batch, false);
}

long long PgMerger::replaceAll(const std::function<void(const std::function<void(std::string_view)> &)> &rows,
                               const Checkpoint &checkpoint)
{
    if (m_target.softDeletes) {
        long long loaded = 0;
        m_conn->begin();
        try {
            loaded = refreshKeepingDeleted(*this, rows, checkpoint.version);
            writeCheckpointInTransaction(checkpoint, loaded);
            m_conn->commit();
        } catch (...) {
            m_conn->rollback();
            throw;
        }
        return loaded;
    }
    const std::string schema = quoteIdent(m_target.target.schema);
    const std::string shadowName = bookName("_driftless_new_", m_target.target);
    const std::string shadow = schema + "." + quoteIdent(shadowName);
    long long loaded = 0;
    m_conn->begin();
    try {
        const std::string oldOid = m_conn->execParams("SELECT $1::regclass::oid", {m_targetSql}).text(0, 0);
        // The old table's indexes, as definitions for the shadow under temporary names. Loading
        // into a table without indexes and building them afterwards is much faster than
        // maintaining them row by row. Exclusion constraints cannot be attached afterwards: with
        // one of those, the shadow is created with its indexes instead.
        auto indexes = m_conn->execParams(R"sql(
SELECT quote_ident(ci.relname),
       substring(pg_get_indexdef(i.indexrelid) from length('CREATE ' || CASE WHEN i.indisunique THEN 'UNIQUE ' ELSE '' END ||
                 'INDEX ' || quote_ident(ci.relname) || ' ON ' || quote_ident(n.nspname) || '.' || quote_ident(ct.relname) ||
                 ' USING ') + 1),
       starts_with(pg_get_indexdef(i.indexrelid), 'CREATE ' || CASE WHEN i.indisunique THEN 'UNIQUE ' ELSE '' END ||
                 'INDEX ' || quote_ident(ci.relname) || ' ON ' || quote_ident(n.nspname) || '.' || quote_ident(ct.relname) ||
                 ' USING '),
       i.indisunique,
       coalesce(con.contype::text, ''),
       coalesce(quote_ident(con.conname), '')
FROM pg_index i
JOIN pg_class ci ON ci.oid = i.indexrelid
JOIN pg_class ct ON ct.oid = i.indrelid
JOIN pg_namespace n ON n.oid = ct.relnamespace
LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.conrelid = i.indrelid
WHERE i.indrelid = $1::oid
ORDER BY ci.oid)sql",
                                          {oldOid});
        bool buildAfter = true;
        for (int r = 0; r < indexes.rows(); ++r)
            if (!indexes.toBool(r, 2) || indexes.text(r, 4) == "x")
                buildAfter = false;
        m_conn->exec("DROP TABLE IF EXISTS " + shadow);
        m_conn->exec("CREATE TABLE " + shadow + " (LIKE " + m_targetSql + " INCLUDING ALL" +
                     (buildAfter ? " EXCLUDING INDEXES)" : ")"));
        m_conn->beginCopyIn("COPY " + shadow + " (" + m_columnList + ", _driftless_version) FROM STDIN");
        // LIKE ... INCLUDING ALL kept the generated columns generated: their fields are dropped
        // from each row (a row may span two chunks).
        std::string partial, out;
        rows([&](std::string_view chunk) {
            if (!m_anySkipped) {
                m_conn->putCopyData(chunk);
                return;
            }
            out.clear();
            for (size_t pos = 0; pos < chunk.size();) {
                const size_t nl = chunk.find('\n', pos);
                if (nl == std::string_view::npos) {
                    partial.append(chunk.substr(pos));
                    break;
                }
                if (partial.empty()) {
                    appendWithout(chunk.substr(pos, nl - pos), m_skipFields, out);
                } else {
                    partial.append(chunk.substr(pos, nl - pos));
                    appendWithout(partial, m_skipFields, out);
                    partial.clear();
                }
                out += '\n';
                pos = nl + 1;
            }
            m_conn->putCopyData(out);
        });
        loaded = m_conn->endCopy();
        // Renames to apply after the swap: shadow index -> the old table's name for it.
        std::vector<std::pair<std::string, std::string>> renames, constraintRenames;
        if (buildAfter) {
            for (int r = 0; r < indexes.rows(); ++r) {
                std::string tmp = quoteIdent("_driftless_ix" + std::to_string(r) + "_" + shadowName.substr(15, 30));
                m_conn->exec("CREATE " + std::string(indexes.toBool(r, 3) ? "UNIQUE " : "") + "INDEX " + tmp + " ON " +
                             shadow + " USING " + indexes.text(r, 1));
                const std::string contype = indexes.text(r, 4);
                if (contype == "p" || contype == "u") {
                    // Under the temporary name until the old table's constraint is gone.
                    m_conn->exec("ALTER TABLE " + shadow + " ADD CONSTRAINT " + tmp +
                                 (contype == "p" ? " PRIMARY KEY" : " UNIQUE") + " USING INDEX " + tmp);
                    constraintRenames.emplace_back(tmp, indexes.text(r, 5));
                } else {
                    renames.emplace_back(tmp, indexes.text(r, 0));
                }
            }
        } else {
            // Pair each shadow index with the old one of the same definition.
            auto pairs = m_conn->execParams(
                "SELECT quote_ident(ni.relname), quote_ident(oi.relname) FROM pg_index n JOIN pg_class ni ON ni.oid = "
                "n.indexrelid JOIN pg_index o ON o.indrelid = $1::oid AND o.indisprimary = n.indisprimary AND "
                "o.indisunique = n.indisunique JOIN pg_class oi ON oi.oid = o.indexrelid "
                "WHERE n.indrelid = $2::regclass AND substring(pg_get_indexdef(n.indexrelid) from ' USING .*$') = "
                "substring(pg_get_indexdef(o.indexrelid) from ' USING .*$')",
                {oldOid, shadow});
            for (int r = 0; r < pairs.rows(); ++r)
                renames.emplace_back(pairs.text(r, 0), pairs.text(r, 1));
        }

        // Everything the old table carried that LIKE does not: grants and owner.
        auto grants = m_conn->execParams(
            "SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END, a.privilege_type, "
            "a.is_grantable FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a "
            "LEFT JOIN pg_roles r ON r.oid = a.grantee WHERE c.oid = $1::oid AND a.grantee <> c.relowner",
            {oldOid});
        auto owner = m_conn->execParams("SELECT quote_ident(pg_get_userbyid(relowner)), "
                                        "relowner <> (SELECT oid FROM pg_roles WHERE rolname = current_user) "
                                        "FROM pg_class WHERE oid = $1::oid",
                                        {oldOid});
        auto dependents = m_conn->execParams(
            "SELECT EXISTS (SELECT 1 FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid "
            "WHERE d.refobjid = $1::oid AND d.classid = 'pg_rewrite'::regclass AND r.ev_class <> $1::oid) "
            "OR EXISTS (SELECT 1 FROM pg_constraint WHERE confrelid = $1::oid AND conrelid <> $1::oid)",
            {oldOid});
        m_conn->exec("ANALYZE " + shadow);

        // The swap. lock_timeout (set per session) keeps us from queueing readers behind a long
        // wait; on timeout the whole refresh is retried.
        m_conn->exec("LOCK TABLE " + m_targetSql + " IN ACCESS EXCLUSIVE MODE");
        if (dependents.toBool(0, 0)) {
            // Views or foreign keys point at the table: keep the relation, replace its rows.
            m_conn->exec("DELETE FROM " + m_targetSql);
            m_conn->exec("INSERT INTO " + m_targetSql + " (" + m_columnList + ", _driftless_version) SELECT " +
                         m_columnList + ", _driftless_version FROM " + shadow);
            m_conn->exec("DROP TABLE " + shadow);
        } else {
            m_conn->exec("DROP TABLE " + m_targetSql);
            m_conn->exec("ALTER TABLE " + shadow + " RENAME TO " + quoteIdent(m_target.target.name));
            for (const auto &[from, to] : constraintRenames)
                m_conn->exec("ALTER TABLE " + m_targetSql + " RENAME CONSTRAINT " + from + " TO " + to);
            for (const auto &[from, to] : renames)
                m_conn->exec("ALTER INDEX " + schema + "." + from + " RENAME TO " + to);
            for (int r = 0; r < grants.rows(); ++r)
                m_conn->exec("GRANT " + grants.text(r, 1) + " ON " + m_targetSql + " TO " + grants.text(r, 0) +
                             (grants.toBool(r, 2) ? " WITH GRANT OPTION" : ""));
            if (owner.rows() == 1 && owner.toBool(0, 1)) {
                m_conn->exec("SAVEPOINT driftless_owner");
                try {
                    m_conn->exec("ALTER TABLE " + m_targetSql + " OWNER TO " + owner.text(0, 0));
                    m_conn->exec("RELEASE SAVEPOINT driftless_owner");
                } catch (const SqlError &) {
                    m_conn->exec("ROLLBACK TO SAVEPOINT driftless_owner");
                }
            }
        }
        writeCheckpointInTransaction(checkpoint, loaded);
        m_conn->commit();
    } catch (...) {
        m_conn->rollback();
        throw;
    }
    return loaded;
}

} // namespace driftless::core

namespace driftless::core {

std::vector<std::int64_t> PgMerger::guardVersions(const RowSet &rows)
{
    std::vector<std::int64_t> out(rows.size(), 0);
    if (!m_source.hasPrimaryKey())
        return out;
    std::string where;
    for (size_t i = 0; i < m_source.primaryKey.size(); ++i) {
        const auto &k = m_source.columns[static_cast<size_t>(m_source.primaryKey[i])];
        where += (i ? " AND " : "") + quoteIdent(k.name) + " = $" + std::to_string(i + 1) + "::" + columnTypeSql(k);
    }
    // Full refresh targets keep no tombstones.
    const bool tombs = !m_conn->execParams("SELECT to_regclass($1)", {tombstoneTable()}).isNull(0, 0);
    const std::string sql =
        "SELECT greatest((SELECT _driftless_version FROM " + m_targetSql + " WHERE " + where + ")" +
        (tombs ? ", (SELECT _driftless_version FROM " + tombstoneTable() + " WHERE " + where + ")" : "") + ")";
    std::vector<std::string_view> fields;
    for (size_t r = 0; r < rows.size(); ++r) {
        copytext::split(rows.line(r), fields);
        Params params;
        for (int k : m_source.primaryKey) {
            std::string v;
            copytext::unescape(fields.at(static_cast<size_t>(k)), v);
            params.emplace_back(std::move(v));
        }
        auto res = m_conn->execParams(sql, params);
        if (res.rows() == 1 && !res.isNull(0, 0))
            out[r] = res.toInt(0, 0);
    }
    return out;
}

std::vector<std::string> PgMerger::rowsReferencing(const std::vector<std::string> &columns,
                                                   const std::vector<std::vector<std::string>> &values,
                                                   const std::vector<int> &fields)
{
    std::vector<const ColumnInfo *> by;
    for (const auto &name : columns) {
        const int i = m_source.columnIndex(name);
        if (i < 0)
            throw SchemaError("target table " + m_target.target.display() + " has no column " + displayIdent(name),
                              "re-snapshot the table");
        by.push_back(&m_source.columns[static_cast<size_t>(i)]);
    }
    std::string select;
    for (size_t i = 0; i < m_source.columns.size(); ++i) {
        const bool wanted = std::find(fields.begin(), fields.end(), static_cast<int>(i)) != fields.end();
        select +=
            std::string(i ? ", " : "") + (wanted ? "t." + quoteIdent(m_source.columns[i].name) + "::text" : "NULL");
    }
    std::string cols;
    for (const auto *c : by)
        cols += (cols.empty() ? "" : ", ") + ("t." + quoteIdent(c->name));
    std::vector<std::string> out;
    constexpr size_t kTuples = 500;
    std::string value;
    for (size_t from = 0; from < values.size(); from += kTuples) {
        std::string in;
        Params params;
        for (size_t r = from; r < std::min(values.size(), from + kTuples); ++r) {
            const auto &tuple = values[r];
            if (std::any_of(tuple.begin(), tuple.end(), [](const std::string &f) { return copytext::isNull(f); }))
                continue; // NULL references nothing
            std::string one;
            for (size_t c = 0; c < by.size(); ++c) {
                value.clear();
                copytext::unescape(tuple.at(c), value);
                params.emplace_back(value);
                one += (c ? ", $" : "$") + std::to_string(params.size()) + "::" + columnTypeSql(*by[c]);
            }
            in += (in.empty() ? "(" : ", (") + one + ")";
        }
        if (in.empty())
            continue;
        auto r = m_conn->execParams(
            "SELECT " + select + " FROM " + m_targetSql + " t WHERE (" + cols + ") IN (" + in + ")", params);
        for (int row = 0; row < r.rows(); ++row) {
            std::string line;
            for (int c = 0; c < r.columns(); ++c) {
                if (c)
                    line += '\t';
                if (r.isNull(row, c))
                    line += copytext::kNull;
                else
                    copytext::escape(r.text(row, c), line);
            }
            out.push_back(std::move(line));
        }
    }
    return out;
}

namespace {
/// A Postgres text[] literal of one field of every row: {"a",NULL,"b\\"c"}.
std::string pgTextArray(const ColumnFill &fill, size_t field)
{
    std::string out = "{";
    for (size_t r = 0; r < fill.rows.size(); ++r) {
        if (r)
            out += ',';
        const auto &v = fill.rows[r][field];
        if (!v) {
            out += "NULL";
            continue;
        }
        out += '"';
        for (char ch : *v) {
            if (ch == '"' || ch == '\\')
                out += '\\';
            out += ch;
        }
        out += '"';
    }
    return out + "}";
}
} // namespace

long long PgMerger::fillColumnsInTransaction(const ColumnFill &fill, std::int64_t below)
{
    if (fill.rows.empty())
        return 0;
    // One UPDATE per chunk; the values travel as one text[] per column, cast to the target's
    // types. Only the filled columns are set: the row keeps its version and its other values.
    const auto types = targetColumns();
    auto typeOf = [&](const std::string &name) {
        for (const auto &[n, t] : types)
            if (n == name)
                return t;
        throw SchemaError("target table " + m_target.target.display() + " has no column " + displayIdent(name),
                          "re-snapshot the table");
    };
    std::string arrays, names, set, on, differs;
    Params params;
    size_t field = 0;
    auto add = [&](const std::string &name) {
        const std::string v = "v" + std::to_string(field + 1);
        arrays += (field ? ", $" : "$") + std::to_string(field + 1) + "::text[]";
        names += (field ? ", " : "") + v;
        params.emplace_back(pgTextArray(fill, field));
        ++field;
        return "v." + v + "::" + typeOf(name);
    };
    for (const auto &k : fill.keyColumns)
        on += (on.empty() ? "t." : " AND t.") + quoteIdent(k) + " = " + add(k);
    for (const auto &c : fill.columns) {
        const std::string val = add(c);
        set += (set.empty() ? "" : ", ") + quoteIdent(c) + " = " + val;
        differs += (differs.empty() ? "" : " OR ") + std::string("t.") + quoteIdent(c) + " IS DISTINCT FROM " + val;
    }
    params.emplace_back(std::to_string(versioned(below)));
    const std::string sql = "UPDATE " + m_targetSql + " AS t SET " + set + " FROM unnest(" + arrays + ") AS v(" +
                            names + ") WHERE " + on + " AND t._driftless_version < $" + std::to_string(field + 1) +
                            "::bigint AND (" + differs + ")";
    // Always by the key index: a chunk is a few thousand rows, and the planner would hash the
    // whole target for each (the fill of a 200,000-row table took 80 ms a chunk that way, every
    // chunk reading the table again), while a small table's index is as quick.
    return execJoinedByKey(true, sql, params).affected();
}

std::string PgMerger::columnChecksum(const std::vector<std::string> &keyColumns,
                                     const std::vector<std::string> &columns)
{
    // Rows kept as deleted (deletes: soft) are not the source's rows: they are left out.
    const std::string where = m_target.softDeletes ? std::string(" WHERE ") + kDeletedAtColumn + " IS NULL" : "";
    return m_conn->exec(pgColumnChecksumSql(m_targetSql, keyColumns, columns, where)).text(0, 0);
}

std::string pgColumnChecksumSql(const std::string &fromSql, const std::vector<std::string> &keyColumns,
                                const std::vector<std::string> &columns, const std::string &where)
{
    std::string row, order;
    for (const auto &k : keyColumns) {
        row += (row.empty() ? "" : ", ") + quoteIdent(k);
        order += (order.empty() ? "" : ", ") + quoteIdent(k);
    }
    for (const auto &c : columns)
        row += ", " + quoteIdent(c);
    return "SELECT count(*)::text || ':' || coalesce(md5(string_agg(ROW(" + row + ")::text, ',' ORDER BY " + order +
           ")), '') FROM " + fromSql + where;
}

} // namespace driftless::core
