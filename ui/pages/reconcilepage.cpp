#include "ui/pages/reconcilepage.h"

#include "ui/dialogs/comparedialog.h"
#include "ui/models/reconcilemodel.h"
#include "ui/models/rowdiffmodel.h"
#include "ui/statusicons.h"
#include "ui/widgets/reconciledialog.h"
#include "ui/widgets/tableselection.h"

#include "core/engine/reconcile/reportexport.h"

#include <QFileDialog>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTextEdit>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace driftless::ui {

namespace {

QString count(long long n)
{
    return QLocale().toString(n);
}

/// The reconciler's phases in words.
QString phaseText(const QString &phase)
{
    if (phase == QLatin1String("checksum"))
        return ReconcilePage::tr("comparing checksums");
    if (phase == QLatin1String("bisect"))
        return ReconcilePage::tr("narrowing down the differing ranges");
    if (phase == QLatin1String("fetch"))
        return ReconcilePage::tr("fetching the differing rows");
    if (phase == QLatin1String("settle"))
        return ReconcilePage::tr("waiting for the sync to apply what it has read");
    if (phase == QLatin1String("recheck"))
        return ReconcilePage::tr("checking the rows in flight again");
    if (phase == QLatin1String("repair"))
        return ReconcilePage::tr("repairing through the guarded merge");
    if (phase == QLatin1String("done"))
        return ReconcilePage::tr("done");
    return phase;
}

/// Up to `limit` keys in one line, for confirmations.
QString keyList(const std::vector<core::CanonicalKey> &keys, std::size_t limit = 10)
{
    QStringList parts;
    for (std::size_t i = 0; i < keys.size() && i < limit; ++i)
        parts << RowDiffModel::keyText(keys[i]);
    QString text = parts.join(QStringLiteral("; "));
    if (keys.size() > limit)
        text += ReconcilePage::tr(" and %1 more").arg(keys.size() - limit);
    return text;
}

} // namespace

