#pragma once

#include <string>
#include <vector>

namespace driftless::core {

/// A primary key as canonical text per key column (rowhash.h), in key column order.
using CanonicalKey = std::vector<std::string>;

} // namespace driftless::core
