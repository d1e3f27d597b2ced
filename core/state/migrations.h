#pragma once

#include <span>
#include <string_view>

namespace driftless::core {

/// Forward migrations of the workspace file. Entry i moves PRAGMA user_version from i to i+1.
/// Never edit a released entry; append a new one.
std::span<const std::string_view> stateMigrations();

} // namespace driftless::core
