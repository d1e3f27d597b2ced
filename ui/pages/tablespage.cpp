#include "ui/pages/tablespage.h"

#include "ui/commandwording.h"

#include "ui/dialogs/pauseconfirmation.h"
#include "ui/dialogs/recoverconfirmation.h"
#include "ui/dialogs/tabledetaildialog.h"
#include "ui/displayformat.h"
#include "ui/enginebridge.h"
#include "ui/models/tablesmodel.h"
#include "ui/models/tablesproxy.h"
#include "ui/statusicons.h"
#include "ui/widgets/backfillprogress.h"
#include "ui/widgets/cachedtextdelegate.h"
#include "ui/widgets/freshnessbadge.h"
#include "ui/widgets/heldorder.h"
#include "ui/widgets/tableselection.h"

#include "core/model/workspace.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QStyle>
#include <QStyleOptionHeader>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace driftless::ui {

TablesPage::TablesPage(TablesModel *model, BackfillRunner *runner, QWidget *parent)
    : QWidget(parent), m_model(model), m_runner(runner), m_promoter(new PromoteRunner(runner->engine(), this)),
      m_recoverer(new RecoverRunner(runner->engine(), this)), m_proxy(new TablesProxy(this)),
      m_view(new QTableView(this)), m_filter(new QLineEdit(this)), m_summary(new QLabel(this)),
      m_notice(new QLabel(this)), m_details(new QLabel(this)), m_backfill(new QPushButton(tr("Backfill\u2026"), this)),
      m_cancel(new QPushButton(tr("Cancel Backfill\u2026"), this)),
      m_promote(new QPushButton(tr("Promote to CDC\u2026"), this)), m_pause(new QPushButton(tr("Pause\u2026"), this)),
      m_resume(new QPushButton(tr("Resume\u2026"), this)), m_recover(new QPushButton(tr("Recover\u2026"), this)),
      m_pauser(new PauseRunner(runner->engine(), this)), m_promoteResult(new QLabel(this)),
      m_recoverResult(new QLabel(this)), m_progress(new BackfillProgress(this))
{
    setObjectName(QStringLiteral("tablesPage"));
    // Sorts by TablesModel::SortRole and filters every column, case-insensitively, as a plain
    // QSortFilterProxyModel would, at a fraction of the cost with 10,000 tables (issue 19).
    m_proxy->setSourceModel(m_model);

    m_filter->setObjectName(QStringLiteral("tablesFilter"));
    m_filter->setPlaceholderText(tr("Filter tables (Ctrl+F)"));
    m_filter->setClearButtonEnabled(true);
    // Wide enough for the placeholder: the shortcut in it is how DBAs learn Ctrl+F.
    m_filter->setMinimumWidth(m_filter->fontMetrics().horizontalAdvance(m_filter->placeholderText()) + 48);
    connect(m_filter, &QLineEdit::textChanged, static_cast<TablesProxy *>(m_proxy), &TablesProxy::setFilterText);

    m_summary->setObjectName(QStringLiteral("tablesSummary"));
    // Wrapped, so the empty page's longer sentence never makes the window wider than the buttons.
    m_summary->setWordWrap(true);
    m_notice->setObjectName(QStringLiteral("tablesNotice"));
    m_notice->setWordWrap(true);
    m_notice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notice->setVisible(false);

    m_view->setObjectName(QStringLiteral("tablesView"));
    m_view->setModel(m_proxy);
    // One line per table, elided: a message too long for its column is in the detail line below.
    m_view->setWordWrap(false);
    m_view->setItemDelegate(new CachedTextDelegate(m_view));
    m_view->setItemDelegateForColumn(TablesModel::Freshness, new FreshnessBadge(m_view));
    m_view->setItemDelegateForColumn(TablesModel::Progress, m_progress);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QWidget::customContextMenuRequested, this, &TablesPage::showContextMenu);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Several tables at once (Ctrl/Shift+click) for Pause and Resume; the rest act on the current.
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->setVisible(false);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setHighlightSections(false);
    // Columns fit the rows on screen only: measuring every row's text (up to 1,000 by default)
    // on each snapshot blocked the UI thread for most of a second with 1,000 tables (B12).
    m_view->horizontalHeader()->setResizeContentsPrecision(0);
    // The workspace's own order until the DBA clicks a header.
    m_view->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_view->setSortingEnabled(true);
    // Sorted by lag, rows moved under the cursor every second: they hold still while it is there.
    new HeldOrder(m_view, m_proxy);
    // A narrower grid (a smaller window, a scrollbar) shares the columns out again.
    m_view->viewport()->installEventFilter(this);
    // The sorted column keeps room for its arrow.
    connect(m_view->horizontalHeader(), &QHeaderView::sortIndicatorChanged, this, &TablesPage::shareColumns);
    // A column the DBA sizes keeps that size until the rows change.
    connect(m_view->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int c, int, int size) {
        if (m_sharing || c < 0 || c >= TablesModel::Message)
            return;
        m_fitted[static_cast<std::size_t>(c)] = size;
        m_byHand[static_cast<std::size_t>(c)] = true;
    });

    m_details->setObjectName(QStringLiteral("tableDetails"));
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setVisible(false);

    m_backfill->setObjectName(QStringLiteral("backfillTable"));
    m_backfill->setIcon(namedIcon(QStringLiteral("refresh")));
    connect(m_backfill, &QPushButton::clicked, this, &TablesPage::requestBackfill);
    m_cancel->setObjectName(QStringLiteral("cancelBackfill"));
    m_cancel->setIcon(namedIcon(QStringLiteral("stop")));
    connect(m_cancel, &QPushButton::clicked, this, &TablesPage::requestCancel);
    connect(m_runner, &BackfillRunner::started, this, &TablesPage::updateButtons);
    connect(m_runner, &BackfillRunner::finished, this, &TablesPage::showOutcome);
    m_promote->setObjectName(QStringLiteral("promoteTable"));
    m_promote->setIcon(namedIcon(QStringLiteral("start")));
    connect(m_promote, &QPushButton::clicked, this, &TablesPage::requestPromote);
    connect(m_promoter, &PromoteRunner::started, this, &TablesPage::updateButtons);
    connect(m_promoter, &PromoteRunner::finished, this,
            [this](std::uint64_t, const QString &pipeline, const QStringList &, bool ok, const QStringList &lines) {
                showPromoted(pipeline, ok, lines);
            });
    m_pause->setObjectName(QStringLiteral("pauseTable"));
    m_pause->setIcon(namedIcon(QStringLiteral("pause")));
    connect(m_pause, &QPushButton::clicked, this, &TablesPage::requestPause);
    m_resume->setObjectName(QStringLiteral("resumeTable"));
    m_resume->setIcon(namedIcon(QStringLiteral("start")));
    connect(m_resume, &QPushButton::clicked, this, &TablesPage::requestResume);
    connect(m_pauser, &PauseRunner::started, this, &TablesPage::updateButtons);
    connect(m_pauser, &PauseRunner::finished, this,
            [this](std::uint64_t, const QString &pipeline, const QString &table, bool pause, bool ok,
                   const QString &message) {
                updateButtons();
                if (ok)
                    emit statusMessage(message);
                else if (table.isEmpty())
                    emit statusMessage(
                        (pause ? tr("Could not pause pipeline %1: %2") : tr("Could not resume pipeline %1: %2"))
                            .arg(pipeline, message));
                else
                    emit statusMessage((pause ? tr("Could not pause %1/%2: %3") : tr("Could not resume %1/%2: %3"))
                                           .arg(pipeline, table, message));
            });
    m_recover->setObjectName(QStringLiteral("recoverButton"));
    m_recover->setIcon(namedIcon(QStringLiteral("refresh")));
    m_recover->setVisible(false);
    connect(m_recover, &QPushButton::clicked, this, [this] { requestRecover(); });
    connect(m_recoverer, &RecoverRunner::started, this, &TablesPage::updateButtons);
    connect(m_recoverer, &RecoverRunner::finished, this,
            [this](std::uint64_t, const QString &pipeline, bool ok, const QStringList &lines) {
                showRecovered(pipeline, ok, lines);
            });
    // Enter, and a double-click whatever the style's activation: openDetail() is idempotent.
    const auto open = [this](const QModelIndex &index) { openDetail(m_proxy->mapToSource(index).row()); };
    connect(m_view, &QAbstractItemView::activated, this, open);
    connect(m_view, &QAbstractItemView::doubleClicked, this, open);
    m_promoteResult->setObjectName(QStringLiteral("promoteResult"));
    m_promoteResult->setWordWrap(true);
    m_promoteResult->setTextFormat(Qt::PlainText);
    m_promoteResult->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_promoteResult->setVisible(false);
    m_recoverResult->setObjectName(QStringLiteral("recoverResult"));
    m_recoverResult->setWordWrap(true);
    m_recoverResult->setTextFormat(Qt::PlainText);
    m_recoverResult->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_recoverResult->setVisible(false);

    auto *top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_backfill);
    top->addWidget(m_cancel);
    top->addWidget(m_promote);
    top->addWidget(m_pause);
    top->addWidget(m_resume);
    top->addSpacing(12);
    top->addWidget(m_filter);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_notice);
    layout->addWidget(m_promoteResult);
    layout->addWidget(m_recoverResult);
    layout->addWidget(m_view, 1);
    // The button beside the detail that names the command it runs.
    auto *bottom = new QHBoxLayout;
    bottom->addWidget(m_details, 1);
    bottom->addWidget(m_recover, 0, Qt::AlignTop);
    layout->addLayout(bottom);

    m_fitTimer = new QTimer(this);
    m_fitTimer->setSingleShot(true);
    m_fitTimer->setInterval(0);
    connect(m_fitTimer, &QTimer::timeout, this, [this] {
        const bool growOnly = m_fitGrowOnly;
        const int first = m_fitFirst, last = m_fitLast;
        m_fitGrowOnly = true;
        m_fitFirst = 1;
        m_fitLast = 0;
        fitColumns(growOnly, first, last);
    });
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        updateSummary();
        updateButtons();
        fitColumnsSoon(false);
    });
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this] {
        updateSummary();
        updateButtons();
        fitColumnsSoon(false);
    });
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, [this] {
        updateSummary();
        updateButtons();
    });
    connect(m_model, &QAbstractItemModel::dataChanged, this, [this](const QModelIndex &from, const QModelIndex &to) {
        updateSummary();
        updateDetails();
        updateButtons();
        fitColumnsSoon(true, from.column(), to.column());
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &TablesPage::updateDetails);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &TablesPage::updateButtons);
    updateSummary();
    updateButtons();
    fitColumns(false);
}

