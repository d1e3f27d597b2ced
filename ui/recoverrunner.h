#pragma once

#include "ui/enginebridge.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>

namespace driftless::ui {

class DoorJobs;

/// Asks for the recovery of a pipeline whose source changed (docs/failover.md) through the
/// engine's door (POST /api/v1/recover: core::requestRecovery() where the engine runs, which
/// leaves the `recover` request in the checkpoint of each of the pipeline's CDC tables in the
/// target), as `driftless-cli recover PIPELINE` does.
///
/// The request is taken when the pipeline's sync starts. The app's engine runs every pipeline
/// and has no restart of one alone, so once the request is left a running engine is stopped
/// (after its batches in flight, never waited for on the UI thread) and started again: every
/// pipeline pauses for that moment. A request that fails leaves the sync alone. A stopped engine
/// stays stopped (Start Sync takes the request); an agent's engine is not restarted from here:
/// it takes the request when it next starts the pipeline, which it tries every 5 minutes.
///
/// Thread affinity: a UI-thread object. One recovery per pipeline at a time; a result for a
/// workspace no longer shown is dropped. Failures arrive as finished()'s lines, never as
/// exceptions.
class RecoverRunner final : public QObject {
    Q_OBJECT
public:
    explicit RecoverRunner(EngineBridge *engine, QObject *parent = nullptr);

    EngineBridge *engine() const { return m_engine; }
    /// True from recover() until finished() for `pipeline`.
    bool busy(const QString &pipeline) const;

public slots:
    /// Returns the job id, or 0 when nothing could start (no workspace, or already busy).
    std::uint64_t recover(const QString &pipeline);

signals:
    void started(std::uint64_t job, const QString &pipeline);
    /// `ok` false: refused or failed, `lines` say why and what to do. Otherwise one line per
    /// table as the engine words it, then what became of the sync.
    void finished(std::uint64_t job, const QString &pipeline, bool ok, const QStringList &lines);

private:
    /// A request taken, waiting for the running engine to stop before it starts it again.
    struct Restart {
        std::uint64_t job = 0;
        QString statePath;
        QString pipeline;
        QStringList lines;
    };
    void onDone(std::uint64_t job, const QString &pipeline, bool ok, QStringList lines);
    void onEngineState(EngineBridge::State state);

    EngineBridge *m_engine;
    DoorJobs *m_jobs;
    std::optional<Restart> m_restart;
};

} // namespace driftless::ui
