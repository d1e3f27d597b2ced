#include "core/engine/rows/columnmapping.h"

#include "core/base/copytext.h"
#include "core/model/error.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace driftless::core {

namespace {

std::mutex g_keyMutex;
MaskKeyProvider g_keyProvider;

[[noreturn]] void refuse(const ColumnMapping &m, const std::string &entry, const std::string &message)
{
    const MappingSpot s = m.spot(entry);
    throw ConfigError(message, s.file, s.line, s.field);
}

/// Bytes of UTF-8 text up to its `n`th character (or all of it).
size_t utf8Prefix(std::string_view s, size_t n)
{
    size_t chars = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
            if (chars == n)
                return i;
            ++chars;
        }
    }
    return s.size();
}

size_t utf8Length(std::string_view s)
{
    return static_cast<size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string readKey(const ColumnMask &mask, const TableSpec &spec)
{
    if (mask.key.rfind("file:", 0) == 0) {
        std::string path = mask.key.substr(5);
        if (path.rfind("~/", 0) == 0) {
            const char *home = std::getenv("HOME");
            path = std::string(home ? home : "") + path.substr(1);
        }
        std::ifstream in(path, std::ios::binary);
        std::stringstream ss;
        if (in)
            ss << in.rdbuf();
        std::string key = ss.str();
        while (!key.empty() && (key.back() == '\n' || key.back() == '\r'))
            key.pop_back();
        if (key.empty())
            throw Error(ErrorKind::Permanent,
                        "the HMAC key file " + path + " of table " + spec.table.display() +
                            " is missing, unreadable or empty",
                        {}, "write a random key into it, e.g. openssl rand -hex 32 > " + path + "; chmod 600 " + path);
        return key;
    }
    const std::optional<std::string> key = maskKeyFor(spec.table.display());
    if (!key || key->empty())
        throw Error(ErrorKind::Permanent, "no HMAC key in the OS keychain for table " + spec.table.display(), {},
                    "store a random key (e.g. the output of openssl rand -hex 32) in the keychain under service "
                    "Driftless, key hmac:" +
                        spec.table.display() +
                        " (the desktop session's Secret Service), or "
                        "name a key file instead: key: file:PATH");
    return *key;
}

bool isStringType(const ColumnInfo &c)
{
    return c.category == 'S' && !c.isArray;
}

} // namespace

void setMaskKeyProvider(MaskKeyProvider provider)
{
    std::lock_guard lock(g_keyMutex);
    g_keyProvider = std::move(provider);
}

std::optional<std::string> maskKeyFor(const std::string &table)
{
    std::lock_guard lock(g_keyMutex);
    return g_keyProvider ? g_keyProvider(table) : std::nullopt;
}

