#include "core/engine/cdc/mysql/mysqlloadcompare.h"

#include "core/engine/reconcile/reconcileopen.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/engine/rows/rowhash.h"

#include <cstdlib>
#include <utility>

namespace driftless::core {

MysqlLoadCompare::MysqlLoadCompare(std::unique_ptr<recon::TableContext> ctx) : m_ctx(std::move(ctx)) {}

MysqlLoadCompare::~MysqlLoadCompare() = default;

std::unique_ptr<MysqlLoadCompare> MysqlLoadCompare::open(const TableJob &job, const mysqlcatalog::MysqlTable &source,
                                                         std::string &why)
{
    if (job.twoWay) {
        why = "a two-way table";
        return nullptr;
    }
    if (softDeletes(job.spec)) {
        why = "soft deletes";
        return nullptr;
    }
    if (job.spec.columns && !job.spec.columns->empty()) {
        why = "a column mapping";
        return nullptr;
    }
    auto ctx = std::make_unique<recon::TableContext>(recon::openTable(job, ReconcileOptions{}));
    if (!ctx->skipped.empty()) {
        why = ctx->skipped;
        return nullptr;
    }
    if (ctx->keys.empty() || !ctx->mySource) {
        why = "no primary key to compare by";
        return nullptr;
    }
    // The hash must cover exactly the columns the load reads (a column held back or ignored
    // makes the target's row another shape).
    const auto &columns = ctx->schema.columns;
    bool same = columns.size() == source.columns.size();
    for (size_t i = 0; same && i < columns.size(); ++i)
        same = columns[i].name == source.columns[i].name;
    if (!same) {
        why = "the target's columns are not the source's yet";
        return nullptr;
    }
    for (const auto &k : ctx->keys)
        if (rowhash::canonFor(k) == rowhash::Canon::Float) {
            why = "a floating-point key";
            return nullptr;
        }
    if (!ctx->source->keysOrderable() || !ctx->target->keysOrderable()) {
        why = "a key the two servers order differently (a text key's collation, an enum, a bit string)";
        return nullptr;
    }
    std::unique_ptr<MysqlLoadCompare> out(new MysqlLoadCompare(std::move(ctx)));
    const auto &schema = out->m_ctx->schema;
    for (int k : schema.primaryKey) {
        out->m_keyColumns.push_back(k);
        out->m_extra += ", " + out->m_ctx->mySource->canonicalSql(static_cast<size_t>(k));
    }
    out->m_extra += ", " + out->m_ctx->mySource->hashSql();
    out->m_columns = schema.columns.size();
    return out;
}

void MysqlLoadCompare::take(const MysqlRowView &row, unsigned first, CanonicalKey &key, std::int64_t &hash) const
{
    key.clear();
    for (size_t k = 0; k < m_keyColumns.size(); ++k)
        key.push_back(row.text(first + static_cast<unsigned>(k)));
    hash = std::strtoll(row.text(first + static_cast<unsigned>(m_keyColumns.size())).c_str(), nullptr, 10);
}

MysqlLoadCompare::Outcome MysqlLoadCompare::compare(const std::vector<SourceRow> &rows,
                                                    const std::optional<CanonicalKey> &lo,
                                                    const std::optional<CanonicalKey> &hi, std::int64_t version)
{
    // A row read past the range's start (one inserted below it since the chunk before was read)
    // is compared with nothing: it is copied. What the target has there and this chunk's
    // snapshot does not goes.
    return diffRange(rows, *m_ctx->target, lo, hi, false, m_keyColumns, m_columns, version);
}

} // namespace driftless::core
