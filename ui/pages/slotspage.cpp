#include "ui/pages/slotspage.h"

#include "ui/displayformat.h"
#include "ui/enginesnapshot.h"
#include "ui/models/slotsmodel.h"
#include "ui/slotmonitor.h"
#include "ui/statusicons.h"
#include "ui/widgets/heldorder.h"
#include "ui/widgets/slothistorychart.h"
#include "ui/widgets/tableselection.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace driftless::ui {

SlotsPage::SlotsPage(SlotsModel *model, SlotMonitor *monitor, QWidget *parent)
    : QWidget(parent), m_model(model), m_monitor(monitor), m_proxy(new QSortFilterProxyModel(this)),
      m_view(new QTableView(this)), m_chart(new SlotHistoryChart(this)), m_summary(new QLabel(this)),
      m_notice(new QLabel(this)), m_sources(new QLabel(this)), m_result(new QLabel(this)),
      m_drop(new QPushButton(tr("Drop slot\u2026"), this)), m_recover(new QPushButton(tr("Recover\u2026"), this)),
      m_recoverMenu(new QMenu(this))
{
    setObjectName(QStringLiteral("slotsPage"));
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(SlotsModel::SortRole);

    m_summary->setObjectName(QStringLiteral("slotsSummary"));
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true); // a narrow window wraps it rather than cutting it off
    m_notice->setObjectName(QStringLiteral("slotsNotice"));
    m_notice->setWordWrap(true);
    m_notice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notice->setVisible(false);
    m_sources->setObjectName(QStringLiteral("slotsSources"));
    m_sources->setWordWrap(true);
    m_sources->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_sources->setToolTip(tr("Each CDC pipeline's source as its checkpoints record it: what is checked at every "
                             "start, so a promoted standby or another server behind the address is never read as the "
                             "old one (docs/failover.md)"));
    // At least one line, never the whole list: on a small screen the grid and the chart keep
    // their room (the window fits a 1366x768 laptop at 150%), and the list shows what fits.
    m_sources->setMinimumHeight(m_sources->fontMetrics().lineSpacing());
    m_sources->setVisible(false);
    m_result->setObjectName(QStringLiteral("dropResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_result->setVisible(false);

    m_view->setObjectName(QStringLiteral("slotsView"));
    m_view->setModel(m_proxy);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->setTextElideMode(Qt::ElideMiddle); // slot names differ at their ends
    m_view->verticalHeader()->setVisible(false);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setHighlightSections(false);
    m_view->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_view->setSortingEnabled(true);
    // Sorted by retained WAL, rows would move under the cursor with each reading.
    new HeldOrder(m_view, m_proxy);

    m_drop->setObjectName(QStringLiteral("dropSlot"));
    m_drop->setIcon(namedIcon(QStringLiteral("stop")));
    connect(m_drop, &QPushButton::clicked, this, &SlotsPage::requestDrop);
    m_recover->setObjectName(QStringLiteral("recoverSource"));
    m_recover->setIcon(namedIcon(QStringLiteral("refresh")));
    m_recover->setVisible(false);
    // One pipeline: the click asks for it; several: the button's menu names each.
    connect(m_recover, &QPushButton::clicked, this, [this] {
        if (m_changed.size() == 1)
            emit recoverRequested(m_changed.front());
    });

    // The sources under the summary, beside the button that is taller than a line anyway.
    auto *said = new QVBoxLayout;
    said->setSpacing(2);
    said->addWidget(m_summary);
    said->addWidget(m_sources);
    auto *top = new QHBoxLayout;
    top->addLayout(said, 1);
    top->addWidget(m_recover, 0, Qt::AlignTop);
    top->addWidget(m_drop, 0, Qt::AlignTop);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_notice);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("slotsSplitter"));
    split->setChildrenCollapsible(false);
    split->addWidget(m_view);
    split->addWidget(m_chart);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    layout->addWidget(split, 1);
    layout->addWidget(m_result);

    m_timer.setInterval(kRefreshMs);
    connect(&m_timer, &QTimer::timeout, m_monitor, &SlotMonitor::refresh);
    connect(m_monitor, &SlotMonitor::sampleReady, this, &SlotsPage::showSample);
    connect(m_monitor, &SlotMonitor::dropFinished, this, &SlotsPage::showDropResult);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &SlotsPage::updateButtons);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &SlotsPage::updateChart);
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        updateButtons();
        fitColumns();
    });
    connect(m_model, &QAbstractItemModel::dataChanged, this, [this] {
        updateButtons();
        // A reading that made a cell longer ("inactive" to "active (pid 14170)"): fit again,
        // only then, so a column the DBA sized stays as it is.
        const QAbstractItemView *view = m_view;
        for (int c = 0; c < SlotsModel::ConfirmedFlushLsn; ++c)
            if (m_view->columnWidth(c) < view->sizeHintForColumn(c)) {
                fitColumns();
                break;
            }
    });
    showSample(m_monitor->sample());
}

void SlotsPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    // Shown again after a while: the slots may have moved since the background read.
    if (m_monitor->sample().takenAtMs == 0 || !m_timer.isActive())
        m_monitor->refresh();
    m_timer.start();
    // Fitted while hidden, the view had no width yet and the names were cut to their narrowest;
    // once the view has its size (after this event), fit again.
    QTimer::singleShot(0, this, &SlotsPage::fitColumns);
}

void SlotsPage::hideEvent(QHideEvent *event)
{
    m_timer.stop();
    QWidget::hideEvent(event);
}

void SlotsPage::showSample(const SlotSample &sample)
{
    QStringList errors;
    std::set<std::string> sources;
    int count = 0, orphaned = 0, inactive = 0, binlogs = 0, purged = 0;
    for (const auto &source : sample.sources) {
        for (const auto &b : source.binlogs) {
            ++binlogs;
            purged += b.neededPurged ? 1 : 0;
            if (!b.error.empty())
                errors << tr("Binlog of pipeline %1 on %2: %3")
                              .arg(QString::fromStdString(b.pipeline), QString::fromStdString(b.source),
                                   QString::fromStdString(b.error));
        }
        if (source.binlog)
            continue;
        sources.insert(source.source);
        if (!source.error.empty())
            errors << tr("Cannot read the slots of %1: %2")
                          .arg(QString::fromStdString(source.source), QString::fromStdString(source.error));
        for (const auto &s : source.replicationSlots) {
            ++count;
            orphaned += s.orphaned ? 1 : 0;
            inactive += s.active ? 0 : 1;
        }
    }
    // After the model took the same reading (it is connected after this page): the chart then
    // charts the selected slot as just read, and reads its history again.
    QMetaObject::invokeMethod(this, &SlotsPage::updateChart, Qt::QueuedConnection);
    m_notice->setText(errors.join(QLatin1Char('\n')));
    m_notice->setVisible(!errors.isEmpty());
    if (!sample.workspace) {
        m_summary->setText(sample.statePath.isEmpty() ? tr("No workspace open") : tr("Reading the workspace\u2026"));
    } else if (sample.takenAtMs == 0) {
        m_summary->setText(tr("Reading the replication slots\u2026"));
    } else if (sources.empty() && binlogs == 0) {
        m_summary->setText(tr("No pipeline of this workspace reads from Postgres or a MariaDB/MySQL binlog, so there "
                              "are no slots to watch."));
    } else {
        QString text;
        if (!sources.empty()) {
            text = (count == 1 ? tr("1 slot") : tr("%1 slots").arg(count)) +
                   (sources.size() == 1 ? tr(" on 1 source") : tr(" on %1 sources").arg(sources.size()));
            if (inactive)
                text += tr(", %1 inactive").arg(inactive);
            if (orphaned)
                text += tr(", %1 orphaned").arg(orphaned);
        }
        if (binlogs) {
            if (!text.isEmpty())
                text += tr("; ");
            text += binlogs == 1 ? tr("1 binlog pipeline") : tr("%1 binlog pipelines").arg(binlogs);
            if (purged)
                text += tr(", %1 purged").arg(purged);
        }
        text += tr("; read at %1, every %2 s while shown (F5 reads now)")
                    .arg(formatTimestamp(sample.takenAtMs).mid(11))
                    .arg(kRefreshMs / 1000);
        m_summary->setText(text);
    }
    updateButtons();
}

void SlotsPage::setEngine(EngineBridge *engine)
{
    m_chart->setEngine(engine);
}

