#include "ui/dialogs/pipelineeditor.h"
#include "ui/dialogs/pipelineeditorsupport.h"

#include "ui/dialogs/conflictpolicypicker.h"
#include "ui/dialogs/patternsettingspanel.h"
#include "ui/dialogs/pipelinesettingspanel.h"
#include "ui/dialogs/tablesettingspanel.h"
#include "ui/displayformat.h"
#include "ui/enginedoor.h"
#include "ui/localdoor.h"
#include "ui/widgets/columnmappingpanel.h"
#include "ui/widgets/screenfit.h"

#include "core/config/workspacefile.h"
#include "core/engine/endpoints/endpointcalls.h"
#include "core/engine/endpoints/endpointprobe.h"
#include "core/engine/rows/columnmapping.h"
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
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cctype>
#include <set>

namespace driftless::ui {

using namespace editor;

namespace {
const char *const kSplitKey = "windows/pipelineEditorSplit";
} // namespace

PipelineEditor::PipelineEditor(core::Workspace workspace, std::optional<core::PipelineSpec> existing, QWidget *parent,
                               EngineDoor *door)
    : QDialog(parent), m_workspace(std::move(workspace)), m_existing(std::move(existing)), m_door(door),
      m_name(new QLineEdit(this)), m_nameRule(new QLabel(this)), m_source(new QComboBox(this)),
      m_target(new QComboBox(this)), m_targetSchemaLabel(new QLabel(tr("Target &schema:"), this)),
      m_targetSchema(new QLineEdit(this)), m_tree(new QTreeWidget(this)), m_status(new QLabel(this)),
      m_refresh(new QPushButton(tr("&Rediscover"), this)), m_details(new QWidget(this)),
      m_selected(new QLabel(m_details)), m_selectedReason(new QLabel(m_details)),
      m_tableSettings(new TableSettingsPanel(m_details)), m_columnsBox(new QWidget(this)),
      m_columns(new ColumnMappingPanel(m_columnsBox)), m_settings(new PipelineSettingsPanel(this)),
      m_patterns(new PatternSettingsPanel(this)), m_tabs(new QTabWidget(this)),
      m_split(new QSplitter(Qt::Vertical, this)), m_problem(new QLabel(this)),
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
    auto *details = new QFormLayout(m_details);
    details->addRow(m_selected);
    details->addRow(tr("Why:"), m_selectedReason);
    details->addRow(m_tableSettings);
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
    // One tab at a time below the tables: the table's settings, its columns, or the pipeline's
    // settings. Stacked, they did not fit a laptop's screen (issue 45).
    m_tabs->setObjectName(QStringLiteral("settingsTabs"));
    // The table's settings scroll too: at 150% on a laptop they took the height the list of
    // tables needs (two rows of it were left).
    auto *detailsScroll = new QScrollArea(m_tabs);
    detailsScroll->setObjectName(QStringLiteral("tableSettingsScroll"));
    detailsScroll->setWidget(m_details);
    detailsScroll->setWidgetResizable(true);
    detailsScroll->setFrameShape(QFrame::NoFrame);
    m_tabs->addTab(detailsScroll, tr("&Table"));
    m_tabs->addTab(m_columnsBox, tr("Colu&mns"));
    // The pipeline's settings scroll rather than take the tables' room on a small screen.
    auto *settingsScroll = new QScrollArea(m_tabs);
    settingsScroll->setObjectName(QStringLiteral("pipelineSettingsScroll"));
    settingsScroll->setWidget(m_settings);
    settingsScroll->setWidgetResizable(true);
    settingsScroll->setFrameShape(QFrame::NoFrame);
    m_tabs->addTab(settingsScroll, tr("&Pipeline"));
    auto *patternsScroll = new QScrollArea(m_tabs);
    patternsScroll->setObjectName(QStringLiteral("patternSettingsScroll"));
    patternsScroll->setWidget(m_patterns);
    patternsScroll->setWidgetResizable(true);
    patternsScroll->setFrameShape(QFrame::NoFrame);
    m_tabs->addTab(patternsScroll, tr("Pa&tterns"));
    m_tabs->setTabToolTip(m_tabs->indexOf(patternsScroll),
                          tr("Tables by name pattern, picked up while the sync runs (include_tables, exclude_tables, "
                             "discover_every, table_defaults)"));
    m_split->setObjectName(QStringLiteral("editorSplitter"));
    m_split->addWidget(m_tree);
    m_split->addWidget(m_tabs);
    m_split->setStretchFactor(0, 2);
    m_split->setStretchFactor(1, 3);
    m_split->setChildrenCollapsible(false);
    // A handle that can be seen and caught: the default is a 1 px line in the window's colour.
    m_split->setHandleWidth(7);
    m_split->setStyleSheet(QStringLiteral("QSplitter#editorSplitter::handle { background: palette(mid); "
                                          "margin: 2px 0px; border-radius: 1px; }"));
    m_split->handle(1)->setToolTip(tr("Drag to give the tables or the settings more room"));

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(statusRow);
    layout->addWidget(m_split, 1);
    layout->addWidget(m_problem);
    layout->addWidget(m_buttons);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_name, &QLineEdit::textChanged, this, &PipelineEditor::updateState);
    connect(m_targetSchema, &QLineEdit::textChanged, this, &PipelineEditor::updateState);
    connect(m_target, &QComboBox::currentIndexChanged, this, &PipelineEditor::updateState);
    connect(m_direction, &QComboBox::currentIndexChanged, this, &PipelineEditor::applyDirection);
    connect(m_source, &QComboBox::currentIndexChanged, this, [this] {
        m_settings->setSourceKind(sourceKind());
        m_patterns->setSourceKind(sourceKind());
        updateTargets();
        discover();
    });
    connect(m_refresh, &QPushButton::clicked, this, &PipelineEditor::discover);
    connect(m_tree, &QTreeWidget::itemChanged, this, &PipelineEditor::onItemChanged);
    connect(m_tree, &QTreeWidget::currentItemChanged, this, &PipelineEditor::loadSelected);
    connect(m_tableSettings, &TableSettingsPanel::settingsChanged, this, &PipelineEditor::storeSelected);
    connect(m_settings, &PipelineSettingsPanel::settingsChanged, this, &PipelineEditor::updateState);
    connect(m_patterns, &PatternSettingsPanel::settingsChanged, this, &PipelineEditor::updateState);
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
    m_settings->setPipeline(m_existing.value_or(core::PipelineSpec{}), sourceKind());
    m_patterns->setPipeline(m_existing.value_or(core::PipelineSpec{}), sourceKind());
    applyDirection();
    screenfit::restore(this, QStringLiteral("pipelineEditor"), QSize(1060, 860));
    discover();
}

