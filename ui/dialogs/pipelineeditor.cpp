#include "ui/dialogs/pipelineeditor.h"
#include "ui/dialogs/pipelineeditorsupport.h"

#include "ui/dialogs/conflictpolicypicker.h"
#include "ui/displayformat.h"
#include "ui/enginedoor.h"
#include "ui/localdoor.h"
#include "ui/widgets/columnmappingpanel.h"

#include "core/config/workspacefile.h"
#include "core/engine/columnmapping.h"
#include "core/engine/endpointcalls.h"
#include "core/engine/endpointprobe.h"
#include "core/model/duration.h"
#include "core/model/error.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cctype>
#include <set>

namespace driftless::ui {

using namespace editor;

PipelineEditor::PipelineEditor(core::Workspace workspace, std::optional<core::PipelineSpec> existing, QWidget *parent,
                               EngineDoor *door)
    : QDialog(parent), m_workspace(std::move(workspace)), m_existing(std::move(existing)), m_door(door),
      m_name(new QLineEdit(this)), m_nameRule(new QLabel(this)), m_source(new QComboBox(this)),
      m_target(new QComboBox(this)), m_targetSchemaLabel(new QLabel(tr("Target &schema:"), this)),
      m_targetSchema(new QLineEdit(this)), m_tree(new QTreeWidget(this)), m_status(new QLabel(this)),
      m_refresh(new QPushButton(tr("&Rediscover"), this)), m_details(new QGroupBox(tr("Selected table"), this)),
      m_selected(new QLabel(m_details)), m_selectedReason(new QLabel(m_details)), m_cursor(new QComboBox(m_details)),
      m_lookback(new QLineEdit(m_details)), m_sla(new QLineEdit(m_details)),
      m_columnsBox(new QGroupBox(tr("Columns"), this)), m_columns(new ColumnMappingPanel(m_columnsBox)),
      m_problem(new QLabel(this)),
      m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setObjectName(QStringLiteral("pipelineEditor"));
    setWindowTitle(m_existing ? tr("Edit Pipeline %1").arg(qs(m_existing->name)) : tr("Add Pipeline"));

