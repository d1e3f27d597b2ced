#include "core/mergers/sqlitemerger.h"

#include "core/base/copytext.h"
#include "core/mergers/softdelete.h"
#include "core/model/error.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <vector>

namespace driftless::core {

namespace {

/// `terms[from, to)` joined by OR as a balanced tree: SQLite refuses an expression nested more
/// than 1,000 deep, which a left-to-right chain over a 1,000-column table is.
std::string balancedOr(const std::vector<std::string> &terms, size_t from, size_t to)
{
    if (to - from == 1)
        return terms[from];
    const size_t mid = from + (to - from) / 2;
    return "(" + balancedOr(terms, from, mid) + " OR " + balancedOr(terms, mid, to) + ")";
}
/// The time a soft delete is applied, as ISO-8601 UTC text.
constexpr const char *kSqliteNow = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

constexpr const char *kSqliteCheckpoints = R"sql(
CREATE TABLE IF NOT EXISTS _driftless_checkpoints (
    pipeline TEXT NOT NULL,
    source_table TEXT NOT NULL,
    target_table TEXT NOT NULL,
    strategy TEXT NOT NULL,
    position TEXT NOT NULL,
    version INTEGER NOT NULL,
    rows_applied INTEGER NOT NULL DEFAULT 0,
    batches INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f+00:00', 'now')),
    PRIMARY KEY (pipeline, source_table)
))sql";

constexpr const char *kSqliteUpsertCheckpoint = R"sql(
INSERT INTO _driftless_checkpoints AS c (pipeline, source_table, target_table, strategy, position, version,
                                         rows_applied, batches, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, strftime('%Y-%m-%d %H:%M:%f+00:00', 'now'))
ON CONFLICT (pipeline, source_table) DO UPDATE SET
    target_table = excluded.target_table,
    strategy = excluded.strategy,
    position = CASE WHEN excluded.version >= c.version THEN excluded.position ELSE c.position END,
    version = max(c.version, excluded.version),
    rows_applied = c.rows_applied + excluded.rows_applied,
    batches = c.batches + 1,
    updated_at = excluded.updated_at)sql";
} // namespace

std::shared_ptr<SqliteDb> openSqliteTarget(const std::string &path)
{
    auto db = std::make_shared<SqliteDb>(path);
    // WAL: readers of the replica keep reading while a batch is written.
    db->exec("PRAGMA journal_mode = WAL");
    db->exec("PRAGMA synchronous = NORMAL");
    // Room for a batch's pages, so a big load does not spill them to the WAL mid-transaction.
    db->exec("PRAGMA cache_size = -16384");
    return db;
}

SqliteMerger::SqliteMerger(const std::string &path, MergeTarget target)
    : SqliteMerger(openSqliteTarget(path), std::move(target))
{
}

SqliteMerger::SqliteMerger(std::shared_ptr<SqliteDb> db, MergeTarget target)
    : m_db(std::move(db)), m_target(std::move(target)), m_table(quoteIdent(m_target.target.name))
{
}

SqliteTargetSession::SqliteTargetSession(const std::string &path) : m_db(openSqliteTarget(path)) {}

void SqliteTargetSession::rollback() noexcept
{
    try {
        m_db->exec("ROLLBACK");
    } catch (...) {
    }
}

std::string SqliteMerger::describeTarget() const
{
    return m_db->path() + " " + m_target.target.display();
}

std::string SqliteMerger::tombstoneTable() const
{
    return quoteIdent("_driftless_tomb_" + m_target.target.name);
}

std::string SqliteMerger::seenTable() const
{
    return quoteIdent("_driftless_seen_" + m_target.target.name);
}

void SqliteMerger::adoptTable()
{
    std::vector<std::string> columns;
    std::vector<std::string> primaryKey;
    {
        auto st = m_db->prepare("SELECT name, pk FROM pragma_table_info(?1) ORDER BY pk");
        st.bindText(1, m_target.target.name);
        while (st.step()) {
            columns.push_back(st.text(0));
            if (st.int64(1) > 0)
                primaryKey.push_back(st.text(0));
        }
    }
    UniqueKeys keys;
    if (!primaryKey.empty())
        keys[" primary key"] = primaryKey;
    {
        auto st = m_db->prepare("SELECT l.name, i.name FROM pragma_index_list(?1) l, pragma_index_info(l.name) i "
                                "WHERE l.\"unique\" AND NOT l.partial");
        st.bindText(1, m_target.target.name);
        while (st.step())
            keys[st.text(0)].push_back(st.text(1));
    }
    // SQLite adds no primary key to a table that exists: a unique index does the same here.
    checkAdoptable(m_target.target.display(), m_source, columns, keys, quoteIdent, [&](const std::string &key) {
        return "CREATE UNIQUE INDEX " + quoteIdent(m_target.target.name + "_key") + " ON " + m_table + " (" + key +
               ");";
    });
    m_db->exec("ALTER TABLE " + m_table + " ADD COLUMN \"_driftless_version\" INTEGER NOT NULL DEFAULT 0");
    m_adopted = true;
}

