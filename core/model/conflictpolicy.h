#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace driftless::core {

/// `newer_wins`: the later of the two versions wins, by a timestamp column of the table or by
/// the transactions' commit times (track_commit_timestamp). Two times closer than `maxSkewMs`
/// (or equal, or one of them unknown, or a delete on either side) decide nothing: the conflict
/// goes to the queue. Both directions compare the same two times, so both pick the same winner.
struct NewerWins {
    enum class Clock { Column, CommitTime };
    Clock clock = Clock::Column;
    std::string column; ///< Clock::Column: the timestamp column compared
    std::int64_t maxSkewMs = 5000;
    bool operator==(const NewerWins &) const = default;
};

/// What a two-way table does when a change arrives for a row the other side also changed since
/// the last exchange (YAML `conflicts:`, docs/two-way.md). "source" and "target" are the
/// pipeline's endpoints in both directions, so both directions pick the same winner.
struct ConflictPolicy {
    enum class Rule { SourceWins, TargetWins, MergeColumns, Manual, NewerWins };
    Rule rule = Rule::MergeColumns;
    /// merge_columns: what decides when both sides changed a column (source_wins, target_wins,
    /// manual or newer_wins).
    Rule onOverlap = Rule::Manual;
    /// The clock of `newer_wins`, as the rule or as on_overlap.
    NewerWins newer;

    static const char *name(Rule r)
    {
        switch (r) {
        case Rule::SourceWins:
            return "source_wins";
        case Rule::TargetWins:
            return "target_wins";
        case Rule::MergeColumns:
            return "merge_columns";
        case Rule::Manual:
            return "manual";
        case Rule::NewerWins:
            return "newer_wins";
        }
        return "manual";
    }
    static std::optional<Rule> ruleFrom(std::string_view s)
    {
        for (Rule r : {Rule::SourceWins, Rule::TargetWins, Rule::MergeColumns, Rule::Manual, Rule::NewerWins})
            if (s == name(r))
                return r;
        return std::nullopt;
    }
    bool usesNewer() const
    {
        return rule == Rule::NewerWins || (rule == Rule::MergeColumns && onOverlap == Rule::NewerWins);
    }
    bool usesCommitTime() const { return usesNewer() && newer.clock == NewerWins::Clock::CommitTime; }
    /// The stored form: `source_wins`, `target_wins`, `manual`, `merge_columns/<on_overlap>`;
    /// with newer_wins, `;max_skew_ms=N;clock=commit_time` or `;max_skew_ms=N;column=NAME` after
    /// it (the column last, so that any name reads back whole).
    std::string text() const
    {
        std::string s = name(rule);
        if (rule == Rule::MergeColumns)
            s += std::string("/") + name(onOverlap);
        if (usesNewer()) {
            s += ";max_skew_ms=" + std::to_string(newer.maxSkewMs);
            s += newer.clock == NewerWins::Clock::CommitTime ? std::string(";clock=commit_time")
                                                             : ";column=" + newer.column;
        }
        return s;
    }
    static std::optional<ConflictPolicy> parse(std::string_view text)
    {
        ConflictPolicy p;
        const auto semi = text.find(';');
        std::string_view head = text.substr(0, semi);
        auto slash = head.find('/');
        auto r = ruleFrom(head.substr(0, slash));
        if (!r)
            return std::nullopt;
        p.rule = *r;
        if (slash != std::string_view::npos) {
            auto o = ruleFrom(head.substr(slash + 1));
            if (!o || *o == Rule::MergeColumns || p.rule != Rule::MergeColumns)
                return std::nullopt;
            p.onOverlap = *o;
        }
        if (!p.usesNewer())
            return semi == std::string_view::npos ? std::optional(p) : std::nullopt;
        if (semi == std::string_view::npos)
            return std::nullopt;
        std::string_view rest = text.substr(semi + 1);
        constexpr std::string_view skew = "max_skew_ms=";
        if (rest.substr(0, skew.size()) != skew)
            return std::nullopt;
        rest.remove_prefix(skew.size());
        const auto end = rest.find(';');
        if (end == std::string_view::npos || end == 0)
            return std::nullopt;
        std::int64_t ms = 0;
        for (char ch : rest.substr(0, end)) {
            if (ch < '0' || ch > '9')
                return std::nullopt;
            ms = ms * 10 + (ch - '0');
        }
        p.newer.maxSkewMs = ms;
        rest.remove_prefix(end + 1);
        constexpr std::string_view column = "column=";
        if (rest == "clock=commit_time") {
            p.newer.clock = NewerWins::Clock::CommitTime;
        } else if (rest.substr(0, column.size()) == column && rest.size() > column.size()) {
            p.newer.clock = NewerWins::Clock::Column;
            p.newer.column = std::string(rest.substr(column.size()));
        } else {
            return std::nullopt;
        }
        return p;
    }
};

/// A conflict a two-way direction parked for a person (the `manual` policy): the row's key, the
/// columns both sides changed, both versions and the base, each as JSON (an object of column ->
/// text value, or `null` where the side has no row).
struct ConflictRecord {
    std::string pipeline; ///< the two-way pipeline's name (both directions)
    std::string table;    ///< the pipeline's source table, schema.name
    std::string key;
    std::string columns; ///< JSON array of column names
    std::string source;
    std::string target;
    std::string base;
};

/// A conflict as the workspace's queue keeps it (StateStore::Conflict).
struct QueuedConflict {
    std::int64_t id = 0;
    ConflictRecord record;
    std::int64_t detectedAtMs = 0;
    std::string status; ///< open or resolved
    /// Once resolved: source, target or merged, then any per-column choices (`source; email=target`).
    std::string resolution;
};

} // namespace driftless::core