    m_name->setObjectName(QStringLiteral("pipelineName"));
    m_nameRule->setObjectName(QStringLiteral("pipelineNameRule"));
    m_nameRule->setText(tr("Lower-case letters, digits and _, starting with a letter, at most 53 characters: "
                           "it becomes part of the replication slot name driftless_<name>."));
    m_nameRule->setTextFormat(Qt::PlainText);
    m_nameRule->setWordWrap(true);
    m_source->setObjectName(QStringLiteral("pipelineSource"));
    m_target->setObjectName(QStringLiteral("pipelineTarget"));
    m_targetSchema->setObjectName(QStringLiteral("pipelineTargetSchema"));
    m_targetSchema->setPlaceholderText(tr("the source table's schema"));
    m_targetSchemaLabel->setBuddy(m_targetSchema);
    m_status->setObjectName(QStringLiteral("discoveryStatus"));
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);
    m_refresh->setObjectName(QStringLiteral("rediscover"));
    m_refresh->setToolTip(tr("Read the source's tables, sizes and write counters again"));
    m_problem->setObjectName(QStringLiteral("pipelineProblem"));
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet(QStringLiteral("color: #b3261e;"));
    m_buttons->button(QDialogButtonBox::Ok)->setObjectName(QStringLiteral("pipelineOk"));

    for (const auto &[name, e] : m_workspace.endpoints)
        if (e.kind != core::EndpointKind::Sqlite)
            m_source->addItem(qs(name), qs(name));
    if (m_existing) {
        m_name->setText(qs(m_existing->name));
        m_source->setCurrentIndex(std::max(0, m_source->findData(qs(m_existing->source))));
        m_targetSchema->setText(qs(m_existing->targetSchema.value_or(std::string())));
    }

    m_tree->setObjectName(QStringLiteral("discoveredTables"));
    m_tree->setColumnCount(ColumnCount);
    m_tree->setHeaderLabels({tr("Table"), tr("Strategy"), tr("Why"), tr("Est. rows"), tr("Size"), tr("Primary key"),
                             tr("Cursor candidates")});
    m_tree->setAlternatingRowColors(true);
    m_tree->setUniformRowHeights(true);
    m_tree->setSelectionMode(QAbstractItemView::SingleSelection);
    m_tree->header()->setStretchLastSection(true);
    m_tree->header()->setSectionsMovable(false);
    m_tree->headerItem()->setTextAlignment(Rows, Qt::AlignRight | Qt::AlignVCenter);
    m_tree->headerItem()->setTextAlignment(Size, Qt::AlignRight | Qt::AlignVCenter);
    m_tree->headerItem()->setToolTip(Reason, tr("Why the strategy was recommended (hover for the whole text)"));
    m_tree->headerItem()->setToolTip(Candidates, tr("timestamp and date columns a cursor could follow, best first"));

    auto *form = new QFormLayout;
    auto *nameColumn = new QVBoxLayout;
    nameColumn->setSpacing(2);
    nameColumn->addWidget(m_name);
    nameColumn->addWidget(m_nameRule);
    auto *nameLabel = new QLabel(tr("&Name:"), this);
    nameLabel->setBuddy(m_name);
    form->addRow(nameLabel, nameColumn);
    m_direction = new QComboBox(this);
    m_direction->setObjectName(QStringLiteral("direction"));
    m_direction->addItem(tr("One way"), false);
    m_direction->addItem(tr("Both ways (two-way)"), true);
    m_direction->setToolTip(tr("Both ways: changes made on either side reach the other, each direction streamed "
                               "by CDC, with conflicts resolved by the tables' policies (docs/two-way.md)"));
    m_direction->setCurrentIndex(m_existing && m_existing->twoWay ? 1 : 0);
    m_arrow = new QLabel(this);
    auto *route = new QHBoxLayout;
    route->addWidget(m_source, 1);
    route->addWidget(m_arrow);
    route->addWidget(m_target, 1);
    route->addWidget(m_direction);
    route->addSpacing(12);
    route->addWidget(m_targetSchemaLabel);
    route->addWidget(m_targetSchema, 1);
    auto *routeLabel = new QLabel(tr("S&ource \u2192 target:"), this);
    routeLabel->setBuddy(m_source);
    form->addRow(routeLabel, route);

    auto *statusRow = new QHBoxLayout;
    statusRow->addWidget(m_status, 1);
    statusRow->addWidget(m_refresh);

    m_selected->setObjectName(QStringLiteral("selectedTable"));
    m_selected->setTextFormat(Qt::PlainText);
    m_selectedReason->setObjectName(QStringLiteral("selectedReason"));
    m_selectedReason->setTextFormat(Qt::PlainText);
    m_selectedReason->setWordWrap(true);
    m_cursor->setObjectName(QStringLiteral("cursorColumn"));
    m_cursor->setToolTip(tr("The column cursor sync reads past: rows whose value is beyond the last one seen"));
    m_lookback->setObjectName(QStringLiteral("lookback"));
    m_lookback->setPlaceholderText(tr("%1 (default)").arg(QLatin1String(core::TableSpec::kDefaultLookback)));
    m_lookback->setToolTip(tr("How far behind the cursor each pass reads again, for rows committed late: a "
                              "duration (10m) or, for numeric cursors, a count"));
    m_sla->setObjectName(QStringLiteral("freshnessSla"));
    m_sla->setToolTip(tr("Alert when the table is staler than this (90s, 10m, 1h)"));
    auto *details = new QFormLayout(m_details);
    details->addRow(m_selected);
    details->addRow(tr("Why:"), m_selectedReason);
    auto *fields = new QHBoxLayout;
    fields->addWidget(m_cursor, 2);
    fields->addSpacing(12);
    auto *lookbackLabel = new QLabel(tr("&Lookback:"), m_details);
    lookbackLabel->setBuddy(m_lookback);
    fields->addWidget(lookbackLabel);
    fields->addWidget(m_lookback, 1);
    fields->addSpacing(12);
    auto *slaLabel = new QLabel(tr("&Freshness SLA:"), m_details);
    slaLabel->setBuddy(m_sla);
    fields->addWidget(slaLabel);
    fields->addWidget(m_sla, 1);
    auto *cursorLabel = new QLabel(tr("&Cursor column:"), m_details);
    cursorLabel->setBuddy(m_cursor);
    details->addRow(cursorLabel, fields);
    m_conflicts = new ConflictPolicyPicker(m_details);
    m_conflictsLabel = new QLabel(tr("C&onflicts:"), m_details);
    m_conflictsLabel->setBuddy(m_conflicts);
    // The YAML's pipeline-level conflicts: is a default copied onto every table that names none;
    // here the same is one click from the table that has the policy.
    m_conflictsToAll = new QPushButton(tr("Apply to all ta&bles"), m_details);
    m_conflictsToAll->setObjectName(QStringLiteral("conflictsToAll"));
    m_conflictsToAll->setToolTip(tr("Give every included table this table's conflicts policy"));
    auto *conflictsRow = new QHBoxLayout;
    conflictsRow->addWidget(m_conflicts, 1);
    conflictsRow->addWidget(m_conflictsToAll);
    details->addRow(m_conflictsLabel, conflictsRow);

    m_columnsBox->setObjectName(QStringLiteral("columnsBox"));
    auto *columnsLayout = new QVBoxLayout(m_columnsBox);
    columnsLayout->addWidget(m_columns);
    auto *lower = new QWidget(this);
    auto *lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    lowerLayout->addWidget(m_details);
    lowerLayout->addWidget(m_columnsBox, 1);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_tree);
    split->addWidget(lower);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setChildrenCollapsible(false);
    // The column grid needs the height more than the table list, once a table is picked.
    split->setSizes({200, 560});

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(statusRow);
    layout->addWidget(split, 1);
    layout->addWidget(m_problem);
    layout->addWidget(m_buttons);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_name, &QLineEdit::textChanged, this, &PipelineEditor::updateState);
    connect(m_targetSchema, &QLineEdit::textChanged, this, &PipelineEditor::updateState);
    connect(m_target, &QComboBox::currentIndexChanged, this, &PipelineEditor::updateState);
    connect(m_direction, &QComboBox::currentIndexChanged, this, &PipelineEditor::applyDirection);
    connect(m_source, &QComboBox::currentIndexChanged, this, [this] {
        updateTargets();
        discover();
    });
    connect(m_refresh, &QPushButton::clicked, this, &PipelineEditor::discover);
    connect(m_tree, &QTreeWidget::itemChanged, this, &PipelineEditor::onItemChanged);
    connect(m_tree, &QTreeWidget::currentItemChanged, this, &PipelineEditor::loadSelected);
    connect(m_cursor, &QComboBox::currentIndexChanged, this, &PipelineEditor::storeSelected);
    connect(m_lookback, &QLineEdit::textChanged, this, &PipelineEditor::storeSelected);
    connect(m_sla, &QLineEdit::textChanged, this, &PipelineEditor::storeSelected);
    connect(m_conflicts, &ConflictPolicyPicker::policyChanged, this, [this] {
        Row *r = m_loading ? nullptr : selectedRow();
        if (!r || !r->included)
            return;
        r->spec.conflicts = m_conflicts->policy();
        updateState();
    });
    connect(m_conflictsToAll, &QPushButton::clicked, this, &PipelineEditor::applyConflictsToAll);
    connect(m_columns, &ColumnMappingPanel::specChanged, this, &PipelineEditor::onColumnsEdited);

    updateTargets();
    if (m_existing)
        m_target->setCurrentIndex(std::max(0, m_target->findData(qs(m_existing->target))));
    applyDirection();
    resize(1060, 860);
    discover();
}