void TablesPage::focusFilter()
{
    m_filter->setFocus(Qt::ShortcutFocusReason);
    m_filter->selectAll();
}

void TablesPage::setNotice(const QString &notice)
{
    m_notice->setText(notice);
    m_notice->setVisible(!notice.isEmpty());
}

void TablesPage::updateSummary()
{
    const int total = m_model->rowCount();
    if (total == 0) {
        m_summary->setText(tr("No tables yet. On the <b>Workspace</b> page: <b>Add Endpoint\u2026</b> for the source "
                              "and the target, then <b>Add Pipeline\u2026</b> to pick tables; or <b>Import "
                              "YAML\u2026</b> a workspace file."));
        return;
    }
    int ok = 0, warn = 0, breach = 0, unknown = 0, errors = 0, paused = 0;
    QStringList changed; // pipelines whose source changed, in the workspace's order
    for (int row = 0; row < total; ++row) {
        const auto &r = m_model->report(row);
        if (r.state == core::TableState::Error)
            ++errors;
        if (const QString p = QString::fromStdString(r.pipeline);
            r.state == core::TableState::SourceChanged && !changed.contains(p))
            changed.push_back(p);
        if (r.paused)
            ++paused;
        if (r.freshness == core::Freshness::Ok)
            ++ok;
        else if (r.freshness == core::Freshness::Warn)
            ++warn;
        else if (r.freshness == core::Freshness::Breach)
            ++breach;
        else
            ++unknown;
    }
    QString text = (total == 1 ? tr("1 table: ") : tr("%1 tables: ").arg(total)) +
                   tr("%1 ok, %2 warn, %3 breach, %4 unknown").arg(ok).arg(warn).arg(breach).arg(unknown);
    // Filtered: how many of them the grid shows, so "5 tables" is not read as the grid's count.
    if (const int shown = m_proxy->rowCount(); shown != total)
        text = tr("<b>%1 of %2 shown</b> (filter); ").arg(shown).arg(total) + text;
    if (errors)
        text += tr("; <b>%1 in error</b>").arg(errors);
    if (!changed.isEmpty())
        text += tr("; <b>source changed</b> under %1").arg(changed.join(QStringLiteral(", ")).toHtmlEscaped());
    if (paused)
        text += tr("; %1 paused").arg(paused);
    m_summary->setText(text);
}

