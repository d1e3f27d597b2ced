#include "core/model/tableschema.h"

namespace driftless::core {

int TableSchema::columnIndex(const std::string &name) const
{
    for (size_t i = 0; i < columns.size(); ++i)
        if (columns[i].name == name)
            return static_cast<int>(i);
    return -1;
}

TableSchema TableSchema::withoutGenerated() const
{
    TableSchema out = *this;
    out.columns.clear();
    out.primaryKey.clear();
    for (const auto &c : columns)
        if (!c.generated)
            out.columns.push_back(c);
    for (int k : primaryKey)
        out.primaryKey.push_back(out.columnIndex(columns[static_cast<size_t>(k)].name));
    return out;
}

} // namespace driftless::core