void SlotsPage::setSnapshot(const EngineSnapshot &snapshot)
{
    // Per pipeline, by name: the identities its CDC tables' checkpoints hold (more than one
    // while some tables have moved to a new server and others not yet), and whether a change of
    // source stopped it.
    struct Source {
        std::vector<core::SourceIdentity> ids;
        bool changed = false;
    };
    std::map<std::string, Source> pipelines;
    for (const auto &r : snapshot.tables) {
        if (r.strategy != core::Strategy::Cdc)
            continue;
        Source &s = pipelines[r.pipeline];
        s.changed = s.changed || r.state == core::TableState::SourceChanged;
        if (r.sourceIdentity && r.sourceIdentity->recorded() &&
            std::find(s.ids.begin(), s.ids.end(), *r.sourceIdentity) == s.ids.end())
            s.ids.push_back(*r.sourceIdentity);
    }
    // The pipelines whose source changed first (the first line is the one always shown), then
    // the others, each by name.
    std::vector<std::pair<std::string, const Source *>> order;
    for (const bool changed : {true, false})
        for (const auto &[pipeline, s] : pipelines)
            if (s.changed == changed)
                order.emplace_back(pipeline, &s);
    m_sourceLines.clear();
    QStringList changed;
    QStringList html;
    for (const auto &[pipeline, source] : order) {
        const Source &s = *source;
        QStringList ids;
        for (const auto &id : s.ids)
            ids << sourceIdentityText(id);
        const QString name = QString::fromStdString(pipeline);
        QString line = tr("%1: %2").arg(name, ids.isEmpty() ? tr("not recorded yet") : ids.join(QStringLiteral(" / ")));
        QString rich =
            tr("Source of <b>%1</b>: %2").arg(name.toHtmlEscaped(), line.mid(name.size() + 2).toHtmlEscaped());
        if (s.changed) {
            changed << name;
            // The page's own Recover… is beside these lines; the command stays for scripts.
            const QString fix = tr("source changed: Recover\u2026 (driftless-cli recover %1)").arg(name);
            line += QStringLiteral(" \u2014 ") + fix;
            rich += QStringLiteral(" \u2014 <b>") + tr("source changed") + QStringLiteral("</b>: ") +
                    tr("<b>Recover\u2026</b> (<code>driftless-cli recover %1</code>)").arg(name.toHtmlEscaped());
        }
        m_sourceLines << line;
        if (html.size() < kSourceLines)
            html << rich;
    }
    if (m_sourceLines.size() > kSourceLines)
        html << tr("and %n more (the Tables page shows each table's)", "", int(m_sourceLines.size()) - kSourceLines);
    if (changed != m_changed) {
        m_changed = changed;
        m_recoverMenu->clear();
        for (const QString &p : m_changed)
            m_recoverMenu->addAction(tr("Recover %1\u2026").arg(p), this, [this, p] { emit recoverRequested(p); });
        // A menu only when there is a choice to make.
        m_recover->setMenu(m_changed.size() > 1 ? m_recoverMenu : nullptr);
    }
    m_recover->setVisible(!m_changed.isEmpty());
    m_recover->setToolTip(m_changed.size() == 1 ? tr("Bring pipeline %1 back to the server now behind its source, "
                                                     "as driftless-cli recover %1 does")
                                                      .arg(m_changed.front())
                                                : tr("Recover one of the pipelines whose source changed"));
    m_sources->setText(html.join(QStringLiteral("<br>")));
    m_sources->setVisible(!html.isEmpty());
}

void SlotsPage::updateChart()
{
    const int row = selectedRow();
    if (row < 0) {
        m_chart->clearSlot();
        return;
    }
    const auto &s = m_model->slotAt(row);
    m_chart->setSlot(s, slotGuardOf(m_monitor->sample().workspace.get(), s.source));
}

int SlotsPage::selectedRow() const
{
    return selectedSourceRow(m_view, m_proxy);
}

void SlotsPage::selectSlot(const QString &source, const QString &slot)
{
    selectSourceRow(m_view, m_proxy, m_model->rowOf(source, slot));
}

void SlotsPage::updateButtons()
{
    const int row = selectedRow();
    if (m_dropping) {
        m_drop->setEnabled(false);
        m_drop->setToolTip(tr("Dropping a slot\u2026"));
        return;
    }
    if (row < 0) {
        m_drop->setEnabled(false);
        m_drop->setToolTip(tr("Select an inactive slot to drop it"));
        return;
    }
    const auto &s = m_model->slotAt(row);
    const QString name = QString::fromStdString(s.slot);
    if (SlotsModel::isBinlog(s)) {
        m_drop->setEnabled(false);
        m_drop->setToolTip(tr("A binlog pipeline holds no slot on its source: the server keeps binlogs by age "
                              "(binlog_expire_logs_seconds)"));
        return;
    }
    if (s.active) {
        m_drop->setEnabled(false);
        m_drop->setToolTip(
            tr("%1 is active%2: Postgres refuses to drop a slot while a consumer reads it. Stop the consumer first.")
                .arg(name, s.activePid ? tr(" (pid %1)").arg(*s.activePid) : QString()));
        return;
    }
    m_drop->setEnabled(true);
    m_drop->setToolTip(!s.owner.empty() ? tr("Pipeline %1 reads %2: dropping it means re-snapshotting its CDC tables")
                                              .arg(QString::fromStdString(s.owner), name)
                                        : tr("Drop %1 and release the WAL it holds").arg(name));
}