PipelineEditor::~PipelineEditor() = default;

QPushButton *PipelineEditor::okButton() const { return m_buttons->button(QDialogButtonBox::Ok); }

void PipelineEditor::updateTargets()
{
    const QString chosen = m_target->currentData().toString();
    const QString source = m_source->currentData().toString();
    {
        const QSignalBlocker block(m_target);
        m_target->clear();
        for (const auto &[name, e] : m_workspace.endpoints) {
            if (qs(name) == source)
                continue;
            const QString kind = e.kind == core::EndpointKind::Sqlite  ? tr("SQLite")
                                 : e.kind == core::EndpointKind::Mysql ? tr("MySQL")
                                                                       : tr("Postgres");
            m_target->addItem(tr("%1 (%2)").arg(qs(name), kind), qs(name));
        }
        m_target->setCurrentIndex(std::max(0, m_target->findData(chosen)));
    }
    updateState();
}

void PipelineEditor::loadSelected()
{
    const Row *r = selectedRow();
    m_loading = true;
    m_cursor->clear();
    if (!r) {
        m_selected->setText(tr("Select a table to set its cursor column, lookback and freshness SLA."));
        m_selectedReason->clear();
        m_lookback->clear();
        m_sla->clear();
        m_sla->setPlaceholderText(QString());
        m_conflicts->setPolicy(std::nullopt);
        for (QWidget *w : std::initializer_list<QWidget *>{m_cursor, m_lookback, m_sla, m_conflicts, m_conflictsToAll})
            w->setEnabled(false);
        m_columnsBox->setTitle(tr("Columns"));
        m_columns->clearTable(tr("Select a table to map its columns: which reach the target, under which names, "
                                 "with which values masked."));
        m_loading = false;
        return;
    }
    const bool cursor = r->included && r->spec.strategy == core::Strategy::Cursor;
    m_selected->setText(r->included ? tr("%1, synced by %2").arg(displayOf(r->spec.table), strategyName(r->spec.strategy))
                                    : tr("%1 (not included: tick it to sync it)").arg(displayOf(r->spec.table)));
    m_selectedReason->setText(strategyReason(*r));
    if (r->found)
        for (const auto &c : r->found->cursorCandidates)
            m_cursor->addItem(qs(c), qs(c));
    const std::optional<std::string> column = r->spec.cursor ? r->spec.cursor : (r->rec ? r->rec->cursor : std::nullopt);
    if (column && m_cursor->findData(qs(*column)) < 0)
        m_cursor->addItem(qs(*column), qs(*column));
    if (column)
        m_cursor->setCurrentIndex(m_cursor->findData(qs(*column)));
    m_cursor->setEnabled(cursor && m_cursor->count() > 0);
    m_lookback->setText(qs(r->spec.lookback.value_or(std::string())));
    m_lookback->setEnabled(cursor);
    m_sla->setText(r->spec.freshnessSla ? qs(core::formatDuration(*r->spec.freshnessSla)) : QString());
    m_sla->setPlaceholderText(tr("%1 (default)").arg(qs(core::formatDuration(r->spec.effectiveSla()))));
    m_sla->setEnabled(r->included);
    m_conflicts->setPolicy(r->spec.conflicts);
    m_conflicts->setEnabled(r->included);
    m_conflictsToAll->setEnabled(r->included);
    m_columnsBox->setTitle(tr("Columns of %1").arg(displayOf(r->spec.table)));
    m_columns->setTable(r->spec, r->found ? &*r->found : nullptr, r->included);
    if (const core::Endpoint *target = m_workspace.endpoint(m_target->currentData().toString().toStdString())) {
        core::TableSpec plain = r->spec;
        plain.targetTable.reset();
        m_columns->setTargetPlaceholder(
            tr("%1 (default)").arg(qs(core::resolveTargetName(pipeline(), plain, target->kind).display())));
    }
    m_columns->setProblem(mappingProblem(*r));
    m_loading = false;
}

