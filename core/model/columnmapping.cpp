#include "core/model/columnmapping.h"

#include <nlohmann/json.hpp>

namespace driftless::core {

namespace {
const char *kindName(ColumnMask::Kind k)
{
    switch (k) {
    case ColumnMask::Kind::Null:
        return "null";
    case ColumnMask::Kind::Truncate:
        return "truncate";
    case ColumnMask::Kind::KeepLast:
        return "keep_last";
    case ColumnMask::Kind::Hash:
        return "hash";
    }
    return "null";
}
} // namespace

MappingSpot ColumnMapping::spot(const std::string &entry) const
{
    auto it = spots.find(entry);
    return it == spots.end() ? MappingSpot{} : it->second;
}

nlohmann::json columnMappingJson(const ColumnMapping &m)
{
    nlohmann::json j = nlohmann::json::object();
    if (!m.exclude.empty())
        j["exclude"] = m.exclude;
    if (m.hasInclude)
        j["include"] = m.include;
    if (!m.rename.empty()) {
        auto r = nlohmann::json::array();
        for (const auto &[from, to] : m.rename)
            r.push_back({from, to});
        j["rename"] = r;
    }
    if (!m.mask.empty()) {
        auto r = nlohmann::json::array();
        for (const auto &[col, k] : m.mask)
            r.push_back({{"column", col}, {"kind", kindName(k.kind)}, {"count", k.count}, {"key", k.key}});
        j["mask"] = r;
    }
    auto spots = nlohmann::json::object();
    for (const auto &[entry, s] : m.spots)
        spots[entry] = {s.file, s.line, s.field};
    j["spots"] = spots;
    return j;
}

ColumnMapping columnMappingFromJson(const nlohmann::json &j)
{
    ColumnMapping m;
    if (j.contains("exclude"))
        m.exclude = j["exclude"].get<std::vector<std::string>>();
    if (j.contains("include")) {
        m.include = j["include"].get<std::vector<std::string>>();
        m.hasInclude = true;
    }
    if (j.contains("rename"))
        for (const auto &r : j["rename"])
            m.rename.emplace_back(r.at(0).get<std::string>(), r.at(1).get<std::string>());
    if (j.contains("mask"))
        for (const auto &r : j["mask"]) {
            ColumnMask k;
            const auto kind = r.value("kind", "null");
            k.kind = kind == "truncate"    ? ColumnMask::Kind::Truncate
                     : kind == "keep_last" ? ColumnMask::Kind::KeepLast
                     : kind == "hash"      ? ColumnMask::Kind::Hash
                                           : ColumnMask::Kind::Null;
            k.count = r.value("count", 0);
            k.key = r.value("key", "");
            m.mask.emplace_back(r.value("column", ""), k);
        }
    if (j.contains("spots"))
        for (const auto &[entry, s] : j["spots"].items())
            m.spots[entry] = {s.at(0).get<std::string>(), s.at(1).get<int>(), s.at(2).get<std::string>()};
    return m;
}

} // namespace driftless::core
