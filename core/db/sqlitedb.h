#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace driftless::core {

class SqliteDb;

/// A prepared statement. RAII; move-only; belongs to the thread that uses its database.
class SqliteStmt {
public:
    SqliteStmt() = default;
    SqliteStmt(SqliteDb &db, std::string_view sql);
    ~SqliteStmt();
    SqliteStmt(SqliteStmt &&) noexcept;
    SqliteStmt &operator=(SqliteStmt &&) noexcept;
    SqliteStmt(const SqliteStmt &) = delete;
    SqliteStmt &operator=(const SqliteStmt &) = delete;

    /// Parameters are 1-based, as in SQLite.
    SqliteStmt &bind(int i, std::int64_t v);
    SqliteStmt &bind(int i, double v);
    /// Text is copied (SQLITE_TRANSIENT) unless `stable` says it outlives the step.
    SqliteStmt &bindText(int i, std::string_view v, bool stable = false);
    SqliteStmt &bindBlob(int i, std::string_view v, bool stable = false);
    SqliteStmt &bindNull(int i);
    SqliteStmt &bind(int i, const std::optional<std::string> &v);

    /// Returns true while a row is available.
    bool step();
    /// Steps to completion; throws on error.
    void run();
    void reset();
    void clearBindings();

    bool isNull(int col) const;
    std::int64_t int64(int col) const;
    double real(int col) const;
    std::string text(int col) const;
    std::optional<std::string> optText(int col) const;
    int columnType(int col) const;
    int columnCount() const;
    std::string columnName(int col) const;

private:
    sqlite3_stmt *m_stmt = nullptr;
    sqlite3 *m_db = nullptr;
};

/// One SQLite database connection. RAII; move-only.
///
/// Thread affinity: one thread at a time. Failure: throws Error carrying the SQLite result code;
/// SQLITE_BUSY, SQLITE_LOCKED and SQLITE_FULL are transient (another writer, or a full disk the
/// DBA can clear), everything else permanent.
class SqliteDb {
public:
    enum class Mode { ReadWriteCreate, ReadWrite, ReadOnly };
    explicit SqliteDb(const std::string &path, Mode mode = Mode::ReadWriteCreate, int busyTimeoutMs = 10000);
    ~SqliteDb();
    SqliteDb(SqliteDb &&) noexcept;
    SqliteDb &operator=(SqliteDb &&) noexcept;
    SqliteDb(const SqliteDb &) = delete;
    SqliteDb &operator=(const SqliteDb &) = delete;

    void exec(std::string_view sql);
    SqliteStmt prepare(std::string_view sql) { return SqliteStmt(*this, sql); }
    std::int64_t scalarInt(std::string_view sql);
    std::int64_t changes() const;
    std::int64_t lastInsertRowid() const;
    bool tableExists(std::string_view name);
    const std::string &path() const { return m_path; }
    sqlite3 *raw() const { return m_db; }

    [[noreturn]] void throwError(int rc, std::string_view context) const;

private:
    sqlite3 *m_db = nullptr;
    std::string m_path;
};

/// RAII transaction: BEGIN IMMEDIATE on construction, ROLLBACK unless commit() was called.
class SqliteTransaction {
public:
    explicit SqliteTransaction(SqliteDb &db);
    ~SqliteTransaction();
    void commit();

private:
    SqliteDb &m_db;
    bool m_done = false;
};

} // namespace driftless::core
