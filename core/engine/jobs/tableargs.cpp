#include "core/engine/jobs/tableargs.h"

#include "core/model/error.h"

#include <stdexcept>
#include <vector>

namespace driftless::core {

TableRef resolveTableArgument(const Workspace &ws, const PipelineSpec &p, const std::string &arg)
{
    const Endpoint *source = ws.endpoint(p.source);
    if (source && source->kind == EndpointKind::Mysql) {
        // A bare name keeps an empty schema: it is looked up in every database of the pipeline.
        auto named = parseMysqlTable(arg, "");
        if (!named)
            throw ConfigError("'" + arg + "' is not a table name; write database.table");
        std::vector<TableRef> found;
        for (const auto &t : p.tables)
            if (named->schema.empty() ? t.table.name == named->name : t.table == *named)
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
