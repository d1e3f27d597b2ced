// Foreign-key actions the binary log does not carry (ARCHITECTURE.md P7, docs/cdc.md): InnoDB
// performs ON DELETE / ON UPDATE CASCADE and SET NULL inside the storage engine, and MariaDB (like
// MySQL) logs only the parent's change. The stream derives the children's changes from the
// source's foreign keys and the target's rows, and stages them with the parent's version, in
// binlog order, so the same guarded merge applies them in the same target transaction.

#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/cdc/mysql/mysqlcdctable.h"

#include "core/base/copytext.h"
#include "core/db/mysqlcatalog.h"
#include "core/model/error.h"

#include <algorithm>
#include <set>

namespace driftless::core {

namespace {

/// A chain of actions deeper than this (a self-referencing tree, say) stops the child table.
constexpr int kMaxCascadeDepth = 64;

MysqlCdcPipeline::CascadeAction actionOf(const std::string &rule)
{
    if (rule == "CASCADE")
        return MysqlCdcPipeline::CascadeAction::Cascade;
    if (rule == "SET NULL")
        return MysqlCdcPipeline::CascadeAction::SetNull;
    return MysqlCdcPipeline::CascadeAction::None;
}

std::string describeAction(const std::string &on, const std::string &rule)
{
    return "ON " + on + " " + rule;
}

} // namespace

void MysqlCdcPipeline::readForeignKeys(MysqlConnection &src)
{
    m_cascades.clear();
    if (m_jobs.front().twoWay)
        return; // a two-way pipeline's directions write both sides themselves
    std::vector<TableRef> refs;
    std::map<TableRef, Table *> byRef;
    for (auto &t : m_tables) {
        refs.push_back(t->job.spec.table);
        byRef[t->job.spec.table] = t.get();
    }
    std::string applied;
    for (const auto &fk : mysqlcatalog::foreignKeys(src, refs)) {
        auto child = byRef.find(fk.child);
        if (child == byRef.end() || !fk.acts())
            continue; // the source's own business: no synced row changes
        Cascade c;
        c.name = fk.name;
        c.child = child->second;
        c.childColumns = fk.childColumns;
        c.parentColumns = fk.parentColumns;
        c.onDelete = actionOf(fk.onDelete);
        c.onUpdate = actionOf(fk.onUpdate);
        for (const auto &[on, rule] : {std::pair{"DELETE", fk.onDelete}, std::pair{"UPDATE", fk.onUpdate}})
            if (rule == "SET DEFAULT")
                m_observer.event(Level::Warn, c.child->key, "foreign_key",
                                 "foreign key " + fk.name + " of " + fk.child.display() + " says " +
                                     describeAction(on, rule) +
                                     ", which is not applied to the target (InnoDB does "
                                     "not perform it either); reconcile the table after its parent changes");
        if (c.onDelete == CascadeAction::None && c.onUpdate == CascadeAction::None)
            continue;
        std::string what;
        if (c.onDelete != CascadeAction::None)
            what = describeAction("DELETE", fk.onDelete);
        if (c.onUpdate != CascadeAction::None)
            what += (what.empty() ? "" : ", ") + describeAction("UPDATE", fk.onUpdate);
        applied += (applied.empty() ? "" : "; ") + fk.parent.display() + " -> " + fk.child.display() + " (" + what +
                   (byRef.count(fk.parent) ? "" : ", the parent not synced: its changes are read for this") + ")";
        m_cascades[fk.parent].push_back(std::move(c));
    }
    if (!applied.empty())
        m_observer.event(Level::Info, m_tables.front()->key, "foreign_keys",
                         "foreign-key actions the binlog does not carry are applied to the target with their "
                         "parent's change: " +
                             applied);
}

bool MysqlCdcPipeline::cascadesFrom(const TableRef &parent) const
{
    return m_cascades.count(parent) > 0;
}

std::vector<MysqlCdcPipeline::ParentChange> MysqlCdcPipeline::parentChanges(const binlog::Rows &rows) const
{
    std::vector<ParentChange> out;
    if (!rows.table || rows.op == binlog::RowOp::Insert)
        return out;
    const auto &columns = rows.table->columns;
    auto named = [&](const binlog::Image &img) {
        std::map<std::string, std::string> m;
        for (size_t i = 0; i < columns.size() && i < img.size(); ++i) {
            std::string field;
            switch (img[i].kind) {
            case binlog::Value::Kind::Null:
            case binlog::Value::Kind::Absent:
                field = copytext::kNull;
                break;
            default:
                copytext::escape(img[i].text, field);
            }
            m[columns[i].name] = std::move(field);
        }
        return m;
    };
    for (const auto &change : rows.rows) {
        ParentChange pc;
        pc.before = named(change.before);
        if (rows.op == binlog::RowOp::Update)
            pc.after = named(change.after);
        out.push_back(std::move(pc));
    }
    return out;
}

void MysqlCdcPipeline::cascade(const TableRef &parent, const std::vector<ParentChange> &changes, std::int64_t version,
                               CascadeContext &cx, int depth)
{
    auto it = m_cascades.find(parent);
    if (it == m_cascades.end() || changes.empty())
        return;
    for (const Cascade &c : it->second) {
        Table &child = *c.child;
        if (!cx.applies(child))
            continue;
        auto valuesOf = [&](const std::map<std::string, std::string> &row, const std::vector<std::string> &names) {
            std::vector<std::string> v;
            for (const auto &n : names) {
                auto f = row.find(n);
                v.push_back(f == row.end() ? std::string(copytext::kNull) : f->second);
            }
            return v;
        };
        std::vector<std::vector<std::string>> deleted;
        std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> updated;
        for (const auto &pc : changes) {
            auto before = valuesOf(pc.before, c.parentColumns);
            if (!pc.after) {
                if (c.onDelete != CascadeAction::None)
                    deleted.push_back(std::move(before));
                continue;
            }
            auto after = valuesOf(*pc.after, c.parentColumns);
            if (after != before && c.onUpdate != CascadeAction::None)
                updated.emplace_back(std::move(before), std::move(after));
        }
        if (deleted.empty() && updated.empty())
            continue;
        try {
            if (depth >= kMaxCascadeDepth)
                throw Error(ErrorKind::Permanent,
                            "foreign key " + c.name + " continues a chain of more than " +
                                std::to_string(kMaxCascadeDepth) + " foreign-key actions from " + parent.display(),
                            {}, "reconcile the table after such deletes");
            cascadeInto(c, deleted, updated, version, cx, depth);
        } catch (const Error &e) {
            if (!cx.stopChild(child, e))
                throw;
        }
    }
}

void MysqlCdcPipeline::cascadeInto(
    const Cascade &c, const std::vector<std::vector<std::string>> &deleted,
    const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> &updated, std::int64_t version,
    CascadeContext &cx, int depth)
{
    Table &child = *c.child;
    const TableSchema &schema = child.source.schema;
    const size_t width = schema.columns.size();
    std::vector<int> childIdx;
    for (const auto &n : c.childColumns) {
        const int i = schema.columnIndex(n);
        if (i < 0)
            throw SchemaError("foreign key " + c.name + " names column " + displayIdent(n) + ", which " +
                                  schema.table.display() + " does not have",
                              "re-snapshot the table");
        childIdx.push_back(i);
    }
    const auto &key = schema.primaryKey;
    auto inKey = [&](int i) { return std::find(key.begin(), key.end(), i) != key.end(); };
    const bool rekeys = std::any_of(childIdx.begin(), childIdx.end(), inKey);
    // What the child's own foreign keys, as a parent, need to follow the chain.
    std::set<int> wanted(key.begin(), key.end());
    wanted.insert(childIdx.begin(), childIdx.end());
    if (auto own = m_cascades.find(schema.table); own != m_cascades.end())
        for (const auto &g : own->second)
            for (const auto &n : g.parentColumns)
                if (const int i = schema.columnIndex(n); i >= 0)
                    wanted.insert(i);
    std::vector<int> fields(wanted.begin(), wanted.end());
    std::vector<int> all(width);
    for (size_t i = 0; i < width; ++i)
        all[i] = static_cast<int>(i);

    // Changes the child has staged before this point of the stream reach the target first, so
    // the rows found are the ones the parent's change met at the source.
    cx.stagePending();
    Merger &merger = cx.mergerOf(child);
    RowSet &out = cx.pending(child);
    std::vector<std::string_view> parts;
    auto named = [&](const std::vector<std::string> &fieldsOfLine) {
        std::map<std::string, std::string> m;
        for (size_t i = 0; i < width; ++i)
            m[schema.columns[i].name] = fieldsOfLine[i];
        return m;
    };
    auto split = [&](const std::string &line) {
        copytext::split(line, parts);
        std::vector<std::string> f(width, std::string(copytext::kNull));
        for (size_t i = 0; i < width && i < parts.size(); ++i)
            f[i] = std::string(parts[i]);
        return f;
    };
    auto join = [](const std::vector<std::string> &f) {
        std::string line;
        for (size_t i = 0; i < f.size(); ++i)
            line += (i ? "\t" : "") + f[i];
        return line;
    };
    // Every column but the key and `changedCols` keeps the target's value.
    auto keepingOthers = [&](const std::vector<int> &changedCols) {
        std::string mask(width, '1');
        for (int k : key)
            mask[static_cast<size_t>(k)] = '0';
        for (int i : changedCols)
            mask[static_cast<size_t>(i)] = '0';
        return mask;
    };
    std::vector<ParentChange> next;
    long long staged = 0;

    // A parent's delete: ON DELETE CASCADE removes the children, SET NULL empties their columns.
    if (!deleted.empty()) {
        const auto lines = merger.rowsReferencing(c.childColumns, deleted, fields);
        for (const auto &line : lines) {
            auto f = split(line);
            if (c.onDelete == CascadeAction::Cascade) {
                out.append(line, ChangeOp::Delete, version);
                next.push_back({named(f), std::nullopt});
            } else if (!rekeys) {
                auto after = f;
                for (int i : childIdx)
                    after[static_cast<size_t>(i)] = std::string(copytext::kNull);
                out.append(join(after), ChangeOp::Update, version, keepingOthers(childIdx));
                next.push_back({named(f), named(after)});
            }
            ++staged;
        }
    }
    // A parent's update of the referenced columns: ON UPDATE CASCADE carries the new values into
    // the children (a child keyed by them gets a new key: the old row goes, the new one comes
    // with every value the target held), SET NULL empties them.
    for (const auto &[before, after] : updated) {
        const auto lines = merger.rowsReferencing(c.childColumns, {before}, rekeys ? all : fields);
        for (const auto &line : lines) {
            auto f = split(line);
            auto changed = f;
            for (size_t k = 0; k < childIdx.size(); ++k)
                changed[static_cast<size_t>(childIdx[k])] =
                    c.onUpdate == CascadeAction::Cascade ? after[k] : std::string(copytext::kNull);
            if (rekeys && c.onUpdate == CascadeAction::Cascade) {
                out.append(line, ChangeOp::Delete, version);
                out.append(join(changed), ChangeOp::Insert, version);
            } else if (!rekeys) {
                out.append(join(changed), ChangeOp::Update, version, keepingOthers(childIdx));
            } else {
                continue; // SET NULL on key columns: the source refuses it
            }
            next.push_back({named(f), named(changed)});
            ++staged;
        }
    }
    cx.counted(child, staged);
    cascade(schema.table, next, version, cx, depth + 1);
}

} // namespace driftless::core
