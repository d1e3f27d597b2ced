#include "ui/widgets/columnmappingpanel.h"

#include "core/config/workspacefile.h"
#include "core/model/error.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace driftless::ui {

namespace {

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

template <typename List, typename Value> bool contains(const List &list, const Value &v)
{
    return std::find(list.begin(), list.end(), v) != list.end();
}

/// The mask a grid row names, or the reason its setting is not one.
struct ReadMask {
    std::optional<core::ColumnMask> mask;
    QString problem;
};

ReadMask readMask(const QString &column, int choice, const QString &settingText)
{
    const QString setting = settingText.trimmed();
    core::ColumnMask m;
    switch (choice) {
    case ColumnMappingPanel::NullMask:
        m.kind = core::ColumnMask::Kind::Null;
        return {m, {}};
    case ColumnMappingPanel::TruncateMask:
    case ColumnMappingPanel::KeepLastMask: {
        m.kind = choice == ColumnMappingPanel::TruncateMask ? core::ColumnMask::Kind::Truncate
                                                            : core::ColumnMask::Kind::KeepLast;
        bool ok = false;
        const int n = setting.toInt(&ok);
        if (!ok || n < 0 || n > 1'000'000)
            return {std::nullopt, ColumnMappingPanel::tr("Mask of %1: '%2' is not a count of characters; expected a "
                                                         "whole number from 0 to 1000000.")
                                      .arg(column, setting)};
        m.count = n;
        return {m, {}};
    }
    case ColumnMappingPanel::HashMask:
        m.kind = core::ColumnMask::Kind::Hash;
        if (setting != QLatin1String("keychain") && !(setting.startsWith(QLatin1String("file:")) && setting.size() > 5))
            return {std::nullopt, ColumnMappingPanel::tr("Mask of %1: the hash's key is 'keychain' or 'file:PATH', "
                                                         "not '%2'.")
                                      .arg(column, setting)};
        m.key = setting.toStdString();
        return {m, {}};
    default:
        return {};
    }
}

int choiceOf(const core::ColumnMask &m)
{
    switch (m.kind) {
    case core::ColumnMask::Kind::Null:
        return ColumnMappingPanel::NullMask;
    case core::ColumnMask::Kind::Truncate:
        return ColumnMappingPanel::TruncateMask;
    case core::ColumnMask::Kind::KeepLast:
        return ColumnMappingPanel::KeepLastMask;
    case core::ColumnMask::Kind::Hash:
        return ColumnMappingPanel::HashMask;
    }
    return ColumnMappingPanel::NoMask;
}

QString settingOf(const core::ColumnMask &m)
{
    switch (m.kind) {
    case core::ColumnMask::Kind::Truncate:
    case core::ColumnMask::Kind::KeepLast:
        return QString::number(m.count);
    case core::ColumnMask::Kind::Hash:
        return qs(m.key);
    default:
        return {};
    }
}

} // namespace

