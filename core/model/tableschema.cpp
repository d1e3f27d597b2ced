#include "core/model/tableschema.h"

#include "core/model/error.h"

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

void TableSchema::declareKey(const std::vector<std::string> &names)
{
    std::vector<int> key;
    std::string missing;
    for (const auto &n : names) {
        const int i = columnIndex(n);
        if (i < 0)
            missing += (missing.empty() ? "" : ", ") + n;
        key.push_back(i);
    }
    if (!missing.empty()) {
        std::string have;
        for (const auto &c : columns)
            have += (have.empty() ? "" : ", ") + c.name;
        throw SchemaError("the key declared for " + table.display() + " names column(s) " + missing +
                              " that the table does not have (it has " + have + ")",
                          "fix 'key:' of the table to name its columns");
    }
    primaryKey = std::move(key);
    keyIndex.clear();
    keyDeclared = true;
}

std::optional<std::string> keyProblemText(const TableSchema &schema, long long nullRows, long long sharedKeys)
{
    if (nullRows == 0 && sharedKeys == 0)
        return std::nullopt;
    std::string why;
    if (nullRows)
        why = std::to_string(nullRows) + " row(s) hold NULL in it";
    if (sharedKeys)
        why +=
            (why.empty() ? "" : ", and ") + std::to_string(sharedKeys) + " of its values are held by more than one row";
    return "the " + schema.keyDescription() + " of " + schema.table.display() +
           " does not key its rows on the source: " + why +
           "; declare columns whose values are unique and never NULL (key: [...]), or use strategy full_refresh";
}

std::string TableSchema::keyDescription() const
{
    std::string cols;
    for (int k : primaryKey)
        cols += (cols.empty() ? "" : ", ") + columns[static_cast<size_t>(k)].name;
    if (keyDeclared)
        return "declared key (" + cols + ")";
    if (keyIndex.empty())
        return "primary key (" + cols + ")";
    return "unique index " + keyIndex + " (" + cols + "), no primary key";
}

} // namespace driftless::core
