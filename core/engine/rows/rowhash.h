#pragma once

#include "core/model/tableschema.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;

namespace driftless::core::rowhash {

/// One canonical text per value, so equal data hashes equal on every engine.
///
/// The canonical text of a value is what Postgres prints for it in a Driftless session (DateStyle
/// ISO, TimeZone UTC, bytea as hex, booleans t/f), with two normalisations: numerics lose
/// trailing fractional zeros (1.50 and 1.5 are one value), and floats are their 8 IEEE bytes in
/// hex (`\x3ff8000000000000`), with -0 as 0. A row's text is the values in the record form
/// Postgres prints for ROW(...)::text: NULL as nothing, a value quoted when it is empty or holds
/// `"` `\` `(` `)` `,` or white space, with `"` and `\` doubled inside quotes; so NULL, '' and
/// '""' all differ. A row hashes to the first 60 bits of the MD5 of that text; a range of rows to
/// (count, sum of the row hashes), summed exactly.
///
/// Postgres computes all of it in SQL (pgCanonical / pgRowHash); SQLite through the functions
/// registerSqliteFunctions adds, from the values Driftless stores there (sqlitetypes.h).

/// How a column's canonical text is formed.
enum class Canon : char {
    Text = 'T',        ///< the text as stored
    Numeric = 'N',     ///< decimal text, trailing fractional zeros dropped
    Float = 'F',       ///< IEEE double bytes
    Integer = 'I',     ///< SQLite integer (PG int2/4/8, oid)
    Boolean = 'B',     ///< SQLite 0/1, PG t/f
    Bytes = 'X',       ///< SQLite blob, PG bytea
    TimestampTz = 'Z', ///< SQLite "...+00:00", PG "...+00"
};

Canon canonFor(const ColumnInfo &c);
/// One code per column, the spec string the SQLite functions take.
std::string canonSpec(const std::vector<ColumnInfo> &columns);

/// The Postgres expression whose text output is the canonical text of column `quotedColumn`.
std::string pgCanonical(const ColumnInfo &c, const std::string &quotedColumn);
/// The same as text, exactly as the value prints (char(n) keeps its padding).
std::string pgCanonicalText(const ColumnInfo &c, const std::string &quotedColumn);
/// The Postgres expression of a row's 60-bit hash over `columns`, qualified by `alias`.
std::string pgRowHash(const std::vector<ColumnInfo> &columns, const std::string &alias);
/// The same over Postgres' own 64-bit text hash (hashtextextended, cut to 60 bits): several times
/// cheaper than MD5, for comparing two Postgres servers that hash a probe the same way.
std::string pgRowHashNative(const std::vector<ColumnInfo> &columns, const std::string &alias);
/// Whether a column of this Postgres type is hashed by its own hash function in
/// pgRowHashRecord (equal values, equal hashes, exactly when their canonical texts are equal).
bool pgHashesNatively(const ColumnInfo &c);
/// The 60-bit hash of a row by hash_record_extended (Postgres 14+), each column hashed by its
/// type's own function where `native` says so (both sides of a comparison hold that type) and as
/// its canonical text otherwise: no text output per value, about three times cheaper per row than
/// pgRowHashNative. Only for two Postgres servers that agree on pgRecordHashProbeSql().
std::string pgRowHashRecord(const std::vector<ColumnInfo> &columns, const std::vector<bool> &native,
                            const std::string &alias);
/// For pgRowHashRecord: which of `columns` hash by their type's own function, those `other` (the
/// other side's columns, matched by name) holds with the same built-in type pgHashesNatively takes.
std::vector<bool> pgRecordHashMask(const std::vector<ColumnInfo> &columns, const std::vector<ColumnInfo> &other);
/// A query hashing one value of every natively hashed type; two servers whose answers agree hash
/// rows alike (same build of the hash functions, same byte order).
std::string pgRecordHashProbeSql();
/// The Postgres expression of the record text of `columns` (the row key's canonical form).
std::string pgRecordText(const std::vector<ColumnInfo> &columns, const std::string &alias);

/// Appends one value to a record text under construction (`first`: no comma before it).
void appendRecordField(std::string &record, const std::optional<std::string> &value, bool first);
/// The record text of canonical values.
std::string recordText(const std::vector<std::optional<std::string>> &values);
/// The 60-bit hash of a record text.
std::int64_t hashRecord(std::string_view record);

/// Canonical text of a numeric's decimal text: `1.500` -> `1.5`, `2.000` -> `2`.
std::string trimNumeric(std::string_view text);
/// Canonical text of a double: `\x` and its 16 hex digits, big-endian; -0 as 0.
std::string floatBytes(double d);

/// A sum of row hashes: exact (a 128-bit integer is plenty for 2^60 * 2^63 rows).
struct Checksum {
    long long rows = 0;
    unsigned long long sumHigh = 0;
    unsigned long long sumLow = 0;
    void add(std::int64_t hash);
    /// From the decimal text of a sum (Postgres numeric).
    static Checksum fromDecimal(long long rows, std::string_view sum);
    std::string sumDecimal() const;
    bool operator==(const Checksum &) const = default;
};

/// Registers on an SQLite connection:
///  - driftless_canon(code, value): the canonical text of one stored value (code: a Canon char)
///  - driftless_rowhash(spec, v1, ..., vn): the 60-bit hash of a row's canonical record
///  - driftless_record(spec, v1, ..., vn): the canonical record text (for keys)
///  - driftless_hashsum(h): an aggregate, the exact sum of hashes as decimal text
void registerSqliteFunctions(sqlite3 *db);

/// Canonical text of a stored SQLite value given as text/integer/real/blob, for tests and for
/// converting keys: what driftless_canon computes.
std::string canonicalFromSqliteText(Canon canon, std::string_view text);

} // namespace driftless::core::rowhash
