#pragma once

#include <QWidget>

#include <optional>
#include <string>

class QComboBox;
class QLabel;
class QLineEdit;

namespace driftless::ui {

/// A two-way table's `conflicts:` policy (docs/two-way.md): merge_columns (with on_overlap),
/// source_wins, target_wins, newer_wins (a timestamp column or the commit time, with max_skew)
/// or manual. Reads and gives the stored form the workspace file parses `conflicts:` into
/// (core::ConflictPolicy::text()), so what is picked here is what `apply` stores.
///
/// Thread affinity: the UI thread.
class ConflictPolicyPicker final : public QWidget {
    Q_OBJECT
public:
    explicit ConflictPolicyPicker(QWidget *parent = nullptr);

    /// Shows `stored` (nullopt: the default, merge_columns with on_overlap manual). Emits nothing.
    void setPolicy(const std::optional<std::string> &stored);
    /// The picked policy in its stored form; nullopt while it is the one setPolicy showed as
    /// the default and nothing was changed (the table keeps no `conflicts:` of its own).
    std::optional<std::string> policy() const;
    /// Why the picked policy cannot be stored (a newer_wins column left empty, a max_skew that is
    /// not a duration), or empty.
    QString problem() const;

Q_SIGNALS:
    void policyChanged();

private:
    void updateFields();
    void onEdited();

    QComboBox *m_rule;
    QComboBox *m_overlap;
    QComboBox *m_clock;
    QLineEdit *m_column;
    QLineEdit *m_skew;
    QLabel *m_overlapLabel;
    QLabel *m_clockLabel;
    QLabel *m_skewLabel;
    bool m_default = true;
    bool m_loading = false;
};

} // namespace driftless::ui
