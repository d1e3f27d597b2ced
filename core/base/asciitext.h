#pragma once

#include <algorithm>
#include <cctype>
#include <string>

namespace driftless::core {

/// `s` with its ASCII letters in lower case (identifiers, settings, server messages).
inline std::string asciiLower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

} // namespace driftless::core
