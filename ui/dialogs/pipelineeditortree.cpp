#include "ui/dialogs/pipelineeditor.h"
#include "ui/dialogs/pipelineeditorsupport.h"

#include "ui/dialogs/conflictpolicypicker.h"
#include "ui/displayformat.h"
#include "ui/enginedoor.h"
#include "ui/localdoor.h"
#include "ui/widgets/columnmappingpanel.h"

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
#include <QSplitter>
#include <QStandardItemModel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cctype>
#include <set>

namespace driftless::ui {

using namespace editor;

void PipelineEditor::discover()
{
    const std::string source = m_source->currentData().toString().toStdString();
    const std::uint64_t job = ++m_job;
    // Another source: its tables start over; the edited pipeline's own tables come back with it.
    m_rows.clear();
    m_order.clear();
    m_pickedUp.clear();
    if (m_existing && m_existing->source == source) {
        for (const auto &t : m_existing->tables) {
            Row &r = m_rows[t.table];
            r.spec = t;
            if (t.discovered) {
                r.pickedUp = t;
                m_pickedUp.push_back(t.table);
                continue;
            }
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
    LocalDoor::orOwn(m_door, m_ownDoor, this)
        ->post(QStringLiteral("/api/v1/discover"), {{"endpoint", core::endpointJsonValue(*e)}}, this,
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
        if (!r.included && !r.pickedUp) {
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
    const QString current =
        m_tree->currentItem() ? m_tree->currentItem()->data(Table, Qt::UserRole).toString() : QString();
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
        item->setCheckState(Table, r.included ? Qt::Checked : r.pickedUp ? Qt::PartiallyChecked : Qt::Unchecked);
        item->setTextAlignment(Rows, Qt::AlignRight | Qt::AlignVCenter);
        item->setTextAlignment(Size, Qt::AlignRight | Qt::AlignVCenter);
        if (r.found) {
            const auto &t = *r.found;
            item->setText(Rows,
                          t.analyzed ? locale.toString(static_cast<qlonglong>(t.estimatedRows)) : tr("not analyzed"));
            item->setText(Size, qs(core::humanBytes(t.totalBytes)));
            item->setText(Candidates, t.cursorCandidates.empty() ? tr("none") : joined(t.cursorCandidates, m_mysql));
            if (t.writesKnown)
                item->setToolTip(Table, tr("%1: %2 inserts, %3 updates, %4 deletes since the statistics were reset")
                                            .arg(displayOf(ref))
                                            .arg(t.inserts)
                                            .arg(t.updates)
                                            .arg(t.deletes));
            else
                item->setToolTip(Table,
                                 tr("%1: writes unknown (no per-table write counters to read)").arg(displayOf(ref)));
            if (!t.readable)
                item->setToolTip(
                    Table,
                    tr("%1: the user may not SELECT from it (or lacks USAGE on its schema)").arg(displayOf(ref)));
        }
        showKey(r);
        if (r.pickedUp) {
            QFont italic = item->font(Table);
            italic.setItalic(!r.included);
            item->setFont(Table, italic);
            item->setToolTip(Table, r.included ? tr("%1: picked up by include_tables, listed here now; untick it to "
                                                    "leave it to the patterns as it was.")
                                                     .arg(displayOf(ref))
                                               : tr("%1: picked up by include_tables while the sync ran, not listed; "
                                                    "never written to the workspace file. Tick it to list it with "
                                                    "settings of its own.")
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
    showPickedUp();
    updateState();
}

void PipelineEditor::showKey(const Row &r) const
{
    if (!r.item)
        return;
    const QString own = !r.found                      ? QString()
                        : r.found->primaryKey.empty() ? tr("none")
                                                      : joined(r.found->primaryKey, m_mysql);
    if (r.spec.key) {
        r.item->setText(PrimaryKey, tr("%1 (declared)").arg(joined(*r.spec.key, m_mysql)));
        r.item->setToolTip(PrimaryKey, tr("Keyed by the columns the Table tab's Key columns declare (key:); the "
                                          "table's own key: %1")
                                           .arg(own.isEmpty() ? tr("unknown") : own));
    } else {
        r.item->setText(PrimaryKey, own);
        r.item->setToolTip(PrimaryKey, QString());
    }
}

QString PipelineEditor::strategyReason(const Row &r) const
{
    if (r.pickedUp && !r.included)
        return tr("picked up by include_tables: synced with the table defaults' settings");
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

PipelineEditor::Row *PipelineEditor::selectedRow()
{
    return rowOf(m_tree->currentItem());
}

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
    if (r->pickedUp) {
        // Listed from its picked-up settings, or picked up again as it was.
        r->spec = *r->pickedUp;
        r->spec.discovered = !included;
        m_loading = true;
        if (!included)
            item->setCheckState(Table, Qt::PartiallyChecked);
        QFont font = item->font(Table);
        font.setItalic(!included);
        item->setFont(Table, font);
        r->strategy->setCurrentIndex(r->strategy->findData(static_cast<int>(r->spec.strategy)));
        const QString why = strategyReason(*r);
        item->setText(Reason, why);
        item->setToolTip(Reason, why);
        r->strategy->setToolTip(why);
        m_loading = false;
    }
    if (included)
        m_order.push_back(ref);
    else
        m_order.erase(std::remove(m_order.begin(), m_order.end(), ref), m_order.end());
    r->strategy->setEnabled(included);
    if (included)
        applyDirection();
    if (item == m_tree->currentItem())
        loadSelected();
    showPickedUp();
    updateState();
}

void PipelineEditor::applyDirection()
{
    const bool both = m_direction->currentData().toBool();
    m_arrow->setText(both ? QStringLiteral("\u21c4") : QStringLiteral("\u2192"));
    // A table's conflicts: policy means something only when both sides are written.
    m_conflicts->setVisible(both);
    m_conflictsLabel->setVisible(both);
    m_conflictsToAll->setVisible(both);
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

} // namespace driftless::ui
