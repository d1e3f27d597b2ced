#include "core/engine/schema/schemapolicy.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace driftless::core {
namespace {

/// The type's name and its modifiers, `numeric(12,2)` as ("numeric", {12, 2}); nullopt when the
/// modifiers are not plain numbers.
std::optional<std::pair<std::string, std::vector<int>>> splitType(const std::string &type)
{
    const auto open = type.find('(');
    if (open == std::string::npos)
        return std::pair{type, std::vector<int>{}};
    if (type.back() != ')')
        return std::nullopt;
    std::vector<int> mods;
    const char *p = type.data() + open + 1;
    const char *end = type.data() + type.size() - 1;
    while (p < end) {
        int v = 0;
        auto [next, ec] = std::from_chars(p, end, v);
        if (ec != std::errc())
            return std::nullopt;
        mods.push_back(v);
        p = next;
        if (p < end && *p == ',')
            ++p;
    }
    return std::pair{type.substr(0, open), mods};
}

int integerRank(const std::string &name)
{
    if (name == "smallint")
        return 1;
    if (name == "integer")
        return 2;
    if (name == "bigint")
        return 3;
    return 0;
}

} // namespace

DropColumnPolicy dropColumnPolicy(const TableSpec &spec, const std::optional<std::string> &pipelineDefault)
{
    // The workspace file admits only the names (WorkspaceFile::parse).
    const std::optional<std::string> &named = spec.dropColumn ? spec.dropColumn : pipelineDefault;
    return named ? parseDropColumnPolicy(*named).value_or(DropColumnPolicy::Pause) : DropColumnPolicy::Keep;
}

TypeChangePolicy typeChangePolicy(const TableSpec &spec, const std::optional<std::string> &pipelineDefault)
{
    // The workspace file admits only the names (WorkspaceFile::parse).
    const std::optional<std::string> &named = spec.typeChange ? spec.typeChange : pipelineDefault;
    return named ? parseTypeChangePolicy(*named).value_or(TypeChangePolicy::Pause) : TypeChangePolicy::Widen;
}

RenameColumnPolicy renameColumnPolicy(const TableSpec &spec, const std::optional<std::string> &pipelineDefault)
{
    // The workspace file admits only the names (WorkspaceFile::parse).
    const std::optional<std::string> &named = spec.renameColumn ? spec.renameColumn : pipelineDefault;
    return named ? parseRenameColumnPolicy(*named).value_or(RenameColumnPolicy::Pause) : RenameColumnPolicy::Rename;
}

bool widens(const std::string &from, const std::string &to)
{
    const auto f = splitType(from);
    const auto t = splitType(to);
    if (!f || !t || from == to)
        return false;
    const auto &[fn, fm] = *f;
    const auto &[tn, tm] = *t;
    if (integerRank(fn) && integerRank(tn))
        return integerRank(tn) > integerRank(fn);
    if (fn == "character varying" && (tn == "character varying" || tn == "text"))
        return tm.empty() || (fm.size() == 1 && tm.size() == 1 && tm[0] > fm[0]);
    if (fn == "numeric" && tn == "numeric") {
        if (tm.empty())
            return !fm.empty(); // numeric(p,s) -> numeric
        // Same scale, more digits: every value fits, none is rounded.
        return fm.size() == 2 && tm.size() == 2 && tm[1] == fm[1] && tm[0] > fm[0];
    }
    return false;
}

ColumnLayoutDiff diffColumns(const TableSchema &source, const std::vector<std::pair<std::string, std::string>> &target,
                             bool compareTypes)
{
    ColumnLayoutDiff d;
    auto has = [&](const std::string &n) {
        return std::any_of(target.begin(), target.end(), [&](const auto &t) { return t.first == n; });
    };
    for (const auto &c : source.columns)
        if (!c.generated && !has(c.name))
            d.added.push_back(c.name);
    for (const auto &[name, type] : target) {
        const int i = source.columnIndex(name);
        if (i < 0) {
            d.gone.push_back(name);
            continue;
        }
        const auto &c = source.columns[static_cast<size_t>(i)];
        if (compareTypes && c.isBuiltinType() && !c.isEnum && c.typeSql != type)
            d.retyped.emplace_back(name, type);
    }
    return d;
}

std::string retypeRefusal(TypeChangePolicy policy, const std::string &from, const std::string &to, bool builtin)
{
    if (policy == TypeChangePolicy::Pause)
        return " (schema_changes: type_change: pause)";
    if (!builtin || !widens(from, to))
        return ", which is not a widening the engine applies by itself";
    return {};
}

} // namespace driftless::core