void TablesPage::updateDetails()
{
    const QModelIndex current = m_proxy->mapToSource(m_view->currentIndex());
    if (!current.isValid()) {
        m_details->setVisible(false);
        return;
    }
    const auto &r = m_model->report(current.row());
    QString text =
        tr("<b>%1 / %2</b> &rarr; %3")
            .arg(QString::fromStdString(r.pipeline).toHtmlEscaped(), QString::fromStdString(r.table).toHtmlEscaped(),
                 QString::fromStdString(r.target).toHtmlEscaped());
    // Which server its stream follows, as failover checks it (docs/failover.md).
    if (r.sourceIdentity && r.strategy == core::Strategy::Cdc)
        text += tr(" &middot; source: %1").arg(sourceIdentityText(*r.sourceIdentity).toHtmlEscaped());
    if (r.fellBackFromCdc)
        text += QStringLiteral("<br>") + tr("The slot guard moved it from CDC to cursor sync to protect the source; "
                                            "\u201cPromote to CDC\u201d streams it again.");
    QString message = QString::fromStdString(r.message);
    if (r.state == core::TableState::SourceChanged) {
        // The fix first, the button beside this line (the command kept for scripts); the message
        // below says why, without the engine's copy of the same fix (said once). A re-snapshot
        // has no button in the app: its command stays.
        const QString pipeline = QString::fromStdString(r.pipeline).toHtmlEscaped();
        const SourceChangeWords words = sourceChangeWords(message);
        text += QStringLiteral("<br>") +
                tr("<b>The source changed</b>: bring the target back to the server there now by diff with "
                   "<b>Recover\u2026</b> (beside this, or the table's context menu; <code>driftless-cli recover "
                   "%1</code>), or load it again from a shell with <code>driftless-cli resnapshot %1</code>. "
                   "Recover set to auto in the pipeline's settings (Edit Pipeline\u2026 on the Workspace page) has "
                   "the sync do it by itself.")
                    .arg(pipeline);
        if (!words.otherWay.isEmpty())
            text += QStringLiteral(" ") +
                    tr("Or %1 (Edit\u2026 on the Workspace page).").arg(words.otherWay.toHtmlEscaped());
        message = words.why;
    }
    if (!message.isEmpty())
        text += QStringLiteral("<br>") + inAppWords(message).toHtmlEscaped();
    m_details->setText(text);
    m_details->setVisible(true);
}

int TablesPage::selectedRow() const
{
    return selectedSourceRow(m_view, m_proxy);
}

void TablesPage::selectTable(const QString &pipeline, const QString &table)
{
    selectSourceRow(m_view, m_proxy, m_model->rowOf(pipeline, table));
}

