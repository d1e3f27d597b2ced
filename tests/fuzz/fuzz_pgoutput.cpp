// libFuzzer target for the pgoutput decoder. The input is tried both as one pgoutput message
// and as one CopyData frame; an XLogData frame's payload is then decoded as a message too, the
// way PgLogicalReader does. Every decoded value is read byte by byte, so a view that points
// outside the input is an ASan report. Malformed input must end in driftless::core::Error;
// anything else (another exception, a sanitizer report) is a bug.
#include "core/model/error.h"
#include "core/readers/pgoutput.h"

#include <cstdint>
#include <string_view>

using namespace driftless::core;
using namespace driftless::core::pgoutput;

namespace {

/// Folds everything decoded into one value the optimizer cannot drop.
struct Sink {
    std::uint64_t h = 0;
    void add(std::uint64_t v) { h = h * 31 + v; }
    void add(std::string_view s)
    {
        add(s.size());
        for (char c : s)
            add(static_cast<std::uint8_t>(c));
    }
    void add(const Tuple &t)
    {
        add(t.size());
        for (const auto &v : t) {
            add(static_cast<std::uint8_t>(v.kind));
            add(v.text);
        }
    }
};

void touch(Sink &s, const Decoded &d)
{
    s.add(d.index());
    if (auto *b = std::get_if<Begin>(&d)) {
        s.add(static_cast<std::uint64_t>(b->finalLsn));
        s.add(static_cast<std::uint64_t>(b->commitTime));
        s.add(b->xid);
    } else if (auto *c = std::get_if<Commit>(&d)) {
        s.add(static_cast<std::uint64_t>(c->commitLsn));
        s.add(static_cast<std::uint64_t>(c->endLsn));
        s.add(static_cast<std::uint64_t>(c->commitTime));
    } else if (auto *o = std::get_if<Origin>(&d)) {
        s.add(static_cast<std::uint64_t>(o->lsn));
        s.add(o->name);
    } else if (auto *r = std::get_if<Relation>(&d)) {
        s.add(r->oid);
        s.add(r->schema);
        s.add(r->name);
        s.add(static_cast<std::uint8_t>(r->replicaIdentity));
        for (const auto &col : r->columns) {
            s.add(col.key);
            s.add(col.name);
            s.add(col.typeOid);
            s.add(static_cast<std::uint32_t>(col.typmod));
        }
    } else if (auto *t = std::get_if<Type>(&d)) {
        s.add(t->oid);
        s.add(t->schema);
        s.add(t->name);
    } else if (auto *i = std::get_if<Insert>(&d)) {
        s.add(i->relation);
        s.add(i->newTuple);
    } else if (auto *u = std::get_if<Update>(&d)) {
        s.add(u->relation);
        s.add(static_cast<std::uint8_t>(u->oldKind));
        s.add(u->oldTuple);
        s.add(u->newTuple);
    } else if (auto *del = std::get_if<Delete>(&d)) {
        s.add(del->relation);
        s.add(static_cast<std::uint8_t>(del->oldKind));
        s.add(del->oldTuple);
    } else if (auto *tr = std::get_if<Truncate>(&d)) {
        for (auto oid : tr->relations)
            s.add(oid);
        s.add(tr->cascade);
        s.add(tr->restartIdentity);
    } else if (auto *m = std::get_if<Message>(&d)) {
        s.add(m->transactional);
        s.add(static_cast<std::uint64_t>(m->lsn));
        s.add(m->prefix);
        s.add(m->content);
    }
}

void message(Sink &s, std::string_view in)
{
    try {
        touch(s, decode(in));
    } catch (const Error &) {
        // Expected for malformed input.
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    // Views straight into libFuzzer's exact-size buffer: no copy whose terminator or spare
    // capacity would hide a read past the end.
    const std::string_view in(reinterpret_cast<const char *>(data), size);
    Sink s;
    message(s, in);
    try {
        const Frame f = decodeFrame(in);
        if (auto *x = std::get_if<XLogData>(&f)) {
            s.add(static_cast<std::uint64_t>(x->walStart));
            s.add(static_cast<std::uint64_t>(x->walEnd));
            s.add(static_cast<std::uint64_t>(x->sendTime));
            s.add(x->payload);
            message(s, x->payload);
        } else {
            const auto &k = std::get<Keepalive>(f);
            s.add(static_cast<std::uint64_t>(k.walEnd));
            s.add(static_cast<std::uint64_t>(k.sendTime));
            s.add(k.replyRequested);
        }
    } catch (const Error &) {
    }
    volatile std::uint64_t keep = s.h;
    (void)keep;
    return 0;
}