void SqliteMerger::ensureTable()
{
    m_db->exec(kSqliteCheckpoints);
    if (m_db->scalarInt("SELECT count(*) FROM pragma_table_info('_driftless_checkpoints') WHERE name = 'request'") == 0)
        m_db->exec("ALTER TABLE _driftless_checkpoints ADD COLUMN request TEXT");
    std::vector<std::string> have;
    {
        auto st = m_db->prepare("SELECT name FROM pragma_table_info(?1)");
        st.bindText(1, m_target.target.name);
        while (st.step())
            have.push_back(st.text(0));
    }
    auto has = [&](const std::string &n) { return std::find(have.begin(), have.end(), n) != have.end(); };
    if (have.empty()) {
        std::string ddl = "CREATE TABLE IF NOT EXISTS " + m_table + " (";
        for (size_t i = 0; i < m_source.columns.size(); ++i) {
            const auto &c = m_source.columns[i];
            ddl += quoteIdent(c.name) + " " + std::string(sqliteDeclaredType(m_storage[i])) +
                   (c.notNull ? " NOT NULL" : "") + ", ";
        }
        ddl += "\"_driftless_version\" INTEGER NOT NULL DEFAULT 0";
        if (m_target.softDeletes)
            ddl += ", " + quoteIdent(kDeletedAtColumn) + " TEXT";
        if (m_source.hasPrimaryKey()) {
            ddl += ", PRIMARY KEY (";
            for (size_t i = 0; i < m_source.primaryKey.size(); ++i)
                ddl += (i ? ", " : "") + quoteIdent(m_source.columns[static_cast<size_t>(m_source.primaryKey[i])].name);
            ddl += ")";
        }
        ddl += ")";
        m_db->exec(ddl);
    } else {
        if (!has("_driftless_version") && !m_target.adopt)
            throw SchemaError("target table " + m_target.target.display() + " in " + m_db->path() +
                                  " exists but is not managed by Driftless (no _driftless_version column)",
                              "drop or rename it, set target_table to another name, or adopt it with adopt: true on "
                              "the table (its rows are compared with the source and only what differs is copied)");
        if (!has("_driftless_version"))
            adoptTable();
        if (m_target.softDeletes && !has(kDeletedAtColumn))
            m_db->exec("ALTER TABLE " + m_table + " ADD COLUMN " + quoteIdent(kDeletedAtColumn) + " TEXT");
        for (size_t i = 0; i < m_source.columns.size(); ++i)
            if (!has(m_source.columns[i].name))
                m_db->exec("ALTER TABLE " + m_table + " ADD COLUMN " + quoteIdent(m_source.columns[i].name) + " " +
                           std::string(sqliteDeclaredType(m_storage[i])));
    }
    if (m_source.hasPrimaryKey()) {
        std::string ddl = "CREATE TABLE IF NOT EXISTS " + tombstoneTable() + " (";
        std::string pk;
        for (int k : m_source.primaryKey) {
            const auto &c = m_source.columns[static_cast<size_t>(k)];
            ddl += quoteIdent(c.name) + " " + std::string(sqliteDeclaredType(m_storage[static_cast<size_t>(k)])) +
                   " NOT NULL, ";
            pk += (pk.empty() ? "" : ", ") + quoteIdent(c.name);
        }
        ddl += "\"_driftless_version\" INTEGER NOT NULL, PRIMARY KEY (" + pk + "))";
        m_db->exec(ddl);
        std::string seen = "CREATE TABLE IF NOT EXISTS " + seenTable() + " (";
        for (int k : m_source.primaryKey) {
            const auto &c = m_source.columns[static_cast<size_t>(k)];
            seen += quoteIdent(c.name) + " " + std::string(sqliteDeclaredType(m_storage[static_cast<size_t>(k)])) +
                    " NOT NULL, ";
        }
        m_db->exec(seen + "PRIMARY KEY (" + pk + ")) WITHOUT ROWID");
    }
}

