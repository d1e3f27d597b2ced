#include "core/engine/schema/columnbackfill.h"

#include "core/base/clock.h"
#include "core/db/pgconnection.h"
#include "core/engine/rows/rowfilter.h"
#include "core/mergers/pgmerger.h"

#include <algorithm>

namespace driftless::core {

AddColumnPolicy addColumnPolicy(const TableSpec &spec, const std::optional<std::string> &pipelineDefault)
{
    // The workspace file admits only the names (WorkspaceFile::parse).
    const std::optional<std::string> &named = spec.addColumn ? spec.addColumn : pipelineDefault;
    return named ? parseAddColumnPolicy(*named).value_or(AddColumnPolicy::Pause) : AddColumnPolicy::Backfill;
}

std::vector<std::string> keyColumnNames(const TableSchema &schema)
{
    std::vector<std::string> out;
    for (int k : schema.primaryKey)
        out.push_back(schema.columns[static_cast<size_t>(k)].name);
    return out;
}

ColumnFill readColumnChunk(PgConnection &src, const TableSchema &schema, const TableSpec &spec,
                           const std::vector<std::string> &columns, const std::vector<std::string> &after,
                           long long limit)
{
    ColumnFill out;
    out.keyColumns = keyColumnNames(schema);
    out.columns = columns;
    std::string select, keys, keyParams;
    Params params;
    for (size_t i = 0; i < schema.primaryKey.size(); ++i) {
        const auto &k = schema.columns[static_cast<size_t>(schema.primaryKey[i])];
        keys += (i ? ", " : "") + quoteIdent(k.name);
        keyParams += (i ? ", $" : "$") + std::to_string(i + 1) + "::" + k.typeSql;
    }
    select = keys;
    for (const auto &c : columns)
        select += ", " + quoteIdent(c);
    std::string where;
    if (!after.empty()) {
        for (const auto &v : after)
            params.emplace_back(v);
        where = " WHERE (" + keys + ") > (" + keyParams + ")" + rowFilterAnd(spec);
    } else {
        where = rowFilterWhere(spec);
    }
    auto res = src.execParams("SELECT " + select + " FROM " + schema.fromSql() + where + " ORDER BY " + keys +
                                  " LIMIT " + std::to_string(limit),
                              params);
    out.rows.reserve(static_cast<size_t>(res.rows()));
    for (int r = 0; r < res.rows(); ++r) {
        std::vector<std::optional<std::string>> row;
        row.reserve(static_cast<size_t>(res.columns()));
        for (int c = 0; c < res.columns(); ++c)
            row.push_back(res.optText(r, c));
        out.rows.push_back(std::move(row));
    }
    return out;
}

std::vector<std::string> lastKeyOf(const ColumnFill &chunk)
{
    std::vector<std::string> key;
    const auto &row = chunk.rows.back();
    for (size_t i = 0; i < chunk.keyColumns.size(); ++i)
        key.push_back(row[i].value_or(""));
    return key;
}

std::string sourceColumnChecksum(PgConnection &src, const TableSchema &schema, const TableSpec &spec,
                                 const std::vector<std::string> &columns)
{
    return src.exec(pgColumnChecksumSql(schema.fromSql(), keyColumnNames(schema), columns, rowFilterWhere(spec)))
        .text(0, 0);
}

std::string displayNames(const std::vector<std::string> &columns)
{
    std::string out;
    for (const auto &c : columns)
        out += (out.empty() ? "" : ", ") + displayIdent(c);
    return out;
}

std::vector<std::string> holdBackAddedColumns(TableSchema &schema, std::vector<std::string> &streamColumns,
                                              const std::vector<std::pair<std::string, std::string>> &targetColumns)
{
    if (targetColumns.empty())
        return {}; // no target table yet: the load creates it with every column
    auto has = [&](const std::string &n) {
        return std::any_of(targetColumns.begin(), targetColumns.end(), [&](const auto &h) { return h.first == n; });
    };
    std::vector<std::string> out;
    TableSchema kept = schema;
    kept.columns.clear();
    for (const auto &c : schema.columns) {
        if (!c.generated && !has(c.name))
            out.push_back(c.name);
        else
            kept.columns.push_back(c);
    }
    // Only columns at the end of the stream's: anything else is not an added column.
    if (out.empty() || streamColumns.size() <= out.size() ||
        !std::equal(out.begin(), out.end(), streamColumns.end() - static_cast<std::ptrdiff_t>(out.size())))
        return {};
    kept.primaryKey.clear();
    for (int k : schema.primaryKey)
        kept.primaryKey.push_back(kept.columnIndex(schema.columns[static_cast<size_t>(k)].name));
    for (int k : kept.primaryKey)
        if (k < 0)
            return {};
    schema = kept;
    streamColumns.resize(streamColumns.size() - out.size());
    return out;
}

PgAddColumnProgress widenedColumnFill(const std::optional<PgAddColumnProgress> &current,
                                      const std::vector<std::string> &columns, std::int64_t since, std::int64_t nowMs)
{
    PgAddColumnProgress f;
    f.startedMs = nowMs;
    if (current) {
        f.columns = current->columns;
        f.startedMs = current->startedMs;
    }
    f.columns.insert(f.columns.end(), columns.begin(), columns.end());
    f.version = since;
    return f;
}

ColumnFillStep columnFillStep(ColumnFillContext &cx, PgAddColumnProgress &progress, bool mayLookAgain,
                              const std::function<void(long long)> &writeCheckpoint)
{
    ColumnFillStep out;
    const std::string names = displayNames(progress.columns);
    const ColumnFill chunk = cx.source.readChunk(progress.columns, progress.after, kColumnFillChunk);
    if (!chunk.rows.empty()) {
        const PgAddColumnProgress before = progress;
        cx.session.begin();
        try {
            // Rows at the first version with the column are filled too: its transaction may have
            // changed them before it added the column (docs/schema-changes.md).
            const std::int64_t through =
                cx.appliedThrough ? std::max(*cx.appliedThrough, progress.version) : progress.version;
            const long long written = cx.merger.fillColumnsInTransaction(chunk, through + 1);
            progress.after = lastKeyOf(chunk);
            progress.rows += static_cast<long long>(chunk.rows.size());
            progress.written += written;
            writeCheckpoint(written);
            cx.session.commit();
        } catch (...) {
            cx.session.rollback();
            progress = before;
            throw;
        }
        out.message = "filling added column(s) " + names + ": " + withThousands(progress.rows) + " rows";
        return out;
    }
    // Every key read: compare (key, columns) on both sides, computed in SQL on each. While the
    // source is busy the stream may still be applying changes the source already has, so a
    // difference is looked at again (a caller's choice) before it is reported.
    // deletes: ignore keeps rows the source deleted, so the target's sum cannot match: not compared.
    const bool keepsDeleted = cx.spec.deletes && *cx.spec.deletes == "ignore";
    std::string have =
        keepsDeleted ? std::string() : cx.merger.columnChecksum(keyColumnNames(cx.schema), progress.columns);
    const std::string want = have.empty() ? std::string() : cx.source.checksum(progress.columns);
    const bool sourceCannot = !have.empty() && want.empty();
    if (sourceCannot)
        have.clear();
    if (!have.empty() && want != have && mayLookAgain) {
        out.outcome = ColumnFillStep::LookAgain;
        return out;
    }
    // A difference the checks did not see go away: every row is read from the source again and
    // filled where it differs, under the same guard (rows the stream has yet to change take the
    // source's value, and a change still to come applies over it); then compared once more.
    if (!have.empty() && want != have && cx.appliedThrough && !progress.repair) {
        progress.repair = true;
        progress.after.clear();
        progress.repairFrom = progress.written;
        out.message = "filling added column(s) " + names +
                      ": the check found them differ from the source; reading "
                      "every row again";
        return out; // a Chunk: the next step reads the first chunk again
    }
    out.outcome = ColumnFillStep::Done;
    const long long secs = std::max<long long>(0, (wallClockMs() - progress.startedMs + 500) / 1000);
    if (!progress.repair)
        out.message = "column " + names + " added, " + withThousands(progress.rows) + " rows backfilled in " +
                      std::to_string(secs) + " s (" + withThousands(progress.written) +
                      " written; rows the stream changed since keep its values)";
    else
        out.message = "column " + names + " added and backfilled in " + std::to_string(secs) +
                      " s: the first reading of every row wrote " + withThousands(progress.repairFrom) +
                      ", the check found a difference, and a second reading wrote " +
                      withThousands(progress.written - progress.repairFrom) + " (" + withThousands(progress.rows) +
                      " rows read in all)";
    const std::string table = cx.pipeline + " " + cx.spec.table.display();
    auto count = [](const std::string &sum) { return sum.substr(0, sum.find(':')); };
    if (have.empty()) {
        out.message += std::string(keepsDeleted   ? "; not compared (deletes: ignore keeps rows the source deleted)"
                                   : sourceCannot ? "; the column's type is not compared in SQL from this source"
                                                  : "; this target cannot compare the column in SQL") +
                       ": reconcile the table to check it "
                       "(driftless-cli reconcile " +
                       table + ")";
    } else if (want == have) {
        out.message +=
            "; checked: key and " + names + " match the source (" + withThousands(std::stoll(count(want))) + " rows)";
    } else {
        out.level = Level::Warn;
        out.message += "; the check found key and " + names + " differ from the source (" + count(want) +
                       " rows there, " + count(have) +
                       " here): changes still in flight reach the target through the stream; if it persists, "
                       "reconcile the table: driftless-cli reconcile " +
                       table;
    }
    return out;
}

std::string withThousands(long long n)
{
    std::string digits = std::to_string(n < 0 ? -n : n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return (n < 0 ? "-" : "") + out;
}

} // namespace driftless::core
