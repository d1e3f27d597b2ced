#pragma once

#include "core/model/workspace.h"

#include <QGroupBox>

#include <optional>

class QComboBox;
class QLabel;
class QLineEdit;

namespace driftless::ui {

class ByteSizeEdit;

/// The "Slot guard" group of the endpoint dialog: what a Postgres source's replication slots may
/// retain before Driftless warns or acts (core::SlotGuard). The group's checkbox turns the guard
/// on; unchecked, the endpoint has none. Every key of `slot_guard:` has a field: max_retained,
/// action, warn_retained, min_safe_wal and inactive_alert.
class SlotGuardBox final : public QGroupBox {
    Q_OBJECT
public:
    explicit SlotGuardBox(QWidget *parent = nullptr);

    void setGuard(const std::optional<core::SlotGuard> &guard);
    /// The guard the fields describe; nullopt when the group is unchecked.
    std::optional<core::SlotGuard> guard() const;
    /// Why the guard cannot be saved (e.g. warn above max), or empty.
    QString problem() const;

    ByteSizeEdit *maxRetainedEdit() const { return m_max; }
    ByteSizeEdit *warnRetainedEdit() const { return m_warn; }
    ByteSizeEdit *minSafeWalEdit() const { return m_minSafe; }
    QComboBox *actionBox() const { return m_action; }
    /// `inactive_alert`: a duration (30m); empty: the default, 10m.
    QLineEdit *inactiveAlertEdit() const { return m_inactive; }
    QLabel *actionHelp() const { return m_help; }

signals:
    void guardChanged();

private:
    void updateHelp();

    std::optional<core::SlotGuard> m_loaded;
    ByteSizeEdit *m_max;
    ByteSizeEdit *m_warn;
    ByteSizeEdit *m_minSafe;
    QComboBox *m_action;
    QLabel *m_help;
    QLineEdit *m_inactive;
};

} // namespace driftless::ui