void SqliteMerger::buildStatements()
{
    const size_t n = m_source.columns.size();
    std::string cols, params;
    for (size_t i = 0; i < n; ++i) {
        cols += quoteIdent(m_source.columns[i].name) + ", ";
        params += "?" + std::to_string(i + 1) + ", ";
    }
    const std::string v = "?" + std::to_string(n + 1);
    m_insert =
        m_db->prepare("INSERT INTO " + m_table + " (" + cols + "\"_driftless_version\") VALUES (" + params + v + ")");
    m_checkpoint = m_db->prepare(kSqliteUpsertCheckpoint);
    if (!m_source.hasPrimaryKey())
        return;
    std::string keyMatch, keyCols, keyParams, set;
    for (int k : m_source.primaryKey) {
        auto q = quoteIdent(m_source.columns[static_cast<size_t>(k)].name);
        auto p = "?" + std::to_string(k + 1);
        keyMatch += (keyMatch.empty() ? "" : " AND ") + (q + " = " + p);
        keyCols += (keyCols.empty() ? "" : ", ") + q;
        keyParams += (keyParams.empty() ? "" : ", ") + p;
    }
    std::vector<std::string> differences;
    for (size_t i = 0; i < n; ++i) {
        auto q = quoteIdent(m_source.columns[i].name);
        set += q + " = excluded." + q + ", ";
        differences.push_back(m_table + "." + q + " IS NOT excluded." + q);
    }
    // Soft deletes: a change that wins the guard revives a marked row, even with the values it has.
    const bool soft = m_target.softDeletes;
    const std::string deletedAt = quoteIdent(kDeletedAtColumn);
    if (soft) {
        differences.push_back(m_table + "." + deletedAt + " IS NOT NULL");
        set += deletedAt + " = NULL, ";
    }
    std::string changed = balancedOr(differences, 0, differences.size());
    // Cursor passes re-read their lookback window: unchanged rows are not rewritten (see PgMerger).
    // So are re-backfilled rows equal to the target's.
    const std::string differs = " AND (" + changed + ")";
    changed = m_target.strategy == Strategy::Cursor ? differs : "";
    m_snapshotUpsert =
        m_db->prepare("INSERT INTO " + m_table + " (" + cols + "\"_driftless_version\") SELECT " + params + v +
                      " WHERE NOT EXISTS (SELECT 1 FROM " + tombstoneTable() + " WHERE " + keyMatch +
                      " AND \"_driftless_version\" > " + v + ") ON CONFLICT (" + keyCols + ") DO UPDATE SET " + set +
                      "\"_driftless_version\" = excluded.\"_driftless_version\" "
                      "WHERE excluded.\"_driftless_version\" >= " +
                      m_table + ".\"_driftless_version\"" + differs);
    m_seenInsert =
        m_db->prepare("INSERT OR IGNORE INTO " + seenTable() + " (" + keyCols + ") VALUES (" + keyParams + ")");
    m_upsert =
        m_db->prepare("INSERT INTO " + m_table + " (" + cols + "\"_driftless_version\") SELECT " + params + v +
                      " WHERE NOT EXISTS (SELECT 1 FROM " + tombstoneTable() + " WHERE " + keyMatch +
                      " AND \"_driftless_version\" > " + v + ") ON CONFLICT (" + keyCols + ") DO UPDATE SET " + set +
                      "\"_driftless_version\" = excluded.\"_driftless_version\" WHERE excluded."
                      "\"_driftless_version\" >= " +
                      m_table + ".\"_driftless_version\"" + changed);
    // A soft delete marks the row (ISO-8601 UTC) and takes its version; a replay finds it marked
    // at that version and writes nothing, and the mark keeps the first delete's time.
    if (soft)
        m_delete = m_db->prepare("UPDATE " + m_table + " SET " + deletedAt + " = coalesce(" + deletedAt + ", " +
                                 kSqliteNow + "), \"_driftless_version\" = " + v + " WHERE " + keyMatch +
                                 " AND \"_driftless_version\" <= " + v + " AND (" + deletedAt +
                                 " IS NULL OR \"_driftless_version\" < " + v + ")");
    else
        m_delete =
            m_db->prepare("DELETE FROM " + m_table + " WHERE " + keyMatch + " AND \"_driftless_version\" <= " + v);
    m_tomb = m_db->prepare("INSERT INTO " + tombstoneTable() + " AS tb (" + keyCols +
                           ", \"_driftless_version\") VALUES (" + keyParams + ", " + v + ") ON CONFLICT (" + keyCols +
                           ") DO UPDATE SET \"_driftless_version\" = max(tb.\"_driftless_version\", "
                           "excluded.\"_driftless_version\")");
    // A partial row (unchanged TOAST columns) only updates: its missing values come from the row.
    const std::string mask = "?" + std::to_string(n + 2);
    std::string keep;
    for (size_t i = 0; i < n; ++i) {
        auto q = quoteIdent(m_source.columns[i].name);
        keep += q + " = CASE WHEN substr(" + mask + ", " + std::to_string(i + 1) + ", 1) = '1' THEN " + q + " ELSE ?" +
                std::to_string(i + 1) + " END, ";
    }
    if (soft)
        keep += deletedAt + " = NULL, ";
    m_partial = m_db->prepare("UPDATE " + m_table + " SET " + keep + "\"_driftless_version\" = " + v + " WHERE " +
                              keyMatch + " AND \"_driftless_version\" <= " + v);
    m_exists = m_db->prepare("SELECT 1 FROM " + m_table + " WHERE " + keyMatch);
}

void SqliteMerger::prepare(const TableSchema &source)
{
    requireKeyForSoftDeletes(m_target, source);
    m_source = source;
    m_storage.clear();
    for (const auto &c : source.columns)
        m_storage.push_back(sqliteStorageFor(c));
    // Every pass prepares: once the tables are there, one read says so, and the pass takes no
    // write lock on the file (BEGIN IMMEDIATE) and runs no DDL.
    if (!tablesReady()) {
        SqliteTransaction tx(*m_db);
        ensureTable();
        tx.commit();
    }
    buildStatements();
    (void)readCheckpoint(); // the epoch it writes under
}