ColumnProjection::ColumnProjection(const TableSpec &spec, const TableSchema &source, bool readKeys) : m_source(source)
{
    static const ColumnMapping kNone;
    const ColumnMapping &m = spec.columns ? *spec.columns : kNone;
    const std::string table = spec.table.display();
    auto known = [&](const std::string &entry, const std::string &col) {
        if (source.columnIndex(col) < 0)
            refuse(m, entry, "table " + table + " has no column " + displayIdent(col) + " at the source");
    };
    for (const auto &c : m.exclude)
        known("exclude:" + c, c);
    for (const auto &c : m.include)
        known("include:" + c, c);
    for (const auto &r : m.rename)
        known("rename:" + r.first, r.first);
    for (const auto &k : m.mask)
        known("mask:" + k.first, k.first);

    auto kept = [&](const std::string &col) {
        if (m.hasInclude)
            return std::find(m.include.begin(), m.include.end(), col) != m.include.end();
        return std::find(m.exclude.begin(), m.exclude.end(), col) == m.exclude.end();
    };
    auto leftOutEntry = [&](const std::string &col) {
        return m.hasInclude ? std::string("include:") + m.include.front() : "exclude:" + col;
    };
    for (int k : source.primaryKey) {
        const auto &col = source.columns[static_cast<size_t>(k)].name;
        if (!kept(col))
            refuse(m, leftOutEntry(col),
                   "column " + displayIdent(col) + " is part of the primary key of " + table +
                       ": the target merges by it, so it cannot be left out");
    }
    const bool byCursor = spec.strategy == Strategy::Cursor;
    if (byCursor && source.columnIndex(spec.cursorColumn()) >= 0 && !kept(spec.cursorColumn()))
        refuse(m, leftOutEntry(spec.cursorColumn()),
               "column " + displayIdent(spec.cursorColumn()) + " is the cursor of " + table +
                   ": it cannot be left out");

    auto isKey = [&](const std::string &col) {
        const int i = source.columnIndex(col);
        return std::find(source.primaryKey.begin(), source.primaryKey.end(), i) != source.primaryKey.end();
    };
    for (const auto &[col, mask] : m.mask) {
        const std::string entry = "mask:" + col;
        if (!kept(col))
            refuse(m, entry,
                   "column " + displayIdent(col) + " is masked but left out of the target; remove one of the two");
        if (byCursor && col == spec.cursorColumn())
            refuse(m, entry,
                   "column " + displayIdent(col) + " is the cursor of " + table +
                       ": a masked cursor cannot be compared; remove the mask");
        if (isKey(col) && mask.kind != ColumnMask::Kind::Hash)
            refuse(m, entry,
                   "column " + displayIdent(col) + " is part of the primary key of " + table +
                       ": only a deterministic hash ({ hash: hmac-sha256, key: ... }) keeps keys apart");
        const auto &info = source.columns[static_cast<size_t>(source.columnIndex(col))];
        if ((mask.kind == ColumnMask::Kind::Truncate || mask.kind == ColumnMask::Kind::KeepLast) && !isStringType(info))
            refuse(m, entry,
                   "column " + displayIdent(col) + " is " + info.typeSql +
                       ": truncate and keep_last apply to text columns; use { null: true } or a hash");
    }

    std::map<std::string, std::string> renamed(m.rename.begin(), m.rename.end());
    std::set<std::string> targetNames;
    m_target = source;
    m_target.columns.clear();
    m_target.primaryKey.clear();
    std::vector<int> maskOf;
    for (size_t i = 0; i < source.columns.size(); ++i) {
        const ColumnInfo &c = source.columns[i];
        if (!kept(c.name))
            continue;
        ColumnInfo t = c;
        if (auto r = renamed.find(c.name); r != renamed.end()) {
            const int other = source.columnIndex(r->second);
            if (other >= 0 && r->second != c.name && kept(r->second) && !renamed.count(r->second))
                refuse(m, "rename:" + c.name,
                       "renames " + displayIdent(c.name) + " onto " + displayIdent(r->second) +
                           ", a column the target already gets; exclude or rename that one too");
            t.name = r->second;
        }
        if (!targetNames.insert(t.name).second)
            refuse(m, "rename:" + c.name, "two columns land on the target name " + displayIdent(t.name));
        // The target stores the values it is sent: an expression over renamed or left-out
        // columns would not compute the same thing there.
        t.generated = false;
        t.generationExpr.clear();
        int maskIndex = -1;
        for (const auto &[col, mask] : m.mask) {
            if (col != c.name)
                continue;
            Mask mk{mask, {}};
            if (mask.kind == ColumnMask::Kind::Hash) {
                if (readKeys)
                    mk.key = readKey(mask, spec);
                t.typeSql = "text";
                t.baseType = "text";
                t.category = 'S';
                t.isArray = t.isEnum = false;
                t.enumLabels.clear();
                t.typeSchema = "pg_catalog";
            } else if (mask.kind == ColumnMask::Kind::Null) {
                t.notNull = false;
            }
            m_maskStore.push_back(std::move(mk));
            maskIndex = static_cast<int>(m_maskStore.size()) - 1;
        }
        m_from.push_back(static_cast<int>(i));
        maskOf.push_back(maskIndex);
        m_target.columns.push_back(std::move(t));
    }
    for (int k : source.primaryKey)
        m_target.primaryKey.push_back(static_cast<int>(std::find(m_from.begin(), m_from.end(), k) - m_from.begin()));
    m_masks = std::move(maskOf);
}