QString PipelineEditor::mappingProblem(const Row &r) const
{
    if (!r.found || r.found->columns.empty() || !r.spec.columns)
        return {};
    core::TableSpec spec = r.spec;
    // Where an entry was written (file, line) no longer says much once it is edited here.
    spec.columns->spots.clear();
    try {
        // Keys are read at apply: a table may be mapped here before its key is stored.
        core::checkColumnMapping(spec, core::discoveredSchema(*r.found), false);
    } catch (const core::Error &e) {
        return qs(e.what());
    }
    return {};
}

void PipelineEditor::onColumnsEdited()
{
    Row *r = m_loading ? nullptr : selectedRow();
    if (!r || !r->included)
        return;
    const core::TableSpec &edited = m_columns->spec();
    r->spec.columns = edited.columns;
    r->spec.where = edited.where;
    r->spec.deletes = edited.deletes;
    r->spec.targetTable = edited.targetTable;
    m_columns->setProblem(mappingProblem(*r));
    updateState();
}

void PipelineEditor::storeSelected()
{
    Row *r = m_loading ? nullptr : selectedRow();
    if (!r || !r->included)
        return;
    if (r->spec.strategy == core::Strategy::Cursor && m_cursor->currentIndex() >= 0) {
        const std::string cursor = m_cursor->currentData().toString().toStdString();
        if (r->spec.cursor != cursor) {
            r->spec.cursor = cursor;
            // The grid marks the cursor column, and core judges the mapping by it.
            m_loading = true;
            m_columns->setTable(r->spec, r->found ? &*r->found : nullptr, r->included);
            m_columns->setProblem(mappingProblem(*r));
            m_loading = false;
        }
    }
    const QString lookback = m_lookback->text().trimmed();
    if (lookback.isEmpty())
        r->spec.lookback.reset();
    else if (isCount(lookback) || core::parseDuration(lookback.toStdString()))
        r->spec.lookback = lookback.toStdString();
    const QString sla = m_sla->text().trimmed();
    if (sla.isEmpty())
        r->spec.freshnessSla.reset();
    else if (auto d = core::parseDuration(sla.toStdString()))
        r->spec.freshnessSla = *d;
    updateState();
}

