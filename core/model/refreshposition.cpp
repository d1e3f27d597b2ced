#include "core/model/refreshposition.h"

#include <nlohmann/json.hpp>

namespace driftless::core {

using json = nlohmann::json;

RefreshPosition RefreshPosition::fromJson(const std::string &position)
{
    RefreshPosition out;
    const json j = json::parse(position, nullptr, false);
    if (!j.is_object())
        return out;
    if (const auto it = j.find("snapshot_at"); it != j.end() && it->is_string())
        out.snapshotAt = it->get<std::string>();
    if (const auto it = j.find("snapshot_txids"); it != j.end() && it->is_string())
        out.snapshotTxids = it->get<std::string>();
    return out;
}

std::string RefreshPosition::mergedInto(const std::string &position) const
{
    json j = json::parse(position.empty() ? std::string("{}") : position, nullptr, false);
    if (!j.is_object())
        j = json::object();
    j["snapshot_at"] = snapshotAt;
    if (!snapshotTxids.empty())
        j["snapshot_txids"] = snapshotTxids;
    return j.dump();
}

} // namespace driftless::core
