#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace driftless::core {

/// The rows of a full refresh as replaceAll() receives them: COPY text lines, each ending in the
/// row's version, handed to `sink` in chunks that may split a line.
using RefreshRows = std::function<void(const std::function<void(std::string_view)> &sink)>;

/// Calls onRow(line, version) for each row of `rows`: the line without its last field, and that
/// field (the row's version). A line split across two chunks is joined first.
template <class OnRow> void forEachRefreshRow(const RefreshRows &rows, OnRow &&onRow)
{
    std::string carry;
    auto handle = [&](std::string_view line) {
        const auto tab = line.rfind('\t');
        std::int64_t version = 0;
        std::from_chars(line.data() + tab + 1, line.data() + line.size(), version);
        onRow(line.substr(0, tab), version);
    };
    rows([&](std::string_view data) {
        size_t start = 0;
        while (start < data.size()) {
            const auto nl = data.find('\n', start);
            if (nl == std::string_view::npos) {
                carry.append(data.substr(start));
                return;
            }
            if (carry.empty()) {
                handle(data.substr(start, nl - start));
            } else {
                carry.append(data.substr(start, nl - start));
                handle(carry);
                carry.clear();
            }
            start = nl + 1;
        }
    });
    if (!carry.empty())
        handle(carry);
}

} // namespace driftless::core