std::int64_t SqliteMerger::highestVersion()
{
    const bool tombs = m_db->tableExists("_driftless_tomb_" + m_target.target.name);
    auto st = m_db->prepare(
        "SELECT max(coalesce((SELECT max(\"_driftless_version\") FROM " + m_table + "), 0), " +
        (tombs ? "coalesce((SELECT max(\"_driftless_version\") FROM " + tombstoneTable() + "), 0), " : std::string()) +
        "coalesce((SELECT version FROM _driftless_checkpoints WHERE pipeline = ?1 AND "
        "source_table = ?2), 0))");
    st.bindText(1, m_target.pipeline).bindText(2, m_target.source.display());
    return st.step() ? st.int64(0) : 0;
}

bool SqliteMerger::tablesReady()
{
    auto st = m_db->prepare("SELECT 't', name FROM pragma_table_info(?1) "
                            "UNION ALL SELECT 'c', name FROM pragma_table_info('_driftless_checkpoints') "
                            "WHERE name = 'request' "
                            "UNION ALL SELECT 'b', name FROM sqlite_master WHERE type = 'table' AND name IN (?2, ?3)");
    st.bindText(1, m_target.target.name)
        .bindText(2, "_driftless_tomb_" + m_target.target.name)
        .bindText(3, "_driftless_seen_" + m_target.target.name);
    std::vector<std::string> have;
    bool checkpoints = false;
    int bookkeeping = 0;
    while (st.step()) {
        const std::string part = st.text(0);
        if (part == "t")
            have.push_back(st.text(1));
        else if (part == "c")
            checkpoints = true;
        else
            ++bookkeeping;
    }
    auto has = [&](const std::string &n) { return std::find(have.begin(), have.end(), n) != have.end(); };
    if (!checkpoints || !has("_driftless_version")) // missing, or not Driftless's: ensureTable() says
        return false;
    if (m_target.softDeletes && !has(kDeletedAtColumn))
        return false;
    for (const auto &c : m_source.columns)
        if (!has(c.name))
            return false;
    return !m_source.hasPrimaryKey() || bookkeeping == 2;
}

std::optional<Checkpoint> SqliteMerger::readCheckpoint()
{
    auto st = m_db->prepare("SELECT position, version FROM _driftless_checkpoints WHERE pipeline = ?1 AND "
                            "source_table = ?2");
    st.bindText(1, m_target.pipeline).bindText(2, m_target.source.display());
    if (!st.step())
        return std::nullopt;
    return Checkpoint{st.text(0), learnt(st.int64(1))};
}

void SqliteMerger::clearCheckpoint()
{
    auto st = m_db->prepare("DELETE FROM _driftless_checkpoints WHERE pipeline = ?1 AND source_table = ?2");
    st.bindText(1, m_target.pipeline).bindText(2, m_target.source.display());
    st.run();
}

bool SqliteMerger::targetEmpty()
{
    return m_db->scalarInt("SELECT NOT EXISTS (SELECT 1 FROM " + m_table + ")") != 0;
}

void SqliteMerger::writeCheckpointInTransaction(const Checkpoint &cp, long long rows)
{
    m_checkpoint.reset();
    m_checkpoint.bindText(1, m_target.pipeline)
        .bindText(2, m_target.source.display())
        .bindText(3, m_target.target.display())
        .bindText(4, toString(m_target.strategy))
        .bindText(5, cp.position)
        .bind(6, static_cast<std::int64_t>(versioned(cp.version)))
        .bind(7, static_cast<std::int64_t>(rows));
    m_checkpoint.run();
}

long long SqliteMerger::insertRow(SqliteStmt &st, std::string_view line, std::int64_t version)
{
    copytext::split(line, m_fields);
    const size_t n = m_source.columns.size();
    if (m_fields.size() < n)
        throw Error(ErrorKind::Permanent,
                    "a row has " + std::to_string(m_fields.size()) + " fields, expected " + std::to_string(n));
    st.reset();
    for (size_t i = 0; i < n; ++i)
        bindCopyField(st, static_cast<int>(i + 1), m_fields[i], m_storage[i], m_scratch);
    st.bind(static_cast<int>(n + 1), versioned(version));
    st.run();
    return m_db->changes();
}

long long SqliteMerger::updatePartialRow(std::string_view line, std::string_view mask, std::int64_t version)
{
    copytext::split(line, m_fields);
    const size_t n = m_source.columns.size();
    m_partial.reset();
    for (size_t i = 0; i < n; ++i)
        bindCopyField(m_partial, static_cast<int>(i + 1), m_fields.at(i), m_storage[i], m_scratch);
    m_partial.bind(static_cast<int>(n + 1), versioned(version));
    m_partial.bindText(static_cast<int>(n + 2), mask);
    m_partial.run();
    return m_db->changes();
}

long long SqliteMerger::loadInTransaction(const RowSet &rows)
{
    long long written = 0;
    for (size_t i = 0; i < rows.size(); ++i)
        written += insertRow(m_insert, rows.line(i), rows.row(i).version);
    return written;
}

