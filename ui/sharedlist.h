#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace driftless::ui {

/// A vector shared by every copy and read-only while it is: copying one costs a reference
/// count, not its elements.
///
/// A snapshot of 10,000 tables travels from the engine's thread to a queued call and on to half
/// a dozen pages and models that keep it; as a std::vector each of those was a deep copy of
/// every TableReport (tens of milliseconds of the UI thread at 10,000 tables, B12). Reads look
/// like a const std::vector's, and it converts to one, so code that takes
/// `const std::vector<T> &` takes a SharedList unchanged. edit() is the only way to change it:
/// it copies the elements first when another SharedList still shares them.
template <class T> class SharedList {
public:
    using value_type = T;
    using size_type = std::size_t;
    using const_reference = const T &;
    using const_iterator = typename std::vector<T>::const_iterator;
    using iterator = const_iterator;

    SharedList() = default;
    // Implicit on purpose: a built vector becomes a snapshot's list without ceremony.
    SharedList(std::vector<T> items) // NOLINT(google-explicit-constructor)
        : m_items(items.empty() ? nullptr : std::make_shared<std::vector<T>>(std::move(items)))
    {
    }
    SharedList(std::initializer_list<T> items) : SharedList(std::vector<T>(items)) {}

    const std::vector<T> &vector() const { return m_items ? *m_items : none(); }
    operator const std::vector<T> &() const { return vector(); } // NOLINT(google-explicit-constructor)

    const_iterator begin() const { return vector().begin(); }
    const_iterator end() const { return vector().end(); }
    size_type size() const { return m_items ? m_items->size() : 0; }
    bool empty() const { return size() == 0; }
    const T &operator[](size_type i) const { return (*m_items)[i]; }
    const T &front() const { return m_items->front(); }
    const T &back() const { return m_items->back(); }

    /// The elements to change: this list's own, copied first if another list shares them.
    std::vector<T> &edit()
    {
        if (!m_items)
            m_items = std::make_shared<std::vector<T>>();
        else if (m_items.use_count() > 1)
            m_items = std::make_shared<std::vector<T>>(*m_items);
        return *m_items;
    }
    void push_back(T item) { edit().push_back(std::move(item)); }
    /// Lets go of the elements (others sharing them keep theirs).
    void clear() { m_items.reset(); }

    /// Shares its elements with `other`: the same list, unchanged since one was copied from it.
    bool sharesWith(const SharedList &other) const { return m_items == other.m_items; }

private:
    static const std::vector<T> &none()
    {
        static const std::vector<T> nothing;
        return nothing;
    }
    // Never changed while shared: edit() copies first.
    std::shared_ptr<std::vector<T>> m_items;
};

} // namespace driftless::ui