std::string ColumnProjection::sourceName(const std::string &targetName) const
{
    for (size_t i = 0; i < m_target.columns.size(); ++i)
        if (m_target.columns[i].name == targetName)
            return m_source.columns[static_cast<size_t>(m_from[i])].name;
    return {};
}

const ColumnInfo *ColumnProjection::targetColumn(const std::string &sourceName) const
{
    const int from = m_source.columnIndex(sourceName);
    for (size_t i = 0; i < m_from.size(); ++i)
        if (m_from[i] == from)
            return &m_target.columns[i];
    return nullptr;
}

bool ColumnProjection::masks(const std::string &sourceName) const
{
    const int from = m_source.columnIndex(sourceName);
    for (size_t i = 0; i < m_from.size(); ++i)
        if (m_from[i] == from)
            return m_masks[i] >= 0;
    return false;
}

std::optional<std::string> ColumnProjection::projectValue(const std::string &sourceName,
                                                          const std::optional<std::string> &value) const
{
    const int from = m_source.columnIndex(sourceName);
    for (size_t i = 0; i < m_from.size(); ++i) {
        if (m_from[i] != from)
            continue;
        if (m_masks[i] < 0)
            return value;
        std::string raw, masked, out;
        if (value)
            copytext::escape(*value, raw);
        else
            raw = copytext::kNull;
        maskField(m_maskStore[static_cast<size_t>(m_masks[i])], raw, masked);
        if (copytext::isNull(masked))
            return std::nullopt;
        copytext::unescape(masked, out);
        return out;
    }
    throw Error(ErrorKind::Permanent, "column " + displayIdent(sourceName) + " does not reach the target");
}

void ColumnProjection::maskField(const Mask &m, std::string_view raw, std::string &out) const
{
    if (copytext::isNull(raw) || m.spec.kind == ColumnMask::Kind::Null) {
        out.append(copytext::kNull);
        return;
    }
    std::string value;
    copytext::unescape(raw, value);
    switch (m.spec.kind) {
    case ColumnMask::Kind::Null:
        break;
    case ColumnMask::Kind::Truncate:
        value.resize(utf8Prefix(value, static_cast<size_t>(m.spec.count)));
        break;
    case ColumnMask::Kind::KeepLast: {
        const size_t len = utf8Length(value);
        const size_t hide = len > static_cast<size_t>(m.spec.count) ? len - static_cast<size_t>(m.spec.count) : 0;
        value = std::string(hide, '*') + value.substr(utf8Prefix(value, hide));
        break;
    }
    case ColumnMask::Kind::Hash: {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int size = 0;
        HMAC(EVP_sha256(), m.key.data(), static_cast<int>(m.key.size()),
             reinterpret_cast<const unsigned char *>(value.data()), value.size(), digest, &size);
        value.clear();
        copytext::appendHex(std::string_view(reinterpret_cast<const char *>(digest), size), value);
        break;
    }
    }
    copytext::escape(value, out);
}

void ColumnProjection::projectLine(std::string_view line, std::string &out) const
{
    if (!line.empty() && line.back() == '\n')
        line.remove_suffix(1);
    std::vector<std::string_view> fields;
    copytext::split(line, fields);
    for (size_t i = 0; i < m_from.size(); ++i) {
        if (i)
            out.push_back('\t');
        const auto from = static_cast<size_t>(m_from[i]);
        const std::string_view raw = from < fields.size() ? fields[from] : copytext::kNull;
        if (m_masks[i] >= 0)
            maskField(m_maskStore[static_cast<size_t>(m_masks[i])], raw, out);
        else
            out.append(raw);
    }
    for (size_t i = m_source.columns.size(); i < fields.size(); ++i) {
        out.push_back('\t');
        out.append(fields[i]);
    }
}

