#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

/// Lenient field readers for JSON another process wrote (the agent API's documents): a missing
/// key, or one of another type, reads as absent, so a newer writer's document still reads and an
/// older one's reads with defaults. Writers spell their keys beside these reads; the keys are the
/// API's (docs/agent-api.md).
namespace driftless::core::jsonfields {

inline std::string text(const nlohmann::json &j, const char *key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

inline bool flag(const nlohmann::json &j, const char *key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_boolean() && it->get<bool>();
}

/// A number of any JSON kind, as T; nullopt when absent or not a number.
template <typename T = double> std::optional<T> number(const nlohmann::json &j, const char *key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? std::optional<T>(it->get<T>()) : std::nullopt;
}

inline std::optional<std::int64_t> integer(const nlohmann::json &j, const char *key)
{
    return number<std::int64_t>(j, key);
}

/// The strings of an array (other items skipped).
inline std::vector<std::string> texts(const nlohmann::json &j, const char *key)
{
    std::vector<std::string> out;
    auto it = j.find(key);
    if (it != j.end() && it->is_array())
        for (const auto &v : *it)
            if (v.is_string())
                out.push_back(v.get<std::string>());
    return out;
}

} // namespace driftless::core::jsonfields
