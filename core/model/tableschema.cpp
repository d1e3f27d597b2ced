#include "core/model/tableschema.h"

namespace driftless::core {

int TableSchema::columnIndex(const std::string &name) const
{
    for (size_t i = 0; i < columns.size(); ++i)
        if (columns[i].name == name)
            return static_cast<int>(i);
    return -1;
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