void TablesPage::updateButtons()
{
    const int row = selectedRow();
    const std::vector<int> rows = selectedRows();
    if (rows.size() > 1) {
        updateButtonsForMany(rows);
        return;
    }
    if (row < 0) {
        m_pause->setEnabled(false);
        m_pause->setToolTip(tr("Select a table to stop syncing it until resumed (Ctrl+click selects several)"));
        m_resume->setEnabled(false);
        m_resume->setToolTip(tr("Select a paused table to sync it again"));
        m_backfill->setEnabled(false);
        m_backfill->setToolTip(tr("Select a CDC table to copy it again while it streams"));
        m_cancel->setEnabled(false);
        m_cancel->setToolTip(tr("Select a table whose backfill is under way"));
        m_promote->setEnabled(false);
        m_promote->setToolTip(tr("Select a table the slot guard moved from CDC to cursor sync"));
        m_recover->setVisible(false);
        return;
    }
    const auto &r = m_model->report(row);
    const QString name = QString::fromStdString(r.table);
    // Only where a change of source stopped the table: the one state recovering is for.
    const QString pipelineName = QString::fromStdString(r.pipeline);
    m_recover->setVisible(r.state == core::TableState::SourceChanged);
    m_recover->setEnabled(!m_recoverer->busy(pipelineName));
    m_recover->setToolTip(m_recoverer->busy(pipelineName)
                              ? tr("A recovery of %1 is under way\u2026").arg(pipelineName)
                              : tr("Bring pipeline %1's tables back to the server now behind its source, as "
                                   "driftless-cli recover %1 does")
                                    .arg(pipelineName));
    if (r.reverse) {
        // A two-way pipeline's reverse direction is run by its forward row: one pause holds both
        // directions, and only the forward direction ever loads the table.
        const QString forward = QString::fromStdString(r.twoWay);
        for (QPushButton *b : {m_pause, m_resume, m_backfill, m_cancel, m_promote})
            b->setEnabled(false);
        m_pause->setToolTip(
            tr("Pause the table on its forward row (pipeline %1): a pause holds both directions").arg(forward));
        m_resume->setToolTip(r.paused ? tr("Resume the table on its forward row (pipeline %1): both directions sync "
                                           "again")
                                            .arg(forward)
                                      : tr("%1 is not paused").arg(name));
        m_backfill->setToolTip(tr("The reverse direction of a two-way pipeline is never backfilled: the forward "
                                  "direction loads the table once, and each direction streams from then on"));
        m_cancel->setToolTip(tr("No backfill of %1 is under way").arg(name));
        m_promote->setToolTip(tr("The reverse direction of a two-way pipeline always streams"));
        return;
    }
    const bool busy = m_runner->busy(QString::fromStdString(r.pipeline), name);
    const bool rebackfill = TablesModel::isRebackfill(r);

    QString why;
    if (r.strategy == core::Strategy::FullRefresh)
        why = tr("%1 uses full refresh: it is reloaded whole on every pass, so there is nothing to backfill. "
                 "Backfill is for CDC tables.")
                  .arg(name);
    else if (r.strategy == core::Strategy::Cursor && r.fellBackFromCdc)
        why = tr("%1 fell back from CDC to cursor sync. Promote it to CDC to stream it again.").arg(name);
    else if (r.strategy == core::Strategy::Cursor)
        why = tr("%1 uses cursor sync: it re-reads from its cursor (minus the lookback) on every pass. "
                 "Backfill is for CDC tables.")
                  .arg(name);
    else if (r.strategy != core::Strategy::Cdc)
        why = tr("Backfill is for CDC tables.");
    else if (busy)
        why = tr("Talking to the databases\u2026");
    else if (r.state == core::TableState::SourceChanged)
        why = tr("The source of %1 changed, so its stream cannot read on and a backfill would not start: bring the "
                 "target back with Recover\u2026 (beside the table's detail; driftless-cli recover %2), or load it "
                 "again with driftless-cli resnapshot %2")
                  .arg(name, QString::fromStdString(r.pipeline));
    else if (rebackfill)
        why = tr("A backfill of %1 is under way; its progress is in the Backfill column.").arg(name);
    else if (r.state == core::TableState::Backfilling)
        why = tr("%1 is in its initial load, which is its backfill.").arg(name);
    m_backfill->setEnabled(why.isEmpty());
    m_backfill->setToolTip(why.isEmpty() ? tr("Copy %1 again from a fresh snapshot while it keeps streaming").arg(name)
                                         : why);

    m_cancel->setEnabled(rebackfill && !busy);
    if (rebackfill)
        m_cancel->setToolTip(busy ? tr("Talking to the databases\u2026")
                                  : tr("Stop the backfill of %1; the rows merged so far stay").arg(name));
    else if (r.strategy == core::Strategy::Cdc && r.state == core::TableState::Backfilling)
        m_cancel->setToolTip(tr("An initial load is not cancelled: stop the sync to pause it; it resumes at its next "
                                "chunk"));
    else
        m_cancel->setToolTip(tr("No backfill of %1 is under way").arg(name));

    const bool pausing = m_pauser->busy(QString::fromStdString(r.pipeline), name);
    m_pause->setEnabled(!r.paused && !pausing);
    m_resume->setEnabled(r.paused && !pausing);
    if (pausing) {
        m_pause->setToolTip(tr("Writing the workspace file\u2026"));
        m_resume->setToolTip(m_pause->toolTip());
    } else {
        m_pause->setToolTip(r.paused ? tr("%1 is paused").arg(name)
                                     : tr("Stop syncing %1 until resumed; its state and checkpoint stay").arg(name));
        m_resume->setToolTip(!r.paused ? tr("%1 is not paused").arg(name)
                             : r.strategy == core::Strategy::Cdc
                                 ? tr("Sync %1 again: re-copied through the guarded merge while it streams").arg(name)
                                 : tr("Sync %1 again: its next pass runs at once").arg(name));
    }

    m_promote->setEnabled(r.fellBackFromCdc && !m_promoter->busy());
    if (!r.fellBackFromCdc)
        m_promote->setToolTip(tr("%1 did not fall back from CDC: only tables the slot guard moved to cursor sync "
                                 "are promoted")
                                  .arg(name));
    else if (m_promoter->busy())
        m_promote->setToolTip(tr("A promotion is under way\u2026"));
    else
        m_promote->setToolTip(tr("Return %1 to CDC: a new slot, a guarded copy, then streaming").arg(name));
}

std::vector<int> TablesPage::selectedRows() const
{
    std::vector<int> rows;
    for (const QModelIndex &index : m_view->selectionModel()->selectedRows())
        rows.push_back(m_proxy->mapToSource(index).row());
    std::sort(rows.begin(), rows.end());
    return rows;
}

/// The rows of `rows` that Pause (or Resume) acts on: forward rows, not paused (or paused), not
/// being written already.
std::vector<int> TablesPage::actionable(const std::vector<int> &rows, bool pause) const
{
    std::vector<int> out;
    for (int row : rows) {
        const auto &r = m_model->report(row);
        if (!r.reverse && r.paused != pause &&
            !m_pauser->busy(QString::fromStdString(r.pipeline), QString::fromStdString(r.table)))
            out.push_back(row);
    }
    return out;
}

