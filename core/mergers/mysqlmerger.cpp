#include "core/mergers/mysqlmerger.h"

#include "core/base/copytext.h"
#include "core/mergers/refreshrows.h"
#include "core/mergers/softdelete.h"
#include "core/model/error.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <future>

#include <fcntl.h>
#include <unistd.h>

namespace driftless::core {

namespace {

constexpr const char *kVersion = "`_driftless_version`";
constexpr const char *kDeletedAt = "`_driftless_deleted_at`";
/// The time a soft delete is applied: DATETIME(6) holds no zone, so it is UTC.
constexpr const char *kMysqlNow = "UTC_TIMESTAMP(6)";
constexpr const char *kOp = "`_driftless_op`";
constexpr const char *kMask = "`_driftless_mask`";
/// A multi-row INSERT is sent once its text passes this size (well under max_allowed_packet).
constexpr size_t kStatementBytes = 4 << 20;
/// From this many rows on, a load goes through LOAD DATA LOCAL INFILE: measured 1.5-1.8x the
/// rows per second of 4 MB multi-row INSERTs on MariaDB 10.11 (200,000 rows, file writing
/// included); below it the temporary file costs more than it saves.
constexpr size_t kLoadDataRows = 1000;
/// Rows of a full refresh handed to one load.
constexpr size_t kRefreshChunkRows = 50000;

constexpr const char *kCheckpoints = R"sql(
CREATE TABLE IF NOT EXISTS `_driftless_checkpoints` (
    pipeline VARCHAR(190) NOT NULL,
    source_table VARCHAR(400) NOT NULL,
    target_table VARCHAR(400) NOT NULL,
    strategy VARCHAR(32) NOT NULL,
    position LONGTEXT NOT NULL,
    version BIGINT NOT NULL,
    rows_applied BIGINT NOT NULL DEFAULT 0,
    batches BIGINT NOT NULL DEFAULT 0,
    updated_at DATETIME(6) NOT NULL,
    request VARCHAR(255) NULL,
    PRIMARY KEY (pipeline, source_table)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin)sql";

// ON DUPLICATE KEY UPDATE assigns left to right and later assignments see the new values, so
// `position` is decided before `version` moves.
constexpr const char *kUpsertCheckpoint = R"sql(
INSERT INTO `_driftless_checkpoints` (pipeline, source_table, target_table, strategy, position, version,
                                      rows_applied, batches, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, 1, UTC_TIMESTAMP(6))
ON DUPLICATE KEY UPDATE
    target_table = VALUES(target_table),
    strategy = VALUES(strategy),
    position = IF(VALUES(version) >= version, VALUES(position), position),
    version = GREATEST(version, VALUES(version)),
    rows_applied = rows_applied + VALUES(rows_applied),
    batches = batches + 1,
    updated_at = VALUES(updated_at))sql";

constexpr const char *kStrictSession =
    "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,"
    "NO_ENGINE_SUBSTITUTION', time_zone = '+00:00'";

/// Rolls back unless committed; the merger's statements run on one connection.
class Tx {
public:
    explicit Tx(MysqlConnection &c) : m_c(c) { m_c.exec("START TRANSACTION"); }
    ~Tx()
    {
        if (!m_done) {
            try {
                m_c.exec("ROLLBACK");
            } catch (...) {
            }
        }
    }
    void commit()
    {
        m_c.exec("COMMIT");
        m_done = true;
    }

private:
    MysqlConnection &m_c;
    bool m_done = false;
};

/// A private temporary file (mode 0600) holding the rows of one LOAD DATA; removed when done.
class LoadFile {
public:
    LoadFile() : m_path((std::filesystem::temp_directory_path() / "driftless-load-XXXXXX").string())
    {
        m_fd = ::mkstemp(m_path.data());
        if (m_fd < 0)
            throw Error(ErrorKind::Permanent, "cannot create a temporary file for a bulk load in " +
                                                  std::filesystem::temp_directory_path().string());
    }
    ~LoadFile()
    {
        ::close(m_fd);
        ::unlink(m_path.c_str());
    }
    LoadFile(const LoadFile &) = delete;
    LoadFile &operator=(const LoadFile &) = delete;
    void write(std::string_view data)
    {
        while (!data.empty()) {
            const auto n = ::write(m_fd, data.data(), data.size());
            if (n < 0)
                throw Error(ErrorKind::Permanent, "cannot write the bulk-load file " + m_path + " (disk full?)");
            data.remove_prefix(static_cast<size_t>(n));
        }
    }
    const std::string &path() const { return m_path; }

private:
    std::string m_path;
    int m_fd = -1;
};

} // namespace

/// A bookkeeping table name within MySQL's 64-character limit: long names keep a readable
/// prefix and a hash of the whole name.
std::string MysqlMerger::bookkeepingName(const std::string &prefix, const std::string &table)
{
    std::string name = prefix + table;
    if (name.size() <= 64)
        return name;
    std::uint32_t h = 2166136261u;
    for (unsigned char c : table)
        h = (h ^ c) * 16777619u;
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", h);
    return prefix + table.substr(0, 64 - prefix.size() - 9) + "_" + hex;
}

void MysqlMerger::configureSession(MysqlConnection &conn)
{
    conn.exec(kStrictSession);
}

MysqlMerger::MysqlMerger(MysqlConnection conn, MergeTarget target)
    : MysqlMerger(std::make_shared<MysqlConnection>(std::move(conn)), std::move(target))
{
    configureSession(*m_conn);
}