RowSet ColumnProjection::project(const RowSet &rows) const
{
    RowSet out;
    out.reserve(rows.size(), rows.bytes());
    std::string line, mask;
    for (size_t r = 0; r < rows.size(); ++r) {
        line.clear();
        projectLine(rows.line(r), line);
        mask.clear();
        if (auto um = rows.unchangedMask(r); !um.empty())
            for (int from : m_from)
                mask.push_back(static_cast<size_t>(from) < um.size() ? um[static_cast<size_t>(from)] : '0');
        out.append(line, rows.row(r).op, rows.row(r).version, mask);
    }
    return out;
}

MappedSourceSql pgMappedSource(const TableSpec &spec, const TableSchema &source)
{
    MappedSourceSql out;
    const ColumnProjection p(spec, source);
    out.target = p.target();
    std::string select;
    for (size_t i = 0; i < p.target().columns.size(); ++i) {
        const ColumnInfo &from = source.columns[static_cast<size_t>(p.sourceColumns()[i])];
        const ColumnInfo &to = p.target().columns[i];
        const std::string col = "m." + quoteIdent(from.name);
        std::string expr = col;
        for (const auto &[name, mask] : spec.columns->mask) {
            if (name != from.name)
                continue;
            const std::string n = std::to_string(mask.count);
            switch (mask.kind) {
            case ColumnMask::Kind::Null:
                expr = "NULL::" + from.typeSql;
                break;
            case ColumnMask::Kind::Truncate:
                expr = "left(" + col + ", " + n + ")";
                break;
            case ColumnMask::Kind::KeepLast:
                expr =
                    "repeat('*', greatest(char_length(" + col + ") - " + n + ", 0)) || right(" + col + ", " + n + ")";
                break;
            case ColumnMask::Kind::Hash:
                out.why = "column " + displayIdent(from.name) +
                          " is masked by a keyed hash, which the source cannot compute without being sent the key; "
                          "compare the other columns with a view, or re-backfill the table to correct it";
                return out;
            }
        }
        select += (i ? ", " : "") + expr + " AS " + quoteIdent(to.name);
    }
    // A row filter names the source's columns: it applies before the projection renames them.
    out.from = "(SELECT " + select + " FROM " + source.fromSql() + " m" +
               (spec.where ? " WHERE (" + *spec.where + ")" : std::string()) + ")";
    return out;
}

std::optional<std::string> mappedName(const TableSpec &spec, const std::string &column)
{
    if (!spec.columns)
        return column;
    const ColumnMapping &m = *spec.columns;
    auto in = [&](const std::vector<std::string> &v) { return std::find(v.begin(), v.end(), column) != v.end(); };
    if ((m.hasInclude && !in(m.include)) || in(m.exclude))
        return std::nullopt;
    for (const auto &[from, to] : m.rename)
        if (from == column)
            return to;
    return column;
}

bool mappingNames(const TableSpec &spec, const std::string &column)
{
    if (!spec.columns)
        return false;
    const ColumnMapping &m = *spec.columns;
    auto in = [&](const std::vector<std::string> &v) { return std::find(v.begin(), v.end(), column) != v.end(); };
    return in(m.exclude) || in(m.include) ||
           std::any_of(m.rename.begin(), m.rename.end(), [&](const auto &r) { return r.first == column; }) ||
           std::any_of(m.mask.begin(), m.mask.end(), [&](const auto &k) { return k.first == column; });
}

