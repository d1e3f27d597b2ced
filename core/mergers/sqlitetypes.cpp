#include "core/mergers/sqlitetypes.h"

#include "core/base/copytext.h"
#include "core/db/sqlitedb.h"
#include "core/model/error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace driftless::core {

SqliteStorage sqliteStorageFor(const ColumnInfo &c)
{
    if (c.isArray)
        return SqliteStorage::Text;
    const std::string &t = c.baseType;
    if (t == "int2" || t == "int4" || t == "int8" || t == "oid" || t == "xid" || t == "cid")
        return SqliteStorage::Integer;
    if (t == "bool")
        return SqliteStorage::Boolean;
    if (t == "float8")
        return SqliteStorage::Real;
    if (t == "float4")
        return SqliteStorage::Real4;
    if (t == "bytea")
        return SqliteStorage::Blob;
    if (t == "timestamptz")
        return SqliteStorage::TimestampTz;
    return SqliteStorage::Text;
}

std::string_view sqliteDeclaredType(SqliteStorage s)
{
    switch (s) {
    case SqliteStorage::Integer:
    case SqliteStorage::Boolean:
        return "INTEGER";
    case SqliteStorage::Real:
    case SqliteStorage::Real4:
        return "REAL";
    case SqliteStorage::Blob:
        return "BLOB";
    case SqliteStorage::TimestampTz:
    case SqliteStorage::Text:
        return "TEXT";
    }
    return "TEXT";
}

void bindCopyField(SqliteStmt &stmt, int index, std::string_view raw, SqliteStorage storage, std::string &scratch)
{
    if (copytext::isNull(raw)) {
        stmt.bindNull(index);
        return;
    }
    std::string_view v = raw;
    // A plain field's bytes are the value and live in the batch until the row is stepped, so
    // SQLite may use them in place; an unescaped copy lives in `scratch` and must be copied.
    bool stable = true;
    if (!copytext::isPlain(raw)) {
        scratch.clear();
        copytext::unescape(raw, scratch);
        v = scratch;
        stable = false;
    }
    bindStoredValue(stmt, index, v, storage, stable);
}

void bindStoredValue(SqliteStmt &stmt, int index, std::string_view v, SqliteStorage storage, bool stable)
{
    switch (storage) {
    case SqliteStorage::Integer: {
        std::int64_t n = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (ec != std::errc() || p != v.data() + v.size())
            throw Error(ErrorKind::Permanent, "integer value does not parse: " + std::string(v.substr(0, 40)));
        stmt.bind(index, n);
        return;
    }
    case SqliteStorage::Boolean:
        stmt.bind(index, static_cast<std::int64_t>(v == "t" ? 1 : 0));
        return;
    case SqliteStorage::Real:
    case SqliteStorage::Real4: {
        char tmp[128];
        const size_t len = std::min(v.size(), sizeof tmp - 1);
        std::memcpy(tmp, v.data(), len);
        tmp[len] = '\0';
        // Postgres prints the shortest text that round-trips in the column's own precision, so
        // a real must be parsed as a float to get its exact value back.
        double d = storage == SqliteStorage::Real4 ? static_cast<double>(std::strtof(tmp, nullptr))
                                                   : std::strtod(tmp, nullptr);
        if (std::isnan(d))
            stmt.bindText(index, "NaN");
        else
            stmt.bind(index, d);
        return;
    }
    case SqliteStorage::Blob: {
        // bytea in hex output: \x0102...
        if (v.size() >= 2 && v[0] == '\\' && v[1] == 'x') {
            std::string bytes;
            bytes.resize((v.size() - 2) / 2);
            for (size_t i = 0; i < bytes.size(); ++i)
                bytes[i] = static_cast<char>(copytext::hexValue(v[2 + 2 * i]) * 16 + copytext::hexValue(v[3 + 2 * i]));
            stmt.bindBlob(index, bytes);
        } else {
            stmt.bindBlob(index, v, stable);
        }
        return;
    }
    case SqliteStorage::TimestampTz:
        // With TimeZone=UTC Postgres prints "+00"; SQLite's date functions want "+00:00".
        if (v.size() > 3 && v.size() < 60 && v.substr(v.size() - 3) == "+00") {
            char buf[64];
            std::memcpy(buf, v.data(), v.size());
            std::memcpy(buf + v.size(), ":00", 3);
            stmt.bindText(index, std::string_view(buf, v.size() + 3)); // copied: buf dies here
        } else {
            stmt.bindText(index, v, stable);
        }
        return;
    case SqliteStorage::Text:
        stmt.bindText(index, v, stable);
        return;
    }
}

std::string sqliteLiteral(std::string_view v, SqliteStorage storage)
{
    const auto quoted = [](std::string_view text) {
        std::string q = "'";
        for (char c : text)
            q += c == '\'' ? std::string("''") : std::string(1, c);
        return q + "'";
    };
    switch (storage) {
    case SqliteStorage::Integer: {
        std::int64_t n = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (ec != std::errc() || p != v.data() + v.size())
            throw Error(ErrorKind::Permanent, "integer value does not parse: " + std::string(v.substr(0, 40)));
        return std::to_string(n);
    }
    case SqliteStorage::Boolean:
        return v == "t" ? "1" : "0";
    case SqliteStorage::Real:
    case SqliteStorage::Real4: {
        const std::string text(v.substr(0, 127));
        const double d = storage == SqliteStorage::Real4 ? static_cast<double>(std::strtof(text.c_str(), nullptr))
                                                         : std::strtod(text.c_str(), nullptr);
        if (std::isnan(d))
            return "'NaN'";
        if (std::isinf(d))
            return d > 0 ? "9e999" : "-9e999";
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", d);
        std::string out = buf;
        // A whole number would read back as an INTEGER: keep it REAL.
        if (out.find_first_of(".eE") == std::string::npos)
            out += ".0";
        return out;
    }
    case SqliteStorage::Blob: {
        std::string out = "X'";
        if (v.size() >= 2 && v[0] == '\\' && v[1] == 'x')
            out.append(v.substr(2));
        else
            copytext::appendHex(v, out);
        return out + "'";
    }
    case SqliteStorage::TimestampTz:
        if (v.size() > 3 && v.substr(v.size() - 3) == "+00")
            return quoted(std::string(v) + ":00");
        return quoted(v);
    case SqliteStorage::Text:
        return quoted(v);
    }
    return quoted(v);
}

} // namespace driftless::core