ReconcilePage::ReconcilePage(ReconcileRunner *runner, QWidget *parent)
    : QWidget(parent), m_runner(runner), m_model(new ReconcileModel(this)), m_proxy(new QSortFilterProxyModel(this)),
      m_diffModel(new RowDiffModel(this)), m_summary(new QLabel(this)), m_notice(new QLabel(this)),
      m_reconcile(new QPushButton(tr("Reconcile Now\u2026"), this)),
      m_compareTables(new QPushButton(tr("Compare Tables\u2026"), this)), m_cancel(new QPushButton(tr("Cancel"), this)),
      m_progress(new QProgressBar(this)), m_progressLabel(new QLabel(this)),
      m_splitter(new QSplitter(Qt::Vertical, this)), m_view(new QTableView(this)), m_details(new QLabel(this)),
      m_note(new QLabel(this)), m_diffView(new QTreeView(this)),
      m_repairRow(new QPushButton(tr("Repair Row\u2026"), this)),
      m_repairSelected(new QPushButton(tr("Repair Selected\u2026"), this)),
      m_repairTable(new QPushButton(tr("Repair Table\u2026"), this)),
      m_exportCsv(new QPushButton(tr("Export CSV\u2026"), this)),
      m_exportHtml(new QPushButton(tr("Export HTML\u2026"), this)), m_resultIcon(new QLabel(this)),
      m_result(new QLabel(this))
{
    setObjectName(QStringLiteral("reconcilePage"));
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(ReconcileModel::SortRole);

    m_summary->setObjectName(QStringLiteral("reconcileSummary"));
    m_summary->setTextFormat(Qt::PlainText);
    // Unwrapped, the summary and a comparison's phase beside it were wider than a laptop's
    // screen, and the window grew past it (Reconcile Now and the repair buttons off screen).
    m_summary->setWordWrap(true);
    m_notice->setObjectName(QStringLiteral("reconcileNotice"));
    m_notice->setWordWrap(true);
    m_notice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notice->setVisible(false);

    m_reconcile->setObjectName(QStringLiteral("reconcileNow"));
    m_reconcile->setIcon(namedIcon(QStringLiteral("refresh")));
    m_reconcile->setToolTip(tr("Compare a pipeline's tables between source and target, and keep the report"));
    connect(m_reconcile, &QPushButton::clicked, this, &ReconcilePage::requestReconcile);
    m_compareTables->setObjectName(QStringLiteral("compareTables"));
    connect(m_compareTables, &QPushButton::clicked, this, &ReconcilePage::requestCompare);
    m_exportCsv->setObjectName(QStringLiteral("exportCsv"));
    m_exportHtml->setObjectName(QStringLiteral("exportHtml"));
    connect(m_exportCsv, &QPushButton::clicked, this, [this] { requestExport(false); });
    connect(m_exportHtml, &QPushButton::clicked, this, [this] { requestExport(true); });
    m_cancel->setObjectName(QStringLiteral("cancelReconcile"));
    m_cancel->setIcon(namedIcon(QStringLiteral("stop")));
    m_cancel->setToolTip(tr("Stop after the table being compared; nothing is stored"));
    m_cancel->setVisible(false);
    connect(m_cancel, &QPushButton::clicked, m_runner, &ReconcileRunner::cancel);
    m_progress->setObjectName(QStringLiteral("reconcileProgress"));
    m_progress->setMaximumWidth(220);
    m_progress->setMinimumWidth(m_progress->fontMetrics().horizontalAdvance(tr("%1 of %2 tables").arg(888).arg(888)) +
                                24);
    m_progress->setVisible(false);
    m_progressLabel->setObjectName(QStringLiteral("reconcilePhase"));
    m_progressLabel->setTextFormat(Qt::PlainText);
    m_progressLabel->setWordWrap(true);
    m_progressLabel->setVisible(false);

    m_view->setObjectName(QStringLiteral("reconcileView"));
    m_view->setModel(m_proxy);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->setVisible(false);
    // Table names vary in length, the numbers do not: the Table column takes the spare width.
    m_view->horizontalHeader()->setSectionResizeMode(ReconcileModel::Table, QHeaderView::Stretch);
    m_view->horizontalHeader()->setHighlightSections(false);
    m_view->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_view->setSortingEnabled(true);

    m_details->setObjectName(QStringLiteral("diffDetails"));
    m_details->setTextFormat(Qt::PlainText);
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_note->setObjectName(QStringLiteral("diffNote"));
    m_note->setTextFormat(Qt::PlainText);
    m_note->setWordWrap(true);
    m_note->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_note->setVisible(false);

    m_diffView->setObjectName(QStringLiteral("diffView"));
    m_diffView->setModel(m_diffModel);
    m_diffView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_diffView->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_diffView->setAlternatingRowColors(true);
    m_diffView->setUniformRowHeights(true);
    m_diffView->setWordWrap(false);
    m_diffView->header()->setStretchLastSection(true);
    m_diffView->setTextElideMode(Qt::ElideMiddle);
    m_diffView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_diffView, &QWidget::customContextMenuRequested, this, [this](const QPoint &pos) {
        // The same three actions as the buttons, in the same state.
        QMenu menu(this);
        for (QPushButton *button : {m_repairRow, m_repairSelected, m_repairTable}) {
            QAction *action = menu.addAction(button->text(), button, &QPushButton::click);
            action->setEnabled(button->isEnabled());
        }
        menu.exec(m_diffView->viewport()->mapToGlobal(pos));
    });

    m_repairRow->setObjectName(QStringLiteral("repairRow"));
    m_repairSelected->setObjectName(QStringLiteral("repairSelected"));
    m_repairTable->setObjectName(QStringLiteral("repairTable"));
    connect(m_repairRow, &QPushButton::clicked, this, &ReconcilePage::requestRepairRow);
    connect(m_repairSelected, &QPushButton::clicked, this, &ReconcilePage::requestRepairSelected);
    connect(m_repairTable, &QPushButton::clicked, this, &ReconcilePage::requestRepairTable);

    m_resultIcon->setObjectName(QStringLiteral("repairResultIcon"));
    m_resultIcon->setVisible(false);
    m_result->setObjectName(QStringLiteral("repairResult"));
    m_result->setTextFormat(Qt::PlainText);
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Its room is kept while hidden: the repair buttons beside it stay where they are as
    // outcomes come and go (they spread across the page whenever it was hidden).
    QSizePolicy keep = m_result->sizePolicy();
    keep.setRetainSizeWhenHidden(true);
    m_result->setSizePolicy(keep);
    m_result->setVisible(false);

    auto *top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_exportCsv);
    top->addWidget(m_exportHtml);
    top->addWidget(m_compareTables);
    top->addWidget(m_reconcile);

    auto *details = new QWidget(m_splitter);
    auto *detailsLayout = new QVBoxLayout(details);
    detailsLayout->setContentsMargins(0, 0, 0, 0);
    detailsLayout->addWidget(m_details);
    detailsLayout->addWidget(m_note);
    detailsLayout->addWidget(m_diffView, 1);
    auto *repairs = new QHBoxLayout;
    repairs->addWidget(m_resultIcon, 0, Qt::AlignTop);
    repairs->addWidget(m_result, 1);
    repairs->addWidget(m_repairRow, 0, Qt::AlignTop);
    repairs->addWidget(m_repairSelected, 0, Qt::AlignTop);
    repairs->addWidget(m_repairTable, 0, Qt::AlignTop);
    detailsLayout->addLayout(repairs);

    m_splitter->setObjectName(QStringLiteral("reconcileSplitter"));
    m_splitter->addWidget(m_view);
    m_splitter->addWidget(details);
    m_splitter->setChildrenCollapsible(false);
    m_splitter->setStretchFactor(0, 2);
    m_splitter->setStretchFactor(1, 3);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    // A comparison under way, on a row of its own: a long table name in the phase would not
    // leave the buttons above their room.
    auto *running = new QHBoxLayout;
    running->addWidget(m_progressLabel, 1);
    running->addWidget(m_progress);
    running->addWidget(m_cancel);
    layout->addLayout(running);
    layout->addWidget(m_notice);
    layout->addWidget(m_splitter, 1);

    m_timer.setInterval(kRefreshMs);
    connect(&m_timer, &QTimer::timeout, this, &ReconcilePage::reload);
    connect(m_runner, &ReconcileRunner::summariesReady, this, &ReconcilePage::showSummaries);
    connect(m_runner, &ReconcileRunner::reportReady, this, &ReconcilePage::showReport);
    connect(m_runner, &ReconcileRunner::workspaceChanged, this, [this] {
        if (m_path != m_runner->statePath()) {
            // Another file: nothing of the previous one's reports stays on screen.
            m_path = m_runner->statePath();
            m_loaded = false;
            m_readFailed = false;
            m_pendingSelection.reset();
            m_planRequest = 0; // its answer, if any, is dropped with the old engine's
            m_model->setSummaries({});
            m_report.reset();
            m_shown.reset();
            m_diffModel->clear();
            m_result->setVisible(false);
            m_resultIcon->setVisible(false);
        }
        updateSummary();
        showSelectedTable();
    });
    connect(m_runner, &ReconcileRunner::jobStarted, this, &ReconcilePage::onJobStarted);
    connect(m_runner, &ReconcileRunner::progress, this, &ReconcilePage::onProgress);
    connect(m_runner, &ReconcileRunner::reconcileFinished, this, &ReconcilePage::onReconcileFinished);
    connect(m_runner, &ReconcileRunner::repairFinished, this, &ReconcilePage::onRepairFinished);
    connect(m_runner, &ReconcileRunner::planReady, this, &ReconcilePage::onPlanReady);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &ReconcilePage::selectionChanged);
    connect(m_diffView->selectionModel(), &QItemSelectionModel::selectionChanged, this, &ReconcilePage::updateButtons);
    connect(m_diffView->selectionModel(), &QItemSelectionModel::currentChanged, this, &ReconcilePage::updateButtons);
    connect(m_model, &QAbstractItemModel::modelReset, this, &ReconcilePage::fitColumns);

    updateSummary();
    showSelectedTable();
}

