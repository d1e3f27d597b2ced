#pragma once

#include "core/db/mysqlcatalog.h"
#include "core/model/tableschema.h"

#include <initializer_list>
#include <string>

namespace driftless::core::recon {

/// A MySQL/MariaDB column's canonical text as SQL (rowhash.h): `value` (NULL for NULL) and
/// `field`, the value as a field of a record text (quoted as ROW()::text does, never NULL).
/// `pgText`: as Postgres prints the value (see MysqlSide). Shared by the reconciler's MySQL side
/// and the add-column check on a MySQL source.
struct MysqlCanonical {
    std::string value;
    std::string field;
};
MysqlCanonical mysqlCanonical(const ColumnInfo &logical, const mysqlcatalog::MysqlColumn &physical, bool pgText);

bool isOneOf(const std::string &s, std::initializer_list<const char *> list);
/// CHAR, VARCHAR and the TEXT types.
bool isTextType(const mysqlcatalog::MysqlColumn &m);
/// `e` as text in one charset and a bytewise collation, so every piece of a record concatenates
/// alike (a latin1 or case-insensitive column converts; MD5 then hashes its UTF-8 bytes).
std::string utf8(const std::string &e);

} // namespace driftless::core::recon
