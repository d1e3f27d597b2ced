#pragma once

#include "ui/enginedoor.h"

#include <nlohmann/json.hpp>

#include <QObject>
#include <QString>

#include <cstdint>
#include <functional>
#include <map>
#include <utility>

namespace driftless::ui {

class EngineBridge;

/// The bookkeeping every runner's request to the engine's door shares: a job id each; one
/// request on its way per key (pipeline, table) at a time, a second one for that key refused
/// rather than sent twice; and the engine it went to, so a reply from an engine no longer shown
/// is dropped (its keys are let go as soon as another engine is shown).
///
/// Thread affinity: a UI-thread object, as the door.
class DoorJobs final : public QObject {
    Q_OBJECT
public:
    using Key = std::pair<QString, QString>;
    using Done = std::function<void(std::uint64_t job, const EngineDoor::Reply &reply)>;

    explicit DoorJobs(EngineBridge *engine, QObject *parent = nullptr);

    bool busy(const Key &key) const { return m_busy.count(key) > 0; }

    /// Posts `body` to `path` as a new job for `key`: its id, or 0 when nothing was sent (no
    /// workspace shown, no door, or `key` busy). `started` runs before the request goes;
    /// `done` once with the reply, `key` free again, and only while the same engine is shown.
    std::uint64_t post(const Key &key, const QString &path, const nlohmann::json &body,
                       const std::function<void(std::uint64_t job)> &started, Done done);

private:
    EngineBridge *m_engine;
    std::uint64_t m_lastJob = 0;
    std::map<Key, std::uint64_t> m_busy; ///< the job on its way for each key
};

} // namespace driftless::ui
