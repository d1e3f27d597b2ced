#include "ui/pages/conflictspage.h"

#include "ui/enginebridge.h"
#include "ui/enginedoor.h"
#include "ui/models/conflictrowmodel.h"
#include "ui/statusicons.h"

#include "core/engine/commands/conflictqueue.h"
#include "core/model/error.h"
#include "core/model/workspace.h"

#include <nlohmann/json.hpp>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace driftless::ui {

namespace {

using json = nlohmann::json;

json storedRow(const std::string &text)
{
    return text.empty() ? json(nullptr) : json::parse(text, nullptr, false);
}

QString shown(const json &row, const std::string &column)
{
    auto it = row.find(column);
    if (it == row.end() || it->is_null())
        return QStringLiteral("NULL");
    QString v = QString::fromStdString(it->is_string() ? it->get<std::string>() : it->dump());
    if (v.size() > 60)
        v = v.left(57) + QStringLiteral("\u2026");
    return QLatin1Char('\'') + v + QLatin1Char('\'');
}

/// What writing `chosen` does to `held` (one side's row), as an HTML list; empty when it holds it.
QString changesOf(const json &held, const json &chosen)
{
    if (held == chosen)
        return {};
    if (chosen.is_null())
        return ConflictsPage::tr("the row is deleted");
    QString out;
    for (const auto &[column, value] : chosen.items()) {
        const bool same = held.is_object() && held.contains(column) && held[column] == value;
        if (same)
            continue;
        out += QStringLiteral("<br>%1: %2 \u2192 %3")
                   .arg(QString::fromStdString(column).toHtmlEscaped(),
                        held.is_object() ? shown(held, column).toHtmlEscaped() : ConflictsPage::tr("(no row)"),
                        shown(chosen, column).toHtmlEscaped());
    }
    return (held.is_object() ? ConflictsPage::tr("these columns are written:")
                             : ConflictsPage::tr("the row is inserted:")) +
           out;
}

} // namespace

ConflictsPage::ConflictsPage(EngineBridge *engine, QWidget *parent)
    : QWidget(parent), m_engine(engine), m_model(new ConflictsModel(this)), m_rowModel(new ConflictRowModel(this)),
      m_summary(new QLabel(this)), m_refresh(new QPushButton(tr("Refresh"), this)), m_view(new QTableView(this)),
      m_details(new QLabel(this)), m_rowView(new QTableView(this)),
      m_takeSource(new QPushButton(tr("Take Source"), this)), m_takeTarget(new QPushButton(tr("Take Target"), this)),
      m_applyChoice(new QPushButton(tr("Apply Choice"), this)), m_result(new QLabel(this))
{
    setObjectName(QStringLiteral("conflictsPage"));
    m_summary->setObjectName(QStringLiteral("conflictsSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    m_refresh->setObjectName(QStringLiteral("refreshConflicts"));
    m_refresh->setIcon(namedIcon(QStringLiteral("refresh")));
    connect(m_refresh, &QPushButton::clicked, this, &ConflictsPage::reload);

    m_view->setObjectName(QStringLiteral("conflictsView"));
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->setVisible(false);
    // Sized to what they hold after each read; the time of detection takes the spare width.
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setHighlightSections(false);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &ConflictsPage::showSelected);

    m_details->setObjectName(QStringLiteral("conflictDetails"));
    m_details->setWordWrap(true);
    m_details->setTextFormat(Qt::PlainText);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_rowView->setObjectName(QStringLiteral("conflictRowView"));
    m_rowView->setModel(m_rowModel);
    m_rowView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_rowView->setWordWrap(false);
    m_rowView->setTextElideMode(Qt::ElideMiddle);
    m_rowView->verticalHeader()->setVisible(false);
    m_rowView->horizontalHeader()->setHighlightSections(false);
    for (int c : {ConflictRowModel::Base, ConflictRowModel::Source, ConflictRowModel::Target})
        m_rowView->horizontalHeader()->setSectionResizeMode(c, QHeaderView::Stretch);
    m_rowView->horizontalHeader()->setSectionResizeMode(ConflictRowModel::Choice, QHeaderView::Fixed);
    m_rowView->horizontalHeader()->resizeSection(ConflictRowModel::Choice, 120);

    m_takeSource->setObjectName(QStringLiteral("takeSource"));
    m_takeSource->setToolTip(tr("Keep the source's version of this row on both sides: it is written over the "
                                "target's row, and the target's changes to it are lost"));
    m_takeTarget->setObjectName(QStringLiteral("takeTarget"));
    m_takeTarget->setToolTip(tr("Keep the target's version of this row on both sides: it is written over the "
                                "source's row, and the source's changes to it are lost"));
    connect(m_takeSource, &QPushButton::clicked, this, [this] { resolveSelected(QStringLiteral("source")); });
    connect(m_takeTarget, &QPushButton::clicked, this, [this] { resolveSelected(QStringLiteral("target")); });
    m_applyChoice->setObjectName(QStringLiteral("applyChoice"));
    m_applyChoice->setToolTip(tr("Keep the row as chosen in the Keep column on both sides: by default the merge, "
                                 "each side's own changes; a column both sides changed needs a choice"));
    connect(m_applyChoice, &QPushButton::clicked, this, &ConflictsPage::applyChoice);
    // Its words change with the choice ("Take Merged", "Apply Choice"): as wide as the wider, so
    // Take Source and Take Target beside it never move.
    {
        int widest = 0;
        for (const QString &text : {tr("Take Merged"), tr("Apply Choice")}) {
            m_applyChoice->setText(text);
            widest = std::max(widest, m_applyChoice->sizeHint().width());
        }
        m_applyChoice->setMinimumWidth(widest);
    }
    connect(m_rowModel, &QAbstractItemModel::dataChanged, this, &ConflictsPage::updateButtons);
    m_result->setObjectName(QStringLiteral("conflictResult"));
    m_result->setWordWrap(true);
    m_result->setTextFormat(Qt::PlainText);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_refresh);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_view);
    auto *details = new QWidget(splitter);
    auto *detailsLayout = new QVBoxLayout(details);
    detailsLayout->setContentsMargins(0, 0, 0, 0);
    detailsLayout->addWidget(m_details);
    detailsLayout->addWidget(m_rowView, 1);
    auto *actions = new QHBoxLayout;
    actions->addWidget(m_result, 1);
    actions->addWidget(m_takeSource, 0, Qt::AlignTop);
    actions->addWidget(m_takeTarget, 0, Qt::AlignTop);
    actions->addWidget(m_applyChoice, 0, Qt::AlignTop);
    detailsLayout->addLayout(actions);
    splitter->addWidget(details);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(splitter, 1);

    // Conflicts arrive while the engine runs, and from other faces (the CLI, an agent's other
    // clients): the list is read again now and then, not only on events.
    m_timer.setInterval(kRefreshMs);
    connect(&m_timer, &QTimer::timeout, this, &ConflictsPage::reload);
    m_timer.start();
    showSelected();
    updateSummary();
}

