#pragma once

#include "ui/enginesnapshot.h"
#include "ui/slotsample.h"

#include "core/engine/status/statusreport.h"

#include <QString>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace driftless::ui {

/// What the dashboard shows, built from snapshots and slot samples: a summary per pipeline and
/// one tile per table, in groups (by pipeline, strategy or schema), the worst first or by name,
/// filtered.
///
/// Keeps per table a small ring of its recent lag values and rows applied, updated from each
/// snapshot (the sparkline and rows/s), so nothing is queried per tile: at 1,000 tables a
/// snapshot costs one pass over them. A plain object of the UI thread; the page owns it.
class DashboardTiles final {
public:
    enum class Grouping { Pipeline, Strategy, Schema };
    enum class Order { Worst, Name };

    /// Lag values kept per table for its sparkline (one per snapshot).
    static constexpr int kHistory = 40;
    /// Rows applied are compared across this many snapshots for rows/s.
    static constexpr int kRateSamples = 8;

    /// A table's recent lag values and rows applied, kept with its tile from snapshot to snapshot.
    struct Ring {
        std::array<float, kHistory> lag{};
        int lagCount = 0, lagHead = 0;
        std::array<std::pair<std::int64_t, std::int64_t>, kRateSamples> rows{}; ///< taken at, rows applied
        int rowsCount = 0, rowsHead = 0;
    };

    struct Table {
        /// The table's report in the newest snapshot's tables, which the tiles keep (m_reports):
        /// shared, not copied (B12: a copy of 10,000 reports a snapshot).
        const core::TableReport *report = nullptr;
        /// `pipeline` is the direction's name, as the engine and the Tables page name it (a
        /// two-way pipeline's reverse direction is `<name>_rev`); `dashboardPipeline` the
        /// pipeline whose tile and group it is under: both directions of a two-way pipeline are
        /// under the pipeline's name, each tile saying its `direction` (`east → west`; empty
        /// for one-way).
        QString pipeline, table, schema, dashboardPipeline, direction;
        /// The lag values of the ring, oldest first; at most kHistory. A table that never synced
        /// has none. Made when asked (a tile on screen paints them), not kept per table: at
        /// 10,000 tables a copy per table per snapshot was memory and time for tiles never seen.
        std::vector<float> lag() const;
        /// Rows applied per second over the last kRateSamples snapshots; 0 until two were seen.
        double rowsPerSecond = 0;
        /// Higher is worse: freshness first, a failing state next (see severity()).
        int severity = 0;
        /// lag / SLA, for ordering tables of the same severity.
        double lagRatio = 0;
        Ring ring;
        /// The last setSnapshot() that listed the table (tables no snapshot lists go).
        std::uint64_t seen = 0;
    };

    struct Pipeline {
        QString name;
        /// Two-way: its tables are counted once per direction.
        bool twoWay = false;
        core::Freshness worst = core::Freshness::Unknown;
        int tables = 0;
        /// Tables by freshness: ok, warn, breach, unknown.
        std::array<int, 4> byFreshness{};
        int failing = 0; ///< error or retrying
        /// Tables stopped by a change of source (counted apart from `failing`): the tile says so.
        int sourceChanged = 0;
        int paused = 0;
        double rowsPerSecond = 0;
        /// The soonest time to limit of the slots it reads (seconds; <= 0: at its limit now);
        /// unset when none of them grows towards a limit. hasSlot: it reads one at all.
        std::optional<double> slotSecondsToLimit;
        bool hasSlot = false;
        /// What is known of its slots: not read yet, its source could not be read (slotError
        /// says why), it needs none (no CDC from Postgres), none exists yet, or it has one.
        enum class Slot { NotRead, Unreadable, NotNeeded, None, Present };
        Slot slot = Slot::NotRead;
        QString slotError;
        /// A limit applies to one of its slots (the source's slot guard, or the server's
        /// max_slot_wal_keep_size): without one, no time to limit is "no limit set", not "not
        /// growing".
        bool slotLimited = false;
        /// It streams from a Postgres source, so it reads a replication slot.
        bool readsSlot = false;
        /// Its tables' reconciliations, each table's newest: when the newest of them ended, and
        /// the rows they found missing, extra or different, of how many.
        std::optional<std::int64_t> reconciledAtMs;
        std::int64_t driftRows = 0;
        std::int64_t reconciledRows = 0;
        int severity = 0;
    };

