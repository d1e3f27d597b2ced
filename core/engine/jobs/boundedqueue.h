#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace driftless::core {

/// A FIFO with a fixed capacity joining a reader thread to an apply thread: push() blocks while
/// full (back-pressure), pop() blocks while empty. close() ends the stream: pop() then drains what
/// is left and returns nullopt; push() after close() is dropped and returns false, which is how a
/// failing consumer stops its producer.
template <typename T> class BoundedQueue {
public:
    explicit BoundedQueue(size_t capacity) : m_capacity(capacity ? capacity : 1) {}

    bool push(T value)
    {
        std::unique_lock lock(m_mutex);
        m_notFull.wait(lock, [&] { return m_closed || m_items.size() < m_capacity; });
        if (m_closed)
            return false;
        m_items.push_back(std::move(value));
        m_notEmpty.notify_one();
        return true;
    }

    enum class PushResult { Pushed, Full, Closed };
    /// Like push(), but gives up after `timeout` (the value is kept by the caller on Full), so a
    /// producer can do housekeeping (keepalives) while the consumer is slow.
    template <typename Rep, typename Period> PushResult pushFor(T &value, std::chrono::duration<Rep, Period> timeout)
    {
        std::unique_lock lock(m_mutex);
        if (!m_notFull.wait_for(lock, timeout, [&] { return m_closed || m_items.size() < m_capacity; }))
            return PushResult::Full;
        if (m_closed)
            return PushResult::Closed;
        m_items.push_back(std::move(value));
        m_notEmpty.notify_one();
        return PushResult::Pushed;
    }

    /// Waits at most `timeout` for an item; nullopt on timeout or when closed and drained.
    template <typename Rep, typename Period> std::optional<T> popFor(std::chrono::duration<Rep, Period> timeout)
    {
        std::unique_lock lock(m_mutex);
        m_notEmpty.wait_for(lock, timeout, [&] { return m_closed || !m_items.empty(); });
        return takeFront();
    }

    /// Whether a push() now would not block (or the queue is closed): lets a producer keep
    /// gathering instead of waiting while the consumer is busy.
    bool hasRoom() const
    {
        std::lock_guard lock(m_mutex);
        return m_closed || m_items.size() < m_capacity;
    }

    bool closed() const
    {
        std::lock_guard lock(m_mutex);
        return m_closed;
    }

    std::optional<T> pop()
    {
        std::unique_lock lock(m_mutex);
        m_notEmpty.wait(lock, [&] { return m_closed || !m_items.empty(); });
        return takeFront();
    }

    /// Ends the stream. With `discard`, drops queued items too (consumer gave up).
    void close(bool discard = false)
    {
        std::lock_guard lock(m_mutex);
        m_closed = true;
        if (discard)
            m_items.clear();
        m_notEmpty.notify_all();
        m_notFull.notify_all();
    }

private:
    /// The front item, taken (and a waiting producer woken); nullopt when there is none. Called
    /// with m_mutex held.
    std::optional<T> takeFront()
    {
        if (m_items.empty())
            return std::nullopt;
        T v = std::move(m_items.front());
        m_items.pop_front();
        m_notFull.notify_one();
        return v;
    }

    size_t m_capacity;
    mutable std::mutex m_mutex;
    std::condition_variable m_notEmpty, m_notFull;
    std::deque<T> m_items;
    bool m_closed = false;
};

} // namespace driftless::core
