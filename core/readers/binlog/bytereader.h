#pragma once

#include "core/model/error.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace driftless::core::binlog {

/// A bounds-checked cursor over the bytes of one binlog event. Every read checks the remaining
/// length first and throws a permanent Error naming `what` instead of reading past the end, so
/// a malformed or truncated event can never make the decoder touch memory it does not own.
class ByteReader {
public:
    ByteReader(std::string_view bytes, const char *context) : m_data(bytes), m_context(context) {}

    std::size_t remaining() const noexcept { return m_data.size() - m_pos; }
    std::size_t offset() const noexcept { return m_pos; }
    bool atEnd() const noexcept { return m_pos >= m_data.size(); }

    void need(std::size_t n, const char *what) const
    {
        if (n > remaining())
            throw Error(ErrorKind::Permanent,
                        std::string("malformed binlog event: ") + m_context + " is truncated (" + what + " needs " +
                            std::to_string(n) + " bytes, " + std::to_string(remaining()) + " left)",
                        {}, "the event stream is corrupt; re-read from the last checkpoint");
    }
    std::string_view bytes(std::size_t n, const char *what)
    {
        need(n, what);
        std::string_view v = m_data.substr(m_pos, n);
        m_pos += n;
        return v;
    }
    void skip(std::size_t n, const char *what) { bytes(n, what); }
    std::string_view rest()
    {
        std::string_view v = m_data.substr(m_pos);
        m_pos = m_data.size();
        return v;
    }
    std::uint8_t u8(const char *what) { return static_cast<std::uint8_t>(bytes(1, what)[0]); }
    /// Little-endian unsigned integer of `n` bytes (1..8).
    std::uint64_t le(std::size_t n, const char *what)
    {
        std::string_view b = bytes(n, what);
        std::uint64_t v = 0;
        for (std::size_t i = n; i-- > 0;)
            v = (v << 8) | static_cast<std::uint8_t>(b[i]);
        return v;
    }
    /// Big-endian unsigned integer of `n` bytes (1..8).
    std::uint64_t be(std::size_t n, const char *what)
    {
        std::string_view b = bytes(n, what);
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < n; ++i)
            v = (v << 8) | static_cast<std::uint8_t>(b[i]);
        return v;
    }
    /// MySQL length-encoded integer (1, 3, 4 or 9 bytes).
    std::uint64_t lenenc(const char *what)
    {
        std::uint8_t first = u8(what);
        if (first < 0xfb)
            return first;
        if (first == 0xfc)
            return le(2, what);
        if (first == 0xfd)
            return le(3, what);
        if (first == 0xfe)
            return le(8, what);
        throw Error(ErrorKind::Permanent, std::string("malformed binlog event: ") + m_context +
                                              " has an invalid length-encoded integer (" + what + ")");
    }
    /// A length-encoded count that must fit what is left (one byte per item at least).
    std::size_t count(const char *what)
    {
        std::uint64_t n = lenenc(what);
        need(n, what);
        return static_cast<std::size_t>(n);
    }

private:
    std::string_view m_data;
    std::size_t m_pos = 0;
    const char *m_context;
};

} // namespace driftless::core::binlog
