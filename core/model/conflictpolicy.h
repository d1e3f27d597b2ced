#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace driftless::core {

/// What a two-way table does when a change arrives for a row the other side also changed since
/// the last exchange (YAML `conflicts:`, docs/two-way.md). "source" and "target" are the
/// pipeline's endpoints in both directions, so both directions pick the same winner.
struct ConflictPolicy {
    enum class Rule { SourceWins, TargetWins, MergeColumns, Manual };
    Rule rule = Rule::MergeColumns;
    /// merge_columns: what decides when both sides changed a column (source_wins, target_wins
    /// or manual).
    Rule onOverlap = Rule::Manual;

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
        }
        return "manual";
    }
    static std::optional<Rule> ruleFrom(std::string_view s)
    {
        for (Rule r : {Rule::SourceWins, Rule::TargetWins, Rule::MergeColumns, Rule::Manual})
            if (s == name(r))
                return r;
        return std::nullopt;
    }
    /// The stored form: `source_wins`, `target_wins`, `manual`, or `merge_columns/<on_overlap>`.
    std::string text() const
    {
        std::string s = name(rule);
        if (rule == Rule::MergeColumns)
            s += std::string("/") + name(onOverlap);
        return s;
    }
    static std::optional<ConflictPolicy> parse(std::string_view text)
    {
        ConflictPolicy p;
        auto slash = text.find('/');
        auto r = ruleFrom(text.substr(0, slash));
        if (!r)
            return std::nullopt;
        p.rule = *r;
        if (slash != std::string_view::npos) {
            auto o = ruleFrom(text.substr(slash + 1));
            if (!o || *o == Rule::MergeColumns || p.rule != Rule::MergeColumns)
                return std::nullopt;
            p.onOverlap = *o;
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
    std::string status;     ///< open or resolved
    std::string resolution; ///< source or target, once resolved
};

} // namespace driftless::core