void ReconcilePage::setSnapshot(const EngineSnapshot &snapshot)
{
    m_runner->setSnapshot(snapshot);
    // A report or repair logged since the last look (from driftless-cli too): read the list.
    std::int64_t newest = 0;
    for (const auto &e : snapshot.events)
        if (e.kind == "reconcile" || e.kind == "repair")
            newest = std::max(newest, e.id);
    if (newest > m_lastEventId) {
        const bool first = m_lastEventId == 0;
        m_lastEventId = newest;
        if (!first)
            reload();
    }
}

void ReconcilePage::reload()
{
    m_runner->reloadSummaries();
}

void ReconcilePage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (!m_timer.isActive())
        reload();
    m_timer.start();
}

void ReconcilePage::hideEvent(QHideEvent *event)
{
    m_timer.stop();
    QWidget::hideEvent(event);
}

int ReconcilePage::selectedRow() const
{
    return selectedSourceRow(m_view, m_proxy);
}

void ReconcilePage::selectTable(std::int64_t reportId, const QString &table)
{
    selectSourceRow(m_view, m_proxy, m_model->rowOf(reportId, table));
}

void ReconcilePage::showSummaries(const std::vector<core::ReconcileSummary> &rows, const QString &error)
{
    m_notice->setText(error.isEmpty() ? QString() : tr("Cannot read the reports: %1").arg(error));
    m_notice->setVisible(!error.isEmpty());
    m_loaded = true;
    m_readFailed = !error.isEmpty();
    if (m_readFailed) {
        // The last list stays: the reports are still there once the file can be read again.
        updateSummary();
        return;
    }
    m_model->setSummaries(rows);
    if (m_pendingSelection) {
        const auto [id, table] = *m_pendingSelection;
        int row = table.isEmpty() ? -1 : m_model->rowOf(id, table);
        // Otherwise the report's first table with drift (or that failed), else its first table.
        int first = -1, drifting = -1;
        for (int r = 0; row < 0 && r < m_model->rowCount(); ++r) {
            const auto &s = m_model->summaryAt(r);
            if (s.reportId != id)
                continue;
            if (first < 0)
                first = r;
            if (drifting < 0 && ReconcileModel::statusKind(s) != QLatin1String("none"))
                drifting = r;
        }
        if (row < 0)
            row = drifting >= 0 ? drifting : first;
        if (row >= 0) {
            m_pendingSelection.reset();
            selectSourceRow(m_view, m_proxy, row);
        }
    } else if (m_shown && selectedRow() < 0) {
        // A reset (a new report came) dropped the selection: keep showing the same table.
        selectTable(m_shown->first, m_shown->second);
    }
    updateSummary();
}

