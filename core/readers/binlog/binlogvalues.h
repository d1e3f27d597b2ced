#pragma once

#include "core/readers/binlog/binlogdecoder.h"
#include "core/readers/binlog/bytereader.h"

#include <string>
#include <string_view>

/// Internal to the binlog decoder: turning one column's binlog bytes into the value text of
/// docs/type-mapping.md ("MySQL / MariaDB → Postgres").
namespace driftless::core::binlog::detail {

/// How a character column's bytes become text.
enum class Charset : std::uint8_t {
    Unknown,     ///< the event did not say, or an id we do not know
    Utf8,        ///< utf8mb4, utf8mb3, ascii: the bytes are already UTF-8
    Latin1,      ///< MySQL's latin1 (cp1252): converted to UTF-8
    Binary,      ///< bytes, passed as they are
    Unsupported, ///< any other character set: refused
};
Charset classifyCharset(std::string_view charsetName);
/// The character set name of the collation ids every MariaDB and MySQL server has.
std::string builtinCharsetOf(std::uint32_t collation);

/// MySQL's latin1 (Windows-1252 with 0x81, 0x8D, 0x8F, 0x90, 0x9D kept as C1 controls) to UTF-8.
std::string latin1ToUtf8(std::string_view bytes);

/// Where a value is being decoded, for error messages.
struct ColumnContext {
    const TableMap &table;
    std::size_t index;
    Charset charset;
    std::string_view charsetName;
};

/// Decodes the value of one present, non-NULL column at the reader's position into `out`
/// (kind Text, or Invalid for zero dates). Throws Error for malformed bytes and SchemaError for
/// types or character sets the contract refuses.
void decodeValue(ByteReader &reader, const ColumnContext &context, Value &out);

/// " column `name` (#i, TYPE) of `db`.`t`" for messages.
std::string describeColumn(const TableMap &table, std::size_t index);

} // namespace driftless::core::binlog::detail
