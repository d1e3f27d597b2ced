#include "core/readers/pglogicalreader.h"

#include "core/base/copytext.h"
#include "core/base/log.h"
#include "core/model/error.h"
#include "core/readers/pgoutput.h"

#include <algorithm>
#include <cstdlib>

namespace driftless::core {

namespace {
std::int64_t nowUnixMicros()
{
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// DRIFTLESS_DEBUG_CDC set: every keepalive is logged with the positions it is weighed against.
/// Read once: keepalives come thousands of times a second while a backlog drains.
bool debugCdc()
{
    static const bool on = std::getenv("DRIFTLESS_DEBUG_CDC") != nullptr;
    return on;
}
} // namespace

PgLogicalReader::PgLogicalReader(PgReplicationConnection &conn, std::map<TableRef, CdcTableInfo> tables,
                                 Options options)
    : m_conn(conn), m_tables(std::move(tables)), m_opt(std::move(options))
{
}

void PgLogicalReader::sendStatus(bool requestReply)
{
    std::int64_t flush = (*m_acked)();
    m_conn.sendStatus(std::max(m_received.load(), flush), flush, requestReply);
    m_lastSentFlush = flush;
    m_lastStatus = std::chrono::steady_clock::now();
}

bool PgLogicalReader::applyReady() const
{
    return !m_opt.applyReady || m_opt.applyReady();
}

bool PgLogicalReader::flush(bool final)
{
    if (m_batch.empty())
        return true;
    for (auto &[ref, t] : m_batch.tables) {
        std::vector<int> keys;
        for (auto &[oid, rel] : m_relations)
            if (rel.mapped && rel.table == ref && rel.columns == t.columns)
                keys = rel.keyIndexes;
        if (!keys.empty())
            t.rows.foldByKey(keys);
    }
    m_batch.final = final;
    m_batch.serverTimeUs = m_serverTimeUs;
    m_batch.clockOffsetUs = m_clockOffsetUs;
    const std::int64_t end = m_batch.endVersion;
    for (;;) {
        bool accepted = false;
        if (!(*m_emit)(m_batch, std::chrono::milliseconds(500), accepted))
            return false;
        if (accepted)
            break;
        // The apply side is busy (a big transaction): keep the walsender from timing us out.
        sendStatus(false);
        if (m_stop.stop_requested())
            return false;
    }
    if (final && end)
        m_lastEmittedEnd = std::max(m_lastEmittedEnd, end);
    m_piecesOut = !final;
    m_batch = CdcBatch{};
    m_batchRows = 0;
    m_batchBytes = 0;
    return true;
}

CdcTableChanges &PgLogicalReader::tableIn(RelationState &rel)
{
    auto it = m_batch.tables.find(rel.table);
    if (it != m_batch.tables.end() && (it->second.columns != rel.columns || it->second.types != rel.types)) {
        // The table's layout changed (a new Relation after DDL, a column added, dropped or
        // retyped) inside the batch: rows of the two layouts cannot share a batch, so cut it here.
        if (!flush(!m_inTxn))
            throw Cancelled();
        it = m_batch.tables.end();
    }
    if (it == m_batch.tables.end()) {
        if (m_batch.tables.empty())
            m_batchStarted = std::chrono::steady_clock::now();
        it = m_batch.tables.emplace(rel.table, CdcTableChanges{}).first;
        it->second.columns = rel.columns;
        it->second.types = rel.types;
    }
    return it->second;
}

std::string PgLogicalReader::keyOf(const RelationState &rel, const pgoutput::Tuple &t, bool &complete) const
{
    std::string key;
    complete = true;
    for (int k : rel.keyIndexes) {
        const auto &v = t.at(static_cast<size_t>(k));
        if (v.kind != 't')
            complete = false;
        key.append(v.text);
        key += '\x1f';
    }
    return key;
}

void PgLogicalReader::keepBefore(const RelationState &rel, RowSet &rows, ChangeOp op, const pgoutput::Tuple &tuple,
                                 const pgoutput::Tuple *before)
{
    const size_t row = rows.size() - 1;
    if (op == ChangeOp::Insert) {
        rows.setNoBase(row);
        return;
    }
    if (!before)
        throw Error(ErrorKind::Permanent,
                    "a change to two-way table " + rel.table.display() +
                        " carries no before-image, so a conflict with the other side cannot be detected",
                    {},
                    "ALTER TABLE " + rel.table.display() +
                        " REPLICA IDENTITY FULL (driftless-cli doctor lists every table that lacks it), then "
                        "re-snapshot it: driftless-cli resnapshot");
    m_before.clear();
    for (size_t i = 0; i < before->size(); ++i) {
        if (i)
            m_before += '\t';
        const pgoutput::Value *v = &(*before)[i];
        // An unchanged out-of-line value the old row leaves out: the new row's, or unknown.
        if (v->kind == 'u' && i < tuple.size())
            v = &tuple[i];
        if (v->kind == 't')
            copytext::escape(v->text, m_before);
        else
            m_before += copytext::kNull;
    }
    rows.setBefore(row, m_before);
}

void PgLogicalReader::addChange(RelationState &rel, ChangeOp op, const pgoutput::Tuple &tuple,
                                const pgoutput::Tuple *old, const pgoutput::Tuple *before, bool noBase)
{
    const size_t n = rel.columns.size();
    if (tuple.size() != n)
        throw Error(ErrorKind::Permanent, "a change to " + rel.table.display() + " has " +
                                              std::to_string(tuple.size()) + " columns, its Relation message " +
                                              std::to_string(n));
    m_line.clear();
    m_mask.assign(n, '0');
    bool anyUnchanged = false;
    for (size_t i = 0; i < n; ++i) {
        if (i)
            m_line += '\t';
        const pgoutput::Value *v = &tuple[i];
        if (v->kind == 'u' && old && i < old->size() && (*old)[i].kind != 'u') {
            // REPLICA IDENTITY FULL: the old row carries the real value of an unchanged column.
            v = &(*old)[i];
        }
        if (op == ChangeOp::Delete) {
            bool isKey =
                std::find(rel.keyIndexes.begin(), rel.keyIndexes.end(), static_cast<int>(i)) != rel.keyIndexes.end();
            if (!isKey) {
                // In an old-key tuple 'n' means "not part of the key", not NULL: never apply it.
                m_line += copytext::kNull;
                continue;
            }
            if (v->kind != 't')
                // The old row names the row by its replica identity; without our key in it the
                // delete would match nothing and the row would stay in the target.
                throw Error(ErrorKind::Permanent,
                            "a delete from " + rel.table.display() + " does not carry primary-key column " +
                                displayIdent(rel.columns[i]) + " (the table's replica identity leaves it out)",
                            {},
                            "ALTER TABLE " + rel.table.display() +
                                " REPLICA IDENTITY DEFAULT (or FULL), then re-snapshot it: driftless-cli resnapshot");
        }
        switch (v->kind) {
        case 't':
            copytext::escape(v->text, m_line);
            break;
        case 'u':
            m_line += copytext::kNull;
            m_mask[i] = '1';
            anyUnchanged = true;
            break;
        default:
            m_line += copytext::kNull;
        }
    }
    auto &t = tableIn(rel);
    t.rows.append(m_line, op, m_txnCommitLsn, anyUnchanged ? std::string_view(m_mask) : std::string_view());
    if (m_opt.keepBeforeImages) {
        keepBefore(rel, t.rows, noBase ? ChangeOp::Insert : op, tuple, before);
        t.rows.setCommitTime(t.rows.size() - 1, m_txnCommitTime + kPgEpochUnixMicros);
    }
    ++t.changes;
    ++m_batchRows;
    m_batchBytes += m_line.size();
}

void PgLogicalReader::onMessage(std::string_view payload, std::int64_t)
{
    auto decoded = pgoutput::decode(payload);
    if (auto *b = std::get_if<pgoutput::Begin>(&decoded)) {
        if (m_batch.empty())
            m_batchStarted = std::chrono::steady_clock::now();
        m_inTxn = true;
        m_ownTxn = false;
        m_txnStarted = false;
        m_txnCommitLsn = b->finalLsn;
        m_txnCommitTime = b->commitTime;
        return;
    }
    if (auto *c = std::get_if<pgoutput::Commit>(&decoded)) {
        m_inTxn = false;
        m_batch.endVersion = c->endLsn;
        m_batch.commitVersion = c->commitLsn;
        m_batch.commitTimeUs = c->commitTime + kPgEpochUnixMicros;
        ++m_batch.transactions;
        // Full: handed over, waiting for the apply side if it must. Only old: handed over when
        // the apply side would take it, else it keeps growing while the walsender keeps sending.
        const bool full = m_batchRows >= m_opt.maxRows || m_batchBytes >= m_opt.maxBytes;
        const bool old = std::chrono::steady_clock::now() - m_batchStarted >= m_opt.maxDelay;
        if ((full || (old && applyReady())) && !flush(true))
            throw Cancelled();
        return;
    }
    if (auto *rel = std::get_if<pgoutput::Relation>(&decoded)) {
        RelationState st;
        st.table = {rel->schema, rel->name};
        st.replicaIdentity = rel->replicaIdentity;
        for (const auto &c : rel->columns) {
            st.columns.push_back(c.name);
            st.types.emplace_back(c.typeOid, c.typmod);
        }
        auto it = m_tables.find(st.table);
        if (it != m_tables.end()) {
            st.mapped = true;
            auto prev = m_relations.find(rel->oid);
            auto &keys = it->second.keyColumns;
            for (size_t ki = 0; ki < keys.size(); ++ki) {
                auto pos = std::find(st.columns.begin(), st.columns.end(), keys[ki]);
                if (pos != st.columns.end()) {
                    st.keyIndexes.push_back(static_cast<int>(pos - st.columns.begin()));
                    continue;
                }
                // A renamed key column keeps its place among the columns: the name there now is
                // one the columns before did not have (the previous Relation's, or the engine's
                // when this is the first one). The engine tells a rename from a drop and an add by
                // the attribute number, and pauses the table when it is none.
                const bool hadRelation = prev != m_relations.end() && prev->second.mapped;
                const auto &before = hadRelation ? prev->second.columns : it->second.columns;
                int at = -1;
                if (hadRelation && ki < prev->second.keyIndexes.size())
                    at = prev->second.keyIndexes[ki];
                else if (auto was = std::find(before.begin(), before.end(), keys[ki]);
                         !hadRelation && was != before.end())
                    at = static_cast<int>(was - before.begin());
                if (at >= 0 && before.size() == st.columns.size()) {
                    const auto &now = st.columns[static_cast<size_t>(at)];
                    if (std::find(before.begin(), before.end(), now) == before.end()) {
                        keys[ki] = now;
                        st.keyIndexes.push_back(at);
                        continue;
                    }
                }
                throw Error(ErrorKind::Permanent,
                            "primary-key column " + displayIdent(keys[ki]) + " of " + st.table.display() +
                                " is missing from the replication stream",
                            {}, "the key was changed on the source: re-backfill the table");
            }
        }
        m_relations[rel->oid] = std::move(st);
        return;
    }
    auto relationFor = [&](std::uint32_t oid) -> RelationState * {
        m_txnStarted = true;
        auto it = m_relations.find(oid);
        if (it == m_relations.end())
            throw Error(ErrorKind::Transient,
                        "a change arrived for relation " + std::to_string(oid) + " before its Relation message");
        if (!it->second.mapped)
            return nullptr;
        const auto &info = m_tables.at(it->second.table);
        if (m_txnCommitLsn < info.resumeLsn)
            return nullptr; // already applied before a restart
        if (m_opt.counters)
            ++(m_ownTxn ? m_opt.counters->droppedOwn : m_opt.counters->captured);
        if (m_ownTxn)
            return nullptr; // applied by Driftless: never read back (two-way loop prevention)
        return &it->second;
    };
    if (auto *ins = std::get_if<pgoutput::Insert>(&decoded)) {
        if (auto *rel = relationFor(ins->relation))
            addChange(*rel, ChangeOp::Insert, ins->newTuple, nullptr);
    } else if (auto *up = std::get_if<pgoutput::Update>(&decoded)) {
        if (auto *rel = relationFor(up->relation)) {
            const pgoutput::Tuple *old = up->oldKind ? &up->oldTuple : nullptr;
            bool newComplete = true;
            std::string newKey = keyOf(*rel, up->newTuple, newComplete);
            if (!newComplete && !old)
                throw Error(ErrorKind::Permanent,
                            "an update to " + rel->table.display() +
                                " left an out-of-line (TOASTed) primary-key value unchanged, so the row cannot be "
                                "identified from the stream",
                            {}, "ALTER TABLE " + rel->table.display() + " REPLICA IDENTITY FULL, then re-backfill it");
            if (old) {
                bool oldComplete = true;
                std::string oldKey = keyOf(*rel, *old, oldComplete);
                if (oldComplete && newComplete && oldKey != newKey) {
                    // The key changed: the old key's row is gone, the new key's row arrives.
                    addChange(*rel, ChangeOp::Delete, *old, nullptr, up->oldKind == 'O' ? old : nullptr);
                    // The new key had no row before this change.
                    addChange(*rel, ChangeOp::Update, up->newTuple, up->oldKind == 'O' ? old : nullptr, nullptr, true);
                    return;
                }
            }
            addChange(*rel, ChangeOp::Update, up->newTuple, up->oldKind == 'O' ? old : nullptr,
                      up->oldKind == 'O' ? old : nullptr);
        }
    } else if (auto *del = std::get_if<pgoutput::Delete>(&decoded)) {
        if (auto *rel = relationFor(del->relation))
            addChange(*rel, ChangeOp::Delete, del->oldTuple, nullptr, del->oldKind == 'O' ? &del->oldTuple : nullptr);
    } else if (auto *tr = std::get_if<pgoutput::Truncate>(&decoded)) {
        std::vector<RelationState *> rels;
        for (auto oid : tr->relations)
            if (auto *rel = relationFor(oid))
                rels.push_back(rel);
        bool any = false;
        for (auto *rel : rels)
            any = any || m_tables.at(rel->table).applyTruncate;
        if (!any) {
            for (auto *rel : rels)
                log(LogLevel::Warn, "TRUNCATE of " + rel->table.display() + " not applied (truncate: ignore)");
            return;
        }
        // Changes before the TRUNCATE must land first: cut the batch, then start one with it.
        if (!flush(false))
            throw Cancelled();
        for (auto *rel : rels) {
            if (!m_tables.at(rel->table).applyTruncate)
                continue;
            tableIn(*rel).truncate = true;
        }
    }
    auto ours = [&](std::string_view name) {
        return (!m_opt.skipOrigin.empty() && name == m_opt.skipOrigin) ||
               std::find(m_opt.skipOriginsAlso.begin(), m_opt.skipOriginsAlso.end(), name) !=
                   m_opt.skipOriginsAlso.end();
    };
    // Sent after Begin when the transaction was replayed under a replication origin.
    if (auto *o = std::get_if<pgoutput::Origin>(&decoded)) {
        if (m_inTxn && ours(o->name))
            m_ownTxn = true;
        return;
    }
    // The mark of a side whose user may not use origins: our message first in the transaction.
    if (auto *m = std::get_if<pgoutput::Message>(&decoded)) {
        if (m_inTxn && m->transactional && !m_txnStarted && !m_opt.ownMessagePrefix.empty() &&
            m->prefix == m_opt.ownMessagePrefix && ours(m->content))
            m_ownTxn = true;
        m_txnStarted = true;
        return;
    }
    if (!std::holds_alternative<pgoutput::Type>(decoded))
        m_txnStarted = true;
}

void PgLogicalReader::handle(const std::string &frame)
{
    auto f = pgoutput::decodeFrame(frame);
    if (auto *x = std::get_if<pgoutput::XLogData>(&f)) {
        m_received = std::max(m_received.load(), x->walEnd);
        m_serverTimeUs = x->sendTime + kPgEpochUnixMicros;
        onMessage(x->payload, x->walStart);
        // A transaction bigger than a batch is staged in pieces.
        if (m_inTxn && (m_batchRows >= m_opt.maxRows || m_batchBytes >= m_opt.maxBytes) && !flush(false))
            throw Cancelled();
        return;
    }
    auto &k = std::get<pgoutput::Keepalive>(f);
    if (debugCdc())
        log(LogLevel::Warn, "keepalive " + std::to_string(k.walEnd) + " acked " + std::to_string((*m_acked)()) +
                                " stopAt " + std::to_string(m_opt.stopAtLsn));
    m_walEnd = std::max(m_walEnd, k.walEnd);
    m_serverTimeUs = k.sendTime + kPgEpochUnixMicros;
    std::int64_t offset = m_serverTimeUs - nowUnixMicros();
    // The smallest offset seen is the one with the least network delay in it.
    if (!m_haveOffset || offset < m_clockOffsetUs)
        m_clockOffsetUs = offset;
    m_haveOffset = true;
    // A keepalive comes when the walsender has nothing more to send: hand over the complete
    // transactions received so far now. Waiting for a quiet moment on the socket starved them
    // when keepalives come back to back, as they do from a walsender that is shutting down: it
    // pings again on every reply until the flush position reaches what it sent, so the batch was
    // never handed over, the position never reached, and the source's shutdown never finished.
    // Only when the apply side would take it: a busy one makes the reader wait, and more may
    // come (a keepalive is also sent while the walsender is still decoding); the next keepalive
    // or quiet moment after the apply side frees up hands it over.
    if (!m_inTxn && !m_batch.empty() && applyReady() && !flush(true))
        throw Cancelled();
    // Idle: no transaction open or half handed over, nothing waiting to be handed over, and
    // everything handed over committed in the target.
    const bool idle = !m_inTxn && !m_piecesOut && m_batch.empty() && m_lastEmittedEnd <= (*m_acked)();
    // Nothing received is in flight: the keepalive's position is safe to acknowledge once the
    // target has recorded it, which keeps an idle slot (or one whose tables see no writes) from
    // holding WAL. Hand it over about once a second; at once when draining to a position, and
    // when the server asks for a reply at a new position (a shutting-down walsender waits for it).
    const bool drainedTo = m_opt.stopAtLsn && k.walEnd >= m_opt.stopAtLsn && k.walEnd > m_lastIdleEnd;
    const bool asked = k.replyRequested && k.walEnd > m_lastIdleEnd;
    if (idle && (drainedTo || asked || std::chrono::steady_clock::now() - m_lastHeartbeat >= std::chrono::seconds(1))) {
        m_lastIdleEnd = k.walEnd;
        m_lastHeartbeat = std::chrono::steady_clock::now();
        m_batch.idleWalEnd = k.walEnd;
        m_batch.idleUrgent = drainedTo || asked;
        if (!flush(true))
            throw Cancelled();
    }
    if (k.replyRequested)
        sendStatus(false);
}

void PgLogicalReader::run(std::stop_token stop, const Emit &emit, const std::function<std::int64_t()> &acked)
{
    m_emit = &emit;
    m_acked = &acked;
    m_stop = stop;
    m_conn.startReplication(m_opt.slot, m_opt.startLsn, m_opt.publication);
    m_lastStatus = std::chrono::steady_clock::now();
    m_lastHeartbeat = m_lastStatus - std::chrono::seconds(10);
    sendStatus(true);
    try {
        while (!stop.stop_requested()) {
            auto wait = m_batch.empty() || m_inTxn ? std::chrono::milliseconds(250) : std::chrono::milliseconds(20);
            // Everything received is handed over and waits for its commit in the target: look again
            // soon, so that the source hears of it (and a pass draining to a position ends) when it
            // is durable, not up to a quarter of a second later, when the walsender next says
            // something. While draining, an idle position handed over waits the same way.
            if (m_batch.empty() && !m_inTxn) {
                const std::int64_t ack = acked();
                if (m_lastEmittedEnd > ack || (m_opt.stopAtLsn && m_lastIdleEnd > ack))
                    wait = std::chrono::milliseconds(5);
            }
            auto frame = m_conn.next(wait);
            if (frame) {
                handle(*frame);
            } else if (!m_inTxn && !m_batch.empty() && applyReady()) {
                // No more data right now: hand over what is complete.
                if (!flush(true))
                    break;
            }
            const auto now = std::chrono::steady_clock::now();
            const std::int64_t ack = acked();
            if (now - m_lastStatus >= m_opt.statusInterval) {
                // Asking for a reply brings a keepalive with the current WAL end when idle.
                sendStatus(true);
            } else if (ack > m_lastSentFlush) {
                sendStatus(false);
            }
            if (m_opt.stopAtLsn && ack >= m_opt.stopAtLsn && !m_inTxn && !m_piecesOut && m_batch.empty() &&
                m_lastEmittedEnd <= acked())
                break;
        }
    } catch (const Cancelled &) {
        // The apply side stopped taking batches.
    }
    // Tell the server how far we got before leaving.
    try {
        sendStatus(false);
    } catch (const Error &) {
    }
}

} // namespace driftless::core
