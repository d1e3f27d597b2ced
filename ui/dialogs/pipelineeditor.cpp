#include "ui/dialogs/pipelineeditor.h"

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

/// What a discovery found: a plain value posted back to the UI thread.
namespace {

constexpr core::Strategy kStrategies[] = {core::Strategy::FullRefresh, core::Strategy::Cursor, core::Strategy::Cdc};
constexpr int kReasonWidth = 400;

QString strategyName(core::Strategy s)
{
    switch (s) {
    case core::Strategy::FullRefresh:
        return PipelineEditor::tr("full refresh");
    case core::Strategy::Cursor:
        return PipelineEditor::tr("cursor");
    case core::Strategy::Cdc:
        return PipelineEditor::tr("CDC");
    }
    return {};
}

QString qs(const std::string &s) { return QString::fromStdString(s); }

/// A name as its server prints it: Postgres quotes what is not plain lower case; MySQL keeps the
/// case and backticks only what is not a plain word.
QString ident(const std::string &name, bool mysql)
{
    if (!mysql)
        return qs(core::displayIdent(name));
    const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '_' || c == '$';
    });
    return plain ? qs(name) : qs(core::mysqlIdent(name));
}

QString joined(const std::vector<std::string> &parts, bool mysql)
{
    QStringList list;
    for (const auto &p : parts)
        list << ident(p, mysql);
    return list.join(QStringLiteral(", "));
}

/// "1 table", "6 tables": without translations loaded, tr()'s %n plurals would print "table(s)".
QString count(std::size_t n, const QString &one, const QString &many)
{
    return n == 1 ? one : many.arg(n);
}

bool isCount(const QString &text)
{
    return !text.isEmpty() && std::all_of(text.begin(), text.end(), [](QChar c) { return c.isDigit(); });
}

} // namespace

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
    details->addRow(m_conflictsLabel, m_conflicts);

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

void PipelineEditor::discover()
{
    const std::string source = m_source->currentData().toString().toStdString();
    const std::uint64_t job = ++m_job;
    // Another source: its tables start over; the edited pipeline's own tables come back with it.
    m_rows.clear();
    m_order.clear();
    if (m_existing && m_existing->source == source) {
        for (const auto &t : m_existing->tables) {
            Row &r = m_rows[t.table];
            r.spec = t;
            r.included = true;
            m_order.push_back(t.table);
        }
    }
    const core::Endpoint *e = m_workspace.endpoint(source);
    m_mysql = e && e->kind == core::EndpointKind::Mysql;
    m_tree->headerItem()->setToolTip(Rows, m_mysql ? tr("information_schema.TABLES.TABLE_ROWS: InnoDB's estimate")
                                                   : tr("pg_class.reltuples: the planner's estimate"));
    m_tree->headerItem()->setToolTip(Size, m_mysql ? tr("DATA_LENGTH + INDEX_LENGTH: rows and indexes")
                                                   : tr("pg_total_relation_size: heap, indexes and TOAST"));
    if (!e) {
        m_discovering = false;
        m_status->setText(tr("The workspace has no Postgres or MySQL endpoint to read tables from: add one first."));
        rebuildTree();
        return;
    }
    m_discovering = true;
    m_refresh->setEnabled(false);
    m_status->setText(tr("Reading the tables of %1\u2026").arg(qs(source)));
    rebuildTree();
    // The endpoint goes whole: the edited workspace may hold one the engine has not stored yet.
    LocalDoor::orOwn(m_door, m_ownDoor, this)->post(QStringLiteral("/api/v1/discover"), {{"endpoint", core::endpointJsonValue(*e)}}, this,
               [this, job](const EngineDoor::Reply &reply) {
                   core::SourceDiscovery d;
                   try {
                       if (reply.ok())
                           d = core::discoveryFromJson(reply.body);
                       else
                           d.error = reply.error.toStdString();
                   } catch (const core::Error &x) {
                       d.error = x.what();
                   }
                   showDiscovery(job, d);
               });
}

