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

} // namespace driftless::core