ColumnMappingPanel::ColumnMappingPanel(QWidget *parent)
    : QWidget(parent), m_empty(new QLabel(this)), m_grid(new QTableWidget(this)), m_where(new QLineEdit(this)),
      m_deletes(new QComboBox(this)), m_targetTable(new QLineEdit(this)), m_message(new QLabel(this)),
      m_note(new QLabel(this))
{
    setObjectName(QStringLiteral("columnMapping"));
    m_empty->setObjectName(QStringLiteral("columnsEmpty"));
    m_empty->setWordWrap(true);
    m_empty->setTextFormat(Qt::PlainText);
    m_grid->setObjectName(QStringLiteral("columnGrid"));
    m_grid->setColumnCount(ColumnCount);
    m_grid->setHorizontalHeaderLabels(
        {tr("Column"), tr("Type"), tr("Role"), tr("Include"), tr("Target name"), tr("Mask"), tr("Mask setting")});
    m_grid->horizontalHeaderItem(Include)->setToolTip(tr("Untick to keep the column out of the target"));
    m_grid->horizontalHeaderItem(TargetName)
        ->setToolTip(tr("The column's name on the target (double-click to rename)"));
    m_grid->horizontalHeaderItem(Mask)->setToolTip(
        tr("Replace the values before they leave the reader: null, the first N characters, all but the last N "
           "characters as *, or a keyed HMAC-SHA256 (deterministic, so joins still work)"));
    m_grid->horizontalHeaderItem(MaskSetting)
        ->setToolTip(
            tr("truncate / keep_last: how many characters; hmac-sha256: where the key is, keychain or file:PATH"));
    m_grid->horizontalHeaderItem(Role)->setToolTip(
        tr("key: the primary key, by which the target merges; cursor: what cursor sync follows"));
    m_grid->verticalHeader()->setVisible(false);
    m_grid->setAlternatingRowColors(true);
    m_grid->setSelectionMode(QAbstractItemView::SingleSelection);
    m_grid->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                            QAbstractItemView::AnyKeyPressed);
    m_grid->horizontalHeader()->setStretchLastSection(true);

    m_where->setObjectName(QStringLiteral("rowFilter"));
    m_where->setPlaceholderText(tr("every row (a condition in the source's SQL, e.g. tenant_id = 42)"));
    m_where->setToolTip(tr("Only rows this holds true for reach the target; an update that moves a row out of it "
                           "deletes the row there"));
    m_deletes->setObjectName(QStringLiteral("deletesPolicy"));
    m_deletes->addItem(tr("hard: delete on the target"), QStringLiteral("hard"));
    m_deletes->addItem(tr("ignore: keep the row, log the delete"), QStringLiteral("ignore"));
    m_deletes->addItem(tr("soft: keep the row, set _driftless_deleted_at"), QStringLiteral("soft"));
    m_deletes->setItemData(m_deletes->findData(QStringLiteral("soft")),
                           tr("Deleted rows stay on the target with the time of the delete; a full refresh then "
                              "merges instead of swapping. Not for two-way pipelines"),
                           Qt::ToolTipRole);
    m_targetTable->setObjectName(QStringLiteral("targetTable"));
    m_targetTable->setToolTip(tr("The table's name on the target; empty: the source table's name"));
    m_message->setObjectName(QStringLiteral("columnsProblem"));
    m_message->setWordWrap(true);
    m_message->setTextFormat(Qt::PlainText);
    m_message->setStyleSheet(QStringLiteral("color: #b3261e;"));
    m_message->setVisible(false);
    m_note->setObjectName(QStringLiteral("columnsNote"));
    m_note->setWordWrap(true);
    m_note->setTextFormat(Qt::PlainText);
    m_note->setStyleSheet(QStringLiteral("color: palette(mid);"));
    m_note->setVisible(false);

    auto *fields = new QHBoxLayout;
    auto *whereLabel = new QLabel(tr("&Where:"), this);
    whereLabel->setBuddy(m_where);
    fields->addWidget(whereLabel);
    fields->addWidget(m_where, 3);
    fields->addSpacing(12);
    auto *deletesLabel = new QLabel(tr("&Deletes:"), this);
    deletesLabel->setBuddy(m_deletes);
    fields->addWidget(deletesLabel);
    fields->addWidget(m_deletes, 2);
    fields->addSpacing(12);
    auto *targetLabel = new QLabel(tr("Target &table:"), this);
    targetLabel->setBuddy(m_targetTable);
    fields->addWidget(targetLabel);
    fields->addWidget(m_targetTable, 2);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_empty);
    layout->addWidget(m_grid, 1);
    layout->addWidget(m_message);
    layout->addWidget(m_note);
    layout->addLayout(fields);

    connect(m_grid, &QTableWidget::itemChanged, this, &ColumnMappingPanel::onItemChanged);
    connect(m_where, &QLineEdit::textChanged, this, [this](const QString &text) {
        if (m_loading)
            return;
        const QString w = text.trimmed();
        m_spec.where = w.isEmpty() ? std::nullopt : std::optional<std::string>(w.toStdString());
        emit specChanged();
    });
    connect(m_deletes, &QComboBox::currentIndexChanged, this, [this] {
        if (m_loading)
            return;
        const std::string d = m_deletes->currentData().toString().toStdString();
        // hard is the default: a table that did not say it still does not.
        m_spec.deletes = d == "hard" && !m_originalDeletes ? std::nullopt : std::optional<std::string>(d);
        emit specChanged();
    });
    connect(m_targetTable, &QLineEdit::textChanged, this, [this](const QString &text) {
        if (m_loading)
            return;
        const QString t = text.trimmed();
        m_spec.targetTable = t.isEmpty() ? std::nullopt : std::optional<std::string>(t.toStdString());
        emit specChanged();
    });
    clearTable(tr("Select a table to map its columns."));
}