void PipelineEditor::showDiscovery(std::uint64_t job, const core::SourceDiscovery &d)
{
    if (job != m_job)
        return;
    m_discovering = false;
    m_refresh->setEnabled(true);
    const QString source = m_source->currentData().toString();
    if (!d.ok) {
        m_status->setStyleSheet(QStringLiteral("color: #b3261e;"));
        m_status->setText(tr("Could not read the tables of %1: %2").arg(source, qs(d.error)));
        emit discoveryFinished(false);
        return;
    }
    m_status->setStyleSheet(QString());
    std::set<std::string> schemas;
    bool writesUnknown = false;
    for (const auto &t : d.tables) {
        writesUnknown = writesUnknown || !t.writesKnown;
        schemas.insert(t.table.schema);
        Row &r = m_rows[t.table];
        r.found = t;
        r.rec = core::recommendStrategy(t, d.abilities);
        if (!r.included) {
            r.spec.table = t.table;
            r.spec.strategy = r.rec->strategy;
            if (r.spec.strategy == core::Strategy::Cursor)
                r.spec.cursor = r.rec->cursor;
        }
    }
    QStringList facts{tr("%1 in %2 on %3")
                          .arg(count(d.tables.size(), tr("1 table"), tr("%1 tables")),
                               m_mysql ? count(schemas.size(), tr("1 database"), tr("%1 databases"))
                                       : count(schemas.size(), tr("1 schema"), tr("%1 schemas")),
                               source)};
    if (d.abilities.cdcRefused)
        facts << tr("CDC is refused: %1").arg(qs(*d.abilities.cdcRefused));
    else if (!d.abilities.logicalWal)
        facts << tr("wal_level is not logical, so CDC is refused");
    else if (!d.abilities.canReplicate)
        facts << tr("the user may not replicate, so CDC is refused");
    std::size_t missing = 0;
    for (const auto &[ref, r] : m_rows)
        missing += r.found ? 0 : 1;
    if (missing)
        facts << count(missing, tr("1 table of the pipeline not found (kept as configured)"),
                       tr("%1 tables of the pipeline not found (kept as configured)"));
    if (writesUnknown)
        facts << tr("no write counters to read (performance_schema is off or not readable), so recommendations "
                    "go by size, key and columns");
    facts << tr("tick a table to include it");
    m_status->setText(facts.join(QStringLiteral("; ")) + QLatin1Char('.'));
    rebuildTree();
    emit discoveryFinished(true);
}