void TablesPage::updateButtonsForMany(const std::vector<int> &rows)
{
    const auto toPause = actionable(rows, true), toResume = actionable(rows, false);
    m_pause->setEnabled(!toPause.empty());
    m_pause->setToolTip(toPause.empty()
                            ? tr("None of the %1 selected tables can be paused: paused already, or a "
                                 "two-way pipeline's reverse row")
                                  .arg(rows.size())
                            : tr("Pause %1 of the %2 selected tables").arg(toPause.size()).arg(rows.size()));
    m_resume->setEnabled(!toResume.empty());
    m_resume->setToolTip(
        toResume.empty()
            ? tr("None of the %1 selected tables is paused").arg(rows.size())
            : tr("Resume the %1 paused ones of the %2 selected tables").arg(toResume.size()).arg(rows.size()));
    for (QPushButton *b : {m_backfill, m_cancel, m_promote}) {
        b->setEnabled(false);
        b->setToolTip(tr("Select one table for this"));
    }
    m_recover->setVisible(false);
}

void TablesPage::selectPipeline(const QString &pipeline)
{
    m_view->clearSelection();
    for (int row = 0; row < m_model->rowCount(); ++row)
        if (QString::fromStdString(m_model->report(row).pipeline) == pipeline) {
            const QModelIndex index = m_proxy->mapFromSource(m_model->index(row, 0));
            if (index.isValid())
                m_view->selectionModel()->select(index, QItemSelectionModel::Select | QItemSelectionModel::Rows);
        }
    updateButtons();
}

void TablesPage::showContextMenu(const QPoint &pos)
{
    const QModelIndex index = m_view->indexAt(pos);
    if (!index.isValid())
        return;
    // A click on a selected row keeps the selection (several tables); elsewhere it selects the row.
    if (!m_view->selectionModel()->isRowSelected(index.row(), index.parent()))
        m_view->selectRow(index.row());
    updateButtons();
    const QString pipeline = QString::fromStdString(m_model->report(m_proxy->mapToSource(index).row()).pipeline);
    QMenu menu(this);
    QAction *backfill = menu.addAction(m_backfill->icon(), m_backfill->text(), this, &TablesPage::requestBackfill);
    backfill->setEnabled(m_backfill->isEnabled());
    backfill->setToolTip(m_backfill->toolTip());
    QAction *cancel = menu.addAction(m_cancel->icon(), m_cancel->text(), this, &TablesPage::requestCancel);
    cancel->setEnabled(m_cancel->isEnabled());
    menu.addSeparator();
    QAction *pause = menu.addAction(m_pause->icon(), m_pause->text(), this, &TablesPage::requestPause);
    pause->setEnabled(m_pause->isEnabled());
    QAction *resume = menu.addAction(m_resume->icon(), m_resume->text(), this, &TablesPage::requestResume);
    resume->setEnabled(m_resume->isEnabled());
    // The whole pipeline in one choice (issue 45: pausing one meant pausing each table).
    const bool pipelineBusy = m_pauser->busy(pipeline);
    QAction *pausePipeline = menu.addAction(m_pause->icon(), tr("Pause Pipeline %1\u2026").arg(pipeline), this,
                                            [this, pipeline] { requestPipelinePaused(pipeline, true); });
    pausePipeline->setObjectName(QStringLiteral("pausePipeline"));
    pausePipeline->setEnabled(!pipelineBusy && !pipelineRows(pipeline, true).empty());
    QAction *resumePipeline = menu.addAction(m_resume->icon(), tr("Resume Pipeline %1\u2026").arg(pipeline), this,
                                             [this, pipeline] { requestPipelinePaused(pipeline, false); });
    resumePipeline->setObjectName(QStringLiteral("resumePipeline"));
    resumePipeline->setEnabled(!pipelineBusy && !pipelineRows(pipeline, false).empty());
    menu.addAction(tr("Select Every Table of %1").arg(pipeline), this, [this, pipeline] { selectPipeline(pipeline); });
    QAction *detail = menu.addAction(tr("Details\u2026"), this, [this] { openDetail(selectedRow()); });
    detail->setEnabled(selectedRow() >= 0);
    menu.addSeparator();
    QAction *promote = menu.addAction(m_promote->icon(), m_promote->text(), this, &TablesPage::requestPromote);
    promote->setEnabled(m_promote->isEnabled());
    promote->setToolTip(m_promote->toolTip());
    if (m_recover->isVisibleTo(this)) {
        QAction *recover = menu.addAction(m_recover->icon(), m_recover->text(), this, [this] { requestRecover(); });
        recover->setEnabled(m_recover->isEnabled());
        recover->setToolTip(m_recover->toolTip());
    }
    menu.setToolTipsVisible(true);
    menu.exec(m_view->viewport()->mapToGlobal(pos));
}

void TablesPage::requestBackfill()
{
    const int row = selectedRow();
    if (row < 0 || m_confirmation || !m_backfill->isEnabled())
        return;
    const auto r = m_model->report(row);
    const QString pipeline = QString::fromStdString(r.pipeline);
    const QString table = QString::fromStdString(r.table);

    // What the workspace says about the copy: chunk size. The engine's snapshot has it; the
    // page never opens the file itself.
    long long pageSize = 0;
    if (const auto ws = m_runner->engine()->snapshot().workspace)
        if (const auto *p = ws->pipeline(r.pipeline))
            for (const auto &t : p->tables)
                if (t.table.display() == r.table)
                    pageSize = t.effectivePageSize();

    const QLocale locale;
    QString size;
    if (r.backfill && r.backfill->total)
        size = tr("About %1 rows (the source's estimate).")
                   .arg(locale.toString(static_cast<qlonglong>(*r.backfill->total)));
    else
        size = tr("Its size shows in the progress bar once the copy starts (the source's estimate).");
    const QString chunks = pageSize > 0 ? tr(", in chunks of %1 rows").arg(locale.toString(pageSize)) : QString();
    const bool engineRunning = m_runner->engine()->state() == EngineBridge::State::Running;

    auto *box = new QMessageBox(
        QMessageBox::Question, tr("Backfill Table"),
        tr("Backfill <b>%1</b> of pipeline <b>%2</b>?").arg(table.toHtmlEscaped(), pipeline.toHtmlEscaped()),
        QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("backfillConfirmation"));
    box->setInformativeText(
        tr("<p>The table is copied again from a fresh snapshot of the source while the stream keeps applying "
           "changes to it and to the pipeline's other tables.</p>"
           "<ul><li>Rows of %1 that differ from the source are rewritten; rows that already match are left "
           "alone.</li>"
           "<li>Rows the source no longer has are removed when the copy ends.</li>"
           "<li>No locks are taken on the source: the rows are read in the snapshot%2.</li></ul>"
           "<p>%3</p><p>%4 It can be cancelled at any time; the rows merged until then stay.</p>")
            .arg(QString::fromStdString(r.target).toHtmlEscaped(), chunks, size.toHtmlEscaped(),
                 engineRunning ? tr("The running sync takes the request within a second.")
                               : tr("If no sync runs this pipeline, Driftless starts one to take the request.")));
    QPushButton *confirm = box->addButton(tr("Backfill"), QMessageBox::AcceptRole);
    confirm->setObjectName(QStringLiteral("confirmBackfill"));
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(confirm);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, box, confirm, pipeline, table] {
        if (box->clickedButton() != confirm)
            return;
        if (m_runner->request(pipeline, table))
            emit statusMessage(tr("Asking for a backfill of %1\u2026").arg(table));
        updateButtons();
    });
    m_confirmation = box;
    box->open();
}