int ConflictsPage::selectedRow() const
{
    const auto rows = m_view->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : rows.front().row();
}

void ConflictsPage::selectRow(int row)
{
    if (row < 0 || row >= m_model->rowCount())
        m_view->selectionModel()->clearSelection();
    else
        m_view->selectionModel()->select(m_model->index(row, 0),
                                         QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void ConflictsPage::setSnapshot(const EngineSnapshot &snapshot)
{
    bool read = false;
    m_workspace = snapshot.workspace;
    if (snapshot.statePath != m_path) {
        m_path = snapshot.statePath;
        ++m_generation; // replies about the workspace shown before are dropped
        m_reading = false;
        m_readAgain = false;
        m_resolving = 0;
        m_loaded = false;
        if (m_confirmation)
            m_confirmation->reject(); // it spoke of a conflict of another workspace
        m_readError.clear();
        m_lastEventId = 0;
        m_result->clear();
        m_model->setConflicts({});
        emit openCountChanged(0);
        emit countsChanged({});
        read = true;
    }
    // Newest first: a conflict queued or resolved since the last look means the list changed.
    for (const auto &e : snapshot.events) {
        if (e.id <= m_lastEventId)
            break;
        if (e.kind == "conflict" || e.kind == "conflict_resolved")
            read = true;
    }
    if (!snapshot.events.empty())
        m_lastEventId = std::max(m_lastEventId, snapshot.events.front().id);
    // An agent's door opens after its first answer: read once it does.
    if (read || (!m_loaded && !m_reading))
        reload();
}

void ConflictsPage::reload()
{
    EngineDoor *door = m_engine ? m_engine->door() : nullptr;
    if (m_path.isEmpty() || !door)
        return;
    if (m_reading) {
        m_readAgain = true;
        return;
    }
    m_reading = true;
    m_readAgain = false;
    door->request("GET", QStringLiteral("/api/v1/conflicts"), {}, this,
                  [this, generation = m_generation](const EngineDoor::Reply &r) {
                      // An agent from before the conflict routes answers 404 for the path.
                      onRead(generation, r.body,
                             r.status == 404 ? tr("this engine does not serve conflicts (an agent older than the "
                                                  "Conflicts page: update driftless-cli there)")
                                             : r.error);
                  });
}

void ConflictsPage::onRead(std::uint64_t generation, const nlohmann::json &body, const QString &error)
{
    if (generation != m_generation)
        return;
    m_reading = false;
    m_readError = error;
    if (error.isEmpty()) {
        std::vector<core::QueuedConflict> conflicts;
        if (auto it = body.find("conflicts"); it != body.end() && it->is_array())
            for (const auto &c : *it)
                conflicts.push_back(core::conflictFromJson(c));
        const int row = selectedRow();
        const std::int64_t selected = row >= 0 ? m_model->conflictAt(row).id : 0;
        m_model->setConflicts(std::move(conflicts));
        m_view->resizeColumnsToContents();
        m_loaded = true;
        // The same conflict stays selected; when it went, the first one is.
        const int again = selected ? m_model->rowOfId(selected) : -1;
        selectRow(again >= 0 ? again : 0);
        emit openCountChanged(m_model->rowCount());
        emit countsChanged(m_model->countByTable());
    }
    showSelected();
    updateSummary();
    if (m_readAgain)
        reload();
}

void ConflictsPage::resolveSelected(const QString &take)
{
    confirm({{"take", take.toStdString()}}, tr("the %1's version").arg(take));
}

void ConflictsPage::applyChoice()
{
    if (!m_rowModel->choiceComplete())
        return;
    json columns = json::object();
    for (const auto &[column, side] : m_rowModel->choicesBeyondMerge())
        columns[column] = side;
    json body = {{"take", "merged"}};
    if (!columns.empty())
        body["columns"] = columns;
    confirm(body, columns.empty() ? tr("the merged version") : tr("the chosen version"));
}

void ConflictsPage::confirm(const json &body, const QString &what)
{
    const int row = selectedRow();
    EngineDoor *door = m_engine ? m_engine->door() : nullptr;
    if (row < 0 || !door || m_resolving || m_confirmation)
        return;
    const auto c = m_model->conflictAt(row);
    // The row both sides will hold, as the engine builds it.
    core::ConflictChoice choice;
    choice.take = core::conflictTakeFrom(body.value("take", std::string())).value_or(core::ConflictTake::Merged);
    if (auto it = body.find("columns"); it != body.end())
        for (const auto &[column, side] : it->items())
            choice.columns[column] = *core::conflictSideFrom(side.get<std::string>());
    json chosen;
    try {
        chosen = storedRow(core::chosenRow(c, choice));
    } catch (const core::Error &e) {
        m_result->setText(tr("Not resolved: %1").arg(QString::fromStdString(e.what())));
        return;
    }
    QString sourceName = tr("the source"), targetName = tr("the target");
    if (const auto *p = m_workspace ? m_workspace->pipeline(c.record.pipeline) : nullptr) {
        sourceName = tr("the source (%1)").arg(QString::fromStdString(p->source));
        targetName = tr("the target (%1)").arg(QString::fromStdString(p->target));
    }
    const QString table = QString::fromStdString(c.record.table).toHtmlEscaped();
    const QString key = ConflictsModel::keyText(c.record.key).toHtmlEscaped();
    QString html;
    for (const auto &[name, held] :
         {std::pair{targetName, storedRow(c.record.target)}, std::pair{sourceName, storedRow(c.record.source)}}) {
        const QString changes = changesOf(held, chosen);
        html +=
            changes.isEmpty()
                ? tr("<p><b>On %1</b>: nothing is written; it holds this row already.</p>").arg(name.toHtmlEscaped())
                : tr("<p><b>On %1</b>, %2</p>").arg(name.toHtmlEscaped(), changes);
    }
    html += tr("<p>Each side is written in one transaction under the pipeline's resolve origin, so neither "
               "direction reads it back. A value written over is lost on both sides.</p>");
    auto *box = new QMessageBox(QMessageBox::Question, tr("Resolve Conflict"),
                                tr("Keep %1 of <b>%2 %3</b> on both sides?").arg(what.toHtmlEscaped(), table, key),
                                QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("resolveConfirmation"));
    box->setTextFormat(Qt::RichText);
    box->setInformativeText(html);
    QPushButton *ok = box->addButton(tr("Resolve"), QMessageBox::AcceptRole);
    ok->setObjectName(QStringLiteral("confirmResolve"));
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, box, ok, id = c.id, body, what, generation = m_generation] {
        m_confirmation = nullptr;
        if (box->clickedButton() == ok && generation == m_generation)
            post(id, body, what);
        updateButtons();
    });
    m_confirmation = box;
    updateButtons();
    box->open();
}

