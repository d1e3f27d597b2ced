#pragma once

#include "core/readers/binlog/binlogdecoder.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace driftless::core::binlog {

/// A MariaDB GTID state: the last GTID of each replication domain ("0-1-405,1-2-7"), as
/// @@gtid_binlog_pos, BINLOG_GTID_POS() and @slave_connect_state spell it. A binlog reader's
/// state says where in the source's history it stands independently of file names and offsets,
/// which only mean something on the server that wrote them: another server that holds this state
/// in its binlog continues the same history from there.
class GtidState {
public:
    /// The state `text` spells (empty text: the empty state), or nullopt when it is not one.
    static std::optional<GtidState> parse(std::string_view text);

    /// A transaction with `gtid` committed: it is now its domain's last.
    void apply(const MariaGtid &gtid) { m_domains[gtid.domain] = gtid; }
    bool empty() const { return m_domains.empty(); }
    /// Domains in ascending order, comma separated; empty for the empty state.
    std::string text() const;
    /// This state's GTID in `domain`, if it has that domain.
    std::optional<MariaGtid> domain(std::uint32_t domain) const;
    const std::map<std::uint32_t, MariaGtid> &domains() const { return m_domains; }
    /// True when every domain of `part` is in this state with the same GTID (a state recorded
    /// before the full state was kept holds only the last transaction's domain).
    bool agreesWith(const GtidState &part) const;
    bool operator==(const GtidState &) const = default;

private:
    std::map<std::uint32_t, MariaGtid> m_domains;
};

} // namespace driftless::core::binlog
