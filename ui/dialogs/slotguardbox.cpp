#include "ui/dialogs/slotguardbox.h"

#include "ui/widgets/bytesizeedit.h"

#include "core/model/duration.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>

namespace driftless::ui {

namespace {
enum ActionIndex { AlertIndex, FallbackIndex };
constexpr std::int64_t kDefaultMax = 10LL << 30;
} // namespace

SlotGuardBox::SlotGuardBox(QWidget *parent)
    : QGroupBox(tr("Slot &guard (when this endpoint is a CDC source)"), parent), m_max(new ByteSizeEdit(this)),
      m_warn(new ByteSizeEdit(this)), m_minSafe(new ByteSizeEdit(this)), m_action(new QComboBox(this)),
      m_help(new QLabel(this)), m_inactive(new QLineEdit(this))
{
    setObjectName(QStringLiteral("slotGuard"));
    setCheckable(true);
    setChecked(false);
    setToolTip(tr("A replication slot keeps WAL on the source until Driftless reads it; a stalled sync can fill "
                  "the source's disk. The guard watches how much WAL each slot retains."));

    m_max->setObjectName(QStringLiteral("maxRetained"));
    m_max->setBytes(kDefaultMax);
    m_max->setToolTip(tr("The most WAL a slot may retain (pg_wal_lsn_diff of the current LSN and the slot's "
                         "restart_lsn)"));
    m_warn->setObjectName(QStringLiteral("warnRetained"));
    m_warn->setSpecialValueText(tr("half of max"));
    m_warn->setToolTip(tr("An alert from this much retained WAL on; default half of the maximum"));
    m_minSafe->setObjectName(QStringLiteral("minSafeWal"));
    m_minSafe->setSpecialValueText(tr("not checked"));
    m_minSafe->setToolTip(tr("Act when the slot's safe_wal_size (WAL left before max_slot_wal_keep_size "
                             "invalidates it) falls below this"));

    m_inactive->setObjectName(QStringLiteral("inactiveAlert"));
    m_inactive->setPlaceholderText(
        tr("%1 (default)")
            .arg(QString::fromStdString(core::formatDuration(core::SlotGuard{}.effectiveInactiveAlert()))));
    m_inactive->setToolTip(tr("An alert when a slot has had no reader this long (30m, 2h): its WAL piles up "
                              "meanwhile"));

    m_action->setObjectName(QStringLiteral("guardAction"));
    m_action->addItem(tr("Alert only"));
    m_action->addItem(tr("Fall back to cursor sync"));
    m_help->setObjectName(QStringLiteral("guardActionHelp"));
    // Explicit line breaks, never wrapped: a wrapping label makes the dialog ask for room it does
    // not use (see EndpointDialog::fitHeight). Both texts take two lines, so nothing jumps.
    m_help->setTextFormat(Qt::PlainText);

    auto *form = new QFormLayout(this);
    form->addRow(tr("Max retained &WAL:"), m_max);
    form->addRow(tr("&Action:"), m_action);
    form->addRow(QString(), m_help);
    form->addRow(tr("Wa&rn at:"), m_warn);
    form->addRow(tr("Min safe W&AL:"), m_minSafe);
    form->addRow(tr("Alert when &inactive for:"), m_inactive);

    connect(this, &QGroupBox::toggled, this, &SlotGuardBox::guardChanged);
    for (ByteSizeEdit *edit : {m_max, m_warn, m_minSafe})
        connect(edit, &ByteSizeEdit::bytesChanged, this, &SlotGuardBox::guardChanged);
    connect(m_inactive, &QLineEdit::textChanged, this, &SlotGuardBox::guardChanged);
    connect(m_action, &QComboBox::currentIndexChanged, this, [this] {
        updateHelp();
        emit guardChanged();
    });
    updateHelp();
}

void SlotGuardBox::updateHelp()
{
    m_help->setText(m_action->currentIndex() == FallbackIndex
                        ? tr("Past the limit: drops the slot, switches the CDC tables to cursor sync\n"
                             "and reconciles them; Promote (Tables page) returns them to CDC.")
                        : tr("Past the limit: raises an alert and keeps the slot, so the source\n"
                             "keeps its WAL until someone acts."));
}

void SlotGuardBox::setGuard(const std::optional<core::SlotGuard> &guard)
{
    m_loaded = guard;
    setChecked(guard.has_value());
    if (!guard)
        return;
    m_max->setBytes(guard->maxRetained);
    m_warn->setBytes(guard->warnRetained.value_or(0));
    m_minSafe->setBytes(guard->minSafeWal.value_or(0));
    m_action->setCurrentIndex(guard->action == core::SlotGuard::Action::Fallback ? FallbackIndex : AlertIndex);
    m_inactive->setText(guard->inactiveAlert ? QString::fromStdString(core::formatDuration(*guard->inactiveAlert))
                                             : QString());
}

std::optional<core::SlotGuard> SlotGuardBox::guard() const
{
    if (!isChecked())
        return std::nullopt;
    core::SlotGuard g = m_loaded.value_or(core::SlotGuard{});
    g.maxRetained = m_max->bytes();
    g.action =
        m_action->currentIndex() == FallbackIndex ? core::SlotGuard::Action::Fallback : core::SlotGuard::Action::Alert;
    g.warnRetained = m_warn->bytes() > 0 ? std::optional<std::int64_t>(m_warn->bytes()) : std::nullopt;
    g.minSafeWal = m_minSafe->bytes() > 0 ? std::optional<std::int64_t>(m_minSafe->bytes()) : std::nullopt;
    const QString inactive = m_inactive->text().trimmed();
    if (inactive.isEmpty())
        g.inactiveAlert.reset();
    else if (const auto d = core::parseDuration(inactive.toStdString()))
        g.inactiveAlert = *d;
    return g;
}

QString SlotGuardBox::problem() const
{
    const auto g = guard();
    if (!g)
        return {};
    if (g->maxRetained <= 0)
        return tr("Slot guard: set the most WAL a slot may retain, e.g. 10 GB.");
    if (const QString inactive = m_inactive->text().trimmed();
        !inactive.isEmpty() && (!core::parseDuration(inactive.toStdString()) ||
                                *core::parseDuration(inactive.toStdString()) < core::Millis(1000)))
        return tr("Slot guard: '%1' is not a duration for the inactive alert; write e.g. 30m or 2h.").arg(inactive);
    if (g->warnRetained && *g->warnRetained > g->maxRetained)
        return tr("Slot guard: the warn level (%1) must not be above the maximum (%2).")
            .arg(QString::fromStdString(core::humanBytes(*g->warnRetained)),
                 QString::fromStdString(core::humanBytes(g->maxRetained)));
    return {};
}

} // namespace driftless::ui
