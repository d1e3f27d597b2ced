#include "core/engine/tableargs.h"

#include "core/model/error.h"

#include <optional>
#include <stdexcept>
#include <vector>

namespace driftless::core {

namespace {

/// `db.table` or `table`, each part bare, in backticks or in double quotes, case kept.
std::optional<std::vector<std::string>> mysqlParts(const std::string &text)
{
    std::vector<std::string> parts(1);
    char quote = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (quote) {
            if (ch != quote)
                parts.back() += ch;
            else if (i + 1 < text.size() && text[i + 1] == quote)
                parts.back() += text[++i];
            else
                quote = 0;
        } else if (ch == '`' || ch == '"') {
            quote = ch;
        } else if (ch == '.') {
            parts.emplace_back();
        } else {
            parts.back() += ch;
        }
    }
    if (quote || parts.size() > 2)
        return std::nullopt;
    for (const auto &part : parts)
        if (part.empty())
            return std::nullopt;
    return parts;
}

} // namespace

TableRef resolveTableArgument(const Workspace &ws, const PipelineSpec &p, const std::string &arg)
{
    const Endpoint *source = ws.endpoint(p.source);
    if (source && source->kind == EndpointKind::Mysql) {
        auto parts = mysqlParts(arg);
        if (!parts)
            throw ConfigError("'" + arg + "' is not a table name; write database.table");
        std::vector<TableRef> found;
        for (const auto &t : p.tables)
            if (parts->size() == 2 ? t.table == TableRef{(*parts)[0], (*parts)[1]} : t.table.name == (*parts)[0])
                found.push_back(t.table);
        if (found.size() > 1)
            throw ConfigError("'" + arg + "' names tables of two databases in pipeline '" + p.name +
                              "'; write database.table");
        if (found.empty())
            throw ConfigError("pipeline '" + p.name + "' has no table " + arg +
                              " (MySQL names keep their case: write it as in the workspace)");
        return found.front();
    }
    TableRef ref;
    try {
        ref = TableRef::parse(arg);
    } catch (const std::invalid_argument &e) {
        throw ConfigError("'" + arg + "': " + e.what());
    }
    for (const auto &t : p.tables)
        if (t.table == ref)
            return ref;
    throw ConfigError("pipeline '" + p.name + "' has no table " + ref.display());
}

} // namespace driftless::core