void ColumnMappingPanel::dropRows()
{
    // The view deletes a row's mask box later, from the event loop: hidden now, an old table's
    // boxes are not drawn over the next table's cells meanwhile.
    for (int row = 0; row < m_grid->rowCount(); ++row)
        if (QWidget *box = m_grid->cellWidget(row, Mask))
            box->hide();
    m_grid->setRowCount(0);
}

void ColumnMappingPanel::clearTable(const QString &why)
{
    m_loading = true;
    m_spec = {};
    m_original.reset();
    m_originalDeletes.reset();
    m_problem.clear();
    dropRows();
    m_grid->setVisible(false);
    m_empty->setText(why);
    m_empty->setVisible(true);
    m_where->clear();
    m_targetTable->clear();
    m_deletes->setCurrentIndex(0);
    for (QWidget *w : std::initializer_list<QWidget *>{m_where, m_deletes, m_targetTable})
        w->setEnabled(false);
    setProblem({});
    m_note->setVisible(false);
    m_loading = false;
}

void ColumnMappingPanel::setTable(const core::TableSpec &spec, const core::DiscoveredTable *found, bool editable)
{
    m_loading = true;
    m_spec = spec;
    m_original = spec.columns;
    m_originalDeletes = spec.deletes;
    m_problem.clear();
    const core::ColumnMapping mapping = spec.columns.value_or(core::ColumnMapping{});
    auto kept = [&](const std::string &c) {
        return mapping.hasInclude ? contains(mapping.include, c) : !contains(mapping.exclude, c);
    };
    const bool listed = found && !found->columns.empty();
    m_grid->setVisible(listed);
    m_empty->setVisible(!listed);
    if (!found)
        m_empty->setText(
            tr("%1 was not found on the source: its mapping is kept as configured.").arg(qs(spec.table.display())));
    else if (!listed)
        m_empty->setText(tr("The engine did not list the columns of %1 (an older agent?): its mapping is kept as "
                            "configured.")
                             .arg(qs(spec.table.display())));
    dropRows();
    m_grid->setRowCount(listed ? static_cast<int>(found->columns.size()) : 0);
    const Qt::ItemFlags readOnly = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    for (int row = 0; listed && row < m_grid->rowCount(); ++row) {
        const core::DiscoveredColumn &c = found->columns[static_cast<size_t>(row)];
        auto *name = new QTableWidgetItem(qs(c.name));
        name->setFlags(readOnly);
        name->setData(Qt::UserRole, qs(c.name));
        m_grid->setItem(row, Name, name);
        auto *type = new QTableWidgetItem(qs(c.type));
        type->setFlags(readOnly);
        m_grid->setItem(row, Type, type);
        QStringList roles;
        if (contains(found->primaryKey, c.name))
            roles << tr("key");
        if (spec.strategy == core::Strategy::Cursor && spec.cursorColumn() == c.name)
            roles << tr("cursor");
        auto *role = new QTableWidgetItem(roles.join(QStringLiteral(", ")));
        role->setFlags(readOnly);
        if (!roles.isEmpty()) {
            QFont bold = role->font();
            bold.setBold(true);
            role->setFont(bold);
            role->setToolTip(tr("Cannot be left out; masked only by hmac-sha256 if it is the key, never if it is the "
                                "cursor"));
        }
        m_grid->setItem(row, Role, role);
        auto *include = new QTableWidgetItem;
        include->setFlags(editable ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable : readOnly);
        include->setCheckState(kept(c.name) ? Qt::Checked : Qt::Unchecked);
        m_grid->setItem(row, Include, include);
        std::string target = c.name;
        for (const auto &[from, to] : mapping.rename)
            if (from == c.name)
                target = to;
        auto *targetName = new QTableWidgetItem(qs(target));
        targetName->setFlags(editable ? readOnly | Qt::ItemIsEditable : readOnly);
        if (target != c.name) {
            QFont bold = targetName->font();
            bold.setBold(true);
            targetName->setFont(bold);
        }
        m_grid->setItem(row, TargetName, targetName);
        int choice = NoMask;
        QString setting;
        for (const auto &[column, mask] : mapping.mask)
            if (column == c.name) {
                choice = choiceOf(mask);
                setting = settingOf(mask);
            }
        auto *maskSetting = new QTableWidgetItem(setting);
        maskSetting->setFlags(editable && choice >= TruncateMask ? readOnly | Qt::ItemIsEditable : readOnly);
        m_grid->setItem(row, MaskSetting, maskSetting);
        auto *box = new QComboBox;
        box->setObjectName(QStringLiteral("mask"));
        box->addItem(tr("none"), NoMask);
        box->addItem(QStringLiteral("null"), NullMask);
        box->addItem(QStringLiteral("truncate"), TruncateMask);
        box->addItem(QStringLiteral("keep_last"), KeepLastMask);
        box->addItem(QStringLiteral("hmac-sha256"), HashMask);
        box->setCurrentIndex(box->findData(choice));
        box->setEnabled(editable);
        m_grid->setCellWidget(row, Mask, box);
        connect(box, &QComboBox::currentIndexChanged, this, [this, name] { onMaskChosen(name->row()); });
    }
    m_grid->resizeColumnsToContents();
    m_grid->setColumnWidth(TargetName, std::max(m_grid->columnWidth(TargetName), 140));
    m_where->setText(qs(spec.where.value_or(std::string())));
    m_deletes->setCurrentIndex(std::max(0, m_deletes->findData(qs(spec.deletes.value_or("hard")))));
    m_targetTable->setText(qs(spec.targetTable.value_or(std::string())));
    for (QWidget *w : std::initializer_list<QWidget *>{m_where, m_deletes, m_targetTable})
        w->setEnabled(editable);
    showNote();
    m_loading = false;
}

