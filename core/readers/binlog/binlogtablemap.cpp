#include "core/readers/binlog/binlogdecoder.h"

#include "core/readers/binlog/binlogvalues.h"
#include "core/readers/binlog/bytereader.h"

// TABLE_MAP: the column types, their per-type metadata and the optional metadata
// (binlog_row_metadata) that the row decoder needs.

namespace driftless::core::binlog {

namespace {

[[noreturn]] void malformedMap(const std::string &what)
{
    throw Error(ErrorKind::Permanent, "malformed binlog event: " + what, {},
                "the event stream is corrupt; re-read from the last checkpoint");
}

bool isCharacterColumn(const Column &c, bool mariadb)
{
    switch (c.type) {
    case coltype::String:
    case coltype::VarChar:
    case coltype::VarString:
    case coltype::Blob:
    case coltype::TinyBlob:
    case coltype::MediumBlob:
    case coltype::LongBlob:
        return true;
    case coltype::Geometry:
        return mariadb;
    default:
        return false;
    }
}
bool isNumericColumn(const Column &c)
{
    switch (c.type) {
    case coltype::Tiny:
    case coltype::Short:
    case coltype::Int24:
    case coltype::Long:
    case coltype::LongLong:
    case coltype::Float:
    case coltype::Double:
    case coltype::NewDecimal:
        return true;
    default:
        return false;
    }
}
bool isEnumOrSet(const Column &c)
{
    return c.type == coltype::Enum || c.type == coltype::Set;
}

/// Reads the per-type metadata of one TABLE_MAP column.
void readColumnMeta(ByteReader &m, Column &c)
{
    switch (c.type) {
    case coltype::Float:
    case coltype::Double:
    case coltype::Blob:
    case coltype::TinyBlob:
    case coltype::MediumBlob:
    case coltype::LongBlob:
    case coltype::Geometry:
    case coltype::Json:
        c.meta = m.u8("column metadata");
        c.maxLength = c.meta;
        break;
    case coltype::Timestamp2:
    case coltype::DateTime2:
    case coltype::Time2:
        c.meta = m.u8("column metadata");
        if (c.meta > 6)
            malformedMap("fractional second precision " + std::to_string(c.meta) + " in a table map");
        c.fsp = static_cast<std::uint8_t>(c.meta);
        break;
    case coltype::VarChar:
    case coltype::VarString:
        c.meta = static_cast<std::uint16_t>(m.le(2, "column metadata"));
        c.maxLength = c.meta;
        break;
    case coltype::NewDecimal: {
        c.precision = m.u8("column metadata");
        c.scale = m.u8("column metadata");
        c.meta = static_cast<std::uint16_t>(c.precision << 8 | c.scale);
        break;
    }
    case coltype::Bit: {
        const std::uint8_t rest = m.u8("column metadata");
        const std::uint8_t bytes = m.u8("column metadata");
        c.meta = static_cast<std::uint16_t>(bytes << 8 | rest);
        c.bits = static_cast<std::uint16_t>(bytes * 8 + rest);
        break;
    }
    case coltype::String:
    case coltype::Enum:
    case coltype::Set: {
        std::uint8_t b0 = m.u8("column metadata");
        const std::uint8_t b1 = m.u8("column metadata");
        c.meta = static_cast<std::uint16_t>(b0 << 8 | b1);
        std::uint32_t length = b1;
        if ((b0 & 0x30) != 0x30) {
            // CHAR longer than 255 bytes: the high length bits are folded into the type byte.
            length |= static_cast<std::uint32_t>((b0 & 0x30) ^ 0x30) << 4;
            b0 |= 0x30;
        }
        if (b0 == coltype::Enum || b0 == coltype::Set) {
            c.type = b0;
            c.packLength = b1;
        } else if (b0 == coltype::String) {
            c.maxLength = length;
        } else {
            malformedMap("STRING column with real type " + std::to_string(b0) + " in a table map");
        }
        break;
    }
    case coltype::Decimal:
    case coltype::Tiny:
    case coltype::Short:
    case coltype::Long:
    case coltype::Null:
    case coltype::Timestamp:
    case coltype::LongLong:
    case coltype::Int24:
    case coltype::Date:
    case coltype::Time:
    case coltype::DateTime:
    case coltype::Year:
    case coltype::NewDate:
        break;
    default:
        malformedMap("unknown column type " + std::to_string(c.type) + " in a table map");
    }
}

/// The optional metadata of a TABLE_MAP, an index's worth of columns at a time.
void readOptionalMetadata(ByteReader &r, TableMap &t, bool mariadb, const Decoder &decoder)
{
    std::vector<std::size_t> charCols, enumSetCols, setCols, enumCols, geoCols, numericCols;
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
        const Column &c = t.columns[i];
        if (isCharacterColumn(c, mariadb))
            charCols.push_back(i);
        if (isEnumOrSet(c))
            enumSetCols.push_back(i);
        if (c.type == coltype::Set)
            setCols.push_back(i);
        if (c.type == coltype::Enum)
            enumCols.push_back(i);
        if (c.type == coltype::Geometry)
            geoCols.push_back(i);
        if (isNumericColumn(c))
            numericCols.push_back(i);
    }
    auto defaultCharset = [&](ByteReader &v, const std::vector<std::size_t> &cols) {
        const std::uint64_t def = v.lenenc("default charset");
        for (std::size_t i : cols)
            t.columns[i].collation = static_cast<std::uint32_t>(def);
        while (!v.atEnd()) {
            const std::uint64_t index = v.lenenc("charset column index");
            const std::uint64_t collation = v.lenenc("charset collation");
            if (index >= cols.size())
                malformedMap("charset metadata names column " + std::to_string(index) + " of " +
                             std::to_string(cols.size()));
            t.columns[cols[index]].collation = static_cast<std::uint32_t>(collation);
        }
    };
    auto columnCharset = [&](ByteReader &v, const std::vector<std::size_t> &cols) {
        for (std::size_t i : cols)
            t.columns[i].collation = static_cast<std::uint32_t>(v.lenenc("column charset"));
    };
    auto labels = [&](ByteReader &v, const std::vector<std::size_t> &cols) {
        for (std::size_t i : cols) {
            const std::size_t n = v.count("ENUM/SET value count");
            std::vector<std::string> values;
            values.reserve(n);
            for (std::size_t k = 0; k < n; ++k)
                values.emplace_back(v.bytes(v.count("ENUM/SET value length"), "ENUM/SET value"));
            t.columns[i].labels = std::move(values);
        }
    };
    bool haveEnumSetCharset = false;
    while (!r.atEnd()) {
        const std::uint8_t type = r.u8("metadata type");
        const std::size_t length = r.count("metadata length");
        ByteReader v(r.bytes(length, "metadata value"), "table map metadata");
        switch (type) {
        case 1: { // SIGNEDNESS: one bit per numeric column, most significant bit first
            std::string_view bits = v.rest();
            if (bits.size() * 8 < numericCols.size())
                malformedMap("signedness metadata shorter than the numeric columns");
            for (std::size_t k = 0; k < numericCols.size(); ++k)
                t.columns[numericCols[k]].isUnsigned =
                    (static_cast<std::uint8_t>(bits[k / 8]) & (0x80 >> (k % 8))) != 0;
            t.hasSignedness = true;
            break;
        }
        case 2:
            defaultCharset(v, charCols);
            t.hasCharsets = true;
            break;
        case 3:
            columnCharset(v, charCols);
            t.hasCharsets = true;
            break;
        case 4:
            for (Column &c : t.columns)
                c.name.assign(v.bytes(v.count("column name length"), "column name"));
            t.hasNames = true;
            break;
        case 5:
            labels(v, setCols);
            break;
        case 6:
            labels(v, enumCols);
            break;
        case 7:
            for (std::size_t i : geoCols)
                t.columns[i].geometryType = static_cast<std::uint32_t>(v.lenenc("geometry type"));
            break;
        case 8:
            while (!v.atEnd()) {
                const std::uint64_t index = v.lenenc("primary key column");
                if (index >= t.columns.size())
                    malformedMap("primary key column " + std::to_string(index) + " of " +
                                 std::to_string(t.columns.size()));
                t.primaryKey.push_back(static_cast<unsigned>(index));
            }
            break;
        case 9:
            while (!v.atEnd()) {
                const std::uint64_t index = v.lenenc("primary key column");
                v.lenenc("primary key prefix");
                if (index >= t.columns.size())
                    malformedMap("primary key column " + std::to_string(index) + " of " +
                                 std::to_string(t.columns.size()));
                t.primaryKey.push_back(static_cast<unsigned>(index));
            }
            break;
        case 10:
            defaultCharset(v, enumSetCols);
            haveEnumSetCharset = true;
            break;
        case 11:
            columnCharset(v, enumSetCols);
            haveEnumSetCharset = true;
            break;
        default:
            break; // COLUMN_VISIBILITY and later additions
        }
    }
    // ENUM/SET labels are in the column's character set; the contract's text is UTF-8.
    if (haveEnumSetCharset)
        for (std::size_t i : enumSetCols) {
            Column &c = t.columns[i];
            if (detail::classifyCharset(decoder.charsetOf(c.collation)) == detail::Charset::Latin1)
                for (std::string &label : c.labels)
                    label = detail::latin1ToUtf8(label);
        }
}

} // namespace

