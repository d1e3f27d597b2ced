#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace driftless::core::pgoutput {

/// One column of a TupleData: 'n' NULL, 'u' unchanged TOAST (no value sent), 't' text value.
struct Value {
    char kind = 'n';
    std::string_view text; ///< points into the message buffer; valid while it lives
};
using Tuple = std::vector<Value>;

struct Begin {
    std::int64_t finalLsn = 0;
    std::int64_t commitTime = 0; ///< PG epoch microseconds
    std::uint32_t xid = 0;
};
struct Commit {
    std::int64_t commitLsn = 0;
    std::int64_t endLsn = 0;
    std::int64_t commitTime = 0;
};
struct Origin {
    std::int64_t lsn = 0;
    std::string name;
};
struct RelationColumn {
    bool key = false;
    std::string name;
    std::uint32_t typeOid = 0;
    std::int32_t typmod = -1;
    bool operator==(const RelationColumn &) const = default;
};
struct Relation {
    std::uint32_t oid = 0;
    std::string schema;
    std::string name;
    char replicaIdentity = 'd';
    std::vector<RelationColumn> columns;
};
struct Type {
    std::uint32_t oid = 0;
    std::string schema;
    std::string name;
};
struct Insert {
    std::uint32_t relation = 0;
    Tuple newTuple;
};
struct Update {
    std::uint32_t relation = 0;
    char oldKind = 0; ///< 0 (no old tuple), 'K' (old key) or 'O' (old full row)
    Tuple oldTuple;
    Tuple newTuple;
};
struct Delete {
    std::uint32_t relation = 0;
    char oldKind = 'K';
    Tuple oldTuple;
};
struct Truncate {
    std::vector<std::uint32_t> relations;
    bool cascade = false;
    bool restartIdentity = false;
};
struct Message {
    bool transactional = false;
    std::int64_t lsn = 0;
    std::string prefix;
    std::string_view content;
};

using Decoded = std::variant<Begin, Commit, Origin, Relation, Type, Insert, Update, Delete, Truncate, Message>;

/// Decodes one pgoutput (protocol 1) message. Unknown or malformed messages throw Error: the
/// stream is never skipped over silently.
Decoded decode(std::string_view msg);

/// The XLogData ('w') and primary keepalive ('k') frames around pgoutput messages.
struct XLogData {
    std::int64_t walStart = 0;
    std::int64_t walEnd = 0;
    std::int64_t sendTime = 0;
    std::string_view payload;
};
struct Keepalive {
    std::int64_t walEnd = 0;
    std::int64_t sendTime = 0;
    bool replyRequested = false;
};
using Frame = std::variant<XLogData, Keepalive>;
Frame decodeFrame(std::string_view copyData);

} // namespace driftless::core::pgoutput