void ReconcilePage::updateSummary()
{
    if (m_runner->statePath().isEmpty()) {
        m_summary->setText(tr("No workspace open"));
    } else if (!m_loaded) {
        m_summary->setText(tr("Reading the reports\u2026"));
    } else if (m_readFailed && m_model->rowCount() == 0) {
        m_summary->setText(tr("The reports cannot be read."));
    } else if (m_model->rowCount() == 0) {
        m_summary->setText(tr("No reconciliation yet. Reconcile Now compares a pipeline's source and target; Compare "
                              "Tables any two tables."));
    } else {
        std::set<std::int64_t> reports;
        int drifting = 0;
        for (int r = 0; r < m_model->rowCount(); ++r) {
            const auto &s = m_model->summaryAt(r);
            reports.insert(s.reportId);
            // A table compared again since is counted by its newer row.
            drifting += ReconcileModel::statusKind(s) == QLatin1String("drift") && !s.supersededBy ? 1 : 0;
        }
        const int n = static_cast<int>(reports.size());
        const int rows = m_model->rowCount();
        m_summary->setText((n == 1 ? tr("1 report") : tr("%1 reports").arg(n)) +
                           (rows == 1 ? tr(", 1 table compared") : tr(", %1 table comparisons").arg(rows)) +
                           tr("; %1 with drift when last compared; newest first").arg(drifting));
    }
    updateButtons();
}

void ReconcilePage::selectionChanged()
{
    const int row = selectedRow();
    // No row: a reset (re-selected in showSummaries) or a deselection; the grid stays as it is.
    if (row < 0)
        return;
    const auto &s = m_model->summaryAt(row);
    const std::pair<std::int64_t, QString> wanted{s.reportId, QString::fromStdString(s.table)};
    if (m_shown == wanted)
        return;
    m_shown = wanted;
    if (!m_report || m_report->id != s.reportId) {
        m_report.reset();
        m_runner->loadReport(s.reportId);
    }
    showSelectedTable();
}

void ReconcilePage::showReport(std::int64_t id, std::shared_ptr<const core::ReconcileReport> report,
                               const QString &error)
{
    if (!m_shown || m_shown->first != id)
        return;
    m_report = std::move(report);
    if (!m_report) {
        m_diffModel->clear();
        m_details->setText(tr("Report %1 cannot be read: %2").arg(id).arg(error));
        m_note->setVisible(false);
        updateButtons();
        return;
    }
    showSelectedTable();
}

const core::TableReconcile *ReconcilePage::shownTable() const
{
    if (!m_report || !m_shown || m_report->id != m_shown->first)
        return nullptr;
    const std::string name = m_shown->second.toStdString();
    for (const auto &t : m_report->tables)
        if (t.table == name)
            return &t;
    return nullptr;
}

void ReconcilePage::showSelectedTable()
{
    const core::TableReconcile *t = shownTable();
    if (!t)
        m_gridOf = {};
    if (!m_shown) {
        m_diffModel->clear();
        m_details->setText(tr("Select a table above to see the rows that differ."));
        m_note->setVisible(false);
    } else if (!t) {
        m_diffModel->clear();
        m_details->setText(m_report ? tr("Report %1 has no table %2.").arg(m_shown->first).arg(m_shown->second)
                                    : tr("Reading report %1\u2026").arg(m_shown->first));
        m_note->setVisible(false);
    } else {
        if (m_gridOf != *m_shown) {
            m_gridOf = *m_shown;
            m_diffModel->setTable(*t);
            // A row of several differing columns opens on them; a missing or extra row's values
            // are on its line already, each column a click away.
            for (int r = 0; r < m_diffModel->rowCount(); ++r) {
                const QModelIndex row = m_diffModel->index(r, 0);
                m_diffView->setExpanded(row, m_diffModel->kindAt(row) == RowDiffModel::Kind::Different);
            }
            for (int c = 0; c < RowDiffModel::Target; ++c)
                m_diffView->resizeColumnToContents(c);
            for (int c = RowDiffModel::Source; c <= RowDiffModel::Target; ++c)
                m_diffView->setColumnWidth(c, std::max(m_diffView->columnWidth(c), 160));
        }
        // The target endpoint as well: on the page, the table's name alone reads like the source.
        const auto workspace = m_runner->workspace();
        const core::PipelineSpec *pipeline = workspace ? workspace->pipeline(m_report->pipeline) : nullptr;
        const QString target =
            pipeline ? tr("%1 (%2)").arg(QString::fromStdString(pipeline->target), QString::fromStdString(t->target))
                     : QString::fromStdString(t->target);
        QString text;
        if (!t->error.empty())
            text = tr("Report %1, %2 \u2192 %3: the comparison failed.").arg(m_report->id).arg(m_shown->second, target);
        else if (t->drift() == 0)
            text = tr("Report %1, %2 \u2192 %3: no drift in %4 rows.")
                       .arg(m_report->id)
                       .arg(m_shown->second, target, count(t->sourceRows));
        else
            text = tr("Report %1, %2 \u2192 %3: %4 missing in the target, %5 extra, %6 different, of %7 source rows.")
                       .arg(m_report->id)
                       .arg(m_shown->second, target, count(t->missing), count(t->extra), count(t->different),
                            count(t->sourceRows));
        m_details->setText(text);
        QStringList notes;
        // History: what was done from this report since, and where the table stands now.
        if (const int row = m_model->rowOf(m_shown->first, m_shown->second); row >= 0) {
            const auto &s = m_model->summaryAt(row);
            if (s.repaired && s.supersededBy)
                notes << tr("A repair ran from this report; report %1 compared the table again since (select it for "
                            "where the table stands now).")
                             .arg(s.supersededBy);
            else if (s.repaired)
                notes << tr("A repair ran from this report.");
            else if (s.supersededBy)
                notes << tr("Report %1 compared the table again since (select it for where the table stands now).")
                             .arg(s.supersededBy);
        }
        if (!t->error.empty())
            notes << QString::fromStdString(t->error);
        if (!t->skipped.empty())
            notes << tr("Not compared: %1").arg(QString::fromStdString(t->skipped));
        if (m_diffModel->truncated() && m_diffModel->keyless())
            notes << tr("The report lists the first %1 differing rows.").arg(count(m_diffModel->keyCount()));
        else if (m_diffModel->truncated())
            notes << tr("The report kept the first %1 differing keys; Repair Table finds and repairs them all.")
                         .arg(count(m_diffModel->keyCount()));
        if (t->inFlight)
            notes << tr("%1 rows differed only because the sync had yet to apply them; they are not listed.")
                         .arg(count(t->inFlight));
        if (!t->note.empty())
            notes << QString::fromStdString(t->note);
        m_note->setText(notes.join(QLatin1Char('\n')));
        m_note->setVisible(!notes.isEmpty());
    }
    updateButtons();
}