void PipelineEditor::showEvent(QShowEvent *event)
{
    QDialog::showEvent(event);
    if (m_splitRestored)
        return;
    // Once laid out at its size: a state restored before would be scaled by the first resize.
    m_splitRestored = true;
    const QByteArray split = QSettings().value(QLatin1String(kSplitKey)).toByteArray();
    if (split.isEmpty() || !m_split->restoreState(split)) {
        // Half each: the tables are picked first, then set (the tabs scroll where short).
        const int total = m_split->height();
        m_split->setSizes({total / 2, total - total / 2});
    }
}

void PipelineEditor::done(int result)
{
    screenfit::remember(this, QStringLiteral("pipelineEditor"));
    QSettings().setValue(QLatin1String(kSplitKey), m_split->saveState());
    QDialog::done(result);
}

core::EndpointKind PipelineEditor::sourceKind() const
{
    const core::Endpoint *e = m_workspace.endpoint(m_source->currentData().toString().toStdString());
    return e ? e->kind : core::EndpointKind::Postgres;
}

QComboBox *PipelineEditor::cursorBox() const
{
    return m_tableSettings->cursorBox();
}
QLineEdit *PipelineEditor::lookbackEdit() const
{
    return m_tableSettings->lookbackEdit();
}
QLineEdit *PipelineEditor::slaEdit() const
{
    return m_tableSettings->slaEdit();
}

PipelineEditor::~PipelineEditor() = default;

