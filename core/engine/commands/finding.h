#pragma once

#include <optional>
#include <string>
#include <utility>

namespace driftless::core {

/// One preflight finding. `level` is ok, warn or error (FindingLevel); `category` says what kind of problem
/// an error is: `connection` (the server could not be reached or logged in to: environment) or
/// `config` (the workspace asks for something the databases cannot give: fix the file).
/// A workspace setting whose value fixes a finding: `key`, as the workspace file spells it, set to
/// `value` on the finding's pipeline, or on its table `table` when that is set. The app offers
/// it as a button (shown first, then stored as any edit of the workspace is).
struct FindingSetting {
    std::string table;
    std::string key;
    std::string value;
    bool operator==(const FindingSetting &) const = default;
};

/// How a finding stands.
enum class FindingLevel { Ok, Warn, Error };

/// "ok", "warn", "error": the word `doctor --json` and the agent's API carry.
inline const char *toString(FindingLevel level)
{
    return level == FindingLevel::Error ? "error" : level == FindingLevel::Warn ? "warn" : "ok";
}

/// The level a word names; any other word reads as an error, so nothing unknown passes.
inline FindingLevel parseFindingLevel(const std::string &word)
{
    return word == "ok" ? FindingLevel::Ok : word == "warn" ? FindingLevel::Warn : FindingLevel::Error;
}

struct Finding {
    Finding() = default;
    Finding(FindingLevel level, std::string category, std::string pipeline, std::string subject, std::string message,
            std::string fix, std::string sql = {})
        : level(level), category(std::move(category)), pipeline(std::move(pipeline)), subject(std::move(subject)),
          message(std::move(message)), fix(std::move(fix)), sql(std::move(sql))
    {
    }

    FindingLevel level = FindingLevel::Ok;
    std::string category;
    std::string pipeline;
    std::string subject; ///< endpoint or table
    std::string message;
    std::string fix; ///< what to do, for warn and error
    /// The exact statements that fix it, runnable as they stand (names filled in), where the fix
    /// is SQL; empty where it is not (a DSN, a restart, a column only the DBA can choose).
    std::string sql;
    /// Set where the fix is a setting of the workspace (e.g. heartbeat: 1m on the pipeline).
    std::optional<FindingSetting> setting;
};

} // namespace driftless::core