    struct Group {
        QString title;
        core::Freshness worst = core::Freshness::Unknown;
        std::array<int, 4> byFreshness{};
        int severity = 0;
        std::vector<const Table *> tables;
    };

    /// Updates every table's ring and rows/s, and the pipelines, from `snapshot`. A snapshot of
    /// another workspace (another generation) starts over.
    void setSnapshot(const EngineSnapshot &snapshot) { setSnapshot(snapshot, SIZE_MAX); }
    /// The same, in steps: makes at most `newTiles` tiles for tables not seen before, and
    /// returns false while some remain to be made (call again, with this snapshot or a newer
    /// one: the tiles made so far are kept). Until it returns true, everything read here is
    /// still the previous snapshot's. Making a tile touches memory never touched before: at
    /// 10,000 tables the first snapshot's tiles took 44 ms of the UI thread in one piece (B12).
    bool setSnapshot(const EngineSnapshot &snapshot, std::size_t newTiles);
    /// The slots' time to limit, for the pipelines that read them.
    void setSlotSample(const SlotSample &sample);

    void setGrouping(Grouping g) { m_grouping = g; }
    Grouping grouping() const { return m_grouping; }
    void setOrder(Order o) { m_order = o; }
    Order order() const { return m_order; }
    /// Tables whose pipeline, name or strategy contains `text` (any case); empty: all.
    void setFilter(const QString &text) { m_filter = text.trimmed(); }
    QString filter() const { return m_filter; }
    /// Only this pipeline's tables (a click on its tile); empty: all.
    void setPipelineFilter(const QString &pipeline) { m_pipelineFilter = pipeline; }
    QString pipelineFilter() const { return m_pipelineFilter; }

    /// Every pipeline, in the current order.
    std::vector<const Pipeline *> pipelines() const;
    /// The tables that pass the filters, grouped and ordered. Pointers stay valid until the
    /// next setSnapshot().
    std::vector<Group> groups() const;
    int tableCount() const { return static_cast<int>(m_tables.size()); }

    /// ok 0, unknown 1, warn 2, breach 3; a failing state adds 4, so an error sorts above a
    /// breach of a table that syncs.
    static int severity(const core::TableReport &r);
    static int freshnessRank(core::Freshness f);
    /// Index into byFreshness.
    static int freshnessIndex(core::Freshness f);

private:
    using Key = std::pair<std::string, std::string>;
    using Tables = std::map<Key, Table>;

    /// One table's tile from its report in a snapshot: the report, its ring (when `newMoment`),
    /// and what follows from them; its labels only when what they are made of changed.
    static void updateTable(Table &t, const core::TableReport &r, std::int64_t takenAtMs, bool newMoment);
    void updatePipelines();
    void updateSlots();

    std::uint64_t m_generation = 0;
    std::int64_t m_lastTakenMs = -1;
    Tables m_tables;
    /// The newest snapshot's tables, which each tile's report points into.
    SharedList<core::TableReport> m_reports;
    /// The tiles in the order of the last snapshot's tables: the next snapshot of the same
    /// workspace lists them in the same order, so each is found by position, not looked up.
    std::vector<Tables::iterator> m_inOrder;
    std::uint64_t m_setCount = 0;
    /// A snapshot in another order taken in steps: its list, how far it was walked, its tables'
    /// tiles in its order so far, and the new tiles, kept apart until the last step moves them
    /// in (so that nothing read meanwhile meets a tile without a report).
    struct Taking {
        SharedList<core::TableReport> tables;
        std::size_t at = 0;
        std::uint64_t seen = 0;
        std::vector<Tables::iterator> inOrder;
        Tables made;
    };
    Taking m_taking;
    std::map<std::string, Pipeline> m_pipelines;
    /// A direction's name (as slots name their owner) -> the pipeline it is shown under.
    std::map<std::string, std::string> m_pipelineOf;
    SlotSample m_slots;
    Grouping m_grouping = Grouping::Pipeline;
    Order m_order = Order::Worst;
    QString m_filter;
    QString m_pipelineFilter;
};

} // namespace driftless::ui