TableSpec withoutMappingOf(const TableSpec &spec, const std::vector<std::string> &columns)
{
    TableSpec out = spec;
    if (!out.columns)
        return out;
    ColumnMapping &m = *out.columns;
    auto gone = [&](const std::string &c) { return std::find(columns.begin(), columns.end(), c) != columns.end(); };
    std::erase_if(m.exclude, gone);
    std::erase_if(m.include, gone);
    std::erase_if(m.rename, [&](const auto &r) { return gone(r.first); });
    std::erase_if(m.mask, [&](const auto &k) { return gone(k.first); });
    return out;
}

void checkColumnMapping(const TableSpec &spec, const TableSchema &source, bool readKeys)
{
    if (spec.columns && !spec.columns->empty())
        ColumnProjection(spec, source, readKeys);
}

namespace {

/// A target's columns (as Merger::targetColumns() spells them) named and typed as at the source
/// through `p`; the source columns `p` leaves out count as present. Nothing for no target table.
std::vector<std::pair<std::string, std::string>> namedAsSource(const ColumnProjection &p,
                                                               std::vector<std::pair<std::string, std::string>> cols)
{
    if (cols.empty())
        return cols;
    const TableSchema &src = p.source();
    for (auto &[name, type] : cols) {
        const std::string from = p.sourceName(name);
        if (from.empty())
            continue;
        const auto &c = src.columns[static_cast<size_t>(src.columnIndex(from))];
        const auto &t = p.target().columns[static_cast<size_t>(p.target().columnIndex(name))];
        if (t.typeSql != c.typeSql && t.typeSql == type)
            type = c.typeSql; // a hashed column: text by design
        name = from;
    }
    for (size_t i = 0; i < src.columns.size(); ++i)
        if (std::find(p.sourceColumns().begin(), p.sourceColumns().end(), static_cast<int>(i)) ==
            p.sourceColumns().end())
            cols.emplace_back(src.columns[i].name, src.columns[i].typeSql);
    return cols;
}

/// A Merger behind a column mapping (see withColumnMapping()).
class MappedMerger final : public Merger {
public:
    MappedMerger(std::unique_ptr<Merger> inner, TableSpec spec) : m_inner(std::move(inner)), m_spec(std::move(spec)) {}

