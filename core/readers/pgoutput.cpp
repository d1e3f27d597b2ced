#include "core/readers/pgoutput.h"

#include "core/model/error.h"

namespace driftless::core::pgoutput {

namespace {

class Reader {
public:
    explicit Reader(std::string_view data) : m_data(data) {}

    void need(size_t n) const
    {
        if (m_pos + n > m_data.size())
            throw Error(ErrorKind::Permanent, "truncated pgoutput message", {},
                        "this is a protocol error; report it with the server version");
    }
    std::uint8_t u8()
    {
        need(1);
        return static_cast<std::uint8_t>(m_data[m_pos++]);
    }
    std::int16_t i16()
    {
        need(2);
        auto v = static_cast<std::uint16_t>((static_cast<std::uint8_t>(m_data[m_pos]) << 8) |
                                            static_cast<std::uint8_t>(m_data[m_pos + 1]));
        m_pos += 2;
        return static_cast<std::int16_t>(v);
    }
    std::uint32_t u32()
    {
        need(4);
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i)
            v = (v << 8) | static_cast<std::uint8_t>(m_data[m_pos++]);
        return v;
    }
    std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
    std::int64_t i64()
    {
        need(8);
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i)
            v = (v << 8) | static_cast<std::uint8_t>(m_data[m_pos++]);
        return static_cast<std::int64_t>(v);
    }
    std::string str()
    {
        auto end = m_data.find('\0', m_pos);
        if (end == std::string_view::npos)
            throw Error(ErrorKind::Permanent, "unterminated string in pgoutput message");
        std::string s(m_data.substr(m_pos, end - m_pos));
        m_pos = end + 1;
        return s;
    }
    std::string_view bytes(size_t n)
    {
        need(n);
        auto v = m_data.substr(m_pos, n);
        m_pos += n;
        return v;
    }
    std::string_view rest() { return bytes(m_data.size() - m_pos); }
    /// A message longer than its fields means we misread its layout: never skip the rest.
    void expectEnd(char type) const
    {
        if (m_pos != m_data.size())
            throw Error(ErrorKind::Permanent,
                        std::string("replication message '") + type + "' has " + std::to_string(m_data.size() - m_pos) +
                            " bytes after its last field",
                        {}, "this is a protocol error; report it with the server version");
    }

private:
    std::string_view m_data;
    size_t m_pos = 0;
};

Tuple tuple(Reader &r)
{
    int n = r.i16();
    if (n < 0)
        throw Error(ErrorKind::Permanent, "negative column count in pgoutput tuple");
    Tuple t(static_cast<size_t>(n));
    for (auto &v : t) {
        v.kind = static_cast<char>(r.u8());
        switch (v.kind) {
        case 'n':
        case 'u':
            break;
        case 't': {
            std::int32_t len = r.i32();
            if (len < 0)
                throw Error(ErrorKind::Permanent, "negative value length in pgoutput tuple");
            v.text = r.bytes(static_cast<size_t>(len));
            break;
        }
        case 'b':
            throw Error(ErrorKind::Permanent, "binary tuple values are not requested and not supported");
        default:
            throw Error(ErrorKind::Permanent, std::string("unknown tuple value kind '") + v.kind + "'");
        }
    }
    return t;
}