void PipelineEditor::applyConflictsToAll()
{
    const Row *from = selectedRow();
    if (!from || !from->included || !m_conflicts->problem().isEmpty())
        return;
    const std::optional<std::string> policy = m_conflicts->policy();
    for (auto &[ref, row] : m_rows)
        if (row.included)
            row.spec.conflicts = policy;
    updateState();
}

core::PipelineSpec PipelineEditor::pipeline() const
{
    core::PipelineSpec p = m_existing.value_or(core::PipelineSpec{});
    p.name = m_name->text().trimmed().toStdString();
    p.source = m_source->currentData().toString().toStdString();
    p.target = m_target->currentData().toString().toStdString();
    const core::Endpoint *target = m_workspace.endpoint(p.target);
    const QString schema = m_targetSchema->text().trimmed();
    p.targetSchema.reset();
    if (target && target->kind != core::EndpointKind::Sqlite && !schema.isEmpty())
        p.targetSchema = schema.toStdString();
    p.twoWay = m_direction->currentData().toBool();
    p.tables.clear();
    for (const auto &ref : m_order) {
        p.tables.push_back(m_rows.at(ref).spec);
        if (!p.twoWay)
            p.tables.back().conflicts.reset(); // a one-way pipeline has no conflicts to resolve
    }
    return p;
}

