// The target table as it stands before the merger takes it: one it did not create (adopted,
// docs/adopt.md), its columns as the target has them, and how they drifted from the source's.

#include "core/mergers/pgmerger.h"

#include <string>
#include <utility>
#include <vector>

namespace driftless::core {

void PgMerger::adoptTable()
{
    auto r = m_conn->execParams(
        "SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped",
        {m_targetSql});
    std::vector<std::string> columns;
    for (int i = 0; i < r.rows(); ++i)
        columns.push_back(r.text(i, 0));
    auto u = m_conn->execParams("SELECT i.indexrelid, a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = "
                                "i.indrelid AND a.attnum = ANY (i.indkey) WHERE i.indrelid = $1::regclass AND "
                                "i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL ORDER BY 1",
                                {m_targetSql});
    UniqueKeys keys;
    for (int i = 0; i < u.rows(); ++i)
        keys[u.text(i, 0)].push_back(u.text(i, 1));
    checkAdoptable(m_target.target.display(), m_source, columns, keys, quoteIdent, [&](const std::string &key) {
        return "ALTER TABLE " + m_targetSql + " ADD PRIMARY KEY (" + key + ");";
    });
    // A constant default: Postgres records it without rewriting the table, so every row keeps its
    // place and stays at version 0 until the first pass compares it.
    m_conn->exec("ALTER TABLE " + m_targetSql + " ADD COLUMN _driftless_version bigint NOT NULL DEFAULT 0");
    m_adopted = true;
}

bool PgMerger::unmanagedTarget()
{
    return m_conn
        ->execParams("SELECT to_regclass($1) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = "
                     "to_regclass($1) AND attname = '_driftless_version' AND NOT attisdropped)",
                     {m_targetSql})
        .toBool(0, 0);
}

std::vector<std::pair<std::string, std::string>> PgMerger::targetColumns()
{
    auto r = m_conn->execParams(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a JOIN pg_class c ON c.oid = "
        "a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2 AND "
        "a.attnum > 0 AND NOT a.attisdropped AND a.attname NOT LIKE '\\_driftless\\_%' ORDER BY a.attnum",
        {m_target.target.schema, m_target.target.name});
    std::vector<std::pair<std::string, std::string>> out;
    for (int i = 0; i < r.rows(); ++i)
        out.emplace_back(r.text(i, 0), r.text(i, 1));
    return out;
}

std::string schemaDrift(const TableSchema &source, const std::vector<std::pair<std::string, std::string>> &target,
                        bool compareTypes)
{
    for (const auto &[name, type] : target) {
        int i = source.columnIndex(name);
        if (i < 0)
            return "the target has column " + displayIdent(name) +
                   " that the source does not (dropped or renamed at the source)";
        const auto &c = source.columns[static_cast<size_t>(i)];
        if (compareTypes && c.isBuiltinType() && !c.isEnum && c.typeSql != type)
            return "column " + displayIdent(name) + " is " + type + " in the target but " + c.typeSql +
                   " at the source";
    }
    return {};
}

} // namespace driftless::core
