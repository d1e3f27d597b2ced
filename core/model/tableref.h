#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace driftless::core {

/// A schema-qualified table name, stored exactly (no case folding after parsing).
struct TableRef {
    std::string schema;
    std::string name;

    /// Parses `schema.table` with Postgres rules: unquoted parts fold to lower case, double-quoted
    /// parts are kept exactly ("" is a quote). A missing schema becomes `defaultSchema`.
    /// Throws std::invalid_argument with the reason on malformed input.
    static TableRef parse(std::string_view text, std::string_view defaultSchema = "public");

    /// `schema.name`, quoting only the parts that need it (as Postgres prints them).
    std::string display() const;
    /// Always quoted, for SQL: "schema"."name".
    std::string quoted() const;

    auto operator<=>(const TableRef &) const = default;
};

/// A MySQL/MariaDB table name as written: `db.table` or `table`, each part bare, in backticks or
/// in double quotes (a doubled quote is one), case kept (MySQL names are case-sensitive on
/// Linux). A bare name gets `defaultSchema`. nullopt when malformed.
std::optional<TableRef> parseMysqlTable(std::string_view text, const std::string &defaultSchema);

/// Quotes an identifier for SQL (Postgres, SQLite and MySQL in ANSI_QUOTES mode): wraps it in
/// double quotes and doubles embedded quotes. Throws std::invalid_argument on NUL bytes or an
/// empty name.
std::string quoteIdent(std::string_view ident);

/// A Postgres expression printing `expr` as its type's output function does (what pgoutput and
/// COPY send), NULL kept: `CASE WHEN e IS NULL THEN NULL ELSE concat(e) END`. A cast to text is
/// not that for every type: `true::text` is `true` where the output is `t`, a char(n)'s cast drops
/// its padding, an inet's cast always adds the netmask (`10.0.0.1/32`).
std::string pgOutputText(const std::string &expr);

/// Appends `value` to `out` as one quoted element of a Postgres array literal (`"a\"b"`), for
/// keys sent as one text[] parameter (`{"1","2"}`).
void appendPgArrayElement(std::string_view value, std::string &out);

/// Quotes only when the identifier is not a plain lower-case name (for display).
std::string displayIdent(std::string_view ident);

/// Quotes an identifier with backticks (embedded backticks doubled), for MySQL/MariaDB.
std::string mysqlIdent(std::string_view name);

/// Column names written as one list separated by commas (`id, region`), as `compare --key` and
/// `--columns` and the app's Compare dialog take them: each name kept as written, the spaces
/// around it dropped; empty text is no column. Throws std::invalid_argument for an empty name
/// (`id,,region`, a comma at either end).
std::vector<std::string> splitColumnList(std::string_view text);

} // namespace driftless::core
