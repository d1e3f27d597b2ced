#include "core/engine/reconcile/refreshdating.h"

#include "core/db/pgconnection.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/model/error.h"
#include "core/model/refreshposition.h"

namespace driftless::core::recon {

namespace {

/// Whether the transaction that wrote a row (its 32-bit `xmin`) came after the snapshot whose
/// txid_current_snapshot() is `txids`. An unfrozen row's id is less than 2^31 transactions behind
/// the next one (wraparound protection), so it widens to 64 bits as the next id less their 32-bit
/// distance; ids below 3 (bootstrap, frozen) are older than any snapshot. A row frozen in place
/// keeps its id, which aliases a recent one once 2^32 transactions have passed it: such a row, if
/// it also differs, reads as in flight with the odds of the ids used since the snapshot in 2^32.
std::string writtenAfterSql(const std::string &xmin, const std::string &txids)
{
    const std::string next = "txid_snapshot_xmax(txid_current_snapshot())";
    const std::string x = xmin + "::text::bigint";
    return "(" + x + " >= 3 AND NOT txid_visible_in_snapshot(greatest(" + next + " - ((" + next + " - " + x +
           ") % 4294967296 + 4294967296) % 4294967296, 0), " + pgLiteral(txids) + "::txid_snapshot))";
}

} // namespace

std::optional<RefreshDating> dateRefresh(TableContext &ctx)
{
    const TableJob &job = ctx.job;
    std::optional<Checkpoint> cp;
    try {
        auto merger = createMerger(
            job.target, {job.pipeline, job.spec.table, job.targetName, Strategy::FullRefresh, softDeletes(job.spec)});
        cp = merger->readCheckpoint();
    } catch (const Error &) {
        // A target table no pass made (nowhere to keep checkpoints yet): nothing to date by.
    }
    if (!cp)
        return std::nullopt;
    const RefreshPosition pos = RefreshPosition::fromJson(cp->position);
    RefreshDating d;
    d.version = cp->version;
    d.softDeletes = softDeletes(job.spec);
    d.snapshotAt = pos.snapshotAt;
    ctx.target->readVersions = true;
    if (job.spec.columns && !job.spec.columns->empty()) {
        d.why = "the table has a column mapping";
        return d;
    }
    const char relkind = ctx.schema.relkind;
    if (ctx.pgSource && !pos.snapshotTxids.empty() && (relkind == 'r' || relkind == 'p')) {
        if (ctx.sourceFrom == ctx.schema.fromSql()) {
            ctx.pgSource->setRecentExpr(writtenAfterSql("s.xmin", pos.snapshotTxids));
        } else if (ctx.keys.empty()) {
            d.why = "behind a row filter, a row without a primary key cannot be matched to its table row";
            return d;
        } else {
            // Behind a row filter the row comes through a subquery, which has no xmin: the
            // table's row of the same key has.
            std::string same;
            for (const auto &k : ctx.keys)
                same += " AND b." + quoteIdent(k.name) + " = s." + quoteIdent(k.name);
            ctx.pgSource->setRecentExpr("EXISTS (SELECT 1 FROM " + ctx.schema.fromSql() + " b WHERE " +
                                        writtenAfterSql("b.xmin", pos.snapshotTxids) + same + ")");
        }
        d.sourceDated = true;
        return d;
    }
    const std::string column = job.spec.cursorColumn();
    const int idx = ctx.schema.columnIndex(column);
    const std::string undated = !ctx.pgSource               ? "a MySQL/MariaDB row does not say when it was written"
                                : pos.snapshotTxids.empty() ? "the last pass ran before Driftless recorded which "
                                                              "transactions its snapshot saw"
                                                            : "the source is a view, whose rows do not say which "
                                                              "transaction wrote them";
    if (pos.snapshotAt.empty() || idx < 0) {
        d.why = undated + ", and the table has no time column (" + column +
                ", or the one `cursor:` names) to tell "
                "them by";
        return d;
    }
    const ColumnInfo &c = ctx.schema.columns[static_cast<size_t>(idx)];
    if (ctx.pgSource && (c.baseType == "timestamptz" || c.baseType == "timestamp")) {
        const std::string at = pgLiteral(pos.snapshotAt) + "::timestamptz";
        const std::string col = "s." + quoteIdent(c.name);
        ctx.pgSource->setRecentExpr(c.baseType == "timestamptz"
                                        ? col + " >= " + at
                                        : col + " >= (" + at + " AT TIME ZONE " +
                                              pgLiteral(ctx.pgSource->connection().serverTimeZone()) + ")");
        d.sourceDated = true;
    } else if (ctx.mySource && (c.baseType == "timestamptz" || c.baseType == "timestamp")) {
        std::string since = pos.snapshotAt; // UTC, as "...+00"
        if (const auto plus = since.find('+'); plus != std::string::npos)
            since.erase(plus);
        ctx.mySource->setRecent({static_cast<size_t>(idx), {}, since});
        d.sourceDated = true;
    } else {
        d.why = undated + ", and the table's time column " + column + " is not a timestamp";
    }
    return d;
}

} // namespace driftless::core::recon
