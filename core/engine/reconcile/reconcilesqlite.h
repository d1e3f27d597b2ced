#pragma once

#include "core/db/sqlitedb.h"
#include "core/engine/reconcile/reconcileside.h"
#include "core/engine/rows/rowhash.h"
#include "core/mergers/sqlitetypes.h"
#include "core/model/error.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

/// Internal to the reconciler: an SQLite target table as one side of a comparison, every row
/// hashed by the functions the engine registers on its connection (rowhash.h), from the values
/// SqliteMerger stored (the counterpart of reconcilepg.h's PgSide).
namespace driftless::core::recon {

using rowhash::Checksum;

class SqliteSide final : public Side {
public:
    SqliteSide(const std::string &path, std::string table, const TableSchema &schema, std::vector<ColumnInfo> keys)
        : m_db(path, SqliteDb::Mode::ReadOnly), m_table(quoteIdent(table)), m_columns(schema.columns),
          m_keys(std::move(keys)), m_path(path)
    {
        rowhash::registerSqliteFunctions(m_db.raw());
        m_spec = rowhash::canonSpec(m_columns);
        std::string cols;
        for (const auto &c : m_columns)
            cols += ", " + quoteIdent(c.name);
        // A SQLite function takes at most 127 arguments: a wider row is hashed in parts.
        constexpr size_t kPart = 100;
        if (m_columns.size() < kPart) {
            m_rowHash = "driftless_rowhash('" + m_spec + "'" + cols + ")";
        } else {
            m_rowHash = "driftless_rowhash_parts(";
            for (size_t from = 0; from < m_columns.size(); from += kPart) {
                const size_t to = std::min(m_columns.size(), from + kPart);
                m_rowHash += (from ? ", " : "") + ("driftless_record_part('" + m_spec.substr(from, to - from) + "'");
                for (size_t i = from; i < to; ++i)
                    m_rowHash += ", " + quoteIdent(m_columns[i].name);
                m_rowHash += ")";
            }
            m_rowHash += ")";
        }
    }

    std::map<int, Checksum> checksums(const Plan &plan) override
    {
        std::vector<std::pair<std::string, SqliteStorage>> binds;
        const std::string tree = treeSql(plan, binds);
        auto st = prepare("SELECT _dl_b, count(*), driftless_hashsum(" + m_rowHash + ") FROM (SELECT " + tree +
                              " AS _dl_b, * FROM " + m_table + ") WHERE _dl_b IS NOT NULL GROUP BY 1",
                          binds);
        std::map<int, Checksum> out;
        while (st.step())
            out[static_cast<int>(st.int64(0))] = Checksum::fromDecimal(st.int64(1), st.text(2));
        return out;
    }

    std::vector<std::pair<int, RawKey>> sample(const Plan &, long long) override
    {
        throw Error(ErrorKind::Permanent, "internal: key ranges are sampled from the Postgres side");
    }

    void hashes(const Plan &plan, const std::function<void(CanonicalKey &&, std::int64_t)> &row) override
    {
        std::vector<std::pair<std::string, SqliteStorage>> binds;
        const std::string tree = treeSql(plan, binds);
        std::string sel;
        for (const auto &k : m_keys)
            sel += "driftless_canon('" + std::string(1, static_cast<char>(rowhash::canonFor(k))) + "', " +
                   quoteIdent(k.name) + "), ";
        auto st = prepare("SELECT " + sel + m_rowHash + " FROM (SELECT " + tree + " AS _dl_b, * FROM " + m_table +
                              ") WHERE _dl_b IS NOT NULL",
                          binds);
        emitKeyHashes(st, row);
    }

    void rangeHashes(const std::optional<RawKey> &lo, const std::optional<RawKey> &hi,
                     const std::function<void(CanonicalKey &&, std::int64_t)> &row, bool loExclusive) override
    {
        std::vector<std::pair<std::string, SqliteStorage>> binds;
        std::vector<std::string> columns;
        for (const auto &k : m_keys)
            columns.push_back(quoteIdent(k.name));
        const std::string where = keyRangeSql(
            columns, lo, hi,
            [&](const RawKey &key, size_t k) {
                binds.emplace_back(key[k], sqliteStorageFor(m_keys[k]));
                return "?" + std::to_string(binds.size());
            },
            loExclusive);
        std::string sel;
        for (const auto &k : m_keys)
            sel += "driftless_canon('" + std::string(1, static_cast<char>(rowhash::canonFor(k))) + "', " +
                   quoteIdent(k.name) + "), ";
        auto st =
            prepare("SELECT " + sel + m_rowHash + " FROM " + m_table + (where.empty() ? "" : " WHERE " + where), binds);
        emitKeyHashes(st, row);
    }