    void prepare(const TableSchema &source) override
    {
        m_proj = std::make_unique<ColumnProjection>(m_spec, source);
        m_inner->prepare(m_proj->target());
    }
    std::optional<Checkpoint> readCheckpoint() override { return m_inner->readCheckpoint(); }
    bool adoptedNow() const override { return m_inner->adoptedNow(); }
    bool unmanagedTarget() override { return m_inner->unmanagedTarget(); }
    int epoch() const override { return m_inner->epoch(); }
    void setEpoch(int epoch) override { m_inner->setEpoch(epoch); }
    std::int64_t highestVersion() override { return m_inner->highestVersion(); }
    std::vector<std::string> rowsReferencing(const std::vector<std::string> &columns,
                                             const std::vector<std::vector<std::string>> &values,
                                             const std::vector<int> &fields) override
    {
        // Asked in source names and layout; the target holds the kept columns under their names.
        const ColumnProjection &p = proj();
        auto reaching = [&](const std::string &name) {
            const ColumnInfo *t = p.targetColumn(name);
            if (!t || p.masks(name))
                throw Error(ErrorKind::Permanent,
                            "column " + displayIdent(name) + " of " + m_spec.table.display() +
                                " takes part in a foreign-key action but its columns: mapping " +
                                (t ? "masks it" : "leaves it out") + ", so the rows it reaches cannot be found",
                            {}, "map the column through unmasked, or reconcile the table after deletes of its parent");
            return t->name;
        };
        std::vector<std::string> names;
        for (const auto &c : columns)
            names.push_back(reaching(c));
        std::vector<int> targetFields;
        const auto &from = p.sourceColumns();
        for (int f : fields) {
            reaching(p.source().columns.at(static_cast<size_t>(f)).name);
            for (size_t t = 0; t < from.size(); ++t)
                if (from[t] == f)
                    targetFields.push_back(static_cast<int>(t));
        }
        std::vector<std::string> out;
        std::vector<std::string_view> parts;
        for (const auto &line : m_inner->rowsReferencing(names, values, targetFields)) {
            copytext::split(line, parts);
            std::vector<std::string_view> fieldsOut(p.source().columns.size(), copytext::kNull);
            for (size_t t = 0; t < from.size() && t < parts.size(); ++t)
                if (from[t] >= 0)
                    fieldsOut[static_cast<size_t>(from[t])] = parts[t];
            std::string back;
            for (size_t i = 0; i < fieldsOut.size(); ++i)
                back += std::string(i ? "\t" : "") + std::string(fieldsOut[i]);
            out.push_back(std::move(back));
        }
        return out;
    }
    void clearCheckpoint() override { m_inner->clearCheckpoint(); }
    bool targetEmpty() override { return m_inner->targetEmpty(); }
    ApplyResult apply(const Batch &batch) override
    {
        Batch b;
        b.id = batch.id;
        b.checkpoint = batch.checkpoint;
        b.freshAsOfMs = batch.freshAsOfMs;
        b.directLoad = batch.directLoad;
        b.rows = proj().project(batch.rows);
        return m_inner->apply(b);
    }
    long long replaceAll(const std::function<void(const std::function<void(std::string_view)> &sink)> &rows,
                         const Checkpoint &checkpoint) override
    {
        const ColumnProjection &p = proj();
        return m_inner->replaceAll(
            [&](const std::function<void(std::string_view)> &sink) {
                std::string partial, out;
                rows([&](std::string_view chunk) {
                    // Rows may span chunks: project whole lines only.
                    out.clear();
                    size_t start = 0;
                    for (size_t nl; (nl = chunk.find('\n', start)) != std::string_view::npos; start = nl + 1) {
                        std::string_view line = chunk.substr(start, nl - start);
                        if (!partial.empty()) {
                            partial.append(line);
                            p.projectLine(partial, out);
                            partial.clear();
                        } else {
                            p.projectLine(line, out);
                        }
                        out.push_back('\n');
                    }
                    partial.append(chunk.substr(start));
                    if (!out.empty())
                        sink(out);
                });
                if (!partial.empty()) {
                    out.clear();
                    p.projectLine(partial, out);
                    out.push_back('\n');
                    sink(out);
                }
            },
            checkpoint);
    }
    std::string describeTarget() const override { return m_inner->describeTarget(); }
    ApplyResult mergeInTransaction(const RowSet &rows) override
    {
        return m_inner->mergeInTransaction(proj().project(rows));
    }
    long long loadInTransaction(const RowSet &rows) override
    {
        return m_inner->loadInTransaction(proj().project(rows));
    }
    long long truncateInTransaction() override { return m_inner->truncateInTransaction(); }
    void writeCheckpointInTransaction(const Checkpoint &cp, long long rows) override
    {
        m_inner->writeCheckpointInTransaction(cp, rows);
    }
    void addMissingColumns(const TableSchema &source) override
    {
        // A column the source gained goes through the mapping too: one an include list does
        // not name, or an exclude list does, stays out.
        m_proj = std::make_unique<ColumnProjection>(m_spec, source);
        m_inner->addMissingColumns(m_proj->target());
    }
    long long deleteOlderInTransaction(std::int64_t version) override
    {
        return m_inner->deleteOlderInTransaction(version);
    }
    ApplyResult mergeSnapshotChunkInTransaction(const RowSet &rows) override
    {
        return m_inner->mergeSnapshotChunkInTransaction(proj().project(rows));
    }
    long long deleteUnseenInTransaction(std::int64_t version) override
    {
        return m_inner->deleteUnseenInTransaction(version);
    }
    void clearSeenInTransaction() override { m_inner->clearSeenInTransaction(); }
    long long seenCount() override { return m_inner->seenCount(); }
    std::vector<size_t> partialRowsWithoutTarget(const RowSet &rows) override
    {
        return m_inner->partialRowsWithoutTarget(proj().project(rows));
    }
    std::string pendingRequest() override { return m_inner->pendingRequest(); }
    std::map<std::string, std::string> pendingRequests() override { return m_inner->pendingRequests(); }
    void setRequest(const std::string &request) override { m_inner->setRequest(request); }
    std::vector<std::int64_t> guardVersions(const RowSet &rows) override
    {
        return m_inner->guardVersions(proj().project(rows));
    }
    /// Named and typed as at the source, so a comparison with the source schema sees what the
    /// mapping made of it as no drift; columns left out count as present.
    std::vector<std::pair<std::string, std::string>> targetColumns() override
    {
        auto cols = m_inner->targetColumns();
        return m_proj ? namedAsSource(*m_proj, std::move(cols)) : cols;
    }
    std::vector<std::pair<std::string, std::string>> targetColumnsAsSource(const TableSchema &source) override
    {
        if (m_proj)
            return targetColumns();
        // Before prepare(): named through the mapping as it applies to `source` (no keys read).
        return namedAsSource(ColumnProjection(m_spec, source, false), m_inner->targetColumns());
    }
    std::vector<std::string> generatedColumns() const override
    {
        auto cols = m_inner->generatedColumns();
        if (m_proj)
            for (auto &n : cols)
                if (auto from = m_proj->sourceName(n); !from.empty())
                    n = from;
        return cols;
    }

