#pragma once

#include <cstdint>

namespace driftless::core::rowversion {

/// A row version as a target stores it (`_driftless_version`, and a checkpoint's `version`):
/// the source epoch in bits 56-62, the source position's version below (a Postgres LSN, a
/// binlog position's version, a source clock in microseconds).
///
/// Positions are only comparable within one source history: a promoted standby, another server
/// behind the same address, a restored server or a re-seed (resnapshot) starts a new epoch, and
/// every version of a newer epoch outranks every version of an older one, whatever their
/// positions (ARCHITECTURE.md P6). The epoch is per synced table, kept in the top bits of its
/// checkpoint's version; versions written before epochs existed are epoch 0, unchanged.
inline constexpr int kEpochShift = 56;
/// 127: the highest epoch a positive 64-bit version can carry.
inline constexpr int kMaxEpoch = 127;
inline constexpr std::int64_t kPositionMask = (std::int64_t(1) << kEpochShift) - 1;

constexpr int epochOf(std::int64_t version)
{
    return version <= 0 ? 0 : static_cast<int>(version >> kEpochShift);
}
constexpr std::int64_t positionOf(std::int64_t version)
{
    return version <= 0 ? version : version & kPositionMask;
}

/// `version` under `epoch`. A version that carries an epoch already (one read back from a
/// target, as a repair passes on) is returned as it is; so is 0 and below. Throws Error when the
/// epoch is out of range or the position does not fit below the epoch bits.
std::int64_t compose(int epoch, std::int64_t version);

} // namespace driftless::core::rowversion