    std::unordered_map<std::string, RowData> rows(const std::vector<CanonicalKey> &keys) override
    {
        std::string sel, where;
        for (size_t i = 0; i < m_keys.size(); ++i) {
            const auto &k = m_keys[i];
            const std::string code(1, static_cast<char>(rowhash::canonFor(k)));
            sel += "driftless_canon('" + code + "', " + quoteIdent(k.name) + "), ";
            const bool byCanon = k.category == 'N' ? rowhash::canonFor(k) != rowhash::Canon::Integer : false;
            where += std::string(i ? " AND " : "") +
                     (byCanon ? "driftless_canon('" + code + "', " + quoteIdent(k.name) + ")" : quoteIdent(k.name)) +
                     " = ?" + std::to_string(i + 1);
        }
        for (const auto &c : m_columns)
            sel += "driftless_canon('" + std::string(1, static_cast<char>(rowhash::canonFor(c))) + "', " +
                   quoteIdent(c.name) + "), ";
        ++queries;
        auto st = m_db.prepare("SELECT " + sel + m_rowHash + (readVersions ? ", \"_driftless_version\"" : "") +
                               " FROM " + m_table + " WHERE " + where);
        std::unordered_map<std::string, RowData> out;
        const int nk = static_cast<int>(m_keys.size());
        const int nc = static_cast<int>(m_columns.size());
        for (const auto &key : keys) {
            st.reset();
            st.clearBindings();
            for (size_t i = 0; i < m_keys.size(); ++i) {
                const auto &k = m_keys[i];
                const bool byCanon = k.category == 'N' && rowhash::canonFor(k) != rowhash::Canon::Integer;
                if (byCanon)
                    st.bindText(static_cast<int>(i + 1), key[i]);
                else
                    bindStoredValue(st, static_cast<int>(i + 1), key[i], sqliteStorageFor(k));
            }
            while (st.step()) {
                RowData d;
                for (int c = 0; c < nk; ++c)
                    d.key.push_back(st.text(c));
                for (int c = 0; c < nc; ++c)
                    d.values.push_back(st.optText(nk + c));
                d.hash = st.int64(nk + nc);
                if (readVersions)
                    d.version = st.int64(nk + nc + 1);
                out.emplace(rowhash::recordText({d.key.begin(), d.key.end()}), std::move(d));
                ++fetched;
            }
        }
        return out;
    }

    std::vector<RowData> rowsByHash(const std::vector<std::int64_t> &hashes) override
    {
        std::vector<RowData> out;
        if (hashes.empty())
            return out;
        std::string sel, list = "[";
        for (size_t i = 0; i < m_columns.size(); ++i)
            sel += "driftless_canon('" + std::string(1, static_cast<char>(rowhash::canonFor(m_columns[i]))) + "', " +
                   quoteIdent(m_columns[i].name) + ") AS _dl_c" + std::to_string(i) + ", ";
        for (size_t i = 0; i < hashes.size(); ++i)
            list += (i ? "," : "") + std::to_string(hashes[i]);
        ++queries;
        auto st = m_db.prepare("SELECT * FROM (SELECT " + sel + m_rowHash + " AS _dl_h" +
                               (readVersions ? ", \"_driftless_version\" AS _dl_v" : "") + " FROM " + m_table +
                               ") WHERE _dl_h IN (SELECT value FROM json_each(?1))");
        st.bindText(1, list + "]");
        const int nc = static_cast<int>(m_columns.size());
        while (st.step()) {
            RowData d;
            for (int c = 0; c < nc; ++c)
                d.values.push_back(st.optText(c));
            d.hash = st.int64(nc);
            if (readVersions)
                d.version = st.int64(nc + 1);
            out.push_back(std::move(d));
            ++fetched;
        }
        return out;
    }

    std::string describe() const override { return m_path + " " + m_table; }
    /// Compares only the rows that hold `filter` (an SQLite condition on the table's columns).
    void setRowFilter(const std::string &filter) { m_table = "(SELECT * FROM " + m_table + " WHERE " + filter + ")"; }

private:
    SqliteStmt prepare(const std::string &sql, const std::vector<std::pair<std::string, SqliteStorage>> &binds)
    {
        ++queries;
        auto st = m_db.prepare(sql);
        for (size_t i = 0; i < binds.size(); ++i)
            bindStoredValue(st, static_cast<int>(i + 1), binds[i].first, binds[i].second);
        return st;
    }

    /// Hands each (canonical key..., hash) row of `st` to `row`.
    void emitKeyHashes(SqliteStmt &st, const std::function<void(CanonicalKey &&, std::int64_t)> &row)
    {
        const int n = static_cast<int>(m_keys.size());
        while (st.step()) {
            CanonicalKey k;
            for (int c = 0; c < n; ++c)
                k.push_back(st.text(c));
            row(std::move(k), st.int64(n));
            ++fetched;
        }
    }

    std::string treeSql(const Plan &plan, std::vector<std::pair<std::string, SqliteStorage>> &binds)
    {
        return caseTree(plan, 0, plan.labels.size() - 1, [&](size_t e) {
            std::string lhs, rhs;
            for (size_t i = 0; i < m_keys.size(); ++i) {
                binds.emplace_back(plan.edges[e][i], sqliteStorageFor(m_keys[i]));
                lhs += std::string(i ? ", " : "") + quoteIdent(m_keys[i].name);
                rhs += std::string(i ? ", " : "") + "?" + std::to_string(binds.size());
            }
            return m_keys.size() == 1 ? lhs + " < " + rhs : "(" + lhs + ") < (" + rhs + ")";
        });
    }

    SqliteDb m_db;
    std::string m_table;
    std::vector<ColumnInfo> m_columns;
    std::vector<ColumnInfo> m_keys;
    std::string m_path;
    std::string m_spec;
    std::string m_rowHash; ///< the SQL hashing one row, as the source's row hash
};

} // namespace driftless::core::recon