void ConflictsPage::post(std::int64_t id, const json &body, const QString &what)
{
    EngineDoor *door = m_engine ? m_engine->door() : nullptr;
    const int row = m_model->rowOfId(id);
    if (row < 0 || !door || m_resolving)
        return;
    const auto &c = m_model->conflictAt(row);
    m_resolving = c.id;
    m_result->setText(tr("Writing %1 of %2 %3\u2026")
                          .arg(what, QString::fromStdString(c.record.table), ConflictsModel::keyText(c.record.key)));
    updateButtons();
    door->post(QStringLiteral("/api/v1/conflicts/%1/resolve").arg(c.id), body, this,
               [this, generation = m_generation](const EngineDoor::Reply &r) {
                   if (generation != m_generation)
                       return;
                   m_resolving = 0;
                   const QString text = r.ok() ? QString::fromStdString(r.body.value("message", std::string()))
                                               : tr("Not resolved: %1").arg(r.error);
                   m_result->setText(text);
                   emit statusMessage(text);
                   updateButtons();
                   reload();
               });
}

QComboBox *ConflictsPage::choiceBox(const QString &column) const
{
    const int row = m_rowModel->rowOf(column);
    return row < 0
               ? nullptr
               : qobject_cast<QComboBox *>(m_rowView->indexWidget(m_rowModel->index(row, ConflictRowModel::Choice)));
}