    // Schema changes (docs/schema-changes.md, "Tables with a columns: mapping"): named as at the
    // source by the callers, translated here to the target's names; a column the mapping leaves
    // out has nothing on the target to change.
    bool fillsColumns() const override { return m_inner->fillsColumns(); }
    bool changesColumns() const override { return m_inner->changesColumns(); }
    bool writesColumn(const std::string &column) const override
    {
        return m_proj ? m_proj->targetColumn(column) != nullptr : true;
    }
    long long fillColumnsInTransaction(const ColumnFill &fill, std::int64_t below) override
    {
        const ColumnProjection &p = proj();
        ColumnFill out;
        std::vector<std::string> from; // per field of `out`, its source column
        for (const auto &k : fill.keyColumns) {
            out.keyColumns.push_back(targetName(k));
            from.push_back(k);
        }
        std::vector<size_t> kept; // fields of `fill`'s rows that reach the target
        for (size_t i = 0; i < fill.keyColumns.size(); ++i)
            kept.push_back(i);
        for (size_t i = 0; i < fill.columns.size(); ++i)
            if (p.targetColumn(fill.columns[i])) {
                out.columns.push_back(targetName(fill.columns[i]));
                from.push_back(fill.columns[i]);
                kept.push_back(fill.keyColumns.size() + i);
            }
        if (out.columns.empty())
            return 0;
        out.rows.reserve(fill.rows.size());
        for (const auto &row : fill.rows) {
            std::vector<std::optional<std::string>> r;
            r.reserve(kept.size());
            for (size_t f = 0; f < kept.size(); ++f)
                r.push_back(p.projectValue(from[f], row[kept[f]]));
            out.rows.push_back(std::move(r));
        }
        return m_inner->fillColumnsInTransaction(out, below);
    }
    /// Compared with the source's own values: only where the mapping sends them as they are.
    std::string columnChecksum(const std::vector<std::string> &keyColumns,
                               const std::vector<std::string> &columns) override
    {
        const ColumnProjection &p = proj();
        std::vector<std::string> keys, cols;
        for (const auto &k : keyColumns) {
            if (!p.targetColumn(k) || p.masks(k))
                return {};
            keys.push_back(targetName(k));
        }
        for (const auto &c : columns) {
            if (!p.targetColumn(c) || p.masks(c))
                return {};
            cols.push_back(targetName(c));
        }
        return m_inner->columnChecksum(keys, cols);
    }
    bool holdsType(const ColumnInfo &c, bool key, const std::string &targetType) const override
    {
        if (m_proj && m_proj->masks(c.name))
            if (const ColumnInfo *t = m_proj->targetColumn(c.name); t && m_inner->holdsType(*t, key, targetType))
                return true; // a hashed column: text by design
        return m_inner->holdsType(c, key, targetType);
    }
    std::string dropColumn(const TableSchema &source, const std::string &column, bool drop) override
    {
        // Told by the mapping, not the projection: a pass prepares for the source as it is now,
        // without the column.
        const std::string name = mappedName(m_spec, column).value_or("");
        // The mapping may name the column (the YAML is stale until a DBA edits it): the table
        // goes on without those entries.
        std::vector<std::string> gone{column}; // and any other the source dropped at the same time
        if (m_spec.columns) {
            const ColumnMapping &m = *m_spec.columns;
            std::vector<std::string> named = m.exclude;
            named.insert(named.end(), m.include.begin(), m.include.end());
            for (const auto &r : m.rename)
                named.push_back(r.first);
            for (const auto &k : m.mask)
                named.push_back(k.first);
            for (const auto &n : named)
                if (source.columnIndex(n) < 0)
                    gone.push_back(n);
        }
        m_spec = withoutMappingOf(m_spec, gone);
        m_proj = std::make_unique<ColumnProjection>(m_spec, source);
        if (name.empty())
            return "not on the target (the table's columns: mapping leaves it out)";
        std::string done = m_inner->dropColumn(m_proj->target(), name, drop);
        if (name != column)
            done = (done.empty() ? std::string("kept on the target, no longer written") : done) +
                   " (its target column " + displayIdent(name) + ")";
        return done;
    }
    std::string widenColumn(const TableSchema &source, const std::string &column) override
    {
        const ColumnProjection &p = proj();
        const ColumnInfo *was = p.targetColumn(column);
        const std::string name = was ? was->name : std::string();
        const bool hashed = was && p.masks(column) && was->typeSql == "text" &&
                            p.source().columns[static_cast<size_t>(p.source().columnIndex(column))].typeSql != "text";
        m_proj = std::make_unique<ColumnProjection>(m_spec, source); // `p` and `was` are gone from here on
        if (name.empty())
            return "(not on the target: the table's columns: mapping leaves it out)";
        if (hashed)
            return "(the target holds its hash, as text: nothing to change there)";
        return m_inner->widenColumn(m_proj->target(), name);
    }
    std::string renameColumn(const TableSchema &source, const std::string &from, const std::string &to) override
    {
        // Callers rename only columns the mapping does not name, so the target's name is the
        // source's (or the column is left out by an include list).
        const bool onTarget = proj().targetColumn(from) != nullptr;
        m_proj = std::make_unique<ColumnProjection>(m_spec, source);
        if (!onTarget)
            return "not on the target (the table's columns: mapping leaves it out)";
        return m_inner->renameColumn(m_proj->target(), from, to);
    }

private:
    const ColumnProjection &proj() const
    {
        if (!m_proj)
            throw Error(ErrorKind::Permanent,
                        "table " + m_spec.table.display() + ": rows before the target was prepared");
        return *m_proj;
    }
    std::string targetName(const std::string &sourceName) const
    {
        const ColumnInfo *t = proj().targetColumn(sourceName);
        if (!t)
            throw Error(ErrorKind::Permanent, "table " + m_spec.table.display() + ": column " +
                                                  displayIdent(sourceName) + " does not reach the target");
        return t->name;
    }

    std::unique_ptr<Merger> m_inner;
    TableSpec m_spec;
    std::unique_ptr<ColumnProjection> m_proj;
};

} // namespace

std::unique_ptr<Merger> withColumnMapping(std::unique_ptr<Merger> inner, const TableSpec &spec)
{
    if (!spec.columns || spec.columns->empty())
        return inner;
    return std::make_unique<MappedMerger>(std::move(inner), spec);
}

} // namespace driftless::core
