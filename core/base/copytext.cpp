#include "core/base/copytext.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace driftless::core::copytext {

std::string fieldsKey(std::string_view row, const std::vector<int> &indexes, std::vector<std::string_view> &fields)
{
    split(row, fields);
    std::string k;
    for (int i : indexes) {
        k.append(fields.at(static_cast<size_t>(i)));
        k += '\x1f';
    }
    return k;
}

void split(std::string_view row, std::vector<std::string_view> &fields)
{
    fields.clear();
    if (!row.empty() && row.back() == '\n')
        row.remove_suffix(1);
    const char *p = row.data();
    const char *end = p + row.size();
    for (;;) {
        const char *tab = static_cast<const char *>(std::memchr(p, '\t', static_cast<size_t>(end - p)));
        if (!tab) {
            fields.emplace_back(p, static_cast<size_t>(end - p));
            return;
        }
        fields.emplace_back(p, static_cast<size_t>(tab - p));
        p = tab + 1;
    }
}

void appendHex(std::string_view bytes, std::string &out)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    out.reserve(out.size() + bytes.size() * 2);
    for (unsigned char ch : bytes) {
        out += kDigits[ch >> 4];
        out += kDigits[ch & 15];
    }
}

void appendBytea(std::string_view bytes, std::string &out)
{
    out += "\\\\x";
    appendHex(bytes, out);
}

int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

void unescape(std::string_view raw, std::string &out)
{
    size_t i = 0;
    while (i < raw.size()) {
        size_t bs = raw.find('\\', i);
        if (bs == std::string_view::npos) {
            out.append(raw.substr(i));
            return;
        }
        out.append(raw.substr(i, bs - i));
        i = bs + 1;
        if (i >= raw.size()) {
            out += '\\';
            return;
        }
        char c = raw[i++];
        switch (c) {
        case 'b':
            out += '\b';
            break;
        case 'f':
            out += '\f';
            break;
        case 'n':
            out += '\n';
            break;
        case 'r':
            out += '\r';
            break;
        case 't':
            out += '\t';
            break;
        case 'v':
            out += '\v';
            break;
        case 'x': {
            int v = 0, n = 0;
            while (n < 2 && i < raw.size() && hexValue(raw[i]) >= 0) {
                v = v * 16 + hexValue(raw[i++]);
                ++n;
            }
            if (n == 0)
                out += 'x';
            else
                out += static_cast<char>(v);
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                int v = c - '0', n = 1;
                while (n < 3 && i < raw.size() && raw[i] >= '0' && raw[i] <= '7') {
                    v = v * 8 + (raw[i++] - '0');
                    ++n;
                }
                out += static_cast<char>(v & 0xff);
            } else {
                out += c;
            }
        }
    }
}

void escape(std::string_view v, std::string &out)
{
    out.reserve(out.size() + v.size());
    // Large values (TOAST) are mostly bytes that need no escape: skip 8 of them at a time while
    // none is a backslash or below 0x0E (the controls \b \t \n \v \f \r and some that need none).
    constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    constexpr std::uint64_t backslashes = ones * static_cast<unsigned char>('\\');
    size_t start = 0;
    size_t i = 0;
    while (i < v.size()) {
        if (v.size() - i >= 8) {
            std::uint64_t w;
            std::memcpy(&w, v.data() + i, 8);
            const std::uint64_t x = w ^ backslashes;
            const bool anyBackslash = ((x - ones) & ~x & highs) != 0;
            const bool anyLow = ((w - ones * 0x0E) & ~w & highs) != 0;
            if (!anyBackslash && !anyLow) {
                i += 8;
                continue;
            }
        }
        const size_t end = std::min(v.size(), i + 8);
        for (; i < end; ++i) {
            const char *rep = nullptr;
            switch (v[i]) {
            case '\\':
                rep = "\\\\";
                break;
            case '\n':
                rep = "\\n";
                break;
            case '\r':
                rep = "\\r";
                break;
            case '\t':
                rep = "\\t";
                break;
            case '\b':
                rep = "\\b";
                break;
            case '\f':
                rep = "\\f";
                break;
            case '\v':
                rep = "\\v";
                break;
            default:
                continue;
            }
            out.append(v.substr(start, i - start));
            out.append(rep);
            start = i + 1;
        }
    }
    out.append(v.substr(start));
}

std::string line(const std::vector<std::optional<std::string>> &values)
{
    std::string out;
    for (size_t i = 0; i < values.size(); ++i) {
        if (i)
            out += '\t';
        if (values[i])
            escape(*values[i], out);
        else
            out += kNull;
    }
    return out;
}

} // namespace driftless::core::copytext