ApplyResult SqliteMerger::mergeInTransaction(const RowSet &rows)
{
    if (rows.empty())
        return {};
    if (!m_source.hasPrimaryKey())
        throw SchemaError("table " + m_target.source.display() + " has no primary key, so changes cannot be merged",
                          "add a primary key on the source, or use strategy full_refresh");
    ApplyResult res{static_cast<long long>(rows.size()), 0, false};
    const size_t n = m_source.columns.size();
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto &row = rows.row(i);
        if (row.op != ChangeOp::Delete) {
            auto mask = rows.unchangedMask(i);
            if (mask.empty()) {
                res.rowsWritten += insertRow(m_upsert, rows.line(i), row.version);
                continue;
            }
            long long changed = updatePartialRow(rows.line(i), mask, row.version);
            res.rowsWritten += changed;
            if (changed == 0) {
                m_exists.reset();
                for (int k : m_source.primaryKey)
                    bindCopyField(m_exists, k + 1, m_fields.at(static_cast<size_t>(k)),
                                  m_storage[static_cast<size_t>(k)], m_scratch);
                if (!m_exists.step())
                    ++res.partialRowsMissing;
                m_exists.reset();
            }
            continue;
        }
        copytext::split(rows.line(i), m_fields);
        m_delete.reset();
        m_tomb.reset();
        for (int k : m_source.primaryKey) {
            bindCopyField(m_delete, k + 1, m_fields.at(static_cast<size_t>(k)), m_storage[static_cast<size_t>(k)],
                          m_scratch);
            bindCopyField(m_tomb, k + 1, m_fields.at(static_cast<size_t>(k)), m_storage[static_cast<size_t>(k)],
                          m_scratch);
        }
        m_delete.bind(static_cast<int>(n + 1), versioned(row.version));
        m_tomb.bind(static_cast<int>(n + 1), versioned(row.version));
        m_delete.run();
        res.rowsWritten += m_db->changes();
        m_tomb.run();
    }
    return res;
}

std::string SqliteMerger::removeOlderSql() const
{
    // Soft deletes: such rows go on as deleted at `?1`; those marked before keep their first time.
    if (m_target.softDeletes)
        return "UPDATE " + m_table + " SET " + quoteIdent(kDeletedAtColumn) + " = " + kSqliteNow +
               ", \"_driftless_version\" = ?1 WHERE " + quoteIdent(kDeletedAtColumn) +
               " IS NULL AND \"_driftless_version\" < ?1";
    return "DELETE FROM " + m_table + " WHERE \"_driftless_version\" < ?1";
}

long long SqliteMerger::truncateInTransaction()
{
    if (m_target.softDeletes) {
        m_db->exec("UPDATE " + m_table + " SET " + quoteIdent(kDeletedAtColumn) + " = " + kSqliteNow + " WHERE " +
                   quoteIdent(kDeletedAtColumn) + " IS NULL");
        return m_db->changes();
    }
    m_db->exec("DELETE FROM " + m_table);
    return m_db->changes();
}

void SqliteMerger::addMissingColumns(const TableSchema &source)
{
    // Inside the caller's transaction: no BEGIN of our own.
    m_source = source;
    m_storage.clear();
    for (const auto &c : source.columns)
        m_storage.push_back(sqliteStorageFor(c));
    ensureTable();
    buildStatements();
}

std::string SqliteMerger::dropColumn(const TableSchema &source, const std::string &column, bool drop)
{
    std::string done = "kept on the target, no longer written";
    bool dropped = false;
    if (drop) {
        try {
            // SQLite 3.35 and later drop a column unless an index, a constraint or a view uses it;
            // a failed statement leaves the caller's transaction as it was.
            m_db->exec("ALTER TABLE " + m_table + " DROP COLUMN " + quoteIdent(column));
            done = "dropped on the target";
            dropped = true;
        } catch (const Error &e) {
            done = "kept on the target, no longer written (SQLite could not drop it: " + std::string(e.what()) + ")";
        }
    }
    if (!dropped) {
        auto st = m_db->prepare("SELECT \"notnull\" AND dflt_value IS NULL FROM pragma_table_info(?1) WHERE name = ?2");
        st.bindText(1, m_target.target.name);
        st.bindText(2, column);
        if (st.step() && st.int64(0) != 0)
            throw SchemaError(
                "column " + displayIdent(column) + " of " + describeTarget() +
                    " is NOT NULL without a default, and SQLite cannot relax that: rows inserted without it "
                    "would fail",
                "set schema_changes: { drop_column: drop } on the table and apply, or drop the column "
                "on the target yourself");
    }
    m_source = source;
    m_storage.clear();
    for (const auto &c : source.columns)
        m_storage.push_back(sqliteStorageFor(c));
    buildStatements();
    return done;
}

bool SqliteMerger::holdsType(const ColumnInfo &c, bool key, const std::string &targetType) const
{
    (void)key;
    const std::string_view declared = sqliteDeclaredType(sqliteStorageFor(c));
    return std::equal(targetType.begin(), targetType.end(), declared.begin(), declared.end(),
                      [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; });
}

