#pragma once

#include <QString>

#include "core/engine/status/statusreport.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace driftless::ui {

/// Any exception as one line for a message or a tooltip (core::describe).
QString describe(const std::exception &e);
/// `4 s`, `12 min`, `3 h 05 min`, `2 d`; an em dash when the table never synced.
QString formatLag(std::optional<double> seconds);
/// A duration without rounding to the largest unit only: `2 min`, `1 h`, `90 s`.
QString formatDuration(double seconds);
/// Local time, `2026-11-29 10:00:00`: DBAs compare it with server logs, so no "5 minutes ago".
QString formatTimestamp(std::int64_t msSinceEpoch);
/// Bytes as pg_size_pretty reads them (1024-based): `512 bytes`, `8.0 kB`, `1.5 MB`, `12 GB`;
/// negative values keep their sign.
QString formatBytes(std::int64_t bytes);
/// A time left, as a countdown reads: `45s`, `1m 20s`, `2h 05m`.
QString formatEta(double seconds);
/// A backfill in one line: `42% · 420,000 of 1,000,000 rows · ~1m 20s left`; with no estimate
/// of the total, `420,000 rows copied`. Numbers in the user's locale.
QString formatBackfill(const core::TableReport::Backfill &b);
/// `full_refresh` -> `full refresh`.
QString strategyLabel(core::Strategy strategy);
/// `source_changed` -> `source changed`: a table state as the app's text says it.
QString stateLabel(core::TableState state);
/// A CDC position's source, as failover checks it: `system id 7412…, timeline 2` or
/// `server_id 1, GTID 0-1-405`; "not recorded" for what its checkpoint does not hold.
QString sourceIdentityText(const core::SourceIdentity &id);
/// A two-way pipeline's direction as the endpoints it goes between, `east → west` (read from
/// the report's "endpoint:table" source and target); empty for a one-way pipeline's table.
QString directionLabel(const core::TableReport &r);
/// The engine's word for a table state, a freshness, a level or a strategy, as `/sync/status`
/// spells it (`backfilling`, `breach`, `warn`, `full_refresh`).
template <typename Word> QString spelled(Word w)
{
    const std::string_view s = core::toString(w);
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

} // namespace driftless::ui
