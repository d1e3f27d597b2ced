#pragma once

#include "ui/enginesnapshot.h"

#include "core/engine/status/statusreport.h"

#include <QAbstractTableModel>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace driftless::ui {

/// One row per synced table, over the tables of an EngineSnapshot.
///
/// setSnapshot() applies a snapshot as a diff, never as a reset: rows that went away are removed
/// in contiguous runs, new rows are appended in one insert, and each contiguous run of changed
/// rows gets one dataChanged spanning the columns that changed in it (so a proxy re-checks only
/// those rows, and re-sorts only when its sort column is among them). Views keep their selection
/// and scroll position that way. Each row keeps its cells' text, made when they change, and the
/// case-folded text filtering looks in: views, sorting and filtering read them instead of
/// formatting numbers and times again on every call. The order is the order rows first
/// appeared; views sort through a proxy, by SortRole (TablesProxy compares rows directly, with
/// the same order as SortRole's values, and filters on the kept text).
class TablesModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    /// Rows: rows written, every pass counted. TableRows: the rows the table holds as last
    /// counted (the newest reconciliation's source count, or a running load's estimate).
    enum Column {
        Pipeline,
        Table,
        Strategy,
        State,
        Freshness,
        Lag,
        Rows,
        TableRows,
        LastSync,
        Progress,
        Message,
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role {
        /// Numbers for numeric columns (lag, rows, time), severity for freshness, text otherwise.
        SortRole = Qt::UserRole + 1,
        /// The engine's word: ok, warn, breach, unknown.
        FreshnessRole,
        /// The engine's word: idle, running, backfilling, ok, retrying, error, paused.
        StateRole,
        /// True when a DBA should look: an error, a retry, or freshness past half the SLA.
        AttentionRole,
        /// The engine's word: full_refresh, cursor, cdc.
        StrategyRole,
        /// While a backfill (initial load or re-backfill) runs: rows copied (qlonglong); else
        /// invalid. The Progress column's delegate draws its bar from these four.
        BackfillRowsRole,
        /// Estimated rows of the whole copy (qlonglong); invalid when unknown.
        BackfillTotalRole,
        /// 0..100 (double); invalid when the total is unknown.
        BackfillPercentRole,
        /// Seconds left (double); invalid until a rate is measured.
        BackfillEtaRole,
        /// True while a re-backfill of a streaming CDC table is under way or resumable (what
        /// "Cancel backfill" cancels); an initial load is not one.
        RebackfillRole,
        /// True when the slot guard moved the table from CDC to cursor sync ("Promote to CDC"
        /// returns it).
        FellBackRole,
        /// True while the Progress column shows a backfill that finished (a full bar saying
        /// done) rather than one that runs; see Done.
        BackfillDoneRole,
        /// Open conflicts of a two-way table (int; setConflictCounts()): the Table column shows a
        /// warning icon and says so in its tooltip while there are any.
        ConflictsRole,
    };
    Q_ENUM(Role)

    explicit TablesModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    /// A backfill that finished lately, from the engine's "initial load done" or "re-backfill
    /// done" event: its row shows a full bar ("100% · done · N rows") for kDoneShownMs after it,
    /// so the end of a copy is seen, not only the bar's disappearance.
    struct Done {
        std::int64_t rows = 0;
        std::int64_t atMs = 0;
        QString message;
        bool operator==(const Done &) const = default;
    };
    using DoneByTable = std::map<std::pair<std::string, std::string>, Done>; ///< by pipeline, table
    static constexpr std::int64_t kDoneShownMs = 60'000;
    /// The finished backfills among `snapshot`'s events within kDoneShownMs of its time.
    static DoneByTable finishedBackfills(const EngineSnapshot &snapshot);

    void setSnapshot(const EngineSnapshot &snapshot);
    void setTables(SharedList<core::TableReport> tables, const DoneByTable &done = {});

    using ConflictCounts = std::map<std::pair<std::string, std::string>, int>; ///< by pipeline, table
    /// The open conflicts per pipeline and table (the Conflicts page's list); rows not named have none.
    void setConflictCounts(const ConflictCounts &counts);
    int conflictCount(int row) const;

    const core::TableReport &report(int row) const { return *m_rows.at(static_cast<std::size_t>(row)).report; }
    /// The row of `pipeline`/`table` (as the engine displays it), or -1.
    int rowOf(const QString &pipeline, const QString &table) const;

    /// Whether row `left` sorts before row `right` by `column`: the order of their SortRole
    /// values as QSortFilterProxyModel compares them (numbers as numbers; text with `cs`, or
    /// locale-aware), without making a QVariant per comparison.
    bool sortsBefore(int left, int right, int column, Qt::CaseSensitivity cs = Qt::CaseSensitive,
                     bool localeAware = false) const;
    /// Whether any cell of `row` shows `folded` (case-folded, QString::toCaseFolded()): what a
    /// case-insensitive fixed-string filter over every column finds, read from text kept per row.
    bool rowShows(int row, const QString &folded) const;

    /// More than this many runs of changed rows in one snapshot are reported as one dataChanged
    /// spanning them all: each signal is a pass through the proxy and the views, and a
    /// scattering of hundreds would cost more than one pass over the rows between them.
    static constexpr int kMaxChangedRuns = 32;

    static bool needsAttention(const core::TableReport &r);
    /// See RebackfillRole.
    static bool isRebackfill(const core::TableReport &r);
    /// The rows a table holds as last counted (the Table rows column).
    struct Count {
        std::int64_t rows = 0;
        /// A running load's estimate from the source's statistics, not a count.
        bool estimate = false;
        friend bool operator==(const Count &, const Count &) = default;
    };
    /// A load under way with an estimate: that; else the newest reconciliation's source count;
    /// else none (never counted, or the reconciliation failed).
    static std::optional<Count> tableRows(const core::TableReport &r);

private:
    struct Row {
        /// The table's report in the newest snapshot's tables, which the model keeps (m_reports):
        /// pointed to, not copied (B12: 10,000 copies a snapshot).
        const core::TableReport *report = nullptr;
        std::optional<Done> done; ///< only while no backfill runs (setTables() sees to it)
        /// Each column's DisplayRole, made when first read (cellText()) after a change: at
        /// 10,000 tables, making every cell of every row up front was most of the first
        /// snapshot's cost, and a view reads the cells of the rows on screen only (B12).
        mutable std::array<QString, ColumnCount> text;
        /// Every cell's text, case-folded, one separator between cells (rowShows); made when a
        /// filter first reads it after a change, so snapshots cost nothing more while none is set.
        mutable QString folded;
        mutable bool foldedStale = true;
        /// The columns whose `text` is not made yet (bit c for column c).
        mutable unsigned textStale = ~0u;
    };

    /// The separator between cells in Row::folded; a filter holding it is checked cell by cell.
    static constexpr QChar kCellSeparator = QChar(u'\x1f');
    static void fold(const Row &row);

    static QString display(const Row &row, int column);
    /// Column `column`'s text, made now if it was not yet.
    static const QString &cellText(const Row &row, int column);
    static Row rowFor(const core::TableReport &report, std::optional<Done> done);
    /// The number `column` sorts by (SortRole), or nullopt for a column sorted by its text.
    static std::optional<double> numberKey(const Row &row, int column);
    QVariant sortKey(const Row &row, int column) const;
    QString toolTip(const core::TableReport &r, int column) const;

    std::vector<Row> m_rows;
    /// The newest snapshot's tables, which each row's report points into.
    SharedList<core::TableReport> m_reports;
    ConflictCounts m_conflicts;
};

} // namespace driftless::ui
