#pragma once

#include <cstdint>
#include <string>

namespace driftless::core::binlog {

/// A place in the binlog: file name and byte offset (the end of an event = the next one's start).
struct Position {
    std::string file;
    std::uint64_t offset = 0;
    bool operator==(const Position &) const = default;
};

/// The row version a position stands for: 2^52 + the file name's numeric suffix × 2^32 + offset,
/// so a later position is always larger, and larger than any clock version (docs/type-mapping.md).
/// Throws Error when the file name has no numeric suffix of at most 7 digits.
std::int64_t positionVersion(const Position &position);

} // namespace driftless::core::binlog