std::string SqliteMerger::widenColumn(const TableSchema &source, const std::string &column)
{
    (void)column;
    m_source = source;
    m_storage.clear();
    for (const auto &c : source.columns)
        m_storage.push_back(sqliteStorageFor(c));
    buildStatements();
    return "at the source; the SQLite target needs no change (its type affinity stores the wider values as they are)";
}

std::string SqliteMerger::renameColumn(const TableSchema &source, const std::string &from, const std::string &to)
{
    // SQLite 3.25 and later rename a column in place, in the caller's transaction, and follow
    // it in the table's indexes, triggers and views.
    const std::string rename = " RENAME COLUMN " + quoteIdent(from) + " TO " + quoteIdent(to);
    m_db->exec("ALTER TABLE " + m_table + rename);
    // The key's bookkeeping tables hold key values under the key's names.
    for (const auto &book : {"_driftless_tomb_" + m_target.target.name, "_driftless_seen_" + m_target.target.name}) {
        bool has = false;
        {
            auto st = m_db->prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
            st.bindText(1, book).bindText(2, from);
            has = st.step();
        } // finalized before the ALTER
        if (has)
            m_db->exec("ALTER TABLE " + quoteIdent(book) + rename);
    }
    m_source = source;
    m_storage.clear();
    for (const auto &c : source.columns)
        m_storage.push_back(sqliteStorageFor(c));
    buildStatements();
    return "renamed on the target";
}

std::string SqliteMerger::pendingRequest()
{
    auto st = m_db->prepare("SELECT coalesce(request, '') FROM _driftless_checkpoints WHERE pipeline = ?1 AND "
                            "source_table = ?2");
    st.bindText(1, m_target.pipeline).bindText(2, m_target.source.display());
    return st.step() ? st.text(0) : std::string();
}

std::map<std::string, std::string> SqliteMerger::pendingRequests()
{
    auto st = m_db->prepare("SELECT source_table, request FROM _driftless_checkpoints WHERE pipeline = ?1 AND "
                            "request IS NOT NULL");
    st.bindText(1, m_target.pipeline);
    std::map<std::string, std::string> out;
    while (st.step())
        out[st.text(0)] = st.text(1);
    return out;
}

void SqliteMerger::setRequest(const std::string &request)
{
    auto st = m_db->prepare("UPDATE _driftless_checkpoints SET request = NULLIF(?3, '') WHERE pipeline = ?1 AND "
                            "source_table = ?2");
    st.bindText(1, m_target.pipeline).bindText(2, m_target.source.display()).bindText(3, request);
    st.run();
    if (m_db->changes() == 0)
        throw Error(ErrorKind::Permanent, m_target.source.display() + " has not been loaded yet", {},
                    "run the sync first: its initial load is a full backfill");
}

std::vector<size_t> SqliteMerger::partialRowsWithoutTarget(const RowSet &rows)
{
    std::vector<size_t> out;
    if (!rows.hasUnchanged() || !m_source.hasPrimaryKey())
        return out;
    for (size_t r = 0; r < rows.size(); ++r) {
        if (rows.unchangedMask(r).empty() || rows.row(r).op == ChangeOp::Delete)
            continue;
        copytext::split(rows.line(r), m_fields);
        m_exists.reset();
        for (int k : m_source.primaryKey)
            bindCopyField(m_exists, k + 1, m_fields.at(static_cast<size_t>(k)), m_storage[static_cast<size_t>(k)],
                          m_scratch);
        if (!m_exists.step())
            out.push_back(r);
        m_exists.reset();
    }
    return out;
}

bool SqliteMerger::unmanagedTarget()
{
    auto st = m_db->prepare("SELECT count(*), sum(name = '_driftless_version') FROM pragma_table_info(?1)");
    st.bindText(1, m_target.target.name);
    st.step();
    return st.int64(0) > 0 && st.int64(1) == 0;
}

std::vector<std::pair<std::string, std::string>> SqliteMerger::targetColumns()
{
    std::vector<std::pair<std::string, std::string>> out;
    auto st = m_db->prepare("SELECT name, type FROM pragma_table_info(?1) WHERE name NOT LIKE '\\_driftless\\_%' "
                            "ESCAPE '\\' ORDER BY cid");
    st.bindText(1, m_target.target.name);
    while (st.step())
        out.emplace_back(st.text(0), st.text(1));
    return out;
}

ApplyResult SqliteMerger::mergeSnapshotChunkInTransaction(const RowSet &rows)
{
    if (!m_source.hasPrimaryKey())
        throw SchemaError("table " + m_target.source.display() + " has no primary key, so it cannot be re-backfilled",
                          "add a primary key on the source");
    ApplyResult res{static_cast<long long>(rows.size()), 0, false};
    for (size_t i = 0; i < rows.size(); ++i) {
        res.rowsWritten += insertRow(m_snapshotUpsert, rows.line(i), rows.row(i).version);
        // insertRow split the line into m_fields: the key is there.
        m_seenInsert.reset();
        for (int k : m_source.primaryKey)
            bindCopyField(m_seenInsert, k + 1, m_fields.at(static_cast<size_t>(k)), m_storage[static_cast<size_t>(k)],
                          m_scratch);
        m_seenInsert.run();
    }
    return res;
}

