#pragma once

// The schema zoo's oracle, independent of the engine: per table, one canonical text per row built
// in SQL column by column from the source column's type category, then md5 over the rows in byte
// order. Postgres computes the md5 itself; SQLite has none, so its canonical rows are read in
// order and hashed with OpenSSL the same way (md5 of the rows joined by '\n').

#include "core/db/pgconnection.h"

#include <string>
#include <vector>

namespace driftless::zoo {

enum class Kind { Int, Numeric, Bool, Tstz, Ts, Date, Bytea, Json, Jsonb, Text };

struct OracleColumn {
    std::string name;
    Kind kind = Kind::Text;
};

/// The source table's columns (generated ones included), with the category that decides their
/// canonical form; domains are looked through, arrays/enums/composites/ranges are Text.
std::vector<OracleColumn> sourceColumns(core::PgConnection &src, const std::string &tableSql);

struct Digest {
    long long rows = 0;
    std::string md5;
    bool operator==(const Digest &) const = default;
};

/// Sets the session so that Postgres's text output is the one the engine ships (UTC, ISO).
void prepareSession(core::PgConnection &conn);

std::string pgRowExpr(const std::vector<OracleColumn> &cols);
std::string sqliteRowExpr(const std::vector<OracleColumn> &cols);

/// `from` is the FROM clause: `zoo.t`, `ONLY zoo.t`.
Digest pgDigest(core::PgConnection &conn, const std::vector<OracleColumn> &cols, const std::string &from);
Digest sqliteDigest(const std::string &file, const std::vector<OracleColumn> &cols, const std::string &table);

/// Every canonical row, in byte order, for the failure message.
std::vector<std::string> pgRows(core::PgConnection &conn, const std::vector<OracleColumn> &cols,
                                const std::string &from);
std::vector<std::string> sqliteRows(const std::string &file, const std::vector<OracleColumn> &cols,
                                    const std::string &table);

/// Rows only one side has (up to `limit` each way), shortened for a log.
std::string describeDifference(const std::vector<std::string> &source, const std::vector<std::string> &target,
                               int limit = 3);

} // namespace driftless::zoo