std::vector<core::CanonicalKey> ReconcilePage::selectedKeys() const
{
    std::set<int> entries;
    std::vector<core::CanonicalKey> keys;
    QModelIndexList rows = m_diffView->selectionModel()->selectedRows();
    std::sort(rows.begin(), rows.end(), [](const QModelIndex &a, const QModelIndex &b) {
        const int ra = a.parent().isValid() ? a.parent().row() : a.row();
        const int rb = b.parent().isValid() ? b.parent().row() : b.row();
        return ra < rb;
    });
    for (const auto &index : rows) {
        const int entry = index.parent().isValid() ? index.parent().row() : index.row();
        if (entries.insert(entry).second)
            keys.push_back(m_diffModel->keyAt(index));
    }
    return keys;
}

void ReconcilePage::updateButtons()
{
    const bool busy = m_runner->busy();
    const auto workspace = m_runner->workspace();
    m_reconcile->setEnabled(!busy && workspace && !workspace->pipelines.empty());
    m_reconcile->setToolTip(busy         ? tr("A comparison or repair is running")
                            : !workspace ? tr("Open a workspace first")
                            : workspace->pipelines.empty()
                                ? tr("This workspace has no pipelines")
                                : tr("Compare a pipeline's tables between source and target, and keep the report"));
    bool readable = false; // the first table of a comparison is read from Postgres or MySQL/MariaDB
    if (workspace)
        for (const auto &[name, e] : workspace->endpoints)
            readable = readable || e.kind != core::EndpointKind::Sqlite;
    m_compareTables->setEnabled(!busy && readable);
    m_compareTables->setToolTip(busy         ? tr("A comparison or repair is running")
                                : !workspace ? tr("Open a workspace first")
                                : !readable  ? tr("This workspace has no Postgres or MySQL/MariaDB endpoint")
                                             : tr("Compare two tables of any two endpoints, no pipeline needed, and "
                                                   "keep the report"));

    const core::TableReconcile *t = shownTable();
    QString why;
    if (busy)
        why = tr("A comparison or repair is running");
    else if (!t)
        why = tr("Select a table with drift above");
    else if (m_report->pipeline == core::kComparePipeline)
        why = tr("Report %1 compared two tables outside any pipeline, and a repair writes through a pipeline's "
                 "merge: write it as a script to review and run (driftless-cli repair %1 --sql FILE)")
                  .arg(m_report->id);
    else if (!workspace || !workspace->pipeline(m_report->pipeline))
        why = tr("Pipeline %1 is no longer in this workspace").arg(QString::fromStdString(m_report->pipeline));
    else if (!t->error.empty())
        why = tr("The comparison of this table failed; reconcile it again first");
    else if (t->drift() == 0)
        why = tr("This table had no drift");
    else if (m_diffModel->keyless())
        why = tr("This table has no primary key, so its rows cannot be repaired one by one; its next full refresh "
                 "pass reloads it whole (Start Sync runs it on its schedule)");
    const bool canRepair = why.isEmpty();
    const QModelIndex current = m_diffView->currentIndex();
    const int selected = static_cast<int>(canRepair ? selectedKeys().size() : 0);

    m_repairRow->setEnabled(canRepair && current.isValid());
    m_repairRow->setToolTip(!canRepair ? why
                            : current.isValid()
                                ? tr("Repair key %1").arg(RowDiffModel::keyText(m_diffModel->keyAt(current)))
                                : tr("Click a row below to repair it"));
    m_repairSelected->setEnabled(canRepair && selected > 0);
    m_repairSelected->setToolTip(!canRepair     ? why
                                 : selected > 0 ? tr("Repair the %1 selected keys").arg(selected)
                                                : tr("Select rows below (Shift or Ctrl for several)"));
    const QString exportWhy = m_report ? QString() : tr("Select a report above");
    for (QPushButton *b : {m_exportCsv, m_exportHtml}) {
        b->setEnabled(exportWhy.isEmpty());
        b->setToolTip(exportWhy.isEmpty() ? tr("Save report %1 as %2")
                                                .arg(m_report->id)
                                                .arg(b == m_exportCsv ? tr("CSV (one row per differing row)")
                                                                      : tr("a standalone HTML page"))
                                          : exportWhy);
    }
    m_repairTable->setEnabled(canRepair);
    m_repairTable->setToolTip(
        canRepair
            ? tr("Repair all %1 differing rows of %2").arg(count(t->drift())).arg(QString::fromStdString(t->table))
            : why);
}