long long SqliteMerger::deleteUnseenInTransaction(std::int64_t version)
{
    std::string on;
    for (int k : m_source.primaryKey) {
        auto q = quoteIdent(m_source.columns[static_cast<size_t>(k)].name);
        on += (on.empty() ? "" : " AND ") + ("s." + q + " = " + m_table + "." + q);
    }
    auto st =
        m_db->prepare(removeOlderSql() + " AND NOT EXISTS (SELECT 1 FROM " + seenTable() + " s WHERE " + on + ")");
    st.bind(1, versioned(version));
    st.run();
    const long long gone = m_db->changes();
    m_db->exec("DELETE FROM " + seenTable());
    return gone;
}

void SqliteMerger::clearSeenInTransaction()
{
    m_db->exec("DELETE FROM " + seenTable());
}

long long SqliteMerger::seenCount()
{
    return m_db->scalarInt("SELECT count(*) FROM " + seenTable());
}

long long SqliteMerger::deleteOlderInTransaction(std::int64_t version)
{
    auto st = m_db->prepare(removeOlderSql());
    st.bind(1, versioned(version));
    st.run();
    return m_db->changes();
}

ApplyResult SqliteMerger::apply(const Batch &batch)
{
    if (batch.directLoad) {
        try {
            SqliteTransaction tx(*m_db);
            ApplyResult res{static_cast<long long>(batch.rows.size()), 0, true};
            res.rowsWritten = loadInTransaction(batch.rows);
            writeCheckpointInTransaction(batch.checkpoint, res.rowsWritten);
            tx.commit();
            return res;
        } catch (const Error &e) {
            if ((std::atoi(e.code().c_str()) & 0xff) != SQLITE_CONSTRAINT)
                throw;
        }
    }
    SqliteTransaction tx(*m_db);
    ApplyResult res = mergeInTransaction(batch.rows);
    writeCheckpointInTransaction(batch.checkpoint, res.rowsWritten);
    tx.commit();
    return res;
}

long long SqliteMerger::replaceAll(const std::function<void(const std::function<void(std::string_view)> &)> &rows,
                                   const Checkpoint &checkpoint)
{
    // One write transaction: readers (WAL mode) keep seeing the old rows until it commits, and
    // the table keeps its indexes and whatever else the DBA defined on it.
    SqliteTransaction tx(*m_db);
    if (m_target.softDeletes) {
        const long long kept = refreshKeepingDeleted(*this, rows, checkpoint.version);
        writeCheckpointInTransaction(checkpoint, kept);
        tx.commit();
        return kept;
    }
    m_db->exec("DELETE FROM " + m_table);
    long long loaded = 0;
    std::string carry;
    const size_t n = m_source.columns.size();
    auto handleLine = [&](std::string_view line) {
        // The row's version is the last field.
        auto tab = line.rfind('\t');
        std::int64_t version = 0;
        std::from_chars(line.data() + tab + 1, line.data() + line.size(), version);
        insertRow(m_insert, line.substr(0, tab), version);
        ++loaded;
    };
    (void)n;
    rows([&](std::string_view chunk) {
        size_t start = 0;
        if (!carry.empty()) {
            auto nl = chunk.find('\n');
            if (nl == std::string_view::npos) {
                carry.append(chunk);
                return;
            }
            carry.append(chunk.substr(0, nl));
            handleLine(carry);
            carry.clear();
            start = nl + 1;
        }
        while (start < chunk.size()) {
            auto nl = chunk.find('\n', start);
            if (nl == std::string_view::npos) {
                carry.assign(chunk.substr(start));
                return;
            }
            handleLine(chunk.substr(start, nl - start));
            start = nl + 1;
        }
    });
    if (!carry.empty())
        handleLine(carry);
    writeCheckpointInTransaction(checkpoint, loaded);
    tx.commit();
    return loaded;
}

} // namespace driftless::core

