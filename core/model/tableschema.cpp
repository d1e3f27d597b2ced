#include "core/model/tableschema.h"

namespace driftless::core {

int TableSchema::columnIndex(const std::string &name) const
{
    for (size_t i = 0; i < columns.size(); ++i)
        if (columns[i].name == name)
            return static_cast<int>(i);
    return -1;
}

} // namespace driftless::core