void ReconcilePage::fitColumns()
{
    // Content or header text, whichever is wider, plus a little air: the header's own size hint
    // keeps room for a sort arrow on every column, which pushes Drift off a 1,200 px window.
    const QAbstractItemView *view = m_view;
    const QFontMetrics header(m_view->horizontalHeader()->font());
    for (int c = 0; c < ReconcileModel::ColumnCount; ++c) {
        if (c == ReconcileModel::Table)
            continue;
        const int title = header.horizontalAdvance(m_model->headerData(c, Qt::Horizontal).toString()) + 20;
        m_view->setColumnWidth(c, std::max(view->sizeHintForColumn(c) + 12, title));
    }
}

void ReconcilePage::requestReconcile()
{
    const auto workspace = m_runner->workspace();
    if (!workspace || m_runner->busy() || m_dialog)
        return;
    auto *dialog = new ReconcileDialog(*workspace, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    // Start with the pipeline of the selected row, the one a DBA is most likely looking at.
    if (m_shown && m_report)
        dialog->choose(QString::fromStdString(m_report->pipeline));
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        const QString table = dialog->table();
        const auto job = m_runner->reconcile(dialog->pipeline(), table.isEmpty() ? QStringList() : QStringList{table});
        if (!job)
            showResult(QStringLiteral("error"), tr("Could not start: a comparison or repair is running."));
    });
    m_dialog = dialog;
    dialog->open();
}