MysqlMerger::MysqlMerger(std::shared_ptr<MysqlConnection> conn, MergeTarget target)
    : m_conn(std::move(conn)), m_target(std::move(target)), m_table(mysqlIdent(m_target.target.name)),
      m_textCollation(m_conn->isMariaDb() ? "utf8mb4_nopad_bin" : "utf8mb4_0900_bin")
{
}

MysqlTargetSession::MysqlTargetSession(MysqlConnection conn)
    : m_conn(std::make_shared<MysqlConnection>(std::move(conn)))
{
    MysqlMerger::configureSession(*m_conn);
}

void MysqlTargetSession::rollback() noexcept
{
    try {
        m_conn->exec("ROLLBACK");
    } catch (...) {
    }
}

std::string MysqlMerger::describeTarget() const
{
    return m_conn->dsn().display() + " " + m_target.target.name;
}
std::string MysqlMerger::tombstoneTable() const
{
    return mysqlIdent(bookkeepingName("_driftless_tomb_", m_target.target.name));
}
std::string MysqlMerger::stagingTable() const
{
    return mysqlIdent(bookkeepingName("_driftless_stage_", m_target.target.name));
}
std::string MysqlMerger::seenTable() const
{
    return mysqlIdent(bookkeepingName("_driftless_seen_", m_target.target.name));
}

long long MysqlMerger::rowCount()
{
    return std::stoll(m_conn->scalar("SELECT ROW_COUNT()").value_or("0"));
}

std::string MysqlMerger::keyJoin(const std::string &a, const std::string &b) const
{
    std::string on;
    for (int k : m_source.primaryKey) {
        auto q = mysqlIdent(m_source.columns[static_cast<size_t>(k)].name);
        on += (on.empty() ? "" : " AND ") + a + "." + q + " = " + b + "." + q;
    }
    return on;
}

std::string MysqlMerger::columnDdl(size_t i, bool forStaging) const
{
    const auto &c = m_source.columns[i];
    const auto &t = m_types[i];
    std::string ddl = mysqlIdent(c.name) + " " + t.declared;
    if (t.declared.find("CHAR") != std::string::npos || t.declared.find("TEXT") != std::string::npos)
        ddl += " CHARACTER SET utf8mb4 COLLATE " + m_textCollation;
    if (c.notNull && !forStaging)
        ddl += " NOT NULL";
    return ddl;
}

void MysqlMerger::adoptTable()
{
    std::vector<std::string> columns;
    auto c = m_conn->query(
        "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
        {m_target.target.name});
    for (const auto &r : c.rows)
        if (r[0])
            columns.push_back(*r[0]);
    auto u = m_conn->query("SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = "
                           "DATABASE() AND TABLE_NAME = ? AND NON_UNIQUE = 0 AND SUB_PART IS NULL ORDER BY INDEX_NAME, "
                           "SEQ_IN_INDEX",
                           {m_target.target.name});
    UniqueKeys keys;
    for (const auto &r : u.rows)
        if (r[0] && r[1])
            keys[*r[0]].push_back(*r[1]);
    checkAdoptable(m_target.target.name, m_source, columns, keys, mysqlIdent, [&](const std::string &key) {
        return "ALTER TABLE " + m_table + " ADD PRIMARY KEY (" + key + ");";
    });
    // Added last with a constant default: MariaDB adds it in place (no copy of the table).
    m_conn->exec("ALTER TABLE " + m_table + " ADD COLUMN " + kVersion + " BIGINT NOT NULL DEFAULT 0");
    m_adopted = true;
}

