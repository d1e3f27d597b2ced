#pragma once

#include <string>
#include <utility>

namespace driftless::core {

/// One preflight finding. `level` is ok, warn or error; `category` says what kind of problem
/// an error is: `connection` (the server could not be reached or logged in to: environment) or
/// `config` (the workspace asks for something the databases cannot give: fix the file).
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
    std::string fix;     ///< what to do, for warn and error
    /// The exact statements that fix it, runnable as they stand (names filled in), where the fix
    /// is SQL; empty where it is not (a DSN, a restart, a column only the DBA can choose).
    std::string sql;
};

} // namespace driftless::core
