#pragma once

#include <string>

namespace driftless::core {

/// The line (1-based) of key `key` of table `table` of pipeline `pipeline` (indexes in the file's
/// lists) in the workspace file `path`, for messages about a value only a server can judge (a row
/// filter); 0 when the file cannot be read or has no such key.
int tableKeyLine(const std::string &path, size_t pipeline, size_t table, const std::string &key);

} // namespace driftless::core