void ColumnMappingPanel::setProblem(const QString &message)
{
    m_verdict = message;
    const QString text = !m_problem.isEmpty() ? m_problem : m_verdict;
    m_message->setText(text);
    m_message->setVisible(!text.isEmpty());
}

void ColumnMappingPanel::setTargetPlaceholder(const QString &name)
{
    m_targetTable->setPlaceholderText(name);
}

int ColumnMappingPanel::rowOf(const QString &column) const
{
    for (int row = 0; row < m_grid->rowCount(); ++row)
        if (m_grid->item(row, Name) && m_grid->item(row, Name)->data(Qt::UserRole).toString() == column)
            return row;
    return -1;
}

QComboBox *ColumnMappingPanel::maskBox(const QString &column) const
{
    const int row = rowOf(column);
    return row < 0 ? nullptr : qobject_cast<QComboBox *>(m_grid->cellWidget(row, Mask));
}

void ColumnMappingPanel::setColumnIncluded(const QString &column, bool included)
{
    if (const int row = rowOf(column); row >= 0)
        m_grid->item(row, Include)->setCheckState(included ? Qt::Checked : Qt::Unchecked);
}

void ColumnMappingPanel::setTargetName(const QString &column, const QString &name)
{
    if (const int row = rowOf(column); row >= 0)
        m_grid->item(row, TargetName)->setText(name);
}

void ColumnMappingPanel::setMask(const QString &column, MaskChoice choice, const QString &setting)
{
    QComboBox *box = maskBox(column);
    if (!box)
        return;
    box->setCurrentIndex(box->findData(choice));
    if (!setting.isEmpty())
        m_grid->item(rowOf(column), MaskSetting)->setText(setting);
}

void ColumnMappingPanel::onItemChanged(QTableWidgetItem *item)
{
    if (m_loading || !item)
        return;
    if (item->column() == TargetName) {
        const QString source = m_grid->item(item->row(), Name)->data(Qt::UserRole).toString();
        QFont font = item->font();
        font.setBold(!item->text().trimmed().isEmpty() && item->text().trimmed() != source);
        const QSignalBlocker block(m_grid);
        item->setFont(font);
    }
    rebuildMapping();
}

void ColumnMappingPanel::onMaskChosen(int row)
{
    if (m_loading || row < 0)
        return;
    auto *box = qobject_cast<QComboBox *>(m_grid->cellWidget(row, Mask));
    QTableWidgetItem *setting = m_grid->item(row, MaskSetting);
    const int choice = box->currentData().toInt();
    {
        // A setting that fits the new mask stays; otherwise the usual one is offered.
        const QSignalBlocker block(m_grid);
        const QString now = setting->text().trimmed();
        bool isCount = false;
        now.toInt(&isCount);
        if (choice == TruncateMask && !isCount)
            setting->setText(QStringLiteral("200"));
        else if (choice == KeepLastMask && !isCount)
            setting->setText(QStringLiteral("4"));
        else if (choice == HashMask && !readMask({}, HashMask, now).mask)
            setting->setText(QStringLiteral("keychain"));
        else if (choice < TruncateMask)
            setting->setText({});
        const Qt::ItemFlags readOnly = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
        setting->setFlags(choice >= TruncateMask ? readOnly | Qt::ItemIsEditable : readOnly);
    }
    rebuildMapping();
}