std::string TableMap::qualifiedName() const
{
    return "`" + schema + "`.`" + table + "`";
}

std::string Column::typeName() const
{
    auto withArg = [](const char *name, unsigned v) { return std::string(name) + "(" + std::to_string(v) + ")"; };
    switch (type) {
    case coltype::Tiny:
        return isUnsigned ? "TINYINT UNSIGNED" : "TINYINT";
    case coltype::Short:
        return isUnsigned ? "SMALLINT UNSIGNED" : "SMALLINT";
    case coltype::Int24:
        return isUnsigned ? "MEDIUMINT UNSIGNED" : "MEDIUMINT";
    case coltype::Long:
        return isUnsigned ? "INT UNSIGNED" : "INT";
    case coltype::LongLong:
        return isUnsigned ? "BIGINT UNSIGNED" : "BIGINT";
    case coltype::Float:
        return "FLOAT";
    case coltype::Double:
        return "DOUBLE";
    case coltype::NewDecimal:
        return "DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
    case coltype::Year:
        return "YEAR";
    case coltype::Date:
    case coltype::NewDate:
        return "DATE";
    case coltype::DateTime:
        return "DATETIME";
    case coltype::DateTime2:
        return withArg("DATETIME", fsp);
    case coltype::Timestamp:
        return "TIMESTAMP";
    case coltype::Timestamp2:
        return withArg("TIMESTAMP", fsp);
    case coltype::Time:
        return "TIME";
    case coltype::Time2:
        return withArg("TIME", fsp);
    case coltype::Bit:
        return withArg("BIT", bits);
    case coltype::Enum:
        return "ENUM";
    case coltype::Set:
        return "SET";
    case coltype::String:
        return "CHAR(" + std::to_string(maxLength) + " bytes)";
    case coltype::VarChar:
    case coltype::VarString:
        return "VARCHAR(" + std::to_string(maxLength) + " bytes)";
    case coltype::Blob:
    case coltype::TinyBlob:
    case coltype::MediumBlob:
    case coltype::LongBlob:
        return "BLOB/TEXT";
    case coltype::Geometry:
        return "GEOMETRY";
    case coltype::Json:
        return "JSON";
    default:
        return "type " + std::to_string(type);
    }
}