void SlotsPage::requestDrop()
{
    const int row = selectedRow();
    if (row < 0 || m_dropping || m_confirmation)
        return;
    const auto s = m_model->slotAt(row);
    if (s.active || SlotsModel::isBinlog(s))
        return;
    const QString source = QString::fromStdString(s.source);
    const QString slot = QString::fromStdString(s.slot);
    const QString sql = SlotMonitor::dropSql(slot);

    QString consequence;
    if (!s.owner.empty())
        consequence = tr("Pipeline <b>%1</b> reads this slot: its CDC tables stop until they are re-snapshotted "
                         "(driftless-cli resnapshot %1).")
                          .arg(QString::fromStdString(s.owner).toHtmlEscaped());
    else if (s.orphaned)
        consequence = tr("No pipeline of this workspace reads it. If another workspace or tool does, it must "
                         "re-sync from scratch.");
    else
        consequence = tr("Driftless did not create this slot. Whatever reads it must re-sync from scratch.");
    auto *box = new QMessageBox(
        QMessageBox::Warning, tr("Drop Replication Slot"),
        tr("Drop replication slot <b>%1</b> on <b>%2</b>?").arg(slot.toHtmlEscaped(), source.toHtmlEscaped()),
        QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("dropConfirmation"));
    box->setInformativeText(tr("<p>This runs on %1:</p><pre>%2</pre><p>The %3 of WAL it holds are released. %4</p>")
                                .arg(source.toHtmlEscaped(), sql.toHtmlEscaped(),
                                     s.retainedBytes ? formatBytes(*s.retainedBytes) : tr("unknown amount"),
                                     consequence));
    QPushButton *drop = box->addButton(tr("Drop Slot"), QMessageBox::DestructiveRole);
    drop->setObjectName(QStringLiteral("confirmDrop"));
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, box, drop, source, slot] {
        if (box->clickedButton() != drop)
            return;
        m_dropping = true;
        m_result->setText(tr("Dropping %1 on %2\u2026").arg(slot, source));
        m_result->setVisible(true);
        updateButtons();
        m_monitor->dropSlot(source, slot);
    });
    m_confirmation = box;
    box->open();
}

void SlotsPage::showDropResult(const QString &source, const QString &slot, const QString &error)
{
    m_dropping = false;
    m_result->setText(error.isEmpty() ? tr("Dropped replication slot %1 on %2.").arg(slot, source)
                                      : tr("Could not drop %1 on %2: %3").arg(slot, source, error));
    m_result->setVisible(true);
    updateButtons();
}

void SlotsPage::fitColumns()
{
    const QAbstractItemView *view = m_view;
    std::vector<int> widths;
    int total = 0;
    for (int c = 0; c <= SlotsModel::ConfirmedFlushLsn; ++c) {
        widths.push_back(std::max(view->sizeHintForColumn(c), m_view->horizontalHeader()->sectionSizeHint(c)) + 12);
        total += widths.back();
    }
    // Wider than the view (long slot names, a narrow window): the names give way first, elided
    // in the middle (the chart below names the selected slot whole), so the figures stay in view.
    constexpr int kNarrowest = 110;
    // Hidden, the viewport has no width of its own yet: nothing is cut until it is shown.
    int excess = m_view->isVisible() ? total - m_view->viewport()->width() : 0;
    for (int c : {SlotsModel::Slot, SlotsModel::Owner}) {
        const int cut = std::clamp(excess, 0, std::max(0, widths[static_cast<std::size_t>(c)] - kNarrowest));
        widths[static_cast<std::size_t>(c)] -= cut;
        excess -= cut;
    }
    // The last column stretches to the rest.
    for (int c = 0; c < SlotsModel::ConfirmedFlushLsn; ++c)
        m_view->setColumnWidth(c, widths[static_cast<std::size_t>(c)]);
}

void SlotsPage::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    fitColumns();
}

} // namespace driftless::ui
