#pragma once

#include "ui/enginesnapshot.h"

#include <QObject>
#include <QTimer>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace driftless::ui {

/// Hands each engine snapshot to the window's consumers (models and pages), in the order they
/// were added.
///
/// A snapshot of `staggerFrom` tables or more reaches them one consumer per event-loop turn:
/// at 10,000 tables the first snapshot builds every row and tile at once, more than the 50 ms a
/// window may stall (B12), and the event loop paints and takes input between consumers. A newer
/// snapshot arriving meanwhile replaces the pending one; the consumers not yet given it get it
/// next, those given the older one get the newer one again after, and none gets the same
/// snapshot twice. Below the threshold every consumer gets it at once, within deliver().
///
/// A consumer added with addInSteps() takes a snapshot in steps, one per turn, until it says it
/// has it all (the Dashboard makes at most so many new tiles per step): the next consumer waits
/// for it, and a newer snapshot arriving meanwhile is what its next step gets.
///
/// Thread affinity: the thread it lives in (the UI thread).
class SnapshotFanout final : public QObject {
    Q_OBJECT
public:
    using Consumer = std::function<void(const EngineSnapshot &)>;
    /// Takes one step of the snapshot; true once the consumer has taken all of it.
    using Steps = std::function<bool(const EngineSnapshot &)>;

    explicit SnapshotFanout(std::size_t staggerFrom, QObject *parent = nullptr);

    void add(Consumer consumer);
    void addInSteps(Steps consumer);
    void deliver(const EngineSnapshot &snapshot);
    /// Whether some consumer has not got the newest snapshot yet.
    bool pending() const { return m_pending.has_value(); }

private:
    void next();

    std::size_t m_staggerFrom;
    std::vector<Steps> m_consumers;
    /// Per consumer, the serial of the last snapshot it got.
    std::vector<std::uint64_t> m_given;
    std::uint64_t m_serial = 0;
    std::optional<EngineSnapshot> m_pending;
    std::size_t m_at = 0;
    QTimer m_turn;
};

} // namespace driftless::ui
