#pragma once

#include "core/mergers/merger.h"
#include "core/model/batch.h"
#include "core/model/columnmapping.h"
#include "core/model/tableschema.h"
#include "core/model/workspace.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace driftless::core {

/// A table's source columns projected onto its target through the table's `columns:` mapping:
/// which columns go, under which names, with which masks applied to their values.
///
/// Built from the live source schema; the constructor refuses a mapping that does not fit it
/// (unknown column, excluded key or cursor column, two columns landing on one name, a mask on a
/// key or cursor column other than the hash) with a ConfigError naming the YAML file, line and
/// field. A hash mask reads its key when the projection is built: a missing key is an Error
/// saying how to store one.
///
/// Immutable once built; project() may be called from any thread.
class ColumnProjection {
public:
    /// `readKeys` false: the mapping is checked without reading hash masks' keys (the pipeline
    /// editor's check, before a key is stored); such a projection must not project rows.
    ColumnProjection(const TableSpec &spec, const TableSchema &source, bool readKeys = true);

    /// The target's schema: the kept columns under their target names, masked ones typed as
    /// what the mask leaves (text for a hash), none generated (the target stores what it is sent).
    const TableSchema &target() const { return m_target; }
    const TableSchema &source() const { return m_source; }
    /// Per target column, its source column.
    const std::vector<int> &sourceColumns() const { return m_from; }
    /// The source column a target column name stands for, or empty.
    std::string sourceName(const std::string &targetName) const;
    /// The target column source column `sourceName` lands on, or nullptr when the mapping
    /// leaves it out.
    const ColumnInfo *targetColumn(const std::string &sourceName) const;
    /// True when source column `sourceName` reaches the target masked.
    bool masks(const std::string &sourceName) const;
    /// One value of source column `sourceName` (plain text, nullopt for NULL) as the target
    /// gets it: masked when the mapping masks it. The column must reach the target.
    std::optional<std::string> projectValue(const std::string &sourceName,
                                            const std::optional<std::string> &value) const;

    /// One COPY text row in the source's layout -> the target's. Fields past the source's columns
    /// (a full refresh's trailing version) are kept as they are.
    void projectLine(std::string_view line, std::string &out) const;
    RowSet project(const RowSet &rows) const;

private:
    struct Mask {
        ColumnMask spec;
        std::string key; ///< the HMAC key's bytes
    };
    void maskField(const Mask &m, std::string_view raw, std::string &out) const;

    TableSchema m_source;
    TableSchema m_target;
    std::vector<int> m_from;
    std::vector<int> m_masks; ///< per target column, its mask in m_maskStore or -1
    std::vector<Mask> m_maskStore;
};

/// Answers a hash mask's `key: keychain` with the key's bytes for `table` (its display name),
/// or nullopt. The CLI and the app install one reading the OS keychain; without one, a keychain
/// key is an error saying how to store it. Thread-safe; answers from memory.
using MaskKeyProvider = std::function<std::optional<std::string>(const std::string &table)>;
void setMaskKeyProvider(MaskKeyProvider provider);
/// What the installed provider answers for `table`; nullopt without one. Thread-safe.
std::optional<std::string> maskKeyFor(const std::string &table);

/// What reconciliation compares for a mapped table with a Postgres source: `from`, a FROM item
/// (a subquery over the source table) whose columns are the target's, named and typed as there,
/// with the masks computed by the source in SQL; `target` its schema. `why` is set instead when
/// a mask cannot be computed there (a keyed hash: the key never goes to the source).
struct MappedSourceSql {
    TableSchema target;
    std::string from;
    std::string why;
};
MappedSourceSql pgMappedSource(const TableSpec &spec, const TableSchema &source);

/// The target column source column `column` lands on by the table's `columns:` mapping, read
/// from the mapping alone (the column may be gone from the source): nullopt when the mapping
/// leaves it out, `column` itself without a mapping.
std::optional<std::string> mappedName(const TableSpec &spec, const std::string &column);

/// True when the table's `columns:` mapping names source column `column` (in exclude, include,
/// rename or mask).
bool mappingNames(const TableSpec &spec, const std::string &column);

/// `spec` with every entry of its `columns:` mapping that names one of `columns` left out: the
/// mapping a running table goes on with once the source dropped those columns (the YAML is
/// stale until a DBA edits it; `apply` then says which entry names a column that is gone).
TableSpec withoutMappingOf(const TableSpec &spec, const std::vector<std::string> &columns);

/// Throws the ConfigError ColumnProjection would for `spec` against `source`; nothing for a
/// table without a mapping. `readKeys` false leaves out reading hash masks' keys (see
/// ColumnProjection), so only the mapping itself is judged.
void checkColumnMapping(const TableSpec &spec, const TableSchema &source, bool readKeys = true);

/// `inner` seen through the table's column mapping: every schema and row handed to it is
/// projected first (so excluded columns and unmasked values never reach staging or the target),
/// and what it reports about target columns is named as at the source. Returns `inner` as it is
/// for a table without a mapping.
std::unique_ptr<Merger> withColumnMapping(std::unique_ptr<Merger> inner, const TableSpec &spec);

} // namespace driftless::core