void TablesPage::requestCancel()
{
    const int row = selectedRow();
    if (row < 0 || m_confirmation || !m_cancel->isEnabled())
        return;
    const auto r = m_model->report(row);
    const QString pipeline = QString::fromStdString(r.pipeline);
    const QString table = QString::fromStdString(r.table);
    const QString done =
        r.backfill
            ? tr("%1 rows have been copied so far. ").arg(QLocale().toString(static_cast<qlonglong>(r.backfill->rows)))
            : QString();
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Cancel Backfill"),
                                tr("Cancel the backfill of <b>%1</b>?").arg(table.toHtmlEscaped()),
                                QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("cancelConfirmation"));
    box->setInformativeText(tr("<p>%1The copy stops within a second and the table goes on streaming.</p>"
                               "<p>The rows merged so far stay (each is the source's row as of the snapshot or "
                               "newer). Rows the source no longer has are not looked for, so the target may "
                               "still hold some; backfill again to remove them.</p>")
                                .arg(done.toHtmlEscaped()));
    QPushButton *confirm = box->addButton(tr("Cancel Backfill"), QMessageBox::DestructiveRole);
    confirm->setObjectName(QStringLiteral("confirmCancel"));
    QPushButton *keep = box->addButton(tr("Keep Copying"), QMessageBox::RejectRole);
    box->setDefaultButton(keep);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, box, confirm, pipeline, table] {
        if (box->clickedButton() != confirm)
            return;
        if (m_runner->cancel(pipeline, table))
            emit statusMessage(tr("Cancelling the backfill of %1\u2026").arg(table));
        updateButtons();
    });
    m_confirmation = box;
    box->open();
}

void TablesPage::requestPromote()
{
    const int row = selectedRow();
    if (row < 0 || m_confirmation || !m_promote->isEnabled())
        return;
    const auto r = m_model->report(row);
    const QString pipeline = QString::fromStdString(r.pipeline);
    const QString table = QString::fromStdString(r.table);
    QString source = tr("the source");
    if (const auto ws = m_promoter->engine()->snapshot().workspace)
        if (const auto *p = ws->pipeline(r.pipeline))
            source = QString::fromStdString(p->source);
    const auto state = m_promoter->engine()->state();
    const bool running = state == EngineBridge::State::Running || state == EngineBridge::State::Starting;

    auto *box = new QMessageBox(
        QMessageBox::Question, tr("Promote to CDC"),
        tr("Promote <b>%1</b> of pipeline <b>%2</b> back to CDC?").arg(table.toHtmlEscaped(), pipeline.toHtmlEscaped()),
        QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("promoteConfirmation"));
    box->setInformativeText(
        tr("<p>Create a new replication slot on <b>%1</b>, copy <b>%2</b> through the guarded merge (rows already "
           "equal are not rewritten; rows the source no longer has are removed), then stream its changes. The "
           "cursor sync of this table stops.</p><p>%3</p>")
            .arg(source.toHtmlEscaped(), table.toHtmlEscaped(),
                 running ? tr("The running sync stops after its batches in flight and starts again with the table "
                              "on CDC.")
                         : tr("The slot is created and the table copied when the sync starts next.")));
    QPushButton *confirm = box->addButton(tr("Promote to CDC"), QMessageBox::AcceptRole);
    confirm->setObjectName(QStringLiteral("confirmPromote"));
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(confirm);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, box, confirm, pipeline, table] {
        if (box->clickedButton() != confirm)
            return;
        if (m_promoter->promote(pipeline, {table})) {
            m_promoteResult->setStyleSheet(QString());
            m_promoteResult->setText(tr("Promoting %1 to CDC\u2026").arg(table));
            m_promoteResult->setVisible(true);
        }
        updateButtons();
    });
    m_confirmation = box;
    box->open();
}

void TablesPage::requestRecover(const QString &pipeline)
{
    QString name = pipeline;
    if (name.isEmpty() && selectedRow() >= 0)
        name = QString::fromStdString(m_model->report(selectedRow()).pipeline);
    if (name.isEmpty() || m_confirmation || m_recoverer->busy(name))
        return;
    EngineBridge *engine = m_recoverer->engine();
    const auto state = engine->state();
    const RecoverSync sync = engine->remote() ? RecoverSync::Agent
                             : state == EngineBridge::State::Running || state == EngineBridge::State::Starting
                                 ? RecoverSync::Running
                                 : RecoverSync::Stopped;
    auto *box =
        makeRecoverConfirmation(this, name, engine->snapshot().workspace.get(), engine->snapshot().tables, sync);
    connect(box, &QMessageBox::finished, this, [this, box, name] {
        if (box->clickedButton() != box->findChild<QPushButton *>(QStringLiteral("confirmRecover")))
            return;
        if (m_recoverer->recover(name)) {
            m_recoverResult->setStyleSheet(QString());
            m_recoverResult->setText(tr("Asking to recover %1\u2026").arg(name));
            m_recoverResult->setVisible(true);
        }
        updateButtons();
    });
    m_confirmation = box;
    box->open();
}

