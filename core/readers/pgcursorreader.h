#pragma once

#include "core/db/pgconnection.h"
#include "core/model/batch.h"
#include "core/model/tableschema.h"
#include "core/model/workspace.h"
#include "core/readers/sourcereader.h"

#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

/// Where a cursor table stands; stored as the checkpoint's JSON position in the target, written
/// with every page, so a crash resumes at the next page, never from zero.
struct CursorState {
    enum class Phase { Load, Incremental };
    Phase phase = Phase::Load;

    // Initial load, in primary-key chunks straight into the empty target.
    std::vector<std::string> loadAfter; ///< key of the last loaded row (text); empty: from the start
    std::string loadStartedAt;          ///< source clock when the load began (becomes the cursor)

    // Incremental passes.
    std::optional<std::string> cursor; ///< high-water mark; a pass starts `lookback` behind it
    bool inPass = false;
    std::optional<std::string> passFrom; ///< lower bound of this pass; none: from the beginning
    std::optional<std::string> passNow;  ///< source clock at pass start: the cursor never passes it
    std::vector<std::string> passAfter;  ///< cursor value + key of the last row read in this pass
    long long passRows = 0;

    /// What the engine remembers of the source's columns between passes (core/engine/
    /// passschema.h), as JSON text, or empty: stored with the position, opaque to the readers.
    std::string columns;
    /// The source server the state was read from ("pg:<system id>:<timeline>",
    /// "mysql:<server_id>"), or empty when not known: stored with the position, opaque to the
    /// readers. Another one means another history, and a new epoch of row versions.
    std::string source;

    std::string toJson() const;
    /// Throws Error on JSON that is not a cursor position.
    static CursorState fromJson(const std::string &json);
};

/// Reads a Postgres table by keyset on (cursor column, primary key), `page_size` rows a page,
/// each pass starting `lookback` behind the stored cursor so that late commits and shared or
/// truncated timestamps are re-read; the merge deduplicates by key. The cursor's clock is the
/// source's: it never advances past the source's now() at the start of the pass, so a row
/// dated in the future cannot push the window past rows still being written.
///
/// Values travel as parameters (set_config inside the read transaction), never as SQL text.
/// Thread affinity: the thread that owns `conn`.
class PgCursorReader : public CursorReader {
public:
    /// Throws SchemaError when the table has no primary key, or the cursor column is missing or
    /// not a date/time or numeric column.
    PgCursorReader(PgConnection &conn, TableSchema schema, TableSpec spec);

    void beginLoad(CursorState &st) override;
    bool loadChunk(CursorState &st, Batch &out) override;
    void finishLoad(CursorState &st) override;
    void beginPass(CursorState &st) override;
    bool passPage(CursorState &st, Batch &out) override;
    void finishPass(CursorState &st) override;

    bool cursorIsTemporal() const { return m_temporal; }
    const TableSchema &schema() const override { return m_schema; }

private:
    long long readPage(const std::string &sql, const std::vector<std::string> &settings, Batch &out,
                       bool verdict = false);
    std::vector<std::string> lastRowValues(const Batch &out, bool withCursor) const;
    std::string nowExpr() const;

    PgConnection &m_conn;
    TableSchema m_schema;
    TableSpec m_spec;
    int m_cursorIndex = -1;
    std::string m_cursorType;
    bool m_temporal = false;
    std::string m_lookback;
    std::string m_selectList;
    std::string m_keyOrder;
    std::string m_loadFirstSql, m_loadNextSql, m_passAllSql, m_passFromSql, m_passNextSql;
};

} // namespace driftless::core
