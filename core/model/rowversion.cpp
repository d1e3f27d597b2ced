#include "core/model/rowversion.h"

#include "core/model/error.h"

#include <string>

namespace driftless::core::rowversion {

std::int64_t compose(int epoch, std::int64_t version)
{
    if (version <= 0 || epochOf(version) != 0)
        return version;
    if (epoch < 0 || epoch > kMaxEpoch)
        throw Error(ErrorKind::Permanent,
                    "source epoch " + std::to_string(epoch) + " is out of range (0-" + std::to_string(kMaxEpoch) + ")");
    return (static_cast<std::int64_t>(epoch) << kEpochShift) | version;
}

} // namespace driftless::core::rowversion
