#include "core/mergers/merger.h"

#include "core/model/error.h"

#include <algorithm>
#include <set>
#include <string>

namespace driftless::core {

int startEpoch(Merger &merger)
{
    const std::int64_t highest = merger.highestVersion();
    if (highest <= 0)
        return merger.epoch();
    const int next = rowversion::epochOf(highest) + 1;
    if (next > rowversion::kMaxEpoch)
        throw Error(ErrorKind::Permanent,
                    merger.describeTarget() + " was re-seeded " + std::to_string(rowversion::kMaxEpoch) +
                        " times, the most its row versions can tell apart",
                    {},
                    "drop the target table (Driftless creates it again), then load it again: driftless-cli "
                    "resnapshot PIPELINE TABLE");
    merger.setEpoch(next);
    return next;
}

bool readsBackExactly(const ColumnInfo &c)
{
    static const char *kTypes[] = {"int2", "int4", "int8", "text", "varchar", "bpchar", "uuid"};
    if (c.isArray)
        return false;
    for (const char *t : kTypes)
        if (c.baseType == t)
            return true;
    return false;
}

void checkAdoptable(const std::string &table, const TableSchema &source, const std::vector<std::string> &columns,
                    const UniqueKeys &uniqueKeys, const std::function<std::string(const std::string &)> &quote,
                    const std::function<std::string(const std::string &)> &addKey)
{
    std::vector<std::string> differences;
    for (const auto &c : source.columns)
        if (std::find(columns.begin(), columns.end(), c.name) == columns.end())
            differences.push_back("no column " + c.name + " (the source's " + c.typeSql + ")");
    for (const auto &name : columns)
        if (source.columnIndex(name) < 0)
            differences.push_back("column " + name + " is not the source's");
    if (!differences.empty()) {
        std::string list;
        for (const auto &d : differences)
            list += (list.empty() ? "" : "; ") + d;
        throw SchemaError("target table " + table + " cannot be adopted: its columns are not the source's: " + list,
                          "make the target table's columns the source's (or map the source's columns to it with "
                          "columns:), or drop it and let the pipeline create and load it");
    }
    if (!source.hasPrimaryKey())
        return;
    std::set<std::string> key;
    std::string keyText, quoted;
    for (int k : source.primaryKey) {
        const std::string &name = source.columns[static_cast<size_t>(k)].name;
        key.insert(name);
        keyText += (keyText.empty() ? "" : ", ") + name;
        quoted += (quoted.empty() ? "" : ", ") + quote(name);
    }
    for (const auto &[index, cols] : uniqueKeys)
        if (std::set<std::string>(cols.begin(), cols.end()) == key)
            return;
    throw SchemaError("target table " + table + " cannot be adopted: it has no primary key or unique index on (" +
                          keyText + "), the source's key, which the merge matches rows on",
                      "run on the target: " + addKey(quoted));
}

} // namespace driftless::core