void PipelineEditor::rebuildTree()
{
    const QString current = m_tree->currentItem() ? m_tree->currentItem()->data(Table, Qt::UserRole).toString()
                                                  : QString();
    m_loading = true;
    m_tree->clear();
    std::map<std::string, QTreeWidgetItem *> schemas;
    const QLocale locale;
    // Rows as tall as the strategy combo boxes in them, the column as wide as the widest.
    QComboBox probe;
    for (core::Strategy s : kStrategies)
        probe.addItem(strategyName(s));
    const QSize boxSize = probe.sizeHint();
    for (auto &[ref, r] : m_rows) {
        QTreeWidgetItem *&group = schemas[ref.schema];
        if (!group) {
            group = new QTreeWidgetItem(m_tree, {ident(ref.schema, m_mysql)});
            group->setFlags(Qt::ItemIsEnabled);
            group->setFirstColumnSpanned(false);
            QFont bold = group->font(Table);
            bold.setBold(true);
            group->setFont(Table, bold);
            group->setSizeHint(Strategy, boxSize);
        }
        auto *item = new QTreeWidgetItem(group);
        r.item = item;
        item->setSizeHint(Strategy, boxSize);
        item->setText(Table, ident(ref.name, m_mysql));
        item->setData(Table, Qt::UserRole, displayOf(ref));
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable);
        item->setCheckState(Table, r.included ? Qt::Checked : Qt::Unchecked);
        item->setTextAlignment(Rows, Qt::AlignRight | Qt::AlignVCenter);
        item->setTextAlignment(Size, Qt::AlignRight | Qt::AlignVCenter);
        if (r.found) {
            const auto &t = *r.found;
            item->setText(Rows, t.analyzed ? locale.toString(static_cast<qlonglong>(t.estimatedRows)) : tr("not analyzed"));
            item->setText(Size, qs(core::humanBytes(t.totalBytes)));
            item->setText(PrimaryKey, t.primaryKey.empty() ? tr("none") : joined(t.primaryKey, m_mysql));
            item->setText(Candidates, t.cursorCandidates.empty() ? tr("none") : joined(t.cursorCandidates, m_mysql));
            if (t.writesKnown)
                item->setToolTip(Table, tr("%1: %2 inserts, %3 updates, %4 deletes since the statistics were reset")
                                            .arg(displayOf(ref))
                                            .arg(t.inserts)
                                            .arg(t.updates)
                                            .arg(t.deletes));
            else
                item->setToolTip(Table, tr("%1: writes unknown (no per-table write counters to read)")
                                            .arg(displayOf(ref)));
            if (!t.readable)
                item->setToolTip(Table, tr("%1: the user may not SELECT from it (or lacks USAGE on its schema)")
                                            .arg(displayOf(ref)));
        }

        auto *box = new QComboBox;
        box->setObjectName(QStringLiteral("strategy"));
        auto *items = qobject_cast<QStandardItemModel *>(box->model());
        for (core::Strategy s : kStrategies) {
            box->addItem(strategyName(s), static_cast<int>(s));
            if (!r.rec || !items)
                continue;
            auto it = r.rec->refused.find(s);
            QStandardItem *entry = items->item(box->count() - 1);
            if (it != r.rec->refused.end()) {
                entry->setEnabled(false);
                entry->setToolTip(tr("Refused: %1").arg(qs(it->second)));
            } else if (s == r.rec->strategy) {
                entry->setToolTip(tr("Recommended: %1").arg(qs(r.rec->reason)));
            }
        }
        box->setCurrentIndex(box->findData(static_cast<int>(r.spec.strategy)));
        box->setEnabled(r.included);
        r.strategy = box;
        m_tree->setItemWidget(item, Strategy, box);
        connect(box, &QComboBox::currentIndexChanged, this, [this, ref = ref] { onStrategyChosen(ref); });
        const QString why = strategyReason(r);
        item->setText(Reason, why);
        item->setToolTip(Reason, why);
        box->setToolTip(why);
    }
    m_tree->expandAll();
    for (int c : {Table, Strategy, Rows, Size, PrimaryKey})
        m_tree->resizeColumnToContents(c);
    m_tree->setColumnWidth(Table, m_tree->columnWidth(Table) + 12);
    m_tree->setColumnWidth(Reason, kReasonWidth);
    m_loading = false;
    if (!current.isEmpty())
        selectTable(current);
    loadSelected();
    updateState();
}

QString PipelineEditor::strategyReason(const Row &r) const
{
    if (!r.rec)
        return r.found ? QString() : tr("not found on the source: kept as configured");
    const core::Recommendation &rec = *r.rec;
    if (auto it = rec.refused.find(r.spec.strategy); it != rec.refused.end())
        return tr("\u26a0 %1 cannot work: %2").arg(strategyName(r.spec.strategy), qs(it->second));
    if (r.spec.strategy == rec.strategy)
        return qs(rec.reason);
    return tr("recommended: %1, as %2").arg(strategyName(rec.strategy), qs(rec.reason));
}

PipelineEditor::Row *PipelineEditor::rowOf(const QTreeWidgetItem *item)
{
    if (!item)
        return nullptr;
    const QString display = item->data(Table, Qt::UserRole).toString();
    return display.isEmpty() ? nullptr : rowOf(display);
}