Decoded body(char type, Reader &r)
{
    switch (type) {
    case 'B': {
        Begin b;
        b.finalLsn = r.i64();
        b.commitTime = r.i64();
        b.xid = r.u32();
        return b;
    }
    case 'C': {
        Commit c;
        r.u8(); // flags, always 0
        c.commitLsn = r.i64();
        c.endLsn = r.i64();
        c.commitTime = r.i64();
        return c;
    }
    case 'O': {
        Origin o;
        o.lsn = r.i64();
        o.name = r.str();
        return o;
    }
    case 'R': {
        Relation rel;
        rel.oid = r.u32();
        rel.schema = r.str();
        if (rel.schema.empty())
            rel.schema = "pg_catalog";
        rel.name = r.str();
        rel.replicaIdentity = static_cast<char>(r.u8());
        if (rel.replicaIdentity != 'd' && rel.replicaIdentity != 'n' && rel.replicaIdentity != 'f' &&
            rel.replicaIdentity != 'i')
            throw Error(ErrorKind::Permanent,
                        std::string("unknown replica identity '") + rel.replicaIdentity + "' in pgoutput relation");
        int n = r.i16();
        if (n < 0)
            throw Error(ErrorKind::Permanent, "negative column count in pgoutput relation");
        for (int i = 0; i < n; ++i) {
            RelationColumn c;
            c.key = (r.u8() & 1) != 0;
            c.name = r.str();
            c.typeOid = r.u32();
            c.typmod = r.i32();
            rel.columns.push_back(std::move(c));
        }
        return rel;
    }
    case 'Y': {
        Type t;
        t.oid = r.u32();
        t.schema = r.str();
        t.name = r.str();
        return t;
    }
    case 'I': {
        Insert ins;
        ins.relation = r.u32();
        if (r.u8() != 'N')
            throw Error(ErrorKind::Permanent, "pgoutput insert without a new tuple");
        ins.newTuple = tuple(r);
        return ins;
    }
    case 'U': {
        Update up;
        up.relation = r.u32();
        char k = static_cast<char>(r.u8());
        if (k == 'K' || k == 'O') {
            up.oldKind = k;
            up.oldTuple = tuple(r);
            k = static_cast<char>(r.u8());
        }
        if (k != 'N')
            throw Error(ErrorKind::Permanent, "pgoutput update without a new tuple");
        up.newTuple = tuple(r);
        if (up.oldKind && up.oldTuple.size() != up.newTuple.size())
            throw Error(ErrorKind::Permanent, "pgoutput update's old tuple has " + std::to_string(up.oldTuple.size()) +
                                                  " columns, its new tuple " + std::to_string(up.newTuple.size()));
        return up;
    }
    case 'D': {
        Delete d;
        d.relation = r.u32();
        d.oldKind = static_cast<char>(r.u8());
        if (d.oldKind != 'K' && d.oldKind != 'O')
            throw Error(ErrorKind::Permanent, "pgoutput delete without an old key or row");
        d.oldTuple = tuple(r);
        return d;
    }
    case 'T': {
        Truncate t;
        std::uint32_t n = r.u32();
        std::uint8_t opts = r.u8();
        t.cascade = (opts & 1) != 0;
        t.restartIdentity = (opts & 2) != 0;
        for (std::uint32_t i = 0; i < n; ++i)
            t.relations.push_back(r.u32());
        return t;
    }
    case 'M': {
        Message m;
        m.transactional = (r.u8() & 1) != 0;
        m.lsn = r.i64();
        m.prefix = r.str();
        std::int32_t len = r.i32();
        if (len < 0)
            throw Error(ErrorKind::Permanent, "negative content length in pgoutput logical message");
        m.content = r.bytes(static_cast<size_t>(len));
        return m;
    }
    default:
        throw Error(ErrorKind::Permanent, std::string("unknown pgoutput message type '") + type + "'", {},
                    "the server sent a message protocol 1 does not define; report it with the server version");
    }
}

} // namespace

Decoded decode(std::string_view msg)
{
    if (msg.empty())
        throw Error(ErrorKind::Permanent, "empty pgoutput message");
    Reader r(msg.substr(1));
    Decoded d = body(msg[0], r);
    r.expectEnd(msg[0]);
    return d;
}

Frame decodeFrame(std::string_view data)
{
    if (data.empty())
        throw Error(ErrorKind::Permanent, "empty replication frame");
    Reader r(data.substr(1));
    if (data[0] == 'w') {
        XLogData x;
        x.walStart = r.i64();
        x.walEnd = r.i64();
        x.sendTime = r.i64();
        x.payload = r.rest();
        return x;
    }
    if (data[0] == 'k') {
        Keepalive k;
        k.walEnd = r.i64();
        k.sendTime = r.i64();
        k.replyRequested = r.u8() != 0;
        r.expectEnd('k');
        return k;
    }
    throw Error(ErrorKind::Permanent, std::string("unknown replication frame '") + data[0] + "'");
}

} // namespace driftless::core::pgoutput