void MysqlMerger::ensureTable()
{
    // What exists, in one query; CREATE ... IF NOT EXISTS runs only for what is missing. (Every
    // pass prepares, and on MySQL even a no-op CREATE TABLE commits and takes a metadata lock.)
    const std::string tomb = bookkeepingName("_driftless_tomb_", m_target.target.name);
    const std::string seen = bookkeepingName("_driftless_seen_", m_target.target.name);
    auto found = m_conn->query("SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
                               "DATABASE() AND TABLE_NAME IN (?, '_driftless_checkpoints', ?, ?)",
                               {m_target.target.name, tomb, seen});
    std::vector<std::string> have; // the target's columns
    bool checkpoints = false, tombExists = false, seenExists = false;
    for (const auto &r : found.rows) {
        if (!r[0] || !r[1])
            continue;
        if (*r[0] == m_target.target.name)
            have.push_back(*r[1]);
        checkpoints |= *r[0] == "_driftless_checkpoints" && *r[1] == "request";
        tombExists |= *r[0] == tomb;
        seenExists |= *r[0] == seen;
    }
    if (!checkpoints)
        m_conn->exec(kCheckpoints);
    auto has = [&](const std::string &n) { return std::find(have.begin(), have.end(), n) != have.end(); };
    std::string pk;
    for (int k : m_source.primaryKey)
        pk += (pk.empty() ? "" : ", ") + mysqlIdent(m_source.columns[static_cast<size_t>(k)].name);
    if (have.empty()) {
        std::string ddl = "CREATE TABLE IF NOT EXISTS " + m_table + " (";
        for (size_t i = 0; i < m_source.columns.size(); ++i)
            ddl += columnDdl(i, false) + ", ";
        ddl += std::string(kVersion) + " BIGINT NOT NULL DEFAULT 0";
        if (m_target.softDeletes)
            ddl += std::string(", ") + kDeletedAt + " DATETIME(6) NULL";
        if (!pk.empty())
            ddl += ", PRIMARY KEY (" + pk + ")";
        m_conn->exec(ddl + ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
    } else {
        if (!has("_driftless_version") && !m_target.adopt)
            throw SchemaError("target table " + m_target.target.name + " in " + m_conn->dsn().display() +
                                  " exists but is not managed by Driftless (no _driftless_version column)",
                              "drop or rename it, set target_table to another name, or adopt it with adopt: true on "
                              "the table (its rows are compared with the source and only what differs is copied)");
        if (!has("_driftless_version"))
            adoptTable();
        if (m_target.softDeletes && !has(kDeletedAtColumn))
            m_conn->exec("ALTER TABLE " + m_table + " ADD COLUMN " + kDeletedAt + " DATETIME(6) NULL");
        for (size_t i = 0; i < m_source.columns.size(); ++i)
            if (!has(m_source.columns[i].name))
                m_conn->exec("ALTER TABLE " + m_table + " ADD COLUMN " + columnDdl(i, true));
    }
    if (m_source.hasPrimaryKey() && !(tombExists && seenExists)) {
        std::string keys;
        for (int k : m_source.primaryKey)
            keys += columnDdl(static_cast<size_t>(k), false) + ", ";
        m_conn->exec("CREATE TABLE IF NOT EXISTS " + tombstoneTable() + " (" + keys + kVersion +
                     " BIGINT NOT NULL, PRIMARY KEY (" + pk + ")) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
        m_conn->exec("CREATE TABLE IF NOT EXISTS " + seenTable() + " (" + keys + "PRIMARY KEY (" + pk +
                     ")) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
    }
}

void MysqlMerger::ensureStaging()
{
    if (m_stagingReady)
        return;
    // TEMPORARY: private to this connection, and creating or dropping it commits nothing.
    m_conn->exec("DROP TEMPORARY TABLE IF EXISTS " + stagingTable());
    std::string ddl = "CREATE TEMPORARY TABLE " + stagingTable() + " (";
    for (size_t i = 0; i < m_source.columns.size(); ++i)
        ddl += columnDdl(i, true) + ", ";
    ddl += std::string(kVersion) + " BIGINT NOT NULL, " + kOp + " CHAR(1) NOT NULL, " + kMask + " VARCHAR(4096) NULL";
    std::string pk;
    for (int k : m_source.primaryKey)
        pk += (pk.empty() ? "" : ", ") + mysqlIdent(m_source.columns[static_cast<size_t>(k)].name);
    if (!pk.empty())
        ddl += ", PRIMARY KEY (" + pk + ")";
    m_conn->exec(ddl + ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
    m_stagingReady = true;
}

void MysqlMerger::buildSql()
{
    m_columnList.clear();
    for (const auto &c : m_source.columns)
        m_columnList += mysqlIdent(c.name) + ", ";
    m_stagingReady = false;
}

void MysqlMerger::prepare(const TableSchema &source)
{
    requireKeyForSoftDeletes(m_target, source);
    m_source = source;
    m_types.clear();
    for (size_t i = 0; i < source.columns.size(); ++i) {
        const bool key = std::find(source.primaryKey.begin(), source.primaryKey.end(), static_cast<int>(i)) !=
                         source.primaryKey.end();
        m_types.push_back(mysqlColumnFor(source.columns[i], key));
    }
    ensureTable();
    buildSql();
    (void)readCheckpoint(); // the epoch it writes under
}

std::int64_t MysqlMerger::highestVersion()
{
    // The tombstones exist with a key (ensureTable makes them).
    const std::string tomb = m_source.hasPrimaryKey() ? "COALESCE((SELECT MAX(" + std::string(kVersion) + ") FROM " +
                                                            tombstoneTable() + "), 0), "
                                                      : std::string();
    auto r = m_conn->query("SELECT GREATEST(COALESCE((SELECT MAX(" + std::string(kVersion) + ") FROM " + m_table +
                               "), 0), " + tomb +
                               "COALESCE((SELECT version FROM `_driftless_checkpoints` WHERE pipeline = ? AND "
                               "source_table = ?), 0))",
                           {m_target.pipeline, m_target.source.display()});
    return r.empty() ? 0 : std::stoll(r.text(0, 0));
}

void MysqlMerger::addMissingColumns(const TableSchema &source)
{
    // An ALTER TABLE ... ADD COLUMN commits the caller's open transaction: on MariaDB (which says
    // whether one is open) a new one is started after it, so the rest of the batch commits with
    // its checkpoint (what committed early is replayed under the guard after a crash).
    const bool open = m_conn->isMariaDb() && m_conn->scalar("SELECT @@in_transaction") == "1";
    prepare(source);
    if (open && m_conn->scalar("SELECT @@in_transaction") != "1")
        m_conn->exec("START TRANSACTION");
}

std::optional<Checkpoint> MysqlMerger::readCheckpoint()
{
    auto r = m_conn->query("SELECT position, version FROM `_driftless_checkpoints` WHERE pipeline = ? AND "
                           "source_table = ?",
                           {m_target.pipeline, m_target.source.display()});
    if (r.empty())
        return std::nullopt;
    return Checkpoint{r.text(0, 0), learnt(std::stoll(r.text(0, 1)))};
}

void MysqlMerger::clearCheckpoint()
{
    m_conn->execParams("DELETE FROM `_driftless_checkpoints` WHERE pipeline = ? AND source_table = ?",
                       {m_target.pipeline, m_target.source.display()});
}

bool MysqlMerger::targetEmpty()
{
    return m_conn->scalar("SELECT NOT EXISTS (SELECT 1 FROM " + m_table + ")") == "1";
}

void MysqlMerger::writeCheckpointInTransaction(const Checkpoint &cp, long long rows)
{
    m_conn->execParams(kUpsertCheckpoint, {m_target.pipeline, m_target.source.display(), m_target.target.name,
                                           std::string(toString(m_target.strategy)), cp.position,
                                           std::to_string(versioned(cp.version)), std::to_string(rows)});
}

void MysqlMerger::appendRowValues(std::string &sql, std::string_view line, std::int64_t version, bool staging, char op,
                                  std::string_view mask)
{
    copytext::split(line, m_fields);
    const size_t n = m_source.columns.size();
    if (m_fields.size() < n)
        throw Error(ErrorKind::Permanent,
                    "a row has " + std::to_string(m_fields.size()) + " fields, expected " + std::to_string(n));
    sql += '(';
    for (size_t i = 0; i < n; ++i) {
        appendMysqlValue(sql, m_fields[i], m_types[i], m_source.columns[i].name, m_scratch);
        sql += ", ";
    }
    sql += std::to_string(versioned(version));
    if (staging) {
        sql += ", '";
        sql += op;
        sql += "', ";
        if (mask.empty())
            sql += "NULL";
        else
            sql += mysqlLiteral(mask);
    }
    sql += ')';
}

void MysqlMerger::appendLoadLine(std::string &out, std::string_view line, std::int64_t version, bool staging, char op,
                                 std::string_view mask)
{
    copytext::split(line, m_fields);
    const size_t n = m_source.columns.size();
    if (m_fields.size() < n)
        throw Error(ErrorKind::Permanent,
                    "a row has " + std::to_string(m_fields.size()) + " fields, expected " + std::to_string(n));
    for (size_t i = 0; i < n; ++i) {
        appendMysqlLoadField(out, m_fields[i], m_types[i], m_source.columns[i].name, m_scratch);
        out += '\t';
    }
    out += std::to_string(versioned(version));
    if (staging) {
        out += '\t';
        out += op;
        out += '\t';
        if (mask.empty())
            out += "\\N";
        else
            out.append(mask);
    }
    out += '\n';
}

bool MysqlMerger::loadDataLocal(const RowSet &rows, const std::string &table, bool staging)
{
    LoadFile file;
    std::string buf;
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto &row = rows.row(i);
        appendLoadLine(buf, rows.line(i), row.version, staging, static_cast<char>(row.op), rows.unchangedMask(i));
        if (buf.size() >= (1 << 20)) {
            file.write(buf);
            buf.clear();
        }
    }
    file.write(buf);
    return runLoadData(file.path(), table, staging);
}

bool MysqlMerger::runLoadData(const std::string &path, const std::string &table, bool staging)
{
    std::string cols, set;
    for (size_t i = 0; i < m_source.columns.size(); ++i) {
        if (m_types[i].storage == MysqlStorage::Blob) {
            const std::string var = "@_driftless_b" + std::to_string(i);
            cols += var + ", ";
            set += (set.empty() ? " SET " : ", ") + mysqlIdent(m_source.columns[i].name) + " = UNHEX(" + var + ")";
        } else {
            cols += mysqlIdent(m_source.columns[i].name) + ", ";
        }
    }
    cols += kVersion;
    if (staging)
        cols += std::string(", ") + kOp + ", " + kMask;
    try {
        m_conn->exec("LOAD DATA LOCAL INFILE " + mysqlLiteral(path) + " INTO TABLE " + table +
                     " CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY "
                     "'\\n' (" +
                     cols + ")" + set);
    } catch (const Error &e) {
        // LOCAL INFILE refused by the server (local_infile=OFF, MySQL 8's default) or the client:
        // multi-row INSERTs from now on.
        static const char *refused[] = {"1148", "3948", "2068", "4166", "2000"};
        if (std::find(std::begin(refused), std::end(refused), e.code()) != std::end(refused)) {
            m_loadData = false;
            return false;
        }
        throw;
    }
    // With LOCAL the server cannot stop the client's file mid-way, so it turns errors into
    // warnings (even in strict mode) and skips rows with duplicate keys: any warning is an error.
    auto warnings = m_conn->query("SHOW WARNINGS LIMIT 1");
    if (!warnings.empty())
        throw Error(ErrorKind::Permanent,
                    "loading " + m_target.target.name + " in " + m_conn->dsn().display() + ": " + warnings.text(0, 2),
                    warnings.text(0, 1),
                    warnings.text(0, 1) == "1062" ? std::string()
                                                  : "the value does not fit its MySQL column type "
                                                    "(docs/type-mapping.md)");
    return true;
}

long long MysqlMerger::insertRows(const RowSet &rows, bool staging)
{
    return insertRows(rows, staging ? stagingTable() : m_table, staging);
}

long long MysqlMerger::insertRows(const RowSet &rows, const std::string &table, bool staging)
{
    if (m_loadData && rows.size() >= kLoadDataRows && loadDataLocal(rows, table, staging))
        return static_cast<long long>(rows.size());
    const std::string head = "INSERT INTO " + table + " (" + m_columnList + kVersion +
                             (staging ? std::string(", ") + kOp + ", " + kMask : std::string()) + ") VALUES ";
    std::string sql;
    long long written = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        sql += sql.empty() ? head : ", ";
        const auto &row = rows.row(i);
        appendRowValues(sql, rows.line(i), row.version, staging, static_cast<char>(row.op), rows.unchangedMask(i));
        if (sql.size() >= kStatementBytes) {
            m_conn->exec(sql);
            written += rowCount();
            sql.clear();
        }
    }
    if (!sql.empty()) {
        m_conn->exec(sql);
        written += rowCount();
    }
    return written;
}

long long MysqlMerger::loadInTransaction(const RowSet &rows)
{
    return insertRows(rows, false);
}

ApplyResult MysqlMerger::stageAndMerge(const RowSet &rows, bool onlyDiffering, bool rememberSeen)
{
    ApplyResult res{static_cast<long long>(rows.size()), 0, false};
    if (rows.empty())
        return res;
    ensureStaging();
    m_conn->exec("DELETE FROM " + stagingTable());
    insertRows(rows, true);

    const std::string s = stagingTable(), t = m_table;
    const std::string on = keyJoin(t, s);
    const std::string firstKey = mysqlIdent(m_source.columns[static_cast<size_t>(m_source.primaryKey[0])].name);
    auto isKey = [&](size_t i) {
        return std::find(m_source.primaryKey.begin(), m_source.primaryKey.end(), static_cast<int>(i)) !=
               m_source.primaryKey.end();
    };
    std::string set, keep, same;
    for (size_t i = 0; i < m_source.columns.size(); ++i) {
        const auto q = mysqlIdent(m_source.columns[i].name);
        same += (same.empty() ? "" : " AND ") + t + "." + q + " <=> " + s + "." + q;
        if (isKey(i))
            continue;
        set += t + "." + q + " = " + s + "." + q + ", ";
        keep += t + "." + q + " = IF(SUBSTRING(" + s + "." + kMask + ", " + std::to_string(i + 1) + ", 1) = '1', " + t +
                "." + q + ", " + s + "." + q + "), ";
    }
    // Soft deletes: a change that wins the guard revives a marked row, even with the values it has.
    const bool soft = m_target.softDeletes;
    if (soft) {
        same += " AND " + t + "." + kDeletedAt + " IS NULL";
        set += t + "." + kDeletedAt + " = NULL, ";
        keep += t + "." + kDeletedAt + " = NULL, ";
    }
    const std::string differs = onlyDiffering ? " AND NOT (" + same + ")" : "";

    if (rows.hasUnchanged()) {
        res.partialRowsMissing = std::stoll(m_conn
                                                ->scalar("SELECT COUNT(*) FROM " + s + " LEFT JOIN " + t + " ON " + on +
                                                         " WHERE " + s + "." + kMask + " IS NOT NULL AND " + s + "." +
                                                         kOp + " <> 'd' AND " + t + "." + firstKey + " IS NULL")
                                                .value_or("0"));
        m_conn->exec("UPDATE " + t + " JOIN " + s + " ON " + on + " SET " + keep + t + "." + kVersion + " = " + s +
                     "." + kVersion + " WHERE " + s + "." + kMask + " IS NOT NULL AND " + s + "." + kOp +
                     " <> 'd' AND " + s + "." + kVersion + " >= " + t + "." + kVersion);
        res.rowsWritten += rowCount();
    }
    // Rows the target has: overwritten only by a change at least as new as the row.
    m_conn->exec("UPDATE " + t + " JOIN " + s + " ON " + on + " SET " + set + t + "." + kVersion + " = " + s + "." +
                 kVersion + " WHERE " + s + "." + kMask + " IS NULL AND " + s + "." + kOp + " <> 'd' AND " + s + "." +
                 kVersion + " >= " + t + "." + kVersion + differs);
    res.rowsWritten += rowCount();
    // Rows it lacks: inserted unless a newer delete left a tombstone.
    std::string sel;
    for (const auto &c : m_source.columns)
        sel += s + "." + mysqlIdent(c.name) + ", ";
    const std::string tb = tombstoneTable();
    m_conn->exec("INSERT INTO " + t + " (" + m_columnList + kVersion + ") SELECT " + sel + s + "." + kVersion +
                 " FROM " + s + " LEFT JOIN " + t + " ON " + on + " LEFT JOIN " + tb + " ON " + keyJoin(tb, s) +
                 " WHERE " + s + "." + kMask + " IS NULL AND " + s + "." + kOp + " <> 'd' AND " + t + "." + firstKey +
                 " IS NULL AND (" + tb + "." + kVersion + " IS NULL OR " + tb + "." + kVersion + " <= " + s + "." +
                 kVersion + ")");
    res.rowsWritten += rowCount();
    // Deletes: only rows no newer than the delete; every delete leaves a tombstone. A soft delete
    // marks the row and takes its version; a replay finds it marked at that version and writes
    // nothing, and the mark keeps the first delete's time.
    if (soft)
        m_conn->exec("UPDATE " + t + " JOIN " + s + " ON " + on + " SET " + t + "." + kDeletedAt + " = COALESCE(" + t +
                     "." + kDeletedAt + ", " + kMysqlNow + "), " + t + "." + kVersion + " = " + s + "." + kVersion +
                     " WHERE " + s + "." + kOp + " = 'd' AND " + t + "." + kVersion + " <= " + s + "." + kVersion +
                     " AND (" + t + "." + kDeletedAt + " IS NULL OR " + t + "." + kVersion + " < " + s + "." +
                     kVersion + ")");
    else
        m_conn->exec("DELETE " + t + " FROM " + t + " JOIN " + s + " ON " + on + " WHERE " + s + "." + kOp +
                     " = 'd' AND " + t + "." + kVersion + " <= " + s + "." + kVersion);
    res.rowsWritten += rowCount();
    std::string keys;
    for (int k : m_source.primaryKey)
        keys += (keys.empty() ? "" : ", ") + s + "." + mysqlIdent(m_source.columns[static_cast<size_t>(k)].name);
    std::string keyCols;
    for (int k : m_source.primaryKey)
        keyCols += mysqlIdent(m_source.columns[static_cast<size_t>(k)].name) + ", ";
    m_conn->exec("INSERT INTO " + tb + " (" + keyCols + kVersion + ") SELECT " + keys + ", " + s + "." + kVersion +
                 " FROM " + s + " WHERE " + s + "." + kOp + " = 'd' ON DUPLICATE KEY UPDATE " + tb + "." + kVersion +
                 " = GREATEST(" + tb + "." + kVersion + ", VALUES(" + kVersion + "))");
    if (rememberSeen) {
        const std::string seen = seenTable();
        m_conn->exec("INSERT INTO " + seen + " (" + keyCols.substr(0, keyCols.size() - 2) + ") SELECT " + keys +
                     " FROM " + s + " ON DUPLICATE KEY UPDATE " + seen + "." + firstKey + " = " + seen + "." +
                     firstKey);
    }
    return res;
}

ApplyResult MysqlMerger::mergeInTransaction(const RowSet &rows)
{
    if (rows.empty())
        return {};
    if (!m_source.hasPrimaryKey())
        throw SchemaError("table " + m_target.source.display() + " has no primary key, so changes cannot be merged",
                          "add a primary key on the source, or use strategy full_refresh");
    // Cursor passes re-read their lookback window: unchanged rows keep their version (as PgMerger).
    return stageAndMerge(rows, m_target.strategy == Strategy::Cursor, false);
}

ApplyResult MysqlMerger::mergeSnapshotChunkInTransaction(const RowSet &rows)
{
    if (!m_source.hasPrimaryKey())
        throw SchemaError("table " + m_target.source.display() + " has no primary key, so it cannot be re-backfilled",
                          "add a primary key on the source");
    return stageAndMerge(rows, true, true);
}

long long MysqlMerger::deleteUnseenInTransaction(std::int64_t version)
{
    version = versioned(version);
    const std::string seen = seenTable();
    const std::string firstKey = mysqlIdent(m_source.columns[static_cast<size_t>(m_source.primaryKey[0])].name);
    const std::string older = m_table + "." + kVersion + " < " + std::to_string(version);
    // Soft deletes: such rows go on as deleted at the snapshot's version; those marked before
    // keep their first time.
    if (m_target.softDeletes)
        m_conn->exec("UPDATE " + m_table + " LEFT JOIN " + seen + " ON " + keyJoin(m_table, seen) + " SET " + m_table +
                     "." + kDeletedAt + " = " + kMysqlNow + ", " + m_table + "." + kVersion + " = " +
                     std::to_string(version) + " WHERE " + seen + "." + firstKey + " IS NULL AND " + m_table + "." +
                     kDeletedAt + " IS NULL AND " + older);
    else
        m_conn->exec("DELETE " + m_table + " FROM " + m_table + " LEFT JOIN " + seen + " ON " + keyJoin(m_table, seen) +
                     " WHERE " + seen + "." + firstKey + " IS NULL AND " + older);
    const long long gone = rowCount();
    m_conn->exec("DELETE FROM " + seen);
    return gone;
}

void MysqlMerger::clearSeenInTransaction()
{
    if (m_source.hasPrimaryKey())
        m_conn->exec("DELETE FROM " + seenTable());
}

long long MysqlMerger::seenCount()
{
    if (!m_source.hasPrimaryKey())
        return 0;
    return std::stoll(m_conn->scalar("SELECT COUNT(*) FROM " + seenTable()).value_or("0"));
}

long long MysqlMerger::deleteOlderInTransaction(std::int64_t version)
{
    version = versioned(version);
    if (m_target.softDeletes)
        m_conn->exec("UPDATE " + m_table + " SET " + kDeletedAt + " = " + kMysqlNow + ", " + kVersion + " = " +
                     std::to_string(version) + " WHERE " + kDeletedAt + " IS NULL AND " + kVersion + " < " +
                     std::to_string(version));
    else
        m_conn->exec("DELETE FROM " + m_table + " WHERE " + kVersion + " < " + std::to_string(version));
    return rowCount();
}

long long MysqlMerger::truncateInTransaction()
{
    // TRUNCATE would commit the open transaction: DELETE keeps it atomic. Soft deletes mark
    // every live row.
    if (m_target.softDeletes)
        m_conn->exec("UPDATE " + m_table + " SET " + kDeletedAt + " = " + kMysqlNow + " WHERE " + kDeletedAt +
                     " IS NULL");
    else
        m_conn->exec("DELETE FROM " + m_table);
    return rowCount();
}

bool MysqlMerger::unmanagedTarget()
{
    auto r = m_conn->query("SELECT COUNT(*), SUM(COLUMN_NAME = '_driftless_version') FROM information_schema.COLUMNS "
                           "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                           {m_target.target.name});
    return r.text(0, 0) != "0" && r.text(0, 1) == "0";
}

std::vector<std::pair<std::string, std::string>> MysqlMerger::targetColumns()
{
    std::vector<std::pair<std::string, std::string>> out;
    auto r = m_conn->query("SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
                           "DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME NOT LIKE '\\_driftless\\_%' "
                           "ORDER BY ORDINAL_POSITION",
                           {m_target.target.name});
    for (size_t i = 0; i < r.size(); ++i)
        out.emplace_back(r.text(i, 0), r.text(i, 1));
    return out;
}

std::vector<size_t> MysqlMerger::partialRowsWithoutTarget(const RowSet &rows)
{
    std::vector<size_t> out;
    if (!rows.hasUnchanged() || !m_source.hasPrimaryKey())
        return out;
    for (size_t r = 0; r < rows.size(); ++r) {
        if (rows.unchangedMask(r).empty() || rows.row(r).op == ChangeOp::Delete)
            continue;
        copytext::split(rows.line(r), m_fields);
        std::string where;
        for (int k : m_source.primaryKey) {
            const auto i = static_cast<size_t>(k);
            where += (where.empty() ? "" : " AND ") + mysqlIdent(m_source.columns[i].name) + " = ";
            appendMysqlValue(where, m_fields.at(i), m_types[i], m_source.columns[i].name, m_scratch);
        }
        if (!m_conn->scalar("SELECT 1 FROM " + m_table + " WHERE " + where))
            out.push_back(r);
    }
    return out;
}

std::vector<std::int64_t> MysqlMerger::guardVersions(const RowSet &rows)
{
    std::vector<std::int64_t> out(rows.size(), 0);
    if (!m_source.hasPrimaryKey())
        return out;
    for (size_t r = 0; r < rows.size(); ++r) {
        copytext::split(rows.line(r), m_fields);
        std::string where;
        for (int k : m_source.primaryKey) {
            const auto i = static_cast<size_t>(k);
            where += (where.empty() ? "" : " AND ") + mysqlIdent(m_source.columns[i].name) + " = ";
            appendMysqlValue(where, m_fields.at(i), m_types[i], m_source.columns[i].name, m_scratch);
        }
        auto v = m_conn->scalar("SELECT GREATEST(COALESCE((SELECT " + std::string(kVersion) + " FROM " + m_table +
                                " WHERE " + where + "), 0), COALESCE((SELECT " + kVersion + " FROM " +
                                tombstoneTable() + " WHERE " + where + "), 0))");
        out[r] = std::stoll(v.value_or("0"));
    }
    return out;
}

std::vector<std::string> MysqlMerger::rowsReferencing(const std::vector<std::string> &columns,
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
    std::string select;
    for (size_t i = 0; i < m_source.columns.size(); ++i) {
        const bool wanted = std::find(fields.begin(), fields.end(), static_cast<int>(i)) != fields.end();
        if (wanted && !readsBackExactly(m_source.columns[i]))
            throw Error(
                ErrorKind::Permanent,
                "column " + displayIdent(m_source.columns[i].name) + " of " + m_target.source.display() + " (" +
                    m_source.columns[i].typeSql +
                    ") takes part in a foreign-key action, which is applied to a MariaDB/MySQL target only over "
                    "integer and string columns",
                {}, "sync the table into a Postgres target, or reconcile it after deletes of its parent");
        select += std::string(i ? ", " : "") +
                  (wanted ? "CAST(" + mysqlIdent(m_source.columns[i].name) + " AS CHAR)" : std::string("NULL"));
    }
    std::string cols;
    for (size_t i : by)
        cols += (cols.empty() ? "" : ", ") + mysqlIdent(m_source.columns[i].name);
    std::vector<std::string> out;
    constexpr size_t kTuples = 500;
    for (size_t from = 0; from < values.size(); from += kTuples) {
        std::string in;
        for (size_t r = from; r < std::min(values.size(), from + kTuples); ++r) {
            const auto &tuple = values[r];
            if (std::any_of(tuple.begin(), tuple.end(), [](const std::string &f) { return copytext::isNull(f); }))
                continue;
            in += in.empty() ? "(" : ", (";
            for (size_t c = 0; c < by.size(); ++c) {
                if (c)
                    in += ", ";
                appendMysqlValue(in, tuple.at(c), m_types[by[c]], m_source.columns[by[c]].name, m_scratch);
            }
            in += ")";
        }
        if (in.empty())
            continue;
        auto r = m_conn->query("SELECT " + select + " FROM " + m_table + " WHERE (" + cols + ") IN (" + in + ")");
        for (const auto &row : r.rows) {
            std::string line;
            for (size_t c = 0; c < row.size(); ++c) {
                if (c)
                    line += '\t';
                if (!row[c])
                    line += copytext::kNull;
                else
                    copytext::escape(*row[c], line);
            }
            out.push_back(std::move(line));
        }
    }
    return out;
}

std::string MysqlMerger::pendingRequest()
{
    return m_conn
        ->scalar("SELECT COALESCE(request, '') FROM `_driftless_checkpoints` WHERE pipeline = ? AND source_table = ?",
                 {m_target.pipeline, m_target.source.display()})
        .value_or("");
}

std::map<std::string, std::string> MysqlMerger::pendingRequests()
{
    auto r = m_conn->query("SELECT source_table, request FROM `_driftless_checkpoints` WHERE pipeline = ? AND "
                           "request IS NOT NULL",
                           {m_target.pipeline});
    std::map<std::string, std::string> out;
    for (size_t i = 0; i < r.size(); ++i)
        out[r.text(i, 0)] = r.text(i, 1);
    return out;
}

void MysqlMerger::setRequest(const std::string &request)
{
    // ROW_COUNT() counts changed rows only, so existence is asked for separately.
    if (!readCheckpoint())
        throw Error(ErrorKind::Permanent, m_target.source.display() + " has not been loaded yet", {},
                    "run the sync first: its initial load is a full backfill");
    m_conn->execParams("UPDATE `_driftless_checkpoints` SET request = NULLIF(?, '') WHERE pipeline = ? AND "
                       "source_table = ?",
                       {request, m_target.pipeline, m_target.source.display()});
}

ApplyResult MysqlMerger::apply(const Batch &batch)
{
    if (batch.directLoad) {
        try {
            Tx tx(*m_conn);
            ApplyResult res{static_cast<long long>(batch.rows.size()), 0, true};
            res.rowsWritten = loadInTransaction(batch.rows);
            writeCheckpointInTransaction(batch.checkpoint, res.rowsWritten);
            tx.commit();
            return res;
        } catch (const Error &e) {
            if (e.code() != "1062") // ER_DUP_ENTRY: a key exists, merge instead
                throw;
        }
    }
    Tx tx(*m_conn);
    ApplyResult res = mergeInTransaction(batch.rows);
    writeCheckpointInTransaction(batch.checkpoint, res.rowsWritten);
    tx.commit();
    return res;
}

long long MysqlMerger::loadPipelined(const std::function<void(const std::function<void(std::string_view)> &)> &rows,
                                     const std::string &shadow)
{
    // The server parses and inserts one file (a core's work) while this thread turns the next
    // 50,000 rows into load lines: the source's rows no longer wait for each load to end (B4).
    // The session is used by one thread at a time: the load's, until its result is taken.
    long long loaded = 0;
    std::future<void> loading;
    std::unique_ptr<LoadFile> loadingFile;
    auto file = std::make_unique<LoadFile>();
    std::string buf;
    size_t inFile = 0;
    auto finishLoading = [&] {
        if (!loading.valid())
            return;
        loading.get(); // its error, if any
        loadingFile.reset();
    };
    auto startLoading = [&] {
        file->write(buf);
        buf.clear();
        finishLoading();
        loadingFile = std::move(file);
        loading = std::async(std::launch::async, [this, path = loadingFile->path(), &shadow] {
            if (!runLoadData(path, shadow, false))
                throw Error(ErrorKind::Permanent,
                            "LOAD DATA LOCAL INFILE into " + m_target.target.name +
                                " was refused part way through the refresh (local_infile turned off meanwhile?)",
                            {}, "the table keeps its rows; run the refresh again");
        });
        file = std::make_unique<LoadFile>();
        inFile = 0;
    };
    try {
        forEachRefreshRow(rows, [&](std::string_view line, std::int64_t version) {
            appendLoadLine(buf, line, version, false, static_cast<char>(ChangeOp::Insert), {});
            ++loaded;
            if (buf.size() >= (1 << 20)) {
                file->write(buf);
                buf.clear();
            }
            if (++inFile >= kRefreshChunkRows)
                startLoading();
        });
        if (inFile > 0)
            startLoading();
        finishLoading();
    } catch (...) {
        if (loading.valid())
            loading.wait(); // the session is free again before the caller drops the shadow
        throw;
    }
    return loaded;
}

long long MysqlMerger::replaceAll(const std::function<void(const std::function<void(std::string_view)> &)> &rows,
                                  const Checkpoint &checkpoint)
{
    if (m_target.softDeletes) {
        Tx tx(*m_conn);
        const long long kept = refreshKeepingDeleted(*this, rows, checkpoint.version);
        writeCheckpointInTransaction(checkpoint, kept);
        tx.commit();
        return kept;
    }
    const std::string shadow = mysqlIdent(bookkeepingName("_driftless_shadow_", m_target.target.name));
    const std::string old = mysqlIdent(bookkeepingName("_driftless_old_", m_target.target.name));
    m_conn->exec("DROP TABLE IF EXISTS " + shadow);
    // LIKE keeps the indexes and options the DBA gave the table.
    m_conn->exec("CREATE TABLE " + shadow + " LIKE " + m_table);
    RowSet chunk;
    long long loaded = 0;
    auto flush = [&] {
        if (chunk.empty())
            return;
        insertRows(chunk, shadow, false); // autocommit: the shadow is invisible until the swap
        chunk.clear();
    };
    try {
        if (m_loadData) {
            // Whether LOCAL INFILE is allowed, asked with an empty file before any row is taken:
            // rows handed to a refused load could not be read again for INSERTs.
            LoadFile none;
            m_loadData = runLoadData(none.path(), shadow, false);
        }
        if (m_loadData) {
            loaded = loadPipelined(rows, shadow);
        } else {
            forEachRefreshRow(rows, [&](std::string_view line, std::int64_t version) {
                chunk.append(line, ChangeOp::Insert, version);
                ++loaded;
                if (chunk.size() >= kRefreshChunkRows)
                    flush();
            });
            flush();
        }
    } catch (...) {
        try {
            m_conn->exec("DROP TABLE IF EXISTS " + shadow);
        } catch (...) {
        }
        throw;
    }
    // One RENAME swaps both names atomically: readers see the old table or the new one.
    m_conn->exec("DROP TABLE IF EXISTS " + old);
    m_conn->exec("RENAME TABLE " + m_table + " TO " + old + ", " + shadow + " TO " + m_table);
    m_conn->exec("DROP TABLE " + old);
    Tx tx(*m_conn);
    writeCheckpointInTransaction(checkpoint, loaded);
    tx.commit();
    return loaded;
}

} // namespace driftless::core
