#pragma once

#include <optional>
#include <string>
#include <utility>

namespace driftless::core {

/// One preflight finding. `level` is ok, warn or error; `category` says what kind of problem
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

struct Finding {
    Finding() = default;
    Finding(std::string level, std::string category, std::string pipeline, std::string subject, std::string message,
            std::string fix, std::string sql = {})
        : level(std::move(level)), category(std::move(category)), pipeline(std::move(pipeline)),
          subject(std::move(subject)), message(std::move(message)), fix(std::move(fix)), sql(std::move(sql))
    {
    }

    std::string level;
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
