#pragma once

// The schema zoo's writer, one for both sources: statements of the features, picked by a
// fixed-seed generator; a fifth of the steps are transactions of 2-5 statements. Statements that
// fail (a key another statement deleted, a cascade that took the parent) are rolled back alone
// and counted. What differs per source is its WriterDialect.

#include <cstdio>
#include <exception>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace driftless::zoo {

/// What the writer says differently to each source.
struct WriterDialect {
    const char *begin = "BEGIN"; ///< opens a transaction
    /// A failure the features provoke on purpose (a foreign key, a duplicate): counted, not printed.
    const char *expectedFailure = "";
    /// The values of the placeholders of one statement ({k}: a key from 1 to `next`, {r}, {w}, ...),
    /// drawn from `rng` in a fixed order, so a seed always writes the same statements.
    std::map<std::string, std::string> (*values)(std::mt19937 &rng, long long next) = nullptr;
};

/// `Feature` has `name`, `seedRows`, `writes` and `ops` (each with its `sql`); {n} in a statement
/// is a new key (the feature's next), the dialect's placeholders its values.
template <class Connection, class Feature> class ZooWriter {
public:
    ZooWriter(Connection &conn, std::vector<const Feature *> fs, unsigned seed, WriterDialect dialect)
        : m_conn(conn), m_rng(seed), m_dialect(dialect)
    {
        for (const Feature *f : fs) {
            m_features.push_back(f);
            m_next[f->name] = f->seedRows;
            m_left[f->name] = f->writes;
        }
    }
    /// Runs up to `steps` statements; returns how many ran.
    int run(int steps)
    {
        int done = 0;
        while (done < steps) {
            if (m_rng() % 5 == 0) {
                const int n = 2 + static_cast<int>(m_rng() % 4);
                m_conn.exec(m_dialect.begin);
                for (int i = 0; i < n && done < steps; ++i) {
                    auto sql = next();
                    if (sql.empty())
                        break;
                    m_conn.exec("SAVEPOINT w");
                    try {
                        m_conn.exec(sql);
                        m_conn.exec("RELEASE SAVEPOINT w");
                    } catch (const std::exception &e) {
                        m_conn.exec("ROLLBACK TO SAVEPOINT w");
                        failed(sql, e);
                    }
                    ++done;
                }
                m_conn.exec("COMMIT");
            } else {
                auto sql = next();
                if (sql.empty())
                    break;
                try {
                    m_conn.exec(sql);
                } catch (const std::exception &e) {
                    failed(sql, e);
                }
                ++done;
            }
            if (remaining() == 0)
                break;
        }
        return done;
    }
    int remaining() const
    {
        int n = 0;
        for (const auto &[k, v] : m_left)
            n += v;
        return n;
    }
    int failures() const { return m_failures; }

private:
    std::string next()
    {
        std::vector<const Feature *> open;
        for (const Feature *f : m_features)
            if (m_left[f->name] > 0)
                open.push_back(f);
        if (open.empty())
            return {};
        const Feature &f = *open[m_rng() % open.size()];
        --m_left[f.name];
        std::string sql = f.ops[m_rng() % f.ops.size()].sql;
        const auto values = m_dialect.values(m_rng, m_next[f.name]);
        if (sql.find("{n}") != std::string::npos) {
            const std::string n = std::to_string(++m_next[f.name]);
            for (size_t p; (p = sql.find("{n}")) != std::string::npos;)
                sql.replace(p, 3, n);
        }
        for (const auto &[k, v] : values)
            for (size_t p; (p = sql.find(k)) != std::string::npos;)
                sql.replace(p, k.size(), v);
        return sql;
    }
    void failed(const std::string &sql, const std::exception &e)
    {
        ++m_failures;
        const std::string what = e.what();
        if (!*m_dialect.expectedFailure || what.find(m_dialect.expectedFailure) == std::string::npos)
            std::printf("writer: statement failed (%s): %s\n", what.substr(0, what.find('\n')).c_str(),
                        sql.substr(0, 200).c_str());
    }

    Connection &m_conn;
    std::mt19937 m_rng;
    WriterDialect m_dialect;
    std::vector<const Feature *> m_features;
    std::map<std::string, long long> m_next;
    std::map<std::string, int> m_left;
    int m_failures = 0;
};

} // namespace driftless::zoo
