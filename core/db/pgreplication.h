#pragma once

#include "core/db/pgconnection.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace driftless::core {

/// Postgres timestamps on the wire: microseconds since 2000-01-01 00:00:00 UTC.
constexpr std::int64_t kPgEpochUnixMicros = 946'684'800LL * 1'000'000LL;
std::int64_t nowPgMicros();

/// A walsender connection (`replication=database`): replication commands plus simple-protocol
/// SQL, and the CopyBoth stream of START_REPLICATION.
///
/// Thread affinity: one thread. Failure: Error (transient for a lost connection or a server
/// shutting down; permanent for a missing or invalidated slot, missing privilege).
class PgReplicationConnection {
public:
    explicit PgReplicationConnection(const std::string &dsn, const std::string &applicationName);

    struct SystemId {
        std::string systemId;
        int timeline = 0;
        std::int64_t xlogPos = 0;
        std::string dbName;
    };
    SystemId identifySystem();
    /// TIMELINE_HISTORY: for each earlier timeline in the history of timeline `timeline`, the
    /// LSN where it ended (where `timeline`'s history branched from it). Empty for timeline 1.
    std::map<int, std::int64_t> timelineHistory(int timeline);

    struct Slot {
        std::string name;
        std::int64_t consistentPoint = 0;
        std::string snapshotName; ///< set when the snapshot was exported
    };
    /// CREATE_REPLICATION_SLOT name [TEMPORARY] LOGICAL pgoutput (SNAPSHOT 'export'|'nothing').
    /// The exported snapshot stays importable until this connection runs its next command.
    Slot createSlot(const std::string &name, bool temporary, bool exportSnapshot);
    void dropSlot(const std::string &name);

    /// START_REPLICATION SLOT name LOGICAL lsn (proto_version '1', publication_names, messages).
    void startReplication(const std::string &slot, std::int64_t startLsn, const std::string &publication);

    /// The next CopyData message of the stream, waiting at most `timeout`; nullopt on timeout.
    /// Throws when the server ends the stream (the error it sent) or the connection drops.
    std::optional<std::string> next(std::chrono::milliseconds timeout);

    /// Standby status update: write and flush positions; flush is what frees WAL on the server,
    /// so it must never be ahead of what the target has durably committed.
    void sendStatus(std::int64_t write, std::int64_t flush, bool requestReply = false);

    PgConnection &connection() { return m_conn; }

private:
    PgConnection m_conn;
    /// The last call returned a message: the stream is flowing (see next()).
    bool m_flowing = false;
};

/// Validates a replication slot or publication name: [a-z0-9_]{1,63}.
bool isValidSlotName(std::string_view name);

} // namespace driftless::core
