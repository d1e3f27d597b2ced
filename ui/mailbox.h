#pragma once

#include <QMetaObject>
#include <QObject>

#include <memory>
#include <mutex>
#include <utility>

namespace driftless::ui {

/// Lets worker threads post calls to a UI-thread object for as long as it lives.
///
/// The owner closes it first thing in its destructor; holding the lock while posting makes
/// "still there? then post" one step, so nothing is ever queued to a destroyed object. Posting
/// never waits for the UI. Workers hold it by shared_ptr, so it outlives the owner safely.
template <typename Owner> class Mailbox {
public:
    explicit Mailbox(Owner *owner) : m_owner(owner) {}

    static std::shared_ptr<Mailbox> create(Owner *owner) { return std::make_shared<Mailbox>(owner); }

    /// Queues `f(owner)` on the owner's thread; does nothing once closed.
    template <typename F> void post(F &&f)
    {
        std::lock_guard lock(m_mutex);
        if (!m_owner)
            return;
        Owner *owner = m_owner;
        QMetaObject::invokeMethod(
            owner, [owner, f = std::forward<F>(f)]() mutable { f(*owner); }, Qt::QueuedConnection);
    }

    void close()
    {
        std::lock_guard lock(m_mutex);
        m_owner = nullptr;
    }

private:
    std::mutex m_mutex;
    Owner *m_owner;
};

} // namespace driftless::ui
