#include "core/readers/binlog/binlogrows.h"

#include "core/base/copytext.h"

#include <algorithm>

namespace driftless::core::binlog {

std::string RowImages::keyOf(std::string_view line, const std::vector<int> &keys)
{
    return copytext::fieldsKey(line, keys, m_fields);
}

void RowImages::image(const TableSchema &schema, const std::vector<int> &layout, const Image &img, ChangeOp op,
                      std::int64_t version, RowSet &out, const Image *keyFrom)
{
    m_line.clear();
    m_mask.assign(layout.size(), '0');
    bool anyAbsent = false;
    for (size_t i = 0; i < layout.size(); ++i) {
        if (i)
            m_line += '\t';
        const int e = layout[i];
        if (e < 0 || static_cast<size_t>(e) >= img.size()) {
            // A column added after this event was written: an update keeps the target's
            // value, an insert gets NULL (the column's default was not logged).
            m_line += copytext::kNull;
            if (op == ChangeOp::Update) {
                m_mask[i] = '1';
                anyAbsent = true;
            }
            continue;
        }
        const Value *vp = &img[static_cast<size_t>(e)];
        if (vp->kind == Value::Kind::Absent && keyFrom && static_cast<size_t>(e) < keyFrom->size() &&
            std::find(schema.primaryKey.begin(), schema.primaryKey.end(), static_cast<int>(i)) !=
                schema.primaryKey.end())
            vp = &(*keyFrom)[static_cast<size_t>(e)];
        const Value &v = *vp;
        switch (v.kind) {
        case Value::Kind::Absent:
            m_line += copytext::kNull;
            m_mask[i] = '1';
            anyAbsent = true;
            break;
        case Value::Kind::Null:
            m_line += copytext::kNull;
            break;
        case Value::Kind::Text:
        case Value::Kind::Invalid:
            if (schema.columns[i].baseType == "bytea")
                copytext::appendBytea(v.text, m_line);
            else
                copytext::escape(v.text, m_line);
            break;
        }
    }
    out.append(m_line, op, version,
               anyAbsent && op != ChangeOp::Delete ? std::string_view(m_mask) : std::string_view());
}

long long RowImages::append(const TableSchema &schema, const std::vector<int> &layout, const Rows &rows,
                            std::int64_t version, bool keepBefore, RowSet &out)
{
    for (const auto &change : rows.rows) {
        switch (rows.op) {
        case RowOp::Insert:
            image(schema, layout, change.after, ChangeOp::Insert, version, out);
            if (keepBefore) // conflict detection: a key that had no row before
                out.setNoBase(out.size() - 1);
            break;
        case RowOp::Delete:
            image(schema, layout, change.before, ChangeOp::Delete, version, out);
            if (keepBefore) {
                const std::string before(out.line(out.size() - 1));
                out.setBefore(out.size() - 1, before);
            }
            break;
        case RowOp::Update: {
            // A changed primary key is a delete of the old key and an insert.
            m_probe.clear();
            image(schema, layout, change.before, ChangeOp::Delete, version, m_probe);
            image(schema, layout, change.after, ChangeOp::Update, version, m_probe, &change.before);
            const bool rekeyed = keyOf(m_probe.line(0), schema.primaryKey) != keyOf(m_probe.line(1), schema.primaryKey);
            if (rekeyed) {
                out.append(m_probe.line(0), ChangeOp::Delete, version);
                if (keepBefore)
                    out.setBefore(out.size() - 1, m_probe.line(0));
            }
            out.append(m_probe.line(1), ChangeOp::Update, version, m_probe.unchangedMask(1));
            // Two-way: the row as it was (FULL images), which conflict detection compares with
            // the target's; a new key had none.
            if (keepBefore && rekeyed)
                out.setNoBase(out.size() - 1);
            else if (keepBefore)
                out.setBefore(out.size() - 1, m_probe.line(0));
            break;
        }
        }
    }
    return static_cast<long long>(rows.rows.size());
}

} // namespace driftless::core::binlog