PipelineEditor::Row *PipelineEditor::rowOf(const QString &display)
{
    return const_cast<Row *>(std::as_const(*this).rowOf(display));
}

const PipelineEditor::Row *PipelineEditor::rowOf(const QString &display) const
{
    for (const auto &[ref, r] : m_rows)
        if (displayOf(ref) == display)
            return &r;
    return nullptr;
}

QString PipelineEditor::displayOf(const core::TableRef &ref) const
{
    return m_mysql ? ident(ref.schema, true) + QLatin1Char('.') + ident(ref.name, true) : qs(ref.display());
}

PipelineEditor::Row *PipelineEditor::selectedRow() { return rowOf(m_tree->currentItem()); }

QTreeWidgetItem *PipelineEditor::tableItem(const QString &display) const
{
    const Row *r = rowOf(display);
    return r ? r->item : nullptr;
}

QComboBox *PipelineEditor::strategyBox(const QString &display) const
{
    const Row *r = rowOf(display);
    return r ? r->strategy : nullptr;
}

std::optional<core::Recommendation> PipelineEditor::recommendation(const QString &display) const
{
    const Row *r = rowOf(display);
    return r ? r->rec : std::nullopt;
}

void PipelineEditor::setIncluded(const QString &display, bool included)
{
    if (QTreeWidgetItem *item = tableItem(display))
        item->setCheckState(Table, included ? Qt::Checked : Qt::Unchecked);
}

void PipelineEditor::selectTable(const QString &display)
{
    if (QTreeWidgetItem *item = tableItem(display)) {
        m_tree->setCurrentItem(item);
        m_tree->scrollToItem(item);
    }
}

void PipelineEditor::onItemChanged(QTreeWidgetItem *item, int column)
{
    Row *r = m_loading || column != Table ? nullptr : rowOf(item);
    if (!r)
        return;
    const bool included = item->checkState(Table) == Qt::Checked;
    if (included == r->included)
        return;
    r->included = included;
    const core::TableRef ref = r->spec.table;
    if (included)
        m_order.push_back(ref);
    else
        m_order.erase(std::remove(m_order.begin(), m_order.end(), ref), m_order.end());
    r->strategy->setEnabled(included);
    if (included)
        applyDirection();
    if (item == m_tree->currentItem())
        loadSelected();
    updateState();
}

void PipelineEditor::applyDirection()
{
    const bool both = m_direction->currentData().toBool();
    m_arrow->setText(both ? QStringLiteral("\u21c4") : QStringLiteral("\u2192"));
    // A table's conflicts: policy means something only when both sides are written.
    m_conflicts->setVisible(both);
    m_conflictsLabel->setVisible(both);
    if (both)
        for (const auto &ref : m_order)
            if (QComboBox *box = m_rows.at(ref).strategy; box && box->currentData().toInt() != int(core::Strategy::Cdc))
                box->setCurrentIndex(box->findData(static_cast<int>(core::Strategy::Cdc)));
    updateState();
}

void PipelineEditor::onStrategyChosen(const core::TableRef &ref)
{
    auto found = m_rows.find(ref);
    if (m_loading || found == m_rows.end())
        return;
    Row &r = found->second;
    r.spec.strategy = static_cast<core::Strategy>(r.strategy->currentData().toInt());
    if (r.spec.strategy != core::Strategy::Cursor) {
        r.spec.cursor.reset();
        r.spec.lookback.reset();
    } else if (!r.spec.cursor && r.rec) {
        r.spec.cursor = r.rec->cursor;
    }
    const QString why = strategyReason(r);
    r.item->setText(Reason, why);
    r.item->setToolTip(Reason, why);
    r.strategy->setToolTip(why);
    if (r.item == m_tree->currentItem())
        loadSelected();
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
        for (QWidget *w : std::initializer_list<QWidget *>{m_cursor, m_lookback, m_sla, m_conflicts})
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
