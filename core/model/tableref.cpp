#include "core/model/tableref.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace driftless::core {

namespace {

std::vector<std::string> splitQualified(std::string_view text)
{
    std::vector<std::string> parts;
    std::string cur;
    size_t i = 0;
    bool partStarted = false;
    auto isSpace = [](char c) { return c == ' ' || c == '\t'; };
    while (i < text.size() && isSpace(text[i]))
        ++i;
    while (i < text.size()) {
        char c = text[i];
        if (c == '"') {
            if (partStarted)
                throw std::invalid_argument("unexpected quote inside a name");
            ++i;
            bool closed = false;
            while (i < text.size()) {
                if (text[i] == '"') {
                    if (i + 1 < text.size() && text[i + 1] == '"') {
                        cur += '"';
                        i += 2;
                        continue;
                    }
                    closed = true;
                    ++i;
                    break;
                }
                cur += text[i++];
            }
            if (!closed)
                throw std::invalid_argument("unterminated quoted name");
            if (cur.empty())
                throw std::invalid_argument("empty quoted name");
            partStarted = true;
            while (i < text.size() && isSpace(text[i]))
                ++i;
            if (i < text.size() && text[i] != '.')
                throw std::invalid_argument("unexpected text after a quoted name");
        } else if (c == '.') {
            if (!partStarted)
                throw std::invalid_argument("empty name part");
            parts.push_back(cur);
            cur.clear();
            partStarted = false;
            ++i;
            while (i < text.size() && isSpace(text[i]))
                ++i;
        } else if (isSpace(c)) {
            while (i < text.size() && isSpace(text[i]))
                ++i;
            if (i < text.size() && text[i] != '.')
                throw std::invalid_argument("spaces in an unquoted name; put the name in double quotes");
        } else {
            unsigned char u = static_cast<unsigned char>(c);
            bool ok = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '_' ||
                      u == '$' || u >= 0x80;
            if (!ok)
                throw std::invalid_argument(std::string("character '") + c + "' needs the name in double quotes");
            if (!partStarted && u >= '0' && u <= '9')
                throw std::invalid_argument("an unquoted name cannot start with a digit");
            cur += (u >= 'A' && u <= 'Z') ? static_cast<char>(u - 'A' + 'a') : c;
            partStarted = true;
            ++i;
        }
    }
    if (!partStarted)
        throw std::invalid_argument(parts.empty() ? "empty table name" : "empty name part");
    parts.push_back(cur);
    return parts;
}

bool isPlain(std::string_view s)
{
    if (s.empty())
        return false;
    if (s[0] >= '0' && s[0] <= '9')
        return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    return true;
}

} // namespace

TableRef TableRef::parse(std::string_view text, std::string_view defaultSchema)
{
    auto parts = splitQualified(text);
    if (parts.size() == 1)
        return {std::string(defaultSchema), parts[0]};
    if (parts.size() == 2)
        return {parts[0], parts[1]};
    throw std::invalid_argument("expected schema.table, got " + std::to_string(parts.size()) + " parts");
}

std::string TableRef::display() const
{
    return displayIdent(schema) + "." + displayIdent(name);
}

std::string TableRef::quoted() const
{
    return quoteIdent(schema) + "." + quoteIdent(name);
}

void appendPgArrayElement(std::string_view value, std::string &out)
{
    out += '"';
    for (char c : value) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    out += '"';
}

std::string pgOutputText(const std::string &expr)
{
    return "CASE WHEN " + expr + " IS NULL THEN NULL ELSE concat(" + expr + ") END";
}

std::string quoteIdent(std::string_view ident)
{
    if (ident.empty())
        throw std::invalid_argument("empty identifier");
    std::string out;
    out.reserve(ident.size() + 2);
    out += '"';
    for (char c : ident) {
        if (c == '\0')
            throw std::invalid_argument("identifier contains a NUL byte");
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
    return out;
}

std::string displayIdent(std::string_view ident)
{
    return isPlain(ident) ? std::string(ident) : quoteIdent(ident);
}

/// A MySQL table name as written: `db.table` or `table`, each part optionally in backticks or
/// double quotes; no case folding (MySQL table names are case-sensitive on Linux).
std::optional<TableRef> parseMysqlTable(std::string_view text, const std::string &defaultSchema)
{
    std::vector<std::string> parts(1);
    char quote = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        char ch = text[i];
        if (quote) {
            if (ch == quote) {
                if (i + 1 < text.size() && text[i + 1] == quote) {
                    parts.back() += ch;
                    ++i;
                } else {
                    quote = 0;
                }
            } else {
                parts.back() += ch;
            }
        } else if (ch == '`' || ch == '"') {
            quote = ch;
        } else if (ch == '.') {
            parts.emplace_back();
        } else {
            parts.back() += ch;
        }
    }
    if (quote || parts.size() > 2)
        return std::nullopt;
    for (const auto &part : parts)
        if (part.empty())
            return std::nullopt;
    if (parts.size() == 1)
        return TableRef{defaultSchema, parts[0]};
    return TableRef{parts[0], parts[1]};
}

std::string mysqlIdent(std::string_view name)
{
    std::string out = "`";
    for (char c : name) {
        if (c == '`')
            out += '`';
        out += c;
    }
    out += '`';
    return out;
}

std::vector<std::string> splitColumnList(std::string_view text)
{
    std::vector<std::string> out;
    const auto blank = [](std::string_view t) { return t.find_first_not_of(" \t") == std::string_view::npos; };
    if (blank(text))
        return out;
    for (size_t at = 0; at <= text.size();) {
        const size_t comma = std::min(text.find(',', at), text.size());
        std::string_view name = text.substr(at, comma - at);
        if (blank(name))
            throw std::invalid_argument("column names are separated by commas, e.g. id,region");
        name.remove_prefix(name.find_first_not_of(" \t"));
        name.remove_suffix(name.size() - 1 - name.find_last_not_of(" \t"));
        out.emplace_back(name);
        at = comma + 1;
    }
    return out;
}

} // namespace driftless::core
