#include "ui/widgets/bytesizeedit.h"

#include "core/model/duration.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QSpinBox>

#include <string>

namespace driftless::ui {

namespace {
// Index i is 1024^(i+1) bytes; bytes themselves are never a sensible WAL limit.
const char *const kUnits[] = {"kB", "MB", "GB", "TB"};
constexpr int kUnitCount = 4;
constexpr int kMB = 1;
} // namespace

ByteSizeEdit::ByteSizeEdit(QWidget *parent) : QWidget(parent), m_number(new QSpinBox(this)), m_unit(new QComboBox(this))
{
    m_number->setRange(0, 1'000'000);
    m_number->setAccelerated(true);
    for (const char *unit : kUnits)
        m_unit->addItem(QString::fromLatin1(unit));
    m_unit->setCurrentIndex(kMB);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_number, 1);
    layout->addWidget(m_unit);
    setFocusProxy(m_number);
    connect(m_number, &QSpinBox::valueChanged, this, [this] { emit bytesChanged(bytes()); });
    connect(m_unit, &QComboBox::currentIndexChanged, this, [this] { emit bytesChanged(bytes()); });
}

std::int64_t ByteSizeEdit::bytes() const
{
    if (m_exactNumber >= 0 && m_number->value() == m_exactNumber && m_unit->currentIndex() == m_exactUnit)
        return m_exact;
    if (m_number->value() == 0)
        return 0;
    const std::string text = std::to_string(m_number->value()) + kUnits[m_unit->currentIndex()];
    return core::parseByteSize(text).value_or(0);
}

void ByteSizeEdit::setBytes(std::int64_t bytes)
{
    if (bytes <= 0) {
        m_exactNumber = -1;
        m_number->setValue(0);
        return;
    }
    // "10GB", "1536kB", "1000B": the number and unit core would write to the file.
    const std::string text = core::formatByteSize(bytes);
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
        ++digits;
    const QString unit = QString::fromStdString(text.substr(digits));
    long long number = std::stoll(text.substr(0, digits));
    int index = m_unit->findText(unit);
    if (index < 0) {
        // Not a whole number of kB: shown rounded up to kB, the smallest unit offered.
        number = (bytes + 1023) / 1024;
        index = 0;
    }
    // Too many for the spin box in this unit: climb units (rounding up) until it fits.
    while (number > m_number->maximum() && index + 1 < kUnitCount) {
        number = (number + 1023) / 1024;
        ++index;
    }
    const QSignalBlocker blockUnit(m_unit);
    m_exactNumber = -1;
    m_unit->setCurrentIndex(index);
    m_number->setValue(static_cast<int>(std::min<long long>(number, m_number->maximum())));
    m_exact = bytes;
    m_exactNumber = m_number->value();
    m_exactUnit = index;
    emit bytesChanged(this->bytes());
}

void ByteSizeEdit::setSpecialValueText(const QString &text)
{
    m_number->setSpecialValueText(text);
}

} // namespace driftless::ui
