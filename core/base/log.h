#pragma once

#include <functional>
#include <string>

namespace driftless::core {

enum class LogLevel { Debug, Info, Warn, Error };

/// Where engine log lines go. Default: stderr for warn and error. Lines never hold passwords or
/// row values (keys and counts only).
void setLogSink(std::function<void(LogLevel, const std::string &)> sink);
void log(LogLevel level, const std::string &message);

} // namespace driftless::core
