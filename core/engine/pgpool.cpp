#include "core/engine/pgpool.h"

#include "core/engine/connect.h"

#include <optional>

namespace driftless::core {

PgPool::PgPool(std::chrono::milliseconds maxIdle, std::size_t perKey) : m_maxIdle(maxIdle), m_perKey(perKey) {}

std::string PgPool::keyOf(const Endpoint &endpoint, const std::string &applicationName)
{
    return endpoint.name + '\n' + endpoint.dsn + '\n' + applicationName;
}

void PgPool::expire(Clock::time_point now)
{
    for (auto it = m_idle.begin(); it != m_idle.end();) {
        auto &list = it->second;
        while (!list.empty() && now - list.front().since > m_maxIdle)
            list.pop_front(); // oldest first: closed
        it = list.empty() ? m_idle.erase(it) : std::next(it);
    }
}

PgConnection PgPool::take(const Endpoint &endpoint, const std::string &applicationName)
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

void PgPool::give(const Endpoint &endpoint, const std::string &applicationName, PgConnection conn)
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

void PgPool::closeExpired()
{
    std::lock_guard lock(m_mutex);
    expire(Clock::now());
}

std::size_t PgPool::idleCount() const
{
    std::lock_guard lock(m_mutex);
    std::size_t n = 0;
    for (const auto &[key, list] : m_idle)
        n += list.size();
    return n;
}

long long PgPool::reused() const
{
    std::lock_guard lock(m_mutex);
    return m_reused;
}

} // namespace driftless::core