namespace driftless::core {

std::vector<std::int64_t> SqliteMerger::guardVersions(const RowSet &rows)
{
    std::vector<std::int64_t> out(rows.size(), 0);
    if (!m_source.hasPrimaryKey())
        return out;
    std::string where;
    for (size_t i = 0; i < m_source.primaryKey.size(); ++i)
        where += std::string(i ? " AND " : "") +
                 quoteIdent(m_source.columns[static_cast<size_t>(m_source.primaryKey[i])].name) + " = ?" +
                 std::to_string(i + 1);
    auto row = m_db->prepare("SELECT \"_driftless_version\" FROM " + m_table + " WHERE " + where);
    const bool tombs = m_db->tableExists("_driftless_tomb_" + m_target.target.name);
    std::optional<SqliteStmt> tomb;
    if (tombs)
        tomb.emplace(m_db->prepare("SELECT \"_driftless_version\" FROM " + tombstoneTable() + " WHERE " + where));
    for (size_t r = 0; r < rows.size(); ++r) {
        copytext::split(rows.line(r), m_fields);
        for (SqliteStmt *st : {&row, tomb ? &*tomb : nullptr}) {
            if (!st)
                continue;
            st->reset();
            for (size_t i = 0; i < m_source.primaryKey.size(); ++i) {
                const auto k = static_cast<size_t>(m_source.primaryKey[i]);
                bindCopyField(*st, static_cast<int>(i + 1), m_fields.at(k), m_storage[k], m_scratch);
            }
            if (st->step())
                out[r] = std::max(out[r], st->int64(0));
            st->reset();
        }
    }
    return out;
}

std::vector<std::string> SqliteMerger::rowsReferencing(const std::vector<std::string> &columns,
                                                       const std::vector<std::vector<std::string>> &values,
                                                       const std::vector<int> &fields)
{
    std::vector<size_t> by;
    for (const auto &name : columns) {
        const int i = m_source.columnIndex(name);
        if (i < 0)
            throw SchemaError("target table " + m_target.target.display() + " has no column " + displayIdent(name),
                              "re-snapshot the table");
        by.push_back(static_cast<size_t>(i));
    }
    std::string select, match;
    for (size_t i = 0; i < m_source.columns.size(); ++i) {
        const bool wanted = std::find(fields.begin(), fields.end(), static_cast<int>(i)) != fields.end();
        if (wanted && !readsBackExactly(m_source.columns[i]))
            throw Error(ErrorKind::Permanent,
                        "column " + displayIdent(m_source.columns[i].name) + " of " + m_target.source.display() + " (" +
                            m_source.columns[i].typeSql +
                            ") takes part in a foreign-key action, which is applied to a SQLite target only over "
                            "integer and string columns",
                        {}, "sync the table into a Postgres target, or reconcile it after deletes of its parent");
        select += std::string(i ? ", " : "") + (wanted ? quoteIdent(m_source.columns[i].name) : std::string("NULL"));
    }
    for (size_t c = 0; c < by.size(); ++c)
        match += (c ? " AND " : "") + quoteIdent(m_source.columns[by[c]].name) + " = ?" + std::to_string(c + 1);
    auto st = m_db->prepare("SELECT " + select + " FROM " + m_table + " WHERE " + match);
    std::vector<std::string> out;
    for (const auto &tuple : values) {
        if (std::any_of(tuple.begin(), tuple.end(), [](const std::string &f) { return copytext::isNull(f); }))
            continue; // NULL references nothing
        st.reset();
        for (size_t c = 0; c < by.size(); ++c)
            bindCopyField(st, static_cast<int>(c + 1), tuple.at(c), m_storage[by[c]], m_scratch);
        while (st.step()) {
            std::string line;
            for (int c = 0; c < st.columnCount(); ++c) {
                if (c)
                    line += '\t';
                if (st.isNull(c))
                    line += copytext::kNull;
                else
                    copytext::escape(st.text(c), line);
            }
            out.push_back(std::move(line));
        }
    }
    return out;
}

long long SqliteMerger::fillColumnsInTransaction(const ColumnFill &fill, std::int64_t below)
{
    if (fill.rows.empty())
        return 0;
    // One prepared UPDATE, run per row inside the caller's transaction: only the filled columns,
    // only on rows older than `below`, the version kept. Values are converted as the merge
    // converts them (docs/type-mapping.md).
    std::vector<SqliteStorage> storage;
    std::string set, on, differs;
    int param = 0;
    auto field = [&](const std::string &name) {
        const int i = m_source.columnIndex(name);
        if (i < 0)
            throw SchemaError("target table " + m_target.target.display() + " has no column " + displayIdent(name),
                              "re-snapshot the table");
        storage.push_back(sqliteStorageFor(m_source.columns[static_cast<size_t>(i)]));
        return "?" + std::to_string(++param);
    };
    for (const auto &k : fill.keyColumns)
        on += (on.empty() ? "" : " AND ") + quoteIdent(k) + " = " + field(k);
    for (const auto &c : fill.columns) {
        const std::string p = field(c);
        set += (set.empty() ? "" : ", ") + quoteIdent(c) + " = " + p;
        differs += (differs.empty() ? "" : " OR ") + quoteIdent(c) + " IS NOT " + p;
    }
    auto st = m_db->prepare("UPDATE " + m_table + " SET " + set + " WHERE " + on + " AND \"_driftless_version\" < ?" +
                            std::to_string(param + 1) + " AND (" + differs + ")");
    long long changed = 0;
    for (const auto &row : fill.rows) {
        st.reset();
        st.clearBindings();
        for (size_t i = 0; i < row.size(); ++i) {
            if (row[i])
                bindStoredValue(st, static_cast<int>(i) + 1, *row[i], storage[i]);
            else
                st.bindNull(static_cast<int>(i) + 1);
        }
        st.bind(param + 1, versioned(below));
        st.run();
        changed += m_db->changes();
    }
    return changed;
}

} // namespace driftless::core