QPushButton *PipelineEditor::okButton() const
{
    return m_buttons->button(QDialogButtonBox::Ok);
}

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
    if (!r) {
        m_selected->setText(tr("Select a table to set its cursor column, schedule, freshness SLA and more."));
        m_selectedReason->clear();
        m_tableSettings->clearTable();
        m_conflicts->setPolicy(std::nullopt);
        for (QWidget *w : std::initializer_list<QWidget *>{m_conflicts, m_conflictsToAll})
            w->setEnabled(false);
        m_tabs->setTabText(m_tabs->indexOf(m_columnsBox), tr("Colu&mns"));
        m_columns->clearTable(tr("Select a table to map its columns: which reach the target, under which names, "
                                 "with which values masked."));
        m_loading = false;
        return;
    }
    m_selected->setText(
        r->included   ? tr("%1, synced by %2").arg(displayOf(r->spec.table), strategyName(r->spec.strategy))
        : r->pickedUp ? tr("%1, picked up by include_tables, synced by %2 with the table defaults (tick it to list "
                           "it with settings of its own)")
                            .arg(displayOf(r->spec.table), strategyName(r->spec.strategy))
                      : tr("%1 (not included: tick it to sync it)").arg(displayOf(r->spec.table)));
    m_selectedReason->setText(strategyReason(*r));
    QStringList candidates;
    if (r->found)
        for (const auto &c : r->found->cursorCandidates)
            candidates << qs(c);
    m_tableSettings->setTable(r->spec, candidates, r->rec ? r->rec->cursor : std::nullopt, r->included, sourceKind());
    m_conflicts->setPolicy(r->spec.conflicts);
    m_conflicts->setEnabled(r->included);
    m_conflictsToAll->setEnabled(r->included);
    m_tabs->setTabText(m_tabs->indexOf(m_columnsBox), tr("Colu&mns of %1").arg(displayOf(r->spec.table)));
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
    const std::optional<std::string> cursor = r->spec.cursor;
    m_tableSettings->apply(r->spec);
    showKey(*r);
    if (r->spec.cursor != cursor) {
        // The grid marks the cursor column, and core judges the mapping by it.
        m_loading = true;
        m_columns->setTable(r->spec, r->found ? &*r->found : nullptr, r->included);
        m_columns->setProblem(mappingProblem(*r));
        m_loading = false;
    }
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
    m_settings->apply(p);
    m_patterns->apply(p);
    p.tables.clear();
    for (const auto &ref : m_order) {
        p.tables.push_back(m_rows.at(ref).spec);
        p.tables.back().discovered = false; // ticked: listed, even if the patterns picked it up
        if (!p.twoWay)
            p.tables.back().conflicts.reset(); // a one-way pipeline has no conflicts to resolve
    }
    // After the listed ones, as the state file gives them: never written to the YAML.
    for (const auto &ref : m_pickedUp)
        if (const Row &r = m_rows.at(ref); !r.included && r.pickedUp)
            p.tables.push_back(*r.pickedUp);
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
    if (const QString why = m_patterns->problem(); !why.isEmpty())
        return why;
    if (m_order.empty() && !m_patterns->hasPatterns())
        return tr("Include at least one table (tick it in the list), or name tables by pattern on the Patterns "
                  "tab.");
    if (const QString why = m_tableSettings->problem(); !why.isEmpty())
        return why;
    if (const QString why = m_settings->problem(); !why.isEmpty())
        return why;
    if (!m_columns->problem().isEmpty())
        return m_columns->problem();
    if (m_direction->currentData().toBool() && m_conflicts->isEnabled() && !m_conflicts->problem().isEmpty())
        return m_conflicts->problem();
    const core::PipelineSpec p = pipeline();
    // A picked-up table is the sync's to judge (it refuses what cannot work, and says so).
    for (const auto &t : p.tables)
        if (!t.discovered && t.strategy == core::Strategy::Cursor && !t.cursor)
            return tr("%1: cursor sync needs a cursor column.").arg(displayOf(t.table));
    for (const auto &t : p.tables)
        if (const QString why = t.discovered ? QString() : mappingProblem(m_rows.at(t.table)); !why.isEmpty())
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

void PipelineEditor::showPickedUp()
{
    std::size_t n = 0;
    for (const auto &ref : m_pickedUp)
        n += m_rows.at(ref).included ? 0 : 1;
    m_patterns->setPickedUp(n);
    const int tab = m_tabs->indexOf(m_tabs->findChild<QWidget *>(QStringLiteral("patternSettingsScroll")));
    m_tabs->setTabText(tab, n ? tr("Pa&tterns (%1 picked up)").arg(n) : tr("Pa&tterns"));
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
