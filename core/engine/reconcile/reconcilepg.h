#pragma once

#include "core/db/pgconnection.h"
#include "core/engine/reconcile/reconcileside.h"
#include "core/engine/rows/rowhash.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

/// Internal to the reconciler: a Postgres table as one side of a comparison, every row hashed in
/// SQL on its server (the counterpart of reconcilemysql.h's MysqlSide).
namespace driftless::core::recon {

using rowhash::Checksum;

/// Column `c` of keys [from, to) as a Postgres text array literal.
inline std::string keyColumnArray(const std::vector<CanonicalKey> &keys, size_t c, size_t from, size_t to)
{
    std::vector<std::string> values;
    values.reserve(to - from);
    for (size_t i = from; i < to; ++i)
        values.push_back(keys[i][c]);
    return pgTextArray(values);
}

class PgSide final : public Side {
public:
    PgSide(PgConnection conn, std::string tableSql, const TableSchema &schema, std::vector<ColumnInfo> keys,
           std::string recentExpr = {})
        : m_conn(std::move(conn)), m_table(std::move(tableSql)), m_columns(schema.columns), m_keys(std::move(keys)),
          m_recent(std::move(recentExpr))
    {
        // The segment queries carry one large CASE expression; JIT-compiling it costs far more
        // than evaluating it.
        m_conn.exec("SET jit = off");
        // The first pass groups the table into up to maxBuckets buckets in memory.
        m_conn.exec("SET work_mem = '64MB'");
    }

    PgConnection &connection() { return m_conn; }
    /// Hash rows with Postgres' own text hash instead of MD5 (both sides must).
    void useNativeHash(bool on) { m_native = on; }
    /// What this server's native text hash makes of a fixed probe.
    std::string nativeHashProbe() { return m_conn.exec("SELECT hashtextextended('driftless probe', 0)").text(0, 0); }
    /// What this server's record hash makes of one value of each natively hashed type (throws
    /// before Postgres 14, which has no hash_record_extended).
    std::string recordHashProbe() { return m_conn.exec(rowhash::pgRecordHashProbeSql()).text(0, 0); }
    /// Hash rows with hash_record_extended, column i by its type's own hash where native[i].
    void useRecordHash(std::vector<bool> native) { m_record = std::move(native); }
    /// The condition (on the row as `s`) that marks a row RowData::recent; empty: none.
    void setRecentExpr(std::string expr) { m_recent = std::move(expr); }

    std::map<int, Checksum> checksums(const Plan &plan) override
    {
        Params params;
        const std::string tree = treeSql(plan, params);
        const std::string sql = "SELECT x._dl_b, count(*), coalesce(sum(x._dl_h), 0)::text FROM (SELECT s._dl_b, " +
                                rowHash("s") + " AS _dl_h FROM (SELECT " + tree + " AS _dl_b, t.* FROM " + m_table +
                                " t) s WHERE s._dl_b IS NOT NULL) x GROUP BY 1";
        auto r = run(sql, params);
        std::map<int, Checksum> out;
        for (int i = 0; i < r.rows(); ++i)
            out[static_cast<int>(r.toInt(i, 0))] = Checksum::fromDecimal(r.toInt(i, 1), r.value(i, 2));
        return out;
    }

    bool bucketsByKey() const override
    {
        if (m_keys.size() != 1 || m_keys[0].isArray || !m_keys[0].isBuiltinType())
            return false;
        const std::string &t = m_keys[0].baseType;
        return t == "int2" || t == "int4" || t == "int8";
    }

    std::optional<std::pair<std::int64_t, std::int64_t>> keyBounds() override
    {
        const std::string k = "t." + quoteIdent(m_keys[0].name);
        auto r = run("SELECT min(" + k + ")::int8, max(" + k + ")::int8 FROM " + m_table + " t", {});
        if (r.isNull(0, 0))
            return std::nullopt;
        return std::make_pair(static_cast<std::int64_t>(r.toInt(0, 0)), static_cast<std::int64_t>(r.toInt(0, 1)));
    }

