#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace driftless::core::copytext {

/// Postgres COPY text format helpers. A row is fields separated by TAB, ended by a newline; NULL
/// is `\N`; backslash escapes (\\ \t \n \r \b \f \v \NNN \xHH) stand for the bytes inside a field.

inline constexpr std::string_view kNull = "\\N";

/// Splits one row (with or without its newline) into its raw, still-escaped fields.
/// Raw TAB bytes never occur inside a field: COPY writes them as \t.
void split(std::string_view row, std::vector<std::string_view> &fields);

/// The raw fields at `indexes` (a key's columns) of one row, as one string that two rows share
/// exactly when those fields are equal: for matching rows by key. `fields` is scratch space.
std::string fieldsKey(std::string_view row, const std::vector<int> &indexes, std::vector<std::string_view> &fields);

/// True when the raw field is the NULL marker.
inline bool isNull(std::string_view raw)
{
    return raw == kNull;
}

/// Appends the unescaped bytes of a raw field to `out`.
void unescape(std::string_view raw, std::string &out);
/// True if the raw field contains no backslash, so its bytes are the value itself.
inline bool isPlain(std::string_view raw)
{
    return raw.find('\\') == std::string_view::npos;
}

/// The value of a hex digit, or -1.
int hexValue(char c);

/// Appends the bytes as lower-case hex digits (two per byte).
void appendHex(std::string_view bytes, std::string &out);

/// Appends `bytes` as a bytea field in COPY text: `\\x` then the hex digits.
void appendBytea(std::string_view bytes, std::string &out);

/// Appends `value` escaped for COPY text input.
void escape(std::string_view value, std::string &out);

/// One row of COPY text from its values (nullopt: NULL), without the newline.
std::string line(const std::vector<std::optional<std::string>> &values);

} // namespace driftless::core::copytext
