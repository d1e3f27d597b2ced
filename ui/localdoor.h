#pragma once

#include "ui/enginedoor.h"
#include "ui/mailbox.h"

#include <QString>

#include <atomic>
#include <functional>
#include <memory>

namespace driftless::ui {

/// The door to this app's own engine on a workspace file: the same control API an agent serves
/// (core::AgentApi::handleLocal), called in process on a pool thread, with no token and no
/// network; events name the desktop app as the origin of each action.
///
/// - The file is opened on the first request, never created (a missing file answers 422 with
///   what to do) but by storing a workspace (PUT /api/v1/workspace), as `apply` creates one;
///   the API's jobs (reconcile, repair) run on its own threads. Probe and discover need no
///   file: an empty `statePath` makes a door for them alone.
/// - `engine/start` and `engine/stop` go to `setRunning` on the UI thread; setRunning(bool)
///   tells the door what the app's engine does, for `engine` and `snapshot`.
/// - Destroying the door drops the replies in flight; its jobs are stopped and joined on a pool
///   thread, never on the UI thread (a repair runs to its end first).
class LocalDoor final : public EngineDoor {
    Q_OBJECT
public:
    LocalDoor(const QString &statePath, std::function<void(bool)> setRunning, QObject *parent = nullptr);
    ~LocalDoor() override;

    void request(const QByteArray &verb, const QString &path, const QByteArray &body, QObject *context,
                 Done done) override;
    /// What the app's engine does now (EngineBridge says so as its state changes).
    void setEngineRunning(bool running);

    /// `door`, or when there is none a LocalDoor without a workspace (made once, into `own`, a
    /// child of `owner`): what a dialog asks when it was handed no engine, e.g. for the first
    /// endpoint, before any workspace file exists.
    static EngineDoor *orOwn(EngineDoor *door, EngineDoor *&own, QObject *owner);

    static constexpr const char *kWho = "desktop app";

private:
    struct Core;
    std::shared_ptr<Core> m_core;
    std::shared_ptr<Mailbox<LocalDoor>> m_mailbox;
    std::function<void(bool)> m_setRunning;
};

} // namespace driftless::ui