void TablesPage::requestPause()
{
    requestPaused(true);
}

void TablesPage::requestResume()
{
    requestPaused(false);
}

void TablesPage::requestPaused(bool pause)
{
    QPushButton *button = pause ? m_pause : m_resume;
    std::vector<int> rows = selectedRows();
    if (rows.empty() && selectedRow() >= 0)
        rows = {selectedRow()};
    rows = actionable(rows, pause);
    if (rows.empty() || m_confirmation || !button->isEnabled())
        return;
    std::vector<core::TableReport> reports;
    for (int row : rows)
        reports.push_back(m_model->report(row));
    const bool running = m_runner->engine()->state() == EngineBridge::State::Running;
    auto *box = reports.size() == 1 ? makePauseConfirmation(this, reports.front(), pause, running)
                                    : makePauseConfirmation(this, reports, pause, running);
    const QString confirm = pause ? QStringLiteral("confirmPause") : QStringLiteral("confirmResume");
    connect(box, &QMessageBox::finished, this, [this, box, confirm, reports, pause] {
        if (box->clickedButton() == box->findChild<QPushButton *>(confirm)) {
            int started = 0;
            for (const auto &r : reports)
                started += m_pauser->setPaused(QString::fromStdString(r.pipeline), QString::fromStdString(r.table),
                                               pause) != 0;
            if (started == 1)
                emit statusMessage((pause ? tr("Pausing %1\u2026") : tr("Resuming %1\u2026"))
                                       .arg(QString::fromStdString(reports.front().table)));
            else if (started > 1)
                emit statusMessage(
                    (pause ? tr("Pausing %1 tables\u2026") : tr("Resuming %1 tables\u2026")).arg(started));
        }
        updateButtons();
    });
    m_confirmation = box;
    box->open();
}

std::vector<int> TablesPage::pipelineRows(const QString &pipeline, bool pause) const
{
    std::vector<int> rows;
    for (int row = 0; row < m_model->rowCount(); ++row)
        if (QString::fromStdString(m_model->report(row).pipeline) == pipeline)
            rows.push_back(row);
    return actionable(rows, pause);
}

void TablesPage::requestPipelinePaused(const QString &pipeline, bool pause)
{
    const std::vector<int> rows = pipelineRows(pipeline, pause);
    if (rows.empty() || m_confirmation || m_pauser->busy(pipeline))
        return;
    std::vector<core::TableReport> reports;
    for (int row : rows)
        reports.push_back(m_model->report(row));
    const bool running = m_runner->engine()->state() == EngineBridge::State::Running;
    auto *box = makePipelinePauseConfirmation(this, pipeline, reports, pause, running);
    const QString confirm = pause ? QStringLiteral("confirmPause") : QStringLiteral("confirmResume");
    connect(box, &QMessageBox::finished, this, [this, box, confirm, pipeline, pause] {
        if (box->clickedButton() == box->findChild<QPushButton *>(confirm) &&
            m_pauser->setPipelinePaused(pipeline, pause) != 0)
            emit statusMessage(
                (pause ? tr("Pausing pipeline %1\u2026") : tr("Resuming pipeline %1\u2026")).arg(pipeline));
        updateButtons();
    });
    m_confirmation = box;
    box->open();
}

TableDetailDialog *TablesPage::openDetail(int row)
{
    if (row < 0 || row >= m_model->rowCount())
        return nullptr;
    const auto &r = m_model->report(row);
    const QString pipeline = QString::fromStdString(r.pipeline), table = QString::fromStdString(r.table);
    if (m_detail && (m_detail->pipeline() != pipeline || m_detail->table() != table)) {
        m_detail->close(); // one detail at a time: it deletes itself, later
        m_detail = nullptr;
    }
    if (!m_detail)
        m_detail = new TableDetailDialog(m_runner->engine(), m_pauser, pipeline, table, this);
    m_detail->show();
    m_detail->raise();
    m_detail->activateWindow();
    return m_detail;
}

void TablesPage::showPromoted(const QString &pipeline, bool ok, const QStringList &lines)
{
    updateButtons();
    const QString text = ok ? lines.join(QLatin1Char('\n'))
                            : tr("Promotion in %1 failed: %2").arg(pipeline, lines.join(QLatin1Char(' ')));
    m_promoteResult->setStyleSheet(ok ? QString() : QStringLiteral("color: #b3261e;"));
    m_promoteResult->setText(text);
    m_promoteResult->setVisible(true);
    // Said once: in the line above the tables, where the DBA who confirmed is looking; the
    // status bar only when they have gone to another page meanwhile (a copy may take minutes).
    if (!isVisible())
        emit statusMessage(ok ? lines.value(0) : text);
}

void TablesPage::showRecovered(const QString &pipeline, bool ok, const QStringList &lines)
{
    updateButtons();
    const QString text = ok ? lines.join(QLatin1Char('\n'))
                            : tr("Could not recover %1: %2").arg(pipeline, lines.join(QLatin1Char('\n')));
    m_recoverResult->setStyleSheet(ok ? QString() : QStringLiteral("color: #b3261e;"));
    m_recoverResult->setText(text);
    m_recoverResult->setVisible(true);
    // The lines above the tables say it; the status bar, one short line, only to a DBA on
    // another page.
    if (!isVisible())
        emit statusMessage(ok ? tr("Recovery of %1 requested (the Tables page lists what was done)").arg(pipeline)
                              : tr("Could not recover %1: %2").arg(pipeline, lines.value(0)));
}