void ConflictsPage::makeChoiceBoxes()
{
    if (!m_rowModel->choosable())
        return;
    for (int row = 0; row < m_rowModel->rowCount(); ++row) {
        const QModelIndex at = m_rowModel->index(row, ConflictRowModel::Choice);
        if (!at.data(ConflictRowModel::DiffersRole).toBool())
            continue;
        const QString column = m_rowModel->columnAt(row);
        auto *box = new QComboBox(m_rowView);
        box->setObjectName(QStringLiteral("keep_") + column);
        if (m_rowModel->mergeChoice(column).isEmpty())
            box->addItem(tr("Choose\u2026"), QString());
        box->addItem(tr("Source"), QStringLiteral("source"));
        box->addItem(tr("Target"), QStringLiteral("target"));
        box->setCurrentIndex(box->findData(at.data(ConflictRowModel::ChoiceRole).toString()));
        box->setToolTip(at.data(Qt::ToolTipRole).toString());
        connect(box, &QComboBox::currentIndexChanged, this,
                [this, box, column] { m_rowModel->setChoice(column, box->currentData().toString()); });
        m_rowView->setIndexWidget(at, box);
    }
}

void ConflictsPage::showSelected()
{
    const int row = selectedRow();
    if (row < 0) {
        m_rowModel->clear();
        m_details->setText(m_model->rowCount() ? tr("Select a conflict to see both versions of its row.") : QString());
        m_details->setVisible(m_model->rowCount() > 0);
        updateButtons();
        return;
    }
    const auto &c = m_model->conflictAt(row);
    m_rowModel->setConflict(c);
    makeChoiceBoxes();
    m_details->setVisible(true);
    m_details->setText(tr("%1, %2: both sides changed %3 since they last agreed (Base). Take one side's version, "
                          "or choose per column in Keep (by default each side's own changes) and Apply Choice: "
                          "both sides then hold that row.")
                           .arg(QString::fromStdString(c.record.table), ConflictsModel::keyText(c.record.key),
                                ConflictsModel::columnsText(c.record.columns)));
    m_rowView->resizeColumnToContents(ConflictRowModel::ColumnName);
    updateButtons();
}

void ConflictsPage::updateButtons()
{
    const bool can = selectedRow() >= 0 && !m_resolving && !m_confirmation && m_engine && m_engine->door();
    m_takeSource->setEnabled(can);
    m_takeTarget->setEnabled(can);
    m_applyChoice->setEnabled(can && m_rowModel->choiceComplete());
    m_applyChoice->setText(m_rowModel->choicesBeyondMerge().empty() ? tr("Take Merged") : tr("Apply Choice"));
}

void ConflictsPage::updateSummary()
{
    if (!m_readError.isEmpty()) {
        m_summary->setText(tr("The conflicts could not be read: %1").arg(m_readError));
        return;
    }
    const int n = m_model->rowCount();
    if (n == 0)
        m_summary->setText(m_loaded ? tr("No open conflicts. Two-way pipelines park here the rows both sides changed "
                                         "that their conflicts policy leaves to a person (manual).")
                                    : QString());
    else
        m_summary->setText(
            n == 1 ? tr("1 open conflict: both sides changed the same row, and neither was written.")
                   : tr("%1 open conflicts: both sides changed the same rows, and neither was written.").arg(n));
}

} // namespace driftless::ui