TableMap Decoder::decodeTableMap(std::string_view body) const
{
    ByteReader r(body, "TABLE_MAP");
    TableMap t;
    const std::size_t ph = postHeaderLength(event::TableMap, 8);
    if (ph != 6 && ph < 8)
        malformedMap("TABLE_MAP post-header of " + std::to_string(ph) + " bytes");
    t.tableId = r.le(ph == 6 ? 4 : 6, "table id");
    r.skip(ph == 6 ? 2 : ph - 6, "TABLE_MAP flags");
    t.schema.assign(r.bytes(r.u8("schema length"), "schema name"));
    r.skip(1, "schema terminator");
    t.table.assign(r.bytes(r.u8("table length"), "table name"));
    r.skip(1, "table terminator");
    const std::size_t n = r.count("column count");
    std::string_view types = r.bytes(n, "column types");
    t.columns.resize(n);
    for (std::size_t i = 0; i < n; ++i)
        t.columns[i].type = static_cast<std::uint8_t>(types[i]);
    ByteReader m(r.bytes(r.count("metadata length"), "column metadata"), "TABLE_MAP column metadata");
    for (Column &c : t.columns)
        readColumnMeta(m, c);
    if (!m.atEnd())
        malformedMap("TABLE_MAP of " + t.qualifiedName() + " has " + std::to_string(m.remaining()) +
                     " metadata bytes its columns do not use");
    std::string_view nulls = r.bytes((n + 7) / 8, "nullability bitmap");
    for (std::size_t i = 0; i < n; ++i)
        t.columns[i].nullable = (static_cast<std::uint8_t>(nulls[i / 8]) >> (i % 8)) & 1;
    readOptionalMetadata(r, t, m_mariadb, *this);
    return t;
}

} // namespace driftless::core::binlog