    std::map<int, Checksum> bucketChecksums(std::int64_t lo, std::int64_t hi, std::int64_t width, int last) override
    {
        const std::string k = "s." + quoteIdent(m_keys[0].name);
        // The subtraction runs only for keys in [lo, hi], so it cannot overflow.
        const std::string bucket = "CASE WHEN " + k + " < $1::int8 THEN -1 WHEN " + k +
                                   " > $2::int8 THEN $4::int ELSE ((" + k + "::int8 - $1::int8) / $3::int8)::int END";
        const std::string sql = "SELECT x._dl_b, count(*), coalesce(sum(x._dl_h), 0)::text FROM (SELECT " + bucket +
                                " AS _dl_b, " + rowHash("s") + " AS _dl_h FROM " + m_table + " s) x GROUP BY 1";
        auto r = run(sql, {std::to_string(lo), std::to_string(hi), std::to_string(width), std::to_string(last)});
        std::map<int, Checksum> out;
        for (int i = 0; i < r.rows(); ++i)
            out[static_cast<int>(r.toInt(i, 0))] = Checksum::fromDecimal(r.toInt(i, 1), r.value(i, 2));
        return out;
    }

    std::vector<std::pair<int, RawKey>> sample(const Plan &plan, long long step) override
    {
        Params params;
        const std::string tree = treeSql(plan, params);
        std::string cols, order, texts;
        for (size_t i = 0; i < m_keys.size(); ++i) {
            const std::string q = quoteIdent(m_keys[i].name);
            cols += ", t." + q;
            order += std::string(i ? ", " : "") + "s." + q + collate(m_keys[i]);
            texts += ", x." + q + "::text";
        }
        const std::string sql = "SELECT x._dl_b" + texts +
                                " FROM (SELECT s.*, row_number() OVER (PARTITION BY s._dl_b ORDER BY " + order +
                                ") AS _dl_rn FROM (SELECT " + tree + " AS _dl_b" + cols + " FROM " + m_table +
                                " t) s WHERE s._dl_b IS NOT NULL) x WHERE x._dl_rn % " + std::to_string(step) +
                                " = 0 ORDER BY x._dl_b, x._dl_rn";
        auto r = run(sql, params);
        std::vector<std::pair<int, RawKey>> out;
        for (int i = 0; i < r.rows(); ++i) {
            RawKey k;
            for (size_t c = 0; c < m_keys.size(); ++c)
                k.push_back(r.text(i, static_cast<int>(c) + 1));
            out.emplace_back(static_cast<int>(r.toInt(i, 0)), std::move(k));
        }
        fetched += r.rows();
        return out;
    }

    void hashes(const Plan &plan, const std::function<void(CanonicalKey &&, std::int64_t)> &row) override
    {
        Params params;
        std::string sel;
        for (const auto &k : m_keys)
            sel += rowhash::pgCanonicalText(k, "s." + quoteIdent(k.name)) + ", ";
        std::string sql = rangeScanSql(plan, sel, params);
        if (sql.empty()) {
            const std::string tree = treeSql(plan, params);
            sql = "SELECT " + sel + rowHash("s") + " FROM (SELECT " + tree + " AS _dl_b, t.* FROM " + m_table +
                  " t) s WHERE s._dl_b IS NOT NULL";
        }
        emitKeyHashes(run(sql, params), row);
    }

    void rangeHashes(const std::optional<RawKey> &lo, const std::optional<RawKey> &hi,
                     const std::function<void(CanonicalKey &&, std::int64_t)> &row, bool loExclusive) override
    {
        Params params;
        std::string sel;
        for (const auto &k : m_keys)
            sel += rowhash::pgCanonicalText(k, "s." + quoteIdent(k.name)) + ", ";
        std::vector<std::string> columns;
        for (const auto &k : m_keys)
            columns.push_back("s." + quoteIdent(k.name) + collate(k));
        const std::string where = keyRangeSql(
            columns, lo, hi,
            [&](const RawKey &key, size_t k) {
                params.emplace_back(key[k]);
                return "$" + std::to_string(params.size()) + "::" + m_keys[k].typeSql + collate(m_keys[k]);
            },
            loExclusive);
        emitKeyHashes(
            run("SELECT " + sel + rowHash("s") + " FROM " + m_table + " s" + (where.empty() ? "" : " WHERE " + where),
                params),
            row);
    }

