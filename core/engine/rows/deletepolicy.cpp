#include "core/engine/rows/deletepolicy.h"

namespace driftless::core {

bool ignoresDeletes(const TableSpec &spec)
{
    return spec.deletes == std::optional<std::string>("ignore");
}

bool softDeletes(const TableSpec &spec)
{
    return spec.deletes == std::optional<std::string>("soft");
}

long long dropDeletes(RowSet &rows)
{
    long long n = 0;
    for (size_t r = 0; r < rows.size(); ++r)
        n += rows.row(r).op == ChangeOp::Delete ? 1 : 0;
    if (n == 0)
        return 0;
    RowSet out;
    out.reserve(rows.size(), rows.bytes());
    for (size_t r = 0; r < rows.size(); ++r)
        if (rows.row(r).op != ChangeOp::Delete)
            out.append(rows.line(r), rows.row(r).op, rows.row(r).version, rows.unchangedMask(r));
    rows = std::move(out);
    return n;
}

std::string ignoredDeletesMessage(long long n)
{
    return std::to_string(n) + (n == 1 ? " delete" : " deletes") +
           " not applied (deletes: ignore); the target keeps the row" + (n == 1 ? "" : "s");
}

} // namespace driftless::core