void ColumnMappingPanel::rebuildMapping()
{
    struct Shown {
        bool included;
        std::string target;
        ReadMask mask;
    };
    std::map<std::string, Shown> shown;
    std::vector<std::string> order;
    m_problem.clear();
    for (int row = 0; row < m_grid->rowCount(); ++row) {
        const QString name = m_grid->item(row, Name)->data(Qt::UserRole).toString();
        const auto *box = qobject_cast<QComboBox *>(m_grid->cellWidget(row, Mask));
        Shown s{m_grid->item(row, Include)->checkState() == Qt::Checked,
                m_grid->item(row, TargetName)->text().trimmed().toStdString(),
                readMask(name, box ? box->currentData().toInt() : NoMask, m_grid->item(row, MaskSetting)->text())};
        if (m_problem.isEmpty())
            m_problem = s.mask.problem;
        order.push_back(name.toStdString());
        shown.emplace(name.toStdString(), std::move(s));
    }
    auto on = [&](const std::string &c) { return shown.count(c) > 0; };
    auto renamed = [&](const std::string &c) {
        const Shown &s = shown.at(c);
        return !s.target.empty() && s.target != c;
    };

    const core::ColumnMapping before = m_original.value_or(core::ColumnMapping{});
    core::ColumnMapping m;
    m.spots = before.spots;
    // Entries keep the order they were written in; new ones follow in the table's column order.
    // Entries for columns the grid does not show (the source lacks them) stay for apply to refuse.
    if (before.hasInclude) {
        m.hasInclude = true;
        for (const auto &c : before.include)
            if (!on(c) || shown.at(c).included)
                m.include.push_back(c);
        for (const auto &c : order)
            if (shown.at(c).included && !contains(m.include, c))
                m.include.push_back(c);
    } else {
        for (const auto &c : before.exclude)
            if (!on(c) || !shown.at(c).included)
                m.exclude.push_back(c);
        for (const auto &c : order)
            if (!shown.at(c).included && !contains(m.exclude, c))
                m.exclude.push_back(c);
    }
    auto hasRename = [&](const std::string &c) {
        return std::any_of(m.rename.begin(), m.rename.end(), [&](const auto &r) { return r.first == c; });
    };
    for (const auto &r : before.rename)
        if (!on(r.first))
            m.rename.push_back(r);
        else if (renamed(r.first))
            m.rename.emplace_back(r.first, shown.at(r.first).target);
    for (const auto &c : order)
        if (renamed(c) && !hasRename(c))
            m.rename.emplace_back(c, shown.at(c).target);
    auto hasMask = [&](const std::string &c) {
        return std::any_of(m.mask.begin(), m.mask.end(), [&](const auto &k) { return k.first == c; });
    };
    for (const auto &k : before.mask)
        if (!on(k.first))
            m.mask.push_back(k);
        else if (shown.at(k.first).mask.mask)
            m.mask.emplace_back(k.first, *shown.at(k.first).mask.mask);
    for (const auto &c : order)
        if (shown.at(c).mask.mask && !hasMask(c))
            m.mask.emplace_back(c, *shown.at(c).mask.mask);

    if (!m.empty())
        m_spec.columns = m;
    else
        m_spec.columns = m_original && m_original->empty() ? m_original : std::nullopt;
    showNote();
    setProblem(m_verdict);
    emit specChanged();
}

void ColumnMappingPanel::showNote()
{
    bool keychain = false;
    if (m_spec.columns)
        for (const auto &[column, mask] : m_spec.columns->mask)
            keychain = keychain || (mask.kind == core::ColumnMask::Kind::Hash && mask.key == "keychain");
    m_note->setText(keychain ? tr("The hash key is read at apply and at each run from the OS keychain: service "
                                  "Driftless, key hmac:%1. It never goes into the YAML or the workspace.")
                                   .arg(qs(m_spec.table.display()))
                             : QString());
    m_note->setVisible(keychain);
}

} // namespace driftless::ui
