#include "core/model/schemachangepolicy.h"

#include <array>
#include <utility>

namespace driftless::core {
namespace {

template <typename E, size_t N> using Names = std::array<std::pair<E, std::string_view>, N>;

constexpr Names<AddColumnPolicy, 4> kAdd{{{AddColumnPolicy::Backfill, "backfill"},
                                          {AddColumnPolicy::Propagate, "propagate"},
                                          {AddColumnPolicy::Ignore, "ignore"},
                                          {AddColumnPolicy::Pause, "pause"}}};
constexpr Names<DropColumnPolicy, 3> kDrop{
    {{DropColumnPolicy::Keep, "keep"}, {DropColumnPolicy::Drop, "drop"}, {DropColumnPolicy::Pause, "pause"}}};
constexpr Names<TypeChangePolicy, 2> kType{{{TypeChangePolicy::Widen, "widen"}, {TypeChangePolicy::Pause, "pause"}}};
constexpr Names<RenameColumnPolicy, 2> kRename{
    {{RenameColumnPolicy::Rename, "rename"}, {RenameColumnPolicy::Pause, "pause"}}};

template <typename E, size_t N> std::string_view nameIn(const Names<E, N> &names, E p)
{
    for (const auto &[e, n] : names)
        if (e == p)
            return n;
    return "pause";
}

template <typename E, size_t N> std::optional<E> parseIn(const Names<E, N> &names, std::string_view name)
{
    for (const auto &[e, n] : names)
        if (n == name)
            return e;
    return std::nullopt;
}

} // namespace

std::string_view policyName(AddColumnPolicy p)
{
    return nameIn(kAdd, p);
}
std::string_view policyName(DropColumnPolicy p)
{
    return nameIn(kDrop, p);
}
std::string_view policyName(TypeChangePolicy p)
{
    return nameIn(kType, p);
}
std::string_view policyName(RenameColumnPolicy p)
{
    return nameIn(kRename, p);
}

std::optional<AddColumnPolicy> parseAddColumnPolicy(std::string_view name)
{
    return parseIn(kAdd, name);
}
std::optional<DropColumnPolicy> parseDropColumnPolicy(std::string_view name)
{
    return parseIn(kDrop, name);
}
std::optional<TypeChangePolicy> parseTypeChangePolicy(std::string_view name)
{
    return parseIn(kType, name);
}
std::optional<RenameColumnPolicy> parseRenameColumnPolicy(std::string_view name)
{
    return parseIn(kRename, name);
}

} // namespace driftless::core
