#include "core/config/yamllocation.h"

#include <yaml-cpp/yaml.h>

namespace driftless::core {

int tableKeyLine(const std::string &path, size_t pipeline, size_t table, const std::string &key)
{
    try {
        YAML::Node root = YAML::LoadFile(path);
        YAML::Node t = root["pipelines"][pipeline]["tables"][table];
        YAML::Node n = t[key];
        if (n && !n.Mark().is_null())
            return n.Mark().line + 1;
        if (t && !t.Mark().is_null())
            return t.Mark().line + 1;
    } catch (const YAML::Exception &) {
    }
    return 0;
}

} // namespace driftless::core
