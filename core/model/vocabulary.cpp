#include "core/model/vocabulary.h"

#include <array>
#include <ostream>
#include <utility>

namespace driftless::core {
namespace {

template <typename E, std::size_t N>
std::string_view spell(const std::array<std::pair<E, std::string_view>, N> &words, E e)
{
    for (const auto &[value, word] : words)
        if (value == e)
            return word;
    return "unknown";
}

template <typename E, std::size_t N>
std::optional<E> parse(const std::array<std::pair<E, std::string_view>, N> &words, std::string_view s)
{
    for (const auto &[value, word] : words)
        if (word == s)
            return value;
    return std::nullopt;
}

constexpr std::array<std::pair<TableState, std::string_view>, 9> kTableStates{{
    {TableState::Idle, "idle"},
    {TableState::Running, "running"},
    {TableState::Backfilling, "backfilling"},
    {TableState::Streaming, "streaming"},
    {TableState::Ok, "ok"},
    {TableState::Error, "error"},
    {TableState::Retrying, "retrying"},
    {TableState::Paused, "paused"},
    {TableState::SourceChanged, "source_changed"},
}};

constexpr std::array<std::pair<Freshness, std::string_view>, 4> kFreshness{{
    {Freshness::Ok, "ok"},
    {Freshness::Warn, "warn"},
    {Freshness::Breach, "breach"},
    {Freshness::Unknown, "unknown"},
}};

constexpr std::array<std::pair<Level, std::string_view>, 3> kLevels{{
    {Level::Info, "info"},
    {Level::Warn, "warn"},
    {Level::Error, "error"},
}};

} // namespace

std::string_view toString(TableState s)
{
    return spell(kTableStates, s);
}
std::optional<TableState> tableStateFrom(std::string_view s)
{
    return parse(kTableStates, s);
}
std::string_view toString(Freshness f)
{
    return spell(kFreshness, f);
}
std::optional<Freshness> freshnessFrom(std::string_view s)
{
    return parse(kFreshness, s);
}
std::string_view toString(Level l)
{
    return spell(kLevels, l);
}
std::optional<Level> levelFrom(std::string_view s)
{
    return parse(kLevels, s);
}

std::ostream &operator<<(std::ostream &os, TableState s)
{
    return os << toString(s);
}
std::ostream &operator<<(std::ostream &os, Freshness f)
{
    return os << toString(f);
}
std::ostream &operator<<(std::ostream &os, Level l)
{
    return os << toString(l);
}

} // namespace driftless::core