void ReconcilePage::requestCompare()
{
    if (m_compareDialog) {
        m_compareDialog->raise();
        m_compareDialog->activateWindow();
        return;
    }
    // Sync > Compare Tables… reaches here whatever the button's state: say why not.
    if (!m_compareTables->isEnabled()) {
        showResult(QStringLiteral("info"), m_compareTables->toolTip());
        emit statusMessage(tr("Compare Tables: %1").arg(m_compareTables->toolTip()));
        return;
    }
    auto *dialog = new CompareDialog(m_runner, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    m_compareDialog = dialog;
    dialog->open();
}

void ReconcilePage::requestRepairRow()
{
    const QModelIndex current = m_diffView->currentIndex();
    if (!m_repairRow->isEnabled() || !current.isValid())
        return;
    confirmRepair(RepairScope::Row, {m_diffModel->keyAt(current)});
}

void ReconcilePage::requestRepairSelected()
{
    if (!m_repairSelected->isEnabled())
        return;
    confirmRepair(RepairScope::Selected, selectedKeys());
}

void ReconcilePage::requestRepairTable()
{
    if (!m_repairTable->isEnabled())
        return;
    confirmRepair(RepairScope::Table, {});
}

void ReconcilePage::confirmRepair(RepairScope scope, std::vector<core::CanonicalKey> keys)
{
    const core::TableReconcile *t = shownTable();
    if (!t || !m_runner->workspace() || m_confirmation || m_planRequest || m_runner->busy())
        return;
    // Ask first what the repair will run, and show that before anything is written.
    m_planRequest = m_runner->planRepair(m_report->id, QString::fromStdString(t->table), keys);
    if (!m_planRequest)
        return;
    m_planScope = scope;
    m_planKeys = std::move(keys);
    showResult(QStringLiteral("info"), tr("Planning the repair of %1\u2026").arg(QString::fromStdString(t->table)));
}

void ReconcilePage::onPlanReady(std::uint64_t request, std::shared_ptr<const core::RepairPlan> plan,
                                const QString &error)
{
    if (request != m_planRequest)
        return;
    m_planRequest = 0;
    m_result->setVisible(false);
    m_resultIcon->setVisible(false);
    if (!plan) {
        showResult(QStringLiteral("error"), tr("Could not plan the repair: %1").arg(error));
        return;
    }
    for (const auto &t : plan->tables)
        if (!t.error.empty()) {
            showResult(
                QStringLiteral("error"),
                tr("%1 cannot be repaired: %2").arg(QString::fromStdString(t.table), QString::fromStdString(t.error)));
            return;
        }
    openConfirmation(m_planScope, std::move(m_planKeys), *plan);
}

void ReconcilePage::openConfirmation(RepairScope scope, std::vector<core::CanonicalKey> keys,
                                     const core::RepairPlan &plan)
{
    const core::TableReconcile *t = shownTable();
    const auto workspace = m_runner->workspace();
    // Another report selected while the plan was made: that plan is not for what is shown.
    if (!t || !workspace || m_confirmation || m_runner->busy() || plan.reportId != m_report->id)
        return;
    const core::PipelineSpec *pipeline = workspace->pipeline(m_report->pipeline);
    if (!pipeline)
        return;
    const QString table = QString::fromStdString(t->table);
    const QString source = QString::fromStdString(pipeline->source);
    const QString target =
        tr("%1 (%2)").arg(QString::fromStdString(pipeline->target), QString::fromStdString(t->target));
    const long long n = scope == RepairScope::Table ? t->drift() : static_cast<long long>(keys.size());

    QString what = tr("Re-read %1 rows from the source and apply them to %2 through the guarded merge; rows deleted "
                      "from the source are deleted from the target; a newer change the sync has yet to apply is "
                      "never overwritten.")
                       .arg(count(n), target);
    QString html = tr("<p>%1</p>").arg(what.toHtmlEscaped());
    if (scope != RepairScope::Table)
        html += tr("<p>Keys: %1</p>").arg(keyList(keys).toHtmlEscaped());
    else if (m_diffModel->truncated())
        html += tr("<p>The report kept %1 of the %2 differing keys, so %3 is compared again first to find them "
                   "all.</p>")
                    .arg(count(m_diffModel->keyCount()), count(n), table.toHtmlEscaped());
    // The plan, statement by statement: what the repair then runs, to the row.
    for (const auto &p : plan.tables) {
        html += tr("<p><b>The repair will run</b> (%1 to insert, %2 to update, %3 to delete):</p><p>")
                    .arg(count(p.inserts), count(p.updates), count(static_cast<long long>(p.deleteKeys.size())));
        for (const auto &st : p.statements)
            html += tr("%1: <code>%2</code><br>")
                        .arg(st.rows == 1 ? tr("1 row") : tr("%1 rows").arg(count(st.rows)),
                             QString::fromStdString(st.sql).toHtmlEscaped());
        html += QStringLiteral("</p>");
    }
    html += tr("<p>The rows are read from %1 as they are now (a row changed since is left to the sync). Afterwards "
               "%2 is compared again, and the new report shows what is left.</p>")
                .arg(source.toHtmlEscaped(), table.toHtmlEscaped());

    const QString title = scope == RepairScope::Table ? tr("Repair Table") : tr("Repair Rows");
    auto *box = new QMessageBox(
        QMessageBox::Question, title,
        tr("Repair %1 rows of <b>%2</b> from report %3?").arg(count(n), table.toHtmlEscaped()).arg(m_report->id),
        QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("repairConfirmation"));
    box->setInformativeText(html);
    box->setDetailedText(QString::fromStdString(core::repairPlanDetails(plan)));
    // Show Details holds the whole SQL: in a fixed font, a statement's lines kept whole (it
    // scrolls), 90 characters by 9 lines, so the question still fits a 1366x768 laptop at 150%.
    if (auto *sql = box->findChild<QTextEdit *>()) {
        sql->setObjectName(QStringLiteral("repairSql"));
        sql->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
        sql->setLineWrapMode(QTextEdit::NoWrap);
        sql->setMinimumSize(sql->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 90,
                            sql->fontMetrics().lineSpacing() * 9 + 2 * sql->frameWidth() + 8);
    }
    QPushButton *confirm = box->addButton(tr("Repair"), QMessageBox::AcceptRole);
    confirm->setObjectName(QStringLiteral("confirmRepair"));
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    const std::int64_t reportId = m_report->id;
    connect(box, &QMessageBox::finished, this, [this, box, confirm, scope, reportId, table, keys = std::move(keys)] {
        if (box->clickedButton() != confirm)
            return;
        const auto job = scope == RepairScope::Table ? m_runner->repairTable(reportId, table)
                                                     : m_runner->repairKeys(reportId, table, keys);
        if (!job)
            showResult(QStringLiteral("error"), tr("Could not start: a comparison or repair is running."));
    });
    m_confirmation = box;
    box->open();
}

void ReconcilePage::onJobStarted(std::uint64_t job, bool repair, const QString &table)
{
    m_job = job;
    m_jobIsRepair = repair;
    m_progress->setRange(0, 0);
    m_progress->setVisible(true);
    m_progressLabel->setText(repair ? tr("Repairing %1\u2026").arg(table)
                                    : tr("Comparing %1\u2026").arg(table.isEmpty() ? tr("the pipeline") : table));
    m_progressLabel->setVisible(true);
    m_cancel->setVisible(!repair);
    m_cancel->setEnabled(true);
    updateButtons();
}

void ReconcilePage::onProgress(std::uint64_t job, const QString &table, const QString &phase, int done, int total)
{
    if (job != m_job)
        return;
    if (total > 0) {
        m_progress->setRange(0, total);
        m_progress->setValue(done);
        m_progress->setFormat(tr("%1 of %2 tables").arg(done).arg(total));
    }
    const QString verb = phase == QLatin1String("repair") ? tr("Repairing") : tr("Comparing");
    m_progressLabel->setText(tr("%1 %2: %3").arg(verb, table, phaseText(phase)));
}

void ReconcilePage::endJob()
{
    m_job = 0;
    m_progress->setVisible(false);
    m_progressLabel->setVisible(false);
    m_cancel->setVisible(false);
    updateButtons();
}

void ReconcilePage::onReconcileFinished(std::uint64_t job, std::int64_t reportId, const QString &error)
{
    if (job != m_job)
        return;
    endJob();
    if (!reportId) {
        // Cancelled on request is not a failure.
        showResult(m_runner->lastJobCancelled() ? QStringLiteral("info") : QStringLiteral("error"),
                   tr("Reconciliation: %1").arg(error));
        emit statusMessage(tr("Reconciliation: %1").arg(error));
        return;
    }
    if (!error.isEmpty()) {
        // Two tables that could not be compared: the report keeps why.
        const QString text = tr("Report %1 stored: the tables could not be compared: %2").arg(reportId).arg(error);
        showResult(QStringLiteral("error"), text);
        emit statusMessage(text);
        m_pendingSelection = std::pair<std::int64_t, QString>{reportId, QString()};
        return;
    }
    const QString text = tr("Report %1 stored; it is selected above.").arg(reportId);
    showResult(QStringLiteral("info"), text);
    emit statusMessage(text);
    m_pendingSelection = std::pair<std::int64_t, QString>{reportId, QString()};
}

void ReconcilePage::onRepairFinished(std::uint64_t job, std::int64_t reportId, const QString &table,
                                     const ReconcileRunner::RepairResult &result, const QString &error)
{
    if (job != m_job)
        return;
    endJob();
    if (!error.isEmpty()) {
        showResult(QStringLiteral("error"), tr("Repair of %1 failed: %2").arg(table, error));
        emit statusMessage(tr("Repair of %1 failed: %2").arg(table, error));
        return;
    }
    QStringList lines;
    QString level = QStringLiteral("ok");
    for (const auto &o : result.outcomes) {
        const QString name = QString::fromStdString(o.table);
        if (!o.error.empty()) {
            level = QStringLiteral("error");
            lines << tr("Repair of %1 failed: %2").arg(name, QString::fromStdString(o.error));
            continue;
        }
        QString line = tr("Repaired %1 from report %2: %3 rows written, %4 deleted, %5 of %6 keys verified equal")
                           .arg(name)
                           .arg(reportId)
                           .arg(count(o.written), count(o.deleted), count(o.verified), count(o.keys));
        if (o.stillDifferent) {
            if (level != QLatin1String("error"))
                level = QStringLiteral("warn");
            line += tr("; %1 still different (a newer change the sync has yet to apply keeps its place until it "
                       "lands)")
                        .arg(count(o.stillDifferent));
        }
        lines << line + QLatin1Char('.');
    }
    if (result.outcomes.empty())
        lines << tr("Nothing to repair in %1.").arg(table);
    if (result.checkReportId)
        lines << tr("Compared again as report %1, selected above.").arg(result.checkReportId);
    else if (!result.checkError.isEmpty())
        lines << tr("Comparing again failed: %1").arg(result.checkError);
    showResult(level, lines.join(QLatin1Char(' ')));
    emit statusMessage(lines.join(QLatin1Char(' ')));
    if (result.checkReportId)
        m_pendingSelection = std::pair<std::int64_t, QString>{result.checkReportId, table};
}

void ReconcilePage::requestExport(bool html)
{
    if (!m_report)
        return;
    QString path = m_exportPath;
    if (path.isEmpty()) {
        const QString name = QStringLiteral("reconcile-%1-%2.%3")
                                 .arg(QString::fromStdString(m_report->pipeline))
                                 .arg(m_report->id)
                                 .arg(html ? QStringLiteral("html") : QStringLiteral("csv"));
        path = QFileDialog::getSaveFileName(this, html ? tr("Export Report as HTML") : tr("Export Report as CSV"), name,
                                            html ? tr("HTML pages (*.html)") : tr("CSV files (*.csv)"));
        if (path.isEmpty())
            return;
    }
    exportReport(path, html);
}

bool ReconcilePage::exportReport(const QString &path, bool html)
{
    if (!m_report)
        return false;
    const std::string text = html ? core::reportHtml(*m_report) : core::reportCsv(*m_report);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text.data(), static_cast<qint64>(text.size())) < 0 ||
        !file.commit()) {
        showResult(QStringLiteral("error"), tr("Could not write %1: %2").arg(path, file.errorString()));
        return false;
    }
    showResult(QStringLiteral("ok"), tr("Report %1 exported to %2").arg(m_report->id).arg(path));
    emit statusMessage(tr("Report %1 exported to %2").arg(m_report->id).arg(path));
    return true;
}

void ReconcilePage::showResult(const QString &level, const QString &text)
{
    const QIcon icon = level == QLatin1String("ok")     ? freshnessIcon(level)
                       : level == QLatin1String("warn") ? freshnessIcon(level)
                                                        : levelIcon(level);
    m_resultIcon->setPixmap(icon.pixmap(16, 16));
    m_resultIcon->setToolTip(level);
    m_resultIcon->setVisible(true);
    m_result->setText(text);
    m_result->setVisible(true);
}

} // namespace driftless::ui
