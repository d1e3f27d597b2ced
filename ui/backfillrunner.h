#pragma once

#include <QObject>
#include <QString>

#include <cstdint>

namespace driftless::ui {

class DoorJobs;
class EngineBridge;

/// Asks for, or cancels, a re-backfill of one CDC table through the engine's door (POST
/// /api/v1/backfill: core::requestRebackfill() or core::cancelRebackfill() where the engine
/// runs, which talk to the pipeline's target and source).
///
/// A request for a pipeline nothing streams starts the app's engine (EngineBridge::start()), so
/// the request is taken; when another process (driftless-cli run) streams it, that one picks it
/// up and the engine is left alone, since two engines cannot read one slot.
///
/// Thread affinity: a UI-thread object. Every job has an id; a result
/// for a workspace no longer shown is dropped. Failures arrive as finished()'s message, never
/// as exceptions.
class BackfillRunner final : public QObject {
    Q_OBJECT
public:
    enum class Action { Request, Cancel };
    Q_ENUM(Action)

    explicit BackfillRunner(EngineBridge *engine, QObject *parent = nullptr);

    EngineBridge *engine() const { return m_engine; }
    /// True while a request or cancellation for this table is on its way.
    bool busy(const QString &pipeline, const QString &table) const;

public slots:
    /// Returns the job id, or 0 when nothing could start (no workspace, or already busy).
    std::uint64_t request(const QString &pipeline, const QString &table);
    std::uint64_t cancel(const QString &pipeline, const QString &table);

signals:
    void started(std::uint64_t job, driftless::ui::BackfillRunner::Action action, const QString &pipeline,
                 const QString &table);
    /// `ok` false: refused or failed, `message` says why. Otherwise `message` is what was done,
    /// in words for the status bar.
    void finished(std::uint64_t job, driftless::ui::BackfillRunner::Action action, const QString &pipeline,
                  const QString &table, bool ok, const QString &message);

private:
    struct Outcome;
    std::uint64_t run(Action action, const QString &pipeline, const QString &table);
    void onDone(std::uint64_t job, Action action, const QString &pipeline, const QString &table,
                const Outcome &outcome);

    EngineBridge *m_engine;
    DoorJobs *m_jobs;
};

} // namespace driftless::ui
