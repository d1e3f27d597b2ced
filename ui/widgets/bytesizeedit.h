#pragma once

#include <QWidget>

#include <cstdint>

class QComboBox;
class QSpinBox;

namespace driftless::ui {

/// A byte size as a number and a unit (kB, MB, GB, TB; powers of 1024, as Postgres and the
/// workspace file count them). Any size the workspace can hold round-trips: setBytes() picks the
/// largest unit that divides it exactly, the way core::formatByteSize() spells it; a size no unit
/// shown divides (1000B) is shown rounded up to kB, and bytes() gives it back exact until the
/// number or the unit is changed.
///
/// 0 means "not set"; with setSpecialValueText() the spin box shows that text for it.
class ByteSizeEdit final : public QWidget {
    Q_OBJECT
public:
    explicit ByteSizeEdit(QWidget *parent = nullptr);

    std::int64_t bytes() const;
    void setBytes(std::int64_t bytes);
    /// Shown instead of 0 (e.g. "default", "off").
    void setSpecialValueText(const QString &text);

    QSpinBox *numberBox() const { return m_number; }
    QComboBox *unitBox() const { return m_unit; }

signals:
    void bytesChanged(std::int64_t bytes);

private:
    QSpinBox *m_number;
    QComboBox *m_unit;
    /// What setBytes() was given when it could not be shown exactly, and how it was shown.
    std::int64_t m_exact = 0;
    int m_exactNumber = -1;
    int m_exactUnit = -1;
};

} // namespace driftless::ui
