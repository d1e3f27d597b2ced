#include "core/engine/endpoints/connectionpool.h"

#include "core/engine/endpoints/connect.h"
#include "core/mergers/sqlitemerger.h"

#include <sqlite3.h>

#include <optional>

namespace driftless::core {

ConnectionPool::ConnectionPool(std::chrono::milliseconds maxIdle, std::size_t perKey)
    : m_maxIdle(maxIdle), m_perKey(perKey)
{
}

std::string ConnectionPool::keyOf(const Endpoint &endpoint, const std::string &applicationName)
{
    return endpoint.name + '\n' + endpoint.dsn + '\n' + applicationName;
}

namespace {

template <typename Lists>
void expireLists(Lists &lists, std::chrono::steady_clock::time_point now, std::chrono::milliseconds maxIdle)
{
    for (auto it = lists.begin(); it != lists.end();) {
        auto &list = it->second;
        while (!list.empty() && now - list.front().since > maxIdle)
            list.pop_front(); // oldest first: closed
        it = list.empty() ? lists.erase(it) : std::next(it);
    }
}

} // namespace

void ConnectionPool::expire(Clock::time_point now)
{
    expireLists(m_idle, now, m_maxIdle);
    expireLists(m_idleSqlite, now, m_maxIdle);
}

std::shared_ptr<SqliteDb> ConnectionPool::takeSqlite(const std::string &path)
{
    {
        std::lock_guard lock(m_mutex);
        expire(Clock::now());
        auto it = m_idleSqlite.find(path);
        while (it != m_idleSqlite.end() && !it->second.empty()) {
            auto db = std::move(it->second.back().db);
            it->second.pop_back();
            if (db && db.use_count() == 1 && sqlite3_get_autocommit(db->raw())) {
                ++m_reused;
                return db;
            }
        }
    }
    return openSqliteTarget(path);
}

void ConnectionPool::giveSqlite(const std::string &path, std::shared_ptr<SqliteDb> db)
{
    if (!db || db.use_count() != 1 || !sqlite3_get_autocommit(db->raw()))
        return;
    std::lock_guard lock(m_mutex);
    const auto now = Clock::now();
    expire(now);
    auto &list = m_idleSqlite[path];
    if (list.size() < m_perKey)
        list.push_back({std::move(db), now});
}

PgConnection ConnectionPool::take(const Endpoint &endpoint, const std::string &applicationName)
{
    std::optional<PgConnection> found;
    {
        std::lock_guard lock(m_mutex);
        expire(Clock::now());
        auto it = m_idle.find(keyOf(endpoint, applicationName));
        while (it != m_idle.end() && !it->second.empty() && !found) {
            // Newest first: the likeliest to be warm, and the oldest expire.
            PgConnection conn = std::move(it->second.back().conn);
            it->second.pop_back();
            if (conn.reusable()) {
                found.emplace(std::move(conn));
                ++m_reused;
            }
        }
    }
    if (found)
        return std::move(*found);
    return connectPostgres(endpoint, applicationName);
}

void ConnectionPool::give(const Endpoint &endpoint, const std::string &applicationName, PgConnection conn)
{
    if (!conn.reusable())
        return;
    std::lock_guard lock(m_mutex);
    const auto now = Clock::now();
    expire(now);
    auto &list = m_idle[keyOf(endpoint, applicationName)];
    if (list.size() >= m_perKey)
        return; // closed as it goes out of scope
    list.push_back({std::move(conn), now});
}

void ConnectionPool::closeExpired()
{
    std::lock_guard lock(m_mutex);
    expire(Clock::now());
}

std::size_t ConnectionPool::idleCount() const
{
    std::lock_guard lock(m_mutex);
    std::size_t n = 0;
    for (const auto &[key, list] : m_idle)
        n += list.size();
    for (const auto &[key, list] : m_idleSqlite)
        n += list.size();
    return n;
}

long long ConnectionPool::reused() const
{
    std::lock_guard lock(m_mutex);
    return m_reused;
}

} // namespace driftless::core
