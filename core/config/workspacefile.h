#pragma once

#include "core/model/workspace.h"

#include <string>

namespace driftless::core {

/// Reads and writes workspace YAML files (the `endpoints:` / `pipelines:` form of the README).
///
/// Loading validates everything that can be checked without a server: structure, unknown keys,
/// names, strategies, durations, references between pipelines and endpoints, DSNs (which must not
/// hold passwords), and target-name clashes. The first problem is thrown as a ConfigError naming
/// the file, the line and the field. Relative SQLite paths are resolved against the file's folder.
class WorkspaceFile {
public:
    static Workspace load(const std::string &path);
    /// Parses YAML text; `displayName` is used in messages and `baseDir` resolves relative paths.
    static Workspace parse(const std::string &yaml, const std::string &displayName, const std::string &baseDir);
    /// Emits the workspace as YAML that load() reads back to an equal Workspace.
    static std::string toYaml(const Workspace &ws);
    /// Checks rules that span the whole workspace (references, clashes). parse() calls it.
    static void validate(const Workspace &ws, const std::string &displayName = {});
};

/// Pipeline names become part of slot and publication names (`driftless_<name>`), which Postgres
/// limits to [a-z0-9_]{1,63}.
bool isValidPipelineName(const std::string &name);

} // namespace driftless::core