QString PipelineEditor::problem() const
{
    const QString name = m_name->text().trimmed();
    if (name.isEmpty())
        return tr("Name the pipeline.");
    if (!core::isValidPipelineName(name.toStdString()))
        return tr("'%1' is not a pipeline name: %2").arg(name, m_nameRule->text());
    for (const auto &p : m_workspace.pipelines)
        if (qs(p.name) == name && (!m_existing || m_existing->name != p.name))
            return tr("There is already a pipeline named %1.").arg(name);
    if (m_source->currentIndex() < 0)
        return tr("The workspace has no Postgres or MySQL endpoint to read from: add one first.");
    if (m_target->currentIndex() < 0)
        return tr("Add a target endpoint first.");
    if (m_order.empty())
        return tr("Include at least one table (tick it in the list).");
    const QString lookback = m_lookback->text().trimmed();
    if (m_lookback->isEnabled() && !lookback.isEmpty() && !isCount(lookback) && !core::parseDuration(lookback.toStdString()))
        return tr("Lookback '%1' is neither a duration (10m) nor a count.").arg(lookback);
    const QString sla = m_sla->text().trimmed();
    if (m_sla->isEnabled() && !sla.isEmpty() && !core::parseDuration(sla.toStdString()))
        return tr("Freshness SLA '%1' is not a duration (90s, 10m, 1h).").arg(sla);
    if (!m_columns->problem().isEmpty())
        return m_columns->problem();
    if (m_direction->currentData().toBool() && m_conflicts->isEnabled() && !m_conflicts->problem().isEmpty())
        return m_conflicts->problem();
    const core::PipelineSpec p = pipeline();
    for (const auto &t : p.tables)
        if (t.strategy == core::Strategy::Cursor && !t.cursor)
            return tr("%1: cursor sync needs a cursor column.").arg(displayOf(t.table));
    for (const auto &t : p.tables)
        if (const QString why = mappingProblem(m_rows.at(t.table)); !why.isEmpty())
            return tr("%1: %2").arg(displayOf(t.table), why);
    core::Workspace ws = m_workspace;
    auto it = std::find_if(ws.pipelines.begin(), ws.pipelines.end(),
                           [&](const core::PipelineSpec &q) { return m_existing && q.name == m_existing->name; });
    if (it != ws.pipelines.end())
        *it = p;
    else
        ws.pipelines.push_back(p);
    try {
        // The loader's own checks (deletes, where, mask shapes, references, clashes): the editor
        // refuses what `apply` of the exported YAML would.
        core::WorkspaceFile::parse(core::WorkspaceFile::toYaml(ws), {}, {});
    } catch (const std::exception &e) {
        return qs(e.what());
    }
    return {};
}

void PipelineEditor::updateState()
{
    const core::Endpoint *target = m_workspace.endpoint(m_target->currentData().toString().toStdString());
    const bool schemas = target && target->kind != core::EndpointKind::Sqlite;
    m_targetSchema->setEnabled(schemas);
    m_targetSchemaLabel->setEnabled(schemas);
    m_targetSchema->setToolTip(!schemas ? tr("SQLite targets have no schemas")
                               : target->kind == core::EndpointKind::Mysql
                                   ? tr("The MySQL database the tables land in; empty: the source table's schema "
                                        "(or database)")
                                   : tr("Where the tables land on the target; empty: the source table's schema"));
    const QString nameText = m_name->text().trimmed();
    const bool badName = !nameText.isEmpty() && !core::isValidPipelineName(nameText.toStdString());
    m_nameRule->setStyleSheet(badName ? QStringLiteral("color: #b3261e;") : QStringLiteral("color: palette(mid);"));
    const QString why = problem();
    m_problem->setText(why);
    m_problem->setVisible(!why.isEmpty());
    okButton()->setEnabled(why.isEmpty());
    okButton()->setToolTip(why);
}

} // namespace driftless::ui