    std::unordered_map<std::string, RowData> rows(const std::vector<CanonicalKey> &keys) override
    {
        std::unordered_map<std::string, RowData> out;
        std::string sel, on, unnest, names;
        for (size_t i = 0; i < m_keys.size(); ++i) {
            const auto &k = m_keys[i];
            const std::string c = "_dl_k.c" + std::to_string(i);
            const std::string col = "s." + quoteIdent(k.name);
            sel += rowhash::pgCanonicalText(k, col) + ", ";
            if (rowhash::canonFor(k) == rowhash::Canon::Float || !k.isBuiltinType())
                on += std::string(i ? " AND " : "") + rowhash::pgCanonicalText(k, col) + " = " + c;
            else
                on += std::string(i ? " AND " : "") + col + " = " + c + "::" + k.typeSql;
            unnest += std::string(i ? ", " : "") + "$" + std::to_string(i + 1) + "::text[]";
            names += std::string(i ? ", " : "") + "c" + std::to_string(i);
        }
        for (const auto &c : m_columns)
            sel += rowhash::pgCanonicalText(c, "s." + quoteIdent(c.name)) + ", ";
        sel += rowHash("s");
        if (!m_recent.empty())
            sel += ", coalesce(" + m_recent + ", false)";
        if (readVersions)
            sel += ", s._driftless_version";
        const std::string sql =
            "SELECT " + sel + " FROM " + m_table + " s JOIN unnest(" + unnest + ") AS _dl_k(" + names + ") ON " + on;
        constexpr size_t kBatch = 5000;
        for (size_t from = 0; from < keys.size(); from += kBatch) {
            const size_t to = std::min(keys.size(), from + kBatch);
            Params params;
            for (size_t c = 0; c < m_keys.size(); ++c)
                params.emplace_back(keyColumnArray(keys, c, from, to));
            auto r = run(sql, params);
            const int nk = static_cast<int>(m_keys.size());
            const int nc = static_cast<int>(m_columns.size());
            for (int i = 0; i < r.rows(); ++i) {
                RowData d;
                for (int c = 0; c < nk; ++c)
                    d.key.push_back(r.text(i, c));
                for (int c = 0; c < nc; ++c)
                    d.values.push_back(r.optText(i, nk + c));
                d.hash = r.toInt(i, nk + nc);
                int at = nk + nc + 1;
                if (!m_recent.empty())
                    d.recent = r.toBool(i, at++);
                if (readVersions)
                    d.version = r.toInt(i, at);
                out.emplace(rowhash::recordText({d.key.begin(), d.key.end()}), std::move(d));
            }
            fetched += r.rows();
        }
        return out;
    }

    std::vector<RowData> rowsByHash(const std::vector<std::int64_t> &hashes) override
    {
        std::vector<RowData> out;
        if (hashes.empty())
            return out;
        std::string sel;
        for (size_t i = 0; i < m_columns.size(); ++i)
            sel += rowhash::pgCanonicalText(m_columns[i], "s." + quoteIdent(m_columns[i].name)) + " AS _dl_c" +
                   std::to_string(i) + ", ";
        sel += rowHash("s") + " AS _dl_h";
        if (!m_recent.empty())
            sel += ", coalesce(" + m_recent + ", false) AS _dl_recent";
        if (readVersions)
            sel += ", s._driftless_version AS _dl_v";
        std::vector<std::string> list;
        list.reserve(hashes.size());
        for (auto h : hashes)
            list.push_back(std::to_string(h));
        auto r = run("SELECT * FROM (SELECT " + sel + " FROM " + m_table + " s) x WHERE x._dl_h = ANY($1::int8[])",
                     {pgTextArray(list)});
        const int nc = static_cast<int>(m_columns.size());
        for (int i = 0; i < r.rows(); ++i) {
            RowData d;
            for (int c = 0; c < nc; ++c)
                d.values.push_back(r.optText(i, c));
            d.hash = r.toInt(i, nc);
            int at = nc + 1;
            if (!m_recent.empty())
                d.recent = r.toBool(i, at++);
            if (readVersions)
                d.version = r.toInt(i, at);
            out.push_back(std::move(d));
        }
        fetched += r.rows();
        return out;
    }

    std::string describe() const override { return m_table; }
    /// A row's hash over alias `alias`, as this side computes it (canonical, or the server's
    /// native hash when both sides are Postgres servers that hash alike): what another reader of
    /// the same rows selects to compare with the other side's hashes.
    std::string rowHashSql(const std::string &alias) const { return rowHash(alias); }

private:
    static std::string collate(const ColumnInfo &c) { return c.category == 'S' && !c.isArray ? " COLLATE \"C\"" : ""; }
    std::string rowHash(const std::string &alias) const
    {
        if (!m_record.empty())
            return rowhash::pgRowHashRecord(m_columns, m_record, alias);
        return m_native ? rowhash::pgRowHashNative(m_columns, alias) : rowhash::pgRowHash(m_columns, alias);
    }

    /// Hands each (canonical key..., hash) row of `r` to `row`.
    void emitKeyHashes(const PgResult &r, const std::function<void(CanonicalKey &&, std::int64_t)> &row)
    {
        const int n = static_cast<int>(m_keys.size());
        for (int i = 0; i < r.rows(); ++i) {
            CanonicalKey k;
            k.reserve(m_keys.size());
            for (int c = 0; c < n; ++c)
                k.push_back(r.text(i, c));
            row(std::move(k), r.toInt(i, n));
        }
        fetched += r.rows();
    }

