#include "core/readers/binlog/gtidstate.h"

#include <charconv>

namespace driftless::core::binlog {

namespace {

template <typename T> bool number(std::string_view text, T &out)
{
    if (text.empty())
        return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

} // namespace

std::optional<GtidState> GtidState::parse(std::string_view text)
{
    GtidState state;
    while (!text.empty() && (text.front() == ' ' || text.front() == '\n'))
        text.remove_prefix(1);
    if (text.empty())
        return state;
    for (;;) {
        const size_t comma = text.find(',');
        std::string_view one = text.substr(0, comma);
        while (!one.empty() && (one.front() == ' ' || one.front() == '\n'))
            one.remove_prefix(1);
        const size_t d1 = one.find('-');
        const size_t d2 = d1 == std::string_view::npos ? d1 : one.find('-', d1 + 1);
        if (d2 == std::string_view::npos)
            return std::nullopt;
        MariaGtid g;
        if (!number(one.substr(0, d1), g.domain) || !number(one.substr(d1 + 1, d2 - d1 - 1), g.serverId) ||
            !number(one.substr(d2 + 1), g.sequence))
            return std::nullopt;
        if (state.m_domains.count(g.domain))
            return std::nullopt;
        state.m_domains[g.domain] = g;
        if (comma == std::string_view::npos)
            return state;
        text.remove_prefix(comma + 1);
    }
}

std::string GtidState::text() const
{
    std::string out;
    for (const auto &[d, g] : m_domains)
        out += (out.empty() ? "" : ",") + g.text();
    return out;
}

std::optional<MariaGtid> GtidState::domain(std::uint32_t domain) const
{
    auto it = m_domains.find(domain);
    if (it == m_domains.end())
        return std::nullopt;
    return it->second;
}

bool GtidState::agreesWith(const GtidState &part) const
{
    for (const auto &[d, g] : part.m_domains) {
        auto it = m_domains.find(d);
        if (it == m_domains.end() || !(it->second == g))
            return false;
    }
    return true;
}

} // namespace driftless::core::binlog
