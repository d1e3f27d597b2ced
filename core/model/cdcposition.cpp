#include "core/model/cdcposition.h"

#include "core/model/error.h"

#include <algorithm>

namespace driftless::core::binlog {

std::int64_t positionVersion(const Position &p)
{
    const std::size_t dot = p.file.find_last_of('.');
    const std::string digits = dot == std::string::npos ? std::string() : p.file.substr(dot + 1);
    if (digits.empty() || digits.size() > 7 ||
        !std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
        throw Error(ErrorKind::Permanent, "binlog file name '" + p.file + "' has no numeric suffix");
    const std::int64_t sequence = std::stoll(digits);
    if (p.offset > 0xFFFFFFFFull)
        throw Error(ErrorKind::Permanent, "binlog offset " + std::to_string(p.offset) + " does not fit 32 bits");
    return (std::int64_t(1) << 52) + sequence * (std::int64_t(1) << 32) + static_cast<std::int64_t>(p.offset);
}

} // namespace driftless::core::binlog
