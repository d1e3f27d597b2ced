#include "core/engine/cdc/cdcoutcome.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace driftless::core {

bool stopsOnlyTheTable(const Error &e, EndpointKind target)
{
    if (e.isTransient() || dynamic_cast<const ConnectionError *>(&e) || dynamic_cast<const ConfigError *>(&e))
        return false;
    const std::string &code = e.code();
    if (code.empty())
        return true; // our own checks: a value or a shape of this table's
    if (code.size() == 5) {
        // A Postgres SQLSTATE (either side of a Postgres pipeline): data exceptions, integrity
        // constraints, undefined or forbidden objects, WITH CHECK OPTION. Not: 25 (transaction
        // state), 0A (not supported), 58 and XX (I/O, internal), 57 (shutdown), 53 (resources).
        const std::string cls = code.substr(0, 2);
        return cls == "22" || cls == "23" || cls == "42" || cls == "44";
    }
    if (!std::all_of(code.begin(), code.end(), [](unsigned char c) { return std::isdigit(c); }))
        return false;
    const int n = std::stoi(code);
    if (target == EndpointKind::Sqlite) {
        // The primary result code: a constraint, a type mismatch, a value too big, a statement
        // error (no such column) are the table's; read-only, corrupt, cannot open are the file's.
        const int primary = n & 0xff;
        return primary == 1 || primary == 18 || primary == 19 || primary == 20 || primary == 25;
    }
    if (target == EndpointKind::Mysql) {
        // Errors of the whole server or database: disk full, storage engine failure, read-only,
        // access to the database denied, unknown database, a privilege only an admin has.
        static const int kServerWide[] = {1021, 1030, 1036, 1044, 1045, 1049, 1053, 1227, 1290, 1792, 1836};
        return std::find(std::begin(kServerWide), std::end(kServerWide), n) == std::end(kServerWide);
    }
    return false;
}

void requireReseedWritten(const std::string &table, const std::string &pipeline, long long read, long long written)
{
    if (written >= read)
        return;
    throw Error(ErrorKind::Permanent,
                "the reload of " + table + " wrote " + std::to_string(written) + " of the " + std::to_string(read) +
                    " rows it read: the target holds newer row versions than the reload for the others (rows written "
                    "by another tool or another pipeline with the same target)",
                {},
                "find what else writes the target table and stop it, then load it again: driftless-cli resnapshot " +
                    pipeline + " " + table);
}

std::string stopMessage(const Error &e, const std::string &next)
{
    std::string why = e.describe();
    while (!why.empty() && (why.back() == '.' || why.back() == ' ' || why.back() == ';'))
        why.pop_back();
    return "stopped: " + why + "; " + next;
}

StopKind stopKindOf(const Error &e)
{
    return dynamic_cast<const SourceChangedError *>(&e) ? StopKind::SourceChanged : StopKind::Error;
}

TableState stoppedState(StopKind kind)
{
    return kind == StopKind::SourceChanged ? TableState::SourceChanged : TableState::Error;
}

} // namespace driftless::core
