#include "core/model/tableschema.h"

#include <algorithm>

namespace driftless::core {

int TableSchema::columnIndex(const std::string &name) const
{
    for (size_t i = 0; i < columns.size(); ++i)
        if (columns[i].name == name)
            return static_cast<int>(i);
    return -1;
}

TableSchema TableSchema::without(const std::vector<std::string> &names) const
{
    TableSchema next = *this;
    next.columns.clear();
    for (const auto &c : columns)
        if (std::find(names.begin(), names.end(), c.name) == names.end())
            next.columns.push_back(c);
    next.primaryKey.clear();
    for (int k : primaryKey)
        if (int i = next.columnIndex(columns[static_cast<size_t>(k)].name); i >= 0)
            next.primaryKey.push_back(i);
    return next;
}

std::string TableSchema::keyDescription() const
{
    std::string cols;
    for (int k : primaryKey)
        cols += (cols.empty() ? "" : ", ") + columns[static_cast<size_t>(k)].name;
    if (keyIndex.empty())
        return "primary key (" + cols + ")";
    return "unique index " + keyIndex + " (" + cols + "), no primary key";
}

} // namespace driftless::core
