#pragma once

#include "ui/enginebridge.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>

namespace driftless::ui {

/// Returns tables the slot guard moved to cursor sync back to CDC through the engine's door (POST
/// /api/v1/promote: core::promoteToCdc() where the engine runs, which rewrites the stored
/// workspace and clears the tables' checkpoints in the target).
///
/// A running engine holds the workspace it started with and would keep syncing the table by its
/// cursor, so it is stopped first (between batches, never waited for on the UI thread), the
/// promotion runs once it has stopped, and the engine is started again with the stored
/// workspace; its first CDC pass creates the slot and loads the table. A stopped engine only
/// reads the file again (EngineBridge::refresh(), as after the Workspace page saves).
///
/// An agent's engine restarts by itself when its stored workspace changes.
///
/// Thread affinity: a UI-thread object. One promotion at a time; a
/// result for a workspace no longer shown is dropped. Failures arrive as finished()'s lines,
/// never as exceptions.
class PromoteRunner final : public QObject {
    Q_OBJECT
public:
    explicit PromoteRunner(EngineBridge *engine, QObject *parent = nullptr);

    EngineBridge *engine() const { return m_engine; }
    /// True from promote() until finished().
    bool busy() const { return m_pending.has_value() || m_running; }

public slots:
    /// Returns the job id, or 0 when nothing could start (no workspace, or one already under way).
    std::uint64_t promote(const QString &pipeline, const QStringList &tables);

signals:
    void started(std::uint64_t job, const QString &pipeline, const QStringList &tables);
    /// `ok` false: refused or failed, `lines` say why. Otherwise one line per table, as the
    /// engine words it, and what became of the sync.
    void finished(std::uint64_t job, const QString &pipeline, const QStringList &tables, bool ok,
                  const QStringList &lines);

private:
    struct Job {
        std::uint64_t id = 0;
        QString statePath;
        QString pipeline;
        QStringList tables;
        bool restart = false;
    };
    struct Outcome;
    void onEngineState(EngineBridge::State state);
    void launch(const Job &job);
    void onDone(const Job &job, const Outcome &outcome);

    EngineBridge *m_engine;
    std::uint64_t m_lastJob = 0;
    /// Waiting for the engine to stop.
    std::optional<Job> m_pending;
    bool m_running = false;
};

} // namespace driftless::ui
