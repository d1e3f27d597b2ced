#include "core/mergers/merger.h"

#include <string>

namespace driftless::core {

int startEpoch(Merger &merger)
{
    const std::int64_t highest = merger.highestVersion();
    if (highest <= 0)
        return merger.epoch();
    const int next = rowversion::epochOf(highest) + 1;
    if (next > rowversion::kMaxEpoch)
        throw Error(ErrorKind::Permanent,
                    merger.describeTarget() + " was re-seeded " + std::to_string(rowversion::kMaxEpoch) +
                        " times, the most its row versions can tell apart",
                    {},
                    "drop the target table (Driftless creates it again), then load it again: driftless-cli "
                    "resnapshot PIPELINE TABLE");
    merger.setEpoch(next);
    return next;
}

bool readsBackExactly(const ColumnInfo &c)
{
    static const char *kTypes[] = {"int2", "int4", "int8", "text", "varchar", "bpchar", "uuid"};
    if (c.isArray)
        return false;
    for (const char *t : kTypes)
        if (c.baseType == t)
            return true;
    return false;
}

} // namespace driftless::core