void TablesPage::showOutcome(std::uint64_t, BackfillRunner::Action action, const QString &pipeline,
                             const QString &table, bool ok, const QString &message)
{
    updateButtons();
    QString text;
    if (!ok)
        text = action == BackfillRunner::Action::Request ? tr("Backfill of %1/%2 refused: %3")
                                                         : tr("Could not cancel the backfill of %1/%2: %3");
    else
        text = QStringLiteral("%1/%2: %3");
    emit statusMessage(text.arg(pipeline, table, message));
}

void TablesPage::fitColumnsSoon(bool growOnly, int first, int last)
{
    if (last < 0)
        last = TablesModel::Message - 1;
    m_fitGrowOnly = m_fitGrowOnly && growOnly;
    if (m_fitFirst > m_fitLast) {
        m_fitFirst = first;
        m_fitLast = last;
    } else {
        m_fitFirst = std::min(m_fitFirst, first);
        m_fitLast = std::max(m_fitLast, last);
    }
    if (!isVisible()) {
        m_fitOnShow = true;
        return;
    }
    m_fitTimer->start();
}

void TablesPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_fitOnShow) {
        m_fitOnShow = false;
        m_fitTimer->start();
    }
}

void TablesPage::fitColumns(bool growOnly, int first, int last)
{
    // Fitted to the contents when rows come or go; on updates columns only grow (a timestamp
    // replacing "never"), so nothing jumps back and forth twice a second. The message column
    // takes what is left. Only the rows on screen are measured (resizeContentsPrecision 0).
    const QAbstractItemView *view = m_view;
    if (last < 0)
        last = TablesModel::Message - 1;
    for (int c = std::max(0, first); c <= std::min(last, TablesModel::Message - 1); ++c) {
        const auto i = static_cast<std::size_t>(c);
        const int content = view->sizeHintForColumn(c);
        const int wanted = std::max(content, m_view->horizontalHeader()->sectionSizeHint(c)) + 12;
        if (!growOnly)
            m_byHand[i] = false;
        // The Backfill column holds a bar only while a backfill runs (its width reserved for the
        // time left, so it does not move while it does): once none does, it shrinks back to its
        // header rather than push the page into a horizontal scroll.
        if (!growOnly || c == TablesModel::Progress) {
            m_content[i] = content;
            if (!m_byHand[i])
                m_fitted[i] = wanted;
        } else {
            m_content[i] = std::max(m_content[i], content);
            m_fitted[i] = std::max(m_fitted[i], wanted);
        }
    }
    shareColumns();
}

int TablesPage::headerLeast(int c) const
{
    // The header's own size hint keeps room for the sort arrow in every column (about 25 px
    // each); only the sorted column shows one.
    const QHeaderView *header = m_view->horizontalHeader();
    QStyleOptionHeader opt;
    opt.initFrom(header);
    opt.section = c;
    opt.orientation = Qt::Horizontal;
    opt.text = m_proxy->headerData(c, Qt::Horizontal).toString();
    QSize size = header->style()->sizeFromContents(QStyle::CT_HeaderSection, &opt, QSize(), header);
    if (header->isSortIndicatorShown() && header->sortIndicatorSection() == c)
        size.rwidth() += size.height() + header->style()->pixelMetric(QStyle::PM_HeaderMargin, &opt, header);
    return size.width();
}

void TablesPage::shareColumns()
{
    // At 125% and 150% scaling on a 1366x768 laptop the fitted columns alone were wider than the
    // grid, and Message was off screen to the right (issue 45). Where they do not all fit beside
    // Message's room, the widest columns give way first, each down to no less than its header's
    // words; names (Pipeline, Table) and Backfill's bar are elided down to about ten characters
    // (whole in the line below the grid, and in the bar's tooltip), while strategies, states,
    // numbers, times and the freshness badge are never cut. A column the DBA sized stays as sized.
    const QHeaderView *header = m_view->horizontalHeader();
    const int chars = m_view->fontMetrics().averageCharWidth();
    std::array<int, TablesModel::Message> least{};
    for (int c = 0; c < TablesModel::Message; ++c) {
        const auto i = static_cast<std::size_t>(c);
        const bool name = c == TablesModel::Pipeline || c == TablesModel::Table || c == TablesModel::Progress;
        const int words = name ? 10 * chars : m_content[i]; // the rest whole
        least[i] = m_byHand[i] ? m_fitted[i] : std::min(m_fitted[i], std::max(headerLeast(c), words));
    }
    const auto widthAt = [&](int c, int cap) {
        const auto i = static_cast<std::size_t>(c);
        return std::min(m_fitted[i], std::max(cap, least[i]));
    };
    const auto total = [&](int cap) {
        int sum = 0;
        for (int c = 0; c < TablesModel::Message; ++c)
            sum += widthAt(c, cap);
        return sum;
    };
    // The stretched last section is never narrower than the header's default size.
    const int messageRoom =
        std::max({header->sectionSizeHint(TablesModel::Message), 16 * chars, header->defaultSectionSize()});
    const int room = m_view->viewport()->width() - messageRoom;
    const int widest = *std::max_element(m_fitted.begin(), m_fitted.end());
    // The largest cap under which the columns fit (none when they fit as fitted).
    int cap = widest;
    if (total(widest) > room) {
        int lo = 0, hi = widest;
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (total(mid) <= room)
                lo = mid;
            else
                hi = mid - 1;
        }
        cap = lo;
    }
    m_sharing = true;
    for (int c = 0; c < TablesModel::Message; ++c)
        if (const int width = widthAt(c, cap); m_view->columnWidth(c) != width)
            m_view->setColumnWidth(c, width);
    m_sharing = false;
}

bool TablesPage::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_view->viewport() && event->type() == QEvent::Resize)
        shareColumns();
    return QWidget::eventFilter(watched, event);
}

} // namespace driftless::ui
