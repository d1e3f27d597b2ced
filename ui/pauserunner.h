#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <cstdint>

namespace driftless::ui {

class DoorJobs;
class EngineBridge;

/// Pauses or resumes tables through the engine's door (POST /api/v1/pause or resume): the app's
/// own engine writes the workspace file, an agent its own. A running engine, the app's or a
/// driftless-cli's on the same file, takes the change within a second; the bridge is asked to
/// refresh so the page shows it at once.
///
/// Thread affinity: a UI-thread object. Every job has an id; a result for a workspace no longer
/// shown is dropped. Failures arrive as finished()'s lines.
class PauseRunner final : public QObject {
    Q_OBJECT
public:
    explicit PauseRunner(EngineBridge *engine, QObject *parent = nullptr);

    EngineBridge *engine() const { return m_engine; }
    /// True while a pause or resume of this table, or of its whole pipeline, is on its way.
    bool busy(const QString &pipeline, const QString &table) const;
    /// True while a pause or resume of the whole pipeline is on its way.
    bool busy(const QString &pipeline) const;

public slots:
    /// Returns the job id, or 0 when nothing could start (no workspace, or already busy).
    std::uint64_t setPaused(const QString &pipeline, const QString &table, bool pause);
    /// Every table of `pipeline` in one request (the door's empty table list): one workspace
    /// write, so a running engine never sees the pipeline half paused. Signals with an empty
    /// `table`. Returns the job id, or 0.
    std::uint64_t setPipelinePaused(const QString &pipeline, bool pause);

signals:
    /// `table` empty: the whole pipeline.
    void started(std::uint64_t job, const QString &pipeline, const QString &table, bool pause);
    /// `ok` false: refused or failed, `message` says why; otherwise what happens now (for a
    /// whole pipeline, how many tables changed).
    void finished(std::uint64_t job, const QString &pipeline, const QString &table, bool pause, bool ok,
                  const QString &message);

private:
    std::uint64_t post(const QString &pipeline, const QString &table, bool pause);

    EngineBridge *m_engine;
    DoorJobs *m_jobs;
};

} // namespace driftless::ui