    PgResult run(const std::string &sql, const Params &params)
    {
        ++queries;
        return m_conn.execParams(sql, params);
    }

    /// For a one-column key the primary key's index orders as we compare (no collation in play):
    /// reads only the rows of the segments, by index range scans, instead of scanning the table.
    /// Empty when that does not apply.
    std::string rangeScanSql(const Plan &plan, const std::string &sel, Params &params)
    {
        if (m_keys.size() != 1 || !collate(m_keys[0]).empty() || plan.edges.empty())
            return {};
        const std::string k = quoteIdent(m_keys[0].name);
        const std::string type = m_keys[0].typeSql;
        std::vector<std::string> los, his;
        std::vector<std::string> parts;
        for (size_t i = 0; i < plan.labels.size(); ++i) {
            if (plan.labels[i] < 0)
                continue;
            if (i == 0) {
                params.emplace_back(plan.edges[0][0]);
                parts.push_back("SELECT " + sel + rowHash("s") + " FROM " + m_table + " s WHERE s." + k + " < $" +
                                std::to_string(params.size()) + "::" + type);
            } else if (i == plan.edges.size()) {
                params.emplace_back(plan.edges[i - 1][0]);
                parts.push_back("SELECT " + sel + rowHash("s") + " FROM " + m_table + " s WHERE s." + k + " >= $" +
                                std::to_string(params.size()) + "::" + type);
            } else {
                los.push_back(plan.edges[i - 1][0]);
                his.push_back(plan.edges[i][0]);
            }
        }
        if (los.size() > 100'000)
            return {};
        if (!los.empty()) {
            params.emplace_back(pgTextArray(los));
            const std::string lo = "$" + std::to_string(params.size()) + "::" + type + "[]";
            params.emplace_back(pgTextArray(his));
            const std::string hi = "$" + std::to_string(params.size()) + "::" + type + "[]";
            parts.push_back("SELECT " + sel + rowHash("s") + " FROM unnest(" + lo + ", " + hi +
                            ") AS _dl_r(lo, hi) CROSS JOIN LATERAL (SELECT * FROM " + m_table + " t WHERE t." + k +
                            " >= _dl_r.lo AND t." + k + " < _dl_r.hi) s");
        }
        std::string sql;
        for (const auto &part : parts)
            sql += (sql.empty() ? "" : " UNION ALL ") + part;
        return sql;
    }

    std::string treeSql(const Plan &plan, Params &params)
    {
        if (m_keys.size() == 1 && !plan.edges.empty()) {
            // One key column: width_bucket's binary search over the edges (a constant array),
            // several times cheaper per row than a CASE tree, then the interval's label.
            std::vector<std::string> edges, labels;
            for (const auto &e : plan.edges)
                edges.push_back(e[0]);
            std::string lab = "{";
            for (size_t i = 0; i < plan.labels.size(); ++i)
                lab += (i ? "," : "") + (plan.labels[i] < 0 ? std::string("NULL") : std::to_string(plan.labels[i]));
            params.emplace_back(pgTextArray(edges));
            const std::string e = "$" + std::to_string(params.size()) + "::" + m_keys[0].typeSql + "[]";
            params.emplace_back(lab + "}");
            const std::string l = "$" + std::to_string(params.size()) + "::int[]";
            return "(" + l + ")[width_bucket(t." + quoteIdent(m_keys[0].name) + collate(m_keys[0]) + ", " + e +
                   ") + 1]";
        }
        return caseTree(plan, 0, plan.labels.size() - 1, [&](size_t e) {
            std::string lhs, rhs;
            for (size_t i = 0; i < m_keys.size(); ++i) {
                params.emplace_back(plan.edges[e][i]);
                lhs += std::string(i ? ", " : "") + "t." + quoteIdent(m_keys[i].name) + collate(m_keys[i]);
                rhs += std::string(i ? ", " : "") + "$" + std::to_string(params.size()) + "::" + m_keys[i].typeSql;
            }
            return m_keys.size() == 1 ? lhs + " < " + rhs : "(" + lhs + ") < (" + rhs + ")";
        });
    }

    PgConnection m_conn;
    std::string m_table;
    std::vector<ColumnInfo> m_columns;
    std::vector<ColumnInfo> m_keys;
    std::string m_recent;
    bool m_native = false;
    std::vector<bool> m_record;
};

} // namespace driftless::core::recon
