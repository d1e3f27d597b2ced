#include "core/db/sqlitedb.h"

#include "core/model/error.h"

#include <sqlite3.h>

namespace driftless::core {

namespace {
bool transientCode(int rc)
{
    int primary = rc & 0xff;
    return primary == SQLITE_BUSY || primary == SQLITE_LOCKED || primary == SQLITE_FULL || primary == SQLITE_IOERR;
}
} // namespace

void SqliteDb::throwError(int rc, std::string_view context) const
{
    std::string msg = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
    std::string full = "sqlite " + m_path + ": " + msg;
    if (!context.empty())
        full += " (" + std::string(context.substr(0, 60)) + ")";
    std::string hint;
    int primary = rc & 0xff;
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
        hint = "another process holds a write lock on the file; the engine retries";
    else if (primary == SQLITE_FULL)
        hint = "the disk or the database's size limit is full; free space and the engine resumes";
    else if (primary == SQLITE_CANTOPEN)
        hint = "check that the folder exists and is writable";
    else if (primary == SQLITE_READONLY)
        hint = "the file is read-only; fix its permissions";
    throw Error(transientCode(rc) ? ErrorKind::Transient : ErrorKind::Permanent, full, std::to_string(rc), hint);
}

SqliteDb::SqliteDb(const std::string &path, Mode mode, int busyTimeoutMs) : m_path(path)
{
    int flags = SQLITE_OPEN_NOMUTEX;
    switch (mode) {
    case Mode::ReadWriteCreate:
        flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
        break;
    case Mode::ReadWrite:
        flags |= SQLITE_OPEN_READWRITE;
        break;
    case Mode::ReadOnly:
        flags |= SQLITE_OPEN_READONLY;
        break;
    }
    int rc = sqlite3_open_v2(path.c_str(), &m_db, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string msg = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
        sqlite3_close(m_db);
        m_db = nullptr;
        throw Error(ErrorKind::Permanent, "cannot open sqlite database " + path + ": " + msg, std::to_string(rc),
                    "check that the folder exists and is writable");
    }
    sqlite3_extended_result_codes(m_db, 1);
    sqlite3_busy_timeout(m_db, busyTimeoutMs);
}

SqliteDb::~SqliteDb()
{
    if (m_db)
        sqlite3_close_v2(m_db);
}

SqliteDb::SqliteDb(SqliteDb &&o) noexcept : m_db(o.m_db), m_path(std::move(o.m_path))
{
    o.m_db = nullptr;
}

SqliteDb &SqliteDb::operator=(SqliteDb &&o) noexcept
{
    if (this != &o) {
        if (m_db)
            sqlite3_close_v2(m_db);
        m_db = o.m_db;
        m_path = std::move(o.m_path);
        o.m_db = nullptr;
    }
    return *this;
}

void SqliteDb::exec(std::string_view sql)
{
    std::string q(sql);
    char *err = nullptr;
    int rc = sqlite3_exec(m_db, q.c_str(), nullptr, nullptr, &err);
    if (err)
        sqlite3_free(err);
    if (rc != SQLITE_OK)
        throwError(rc, sql);
}

std::int64_t SqliteDb::scalarInt(std::string_view sql)
{
    auto st = prepare(sql);
    if (!st.step())
        return 0;
    return st.int64(0);
}

std::int64_t SqliteDb::changes() const
{
    return sqlite3_changes64(m_db);
}
std::int64_t SqliteDb::lastInsertRowid() const
{
    return sqlite3_last_insert_rowid(m_db);
}

bool SqliteDb::tableExists(std::string_view name)
{
    auto st = prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
    st.bindText(1, name);
    return st.step();
}

SqliteStmt::SqliteStmt(SqliteDb &db, std::string_view sql) : m_db(db.raw())
{
    int rc =
        sqlite3_prepare_v3(m_db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &m_stmt, nullptr);
    if (rc != SQLITE_OK)
        db.throwError(rc, sql);
}

SqliteStmt::~SqliteStmt()
{
    if (m_stmt)
        sqlite3_finalize(m_stmt);
}

SqliteStmt::SqliteStmt(SqliteStmt &&o) noexcept : m_stmt(o.m_stmt), m_db(o.m_db)
{
    o.m_stmt = nullptr;
}

SqliteStmt &SqliteStmt::operator=(SqliteStmt &&o) noexcept
{
    if (this != &o) {
        if (m_stmt)
            sqlite3_finalize(m_stmt);
        m_stmt = o.m_stmt;
        m_db = o.m_db;
        o.m_stmt = nullptr;
    }
    return *this;
}

namespace {
[[noreturn]] void fail(sqlite3 *db, int rc, const char *what)
{
    std::string file = db ? (sqlite3_db_filename(db, "main") ? sqlite3_db_filename(db, "main") : "") : "";
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    int primary = rc & 0xff;
    std::string hint;
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
        hint = "another process holds a write lock on the file; the engine retries";
    else if (primary == SQLITE_FULL)
        hint = "the disk or the database's size limit is full; free space and the engine resumes";
    throw Error(transientCode(rc) ? ErrorKind::Transient : ErrorKind::Permanent,
                "sqlite " + file + ": " + msg + " (" + what + ")", std::to_string(rc), hint);
}
} // namespace

SqliteStmt &SqliteStmt::bind(int i, std::int64_t v)
{
    int rc = sqlite3_bind_int64(m_stmt, i, v);
    if (rc != SQLITE_OK)
        fail(m_db, rc, "bind");
    return *this;
}

SqliteStmt &SqliteStmt::bind(int i, double v)
{
    int rc = sqlite3_bind_double(m_stmt, i, v);
    if (rc != SQLITE_OK)
        fail(m_db, rc, "bind");
    return *this;
}

SqliteStmt &SqliteStmt::bindText(int i, std::string_view v, bool stable)
{
    int rc = sqlite3_bind_text64(m_stmt, i, v.data(), v.size(), stable ? SQLITE_STATIC : SQLITE_TRANSIENT, SQLITE_UTF8);
    if (rc != SQLITE_OK)
        fail(m_db, rc, "bind");
    return *this;
}

SqliteStmt &SqliteStmt::bindBlob(int i, std::string_view v, bool stable)
{
    int rc = sqlite3_bind_blob64(m_stmt, i, v.data(), v.size(), stable ? SQLITE_STATIC : SQLITE_TRANSIENT);
    if (rc != SQLITE_OK)
        fail(m_db, rc, "bind");
    return *this;
}

SqliteStmt &SqliteStmt::bindNull(int i)
{
    int rc = sqlite3_bind_null(m_stmt, i);
    if (rc != SQLITE_OK)
        fail(m_db, rc, "bind");
    return *this;
}

SqliteStmt &SqliteStmt::bind(int i, const std::optional<std::string> &v)
{
    return v ? bindText(i, *v) : bindNull(i);
}

bool SqliteStmt::step()
{
    int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    int code = sqlite3_extended_errcode(m_db);
    sqlite3_reset(m_stmt);
    fail(m_db, code ? code : rc, "step");
}

void SqliteStmt::run()
{
    while (step()) {
    }
}

void SqliteStmt::reset()
{
    // Bindings stay: every caller binds each parameter it uses before the next step.
    sqlite3_reset(m_stmt);
}

void SqliteStmt::clearBindings()
{
    sqlite3_clear_bindings(m_stmt);
}

bool SqliteStmt::isNull(int col) const
{
    return sqlite3_column_type(m_stmt, col) == SQLITE_NULL;
}
std::int64_t SqliteStmt::int64(int col) const
{
    return sqlite3_column_int64(m_stmt, col);
}
double SqliteStmt::real(int col) const
{
    return sqlite3_column_double(m_stmt, col);
}
std::string SqliteStmt::text(int col) const
{
    auto *p = reinterpret_cast<const char *>(sqlite3_column_blob(m_stmt, col));
    int n = sqlite3_column_bytes(m_stmt, col);
    return p ? std::string(p, static_cast<size_t>(n)) : std::string();
}
std::optional<std::string> SqliteStmt::optText(int col) const
{
    if (isNull(col))
        return std::nullopt;
    auto *p = reinterpret_cast<const char *>(sqlite3_column_text(m_stmt, col));
    int n = sqlite3_column_bytes(m_stmt, col);
    return std::string(p ? p : "", static_cast<size_t>(n));
}
int SqliteStmt::columnType(int col) const
{
    return sqlite3_column_type(m_stmt, col);
}
int SqliteStmt::columnCount() const
{
    return sqlite3_column_count(m_stmt);
}
std::string SqliteStmt::columnName(int col) const
{
    return sqlite3_column_name(m_stmt, col);
}

SqliteTransaction::SqliteTransaction(SqliteDb &db) : m_db(db)
{
    m_db.exec("BEGIN IMMEDIATE");
}

SqliteTransaction::~SqliteTransaction()
{
    if (!m_done) {
        try {
            m_db.exec("ROLLBACK");
        } catch (...) {
        }
    }
}

void SqliteTransaction::commit()
{
    m_db.exec("COMMIT");
    m_done = true;
}

} // namespace driftless::core
