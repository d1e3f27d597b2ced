#include "ui/models/rowdiffmodel.h"

#include "ui/statusicons.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QStringList>

#include <map>
#include <optional>

namespace driftless::ui {

namespace {

/// Top-level rows carry 0 as internal id; a child carries its parent's row + 1.
constexpr quintptr kTopLevel = 0;

/// Mid grey: readable on light and dark palettes, and set apart by the italics as well.
QBrush placeholderBrush()
{
    return QBrush(QColor(0x80, 0x80, 0x80));
}

QFont italic()
{
    QFont f;
    f.setItalic(true);
    return f;
}

/// One line per value: a line break would hide the rest of the cell.
QString oneLine(const std::string &value)
{
    QString s = QString::fromStdString(value);
    s.replace(QLatin1Char('\n'), QStringLiteral("\u21b5"));
    return s;
}

QVariant valueData(const std::optional<std::string> &value, int role)
{
    switch (role) {
    case Qt::DisplayRole:
        return value ? oneLine(*value) : QStringLiteral("NULL");
    case Qt::ToolTipRole:
        return value ? QString::fromStdString(*value) : RowDiffModel::tr("NULL (no value)");
    case Qt::ForegroundRole:
        return value ? QVariant() : QVariant(placeholderBrush());
    case Qt::FontRole:
        return value ? QVariant() : QVariant(italic());
    case RowDiffModel::NullRole:
        return !value.has_value();
    }
    return {};
}

/// A side that has the row (`present`) or lacks it.
QVariant presenceData(bool present, int role)
{
    switch (role) {
    case Qt::DisplayRole:
        return present ? RowDiffModel::tr("row present") : RowDiffModel::tr("no row");
    case Qt::ForegroundRole:
        return present ? QVariant() : QVariant(placeholderBrush());
    case Qt::FontRole:
        return present ? QVariant() : QVariant(italic());
    case RowDiffModel::NullRole:
        return !present;
    }
    return {};
}

} // namespace

RowDiffModel::RowDiffModel(QObject *parent) : QAbstractItemModel(parent) {}

QModelIndex RowDiffModel::index(int row, int column, const QModelIndex &parent) const
{
    if (row < 0 || column < 0 || column >= ColumnCount)
        return {};
    if (!parent.isValid()) {
        if (row >= static_cast<int>(m_entries.size()))
            return {};
        return createIndex(row, column, kTopLevel);
    }
    if (parent.internalId() != kTopLevel || parent.column() != 0)
        return {};
    const auto &e = m_entries[static_cast<std::size_t>(parent.row())];
    if (!e.hasChildren() || row >= static_cast<int>(e.columns.size()))
        return {};
    return createIndex(row, column, static_cast<quintptr>(parent.row()) + 1);
}

QModelIndex RowDiffModel::parent(const QModelIndex &child) const
{
    if (!child.isValid() || child.internalId() == kTopLevel)
        return {};
    return createIndex(static_cast<int>(child.internalId() - 1), 0, kTopLevel);
}

int RowDiffModel::rowCount(const QModelIndex &parent) const
{
    if (!parent.isValid())
        return static_cast<int>(m_entries.size());
    if (parent.internalId() != kTopLevel || parent.column() != 0)
        return 0;
    const auto &e = m_entries[static_cast<std::size_t>(parent.row())];
    return e.hasChildren() ? static_cast<int>(e.columns.size()) : 0;
}

int RowDiffModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant RowDiffModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return QAbstractItemModel::headerData(section, orientation, role);
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Source:
        case Target:
            return tr("The value as the reconciler compares it (canonical text); NULL in grey italics");
        }
        return {};
    }
    if (role != Qt::DisplayRole)
        return QAbstractItemModel::headerData(section, orientation, role);
    switch (section) {
    case Key:
        return m_table.keyColumns.empty() ? tr("Key") : tr("Key (%1)").arg(QString::fromStdString([this] {
            std::string names;
            for (const auto &c : m_table.keyColumns)
                names += (names.empty() ? "" : ", ") + c;
            return names;
        }()));
    case Class:
        return tr("Class");
    case ColumnName:
        return tr("Column");
    case Source:
        return tr("Source value");
    case Target:
        return tr("Target value");
    }
    return {};
}

QString RowDiffModel::keyText(const core::CanonicalKey &key)
{
    QStringList parts;
    for (const auto &k : key)
        parts << QString::fromStdString(k);
    return parts.join(QStringLiteral(", "));
}

QString RowDiffModel::kindText(Kind kind)
{
    switch (kind) {
    case Kind::Missing:
        return tr("missing in target");
    case Kind::Extra:
        return tr("extra in target");
    case Kind::Different:
        return tr("different");
    }
    return {};
}

QString RowDiffModel::kindWord(Kind kind)
{
    switch (kind) {
    case Kind::Missing:
        return QStringLiteral("missing");
    case Kind::Extra:
        return QStringLiteral("extra");
    case Kind::Different:
        return QStringLiteral("different");
    }
    return {};
}

QVariant RowDiffModel::topData(const Entry &e, int column, int role) const
{
    if (role == KindRole)
        return kindWord(e.kind);
    switch (column) {
    case Key:
        if (e.key.empty()) {
            // A table without a primary key: its rows have no key to show.
            if (role == Qt::DisplayRole)
                return tr("(no key)");
            if (role == Qt::ToolTipRole)
                return tr("The table has no primary key: rows are compared whole");
            if (role == Qt::ForegroundRole)
                return placeholderBrush();
            if (role == Qt::FontRole)
                return italic();
            return {};
        }
        if (role == Qt::DisplayRole || role == Qt::ToolTipRole)
            return keyText(e.key);
        return {};
    case Class:
        if (role == Qt::DisplayRole)
            return e.copies > 1 ? tr("%1 \u00d7%2").arg(kindText(e.kind)).arg(e.copies) : kindText(e.kind);
        if (role == Qt::DecorationRole)
            return freshnessIcon(QStringLiteral("warn"));
        if (role == Qt::ToolTipRole) {
            switch (e.kind) {
            case Kind::Missing:
                return tr("The source has this row; the target does not");
            case Kind::Extra:
                return tr("The target has this row; the source does not (deleted there, or never there)");
            case Kind::Different:
                return tr("Both have the row, with different values");
            }
        }
        return {};
    case ColumnName:
        if (e.kind != Kind::Different)
            return role == Qt::DisplayRole ? tr("whole row") : QVariant();
        if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
            QStringList names;
            for (const auto &c : e.columns)
                names << QString::fromStdString(c.column);
            return names.join(QStringLiteral(", "));
        }
        return {};
    case Source:
    case Target:
        if (e.kind != Kind::Different) {
            const bool has = (e.kind == Kind::Missing) == (column == Source);
            if (!has || e.columns.empty())
                return presenceData(has, role);
            // The side that has the row: its values in one line, each column in a child row.
            QStringList values, lines;
            for (const auto &c : e.columns) {
                const auto &v = column == Source ? c.source : c.target;
                values << (v ? oneLine(*v) : QStringLiteral("NULL"));
                lines << QStringLiteral("%1 = %2").arg(QString::fromStdString(c.column),
                                                       v ? QString::fromStdString(*v) : tr("NULL"));
            }
            if (role == Qt::DisplayRole)
                return values.join(QStringLiteral(" | "));
            if (role == Qt::ToolTipRole)
                return lines.join(QLatin1Char('\n'));
            return {};
        }
        if (e.columns.size() == 1)
            return valueData(column == Source ? e.columns[0].source : e.columns[0].target, role);
        if (role == Qt::DisplayRole && e.columns.empty())
            return tr("(columns not kept)");
        return {};
    }
    return {};
}

QVariant RowDiffModel::childData(const Entry &e, const core::ColumnDiff &c, int column, int role) const
{
    if (role == KindRole)
        return kindWord(e.kind);
    switch (column) {
    case ColumnName:
        return role == Qt::DisplayRole ? QString::fromStdString(c.column) : QVariant();
    case Source:
        if (e.kind == Kind::Extra)
            return presenceData(false, role);
        return valueData(c.source, role);
    case Target:
        if (e.kind == Kind::Missing)
            return presenceData(false, role);
        return valueData(c.target, role);
    }
    return {};
}

std::vector<core::ColumnDiff> RowDiffModel::rowColumns(const core::TableReconcile &table, const core::RowValues &row,
                                                       Kind kind)
{
    std::vector<core::ColumnDiff> out;
    for (std::size_t i = 0; i < row.values.size() && i < table.columns.size(); ++i) {
        core::ColumnDiff c;
        c.column = table.columns[i];
        (kind == Kind::Missing ? c.source : c.target) = row.values[i];
        out.push_back(std::move(c));
    }
    return out;
}

QVariant RowDiffModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (index.internalId() == kTopLevel)
        return topData(m_entries[static_cast<std::size_t>(index.row())], index.column(), role);
    const auto &e = m_entries[static_cast<std::size_t>(index.internalId() - 1)];
    return childData(e, e.columns[static_cast<std::size_t>(index.row())], index.column(), role);
}

void RowDiffModel::setTable(const core::TableReconcile &table)
{
    beginResetModel();
    m_table = table;
    m_entries.clear();
    // A keyed table's missing and extra keys, with their rows' values where the report kept them;
    // a keyless table has only the rows.
    auto add = [&](Kind kind, const std::vector<core::CanonicalKey> &keys, const std::vector<core::RowValues> &rows) {
        std::map<core::CanonicalKey, const core::RowValues *> byKey;
        for (const auto &r : rows)
            byKey.emplace(r.key, &r);
        for (const auto &k : keys) {
            const auto it = byKey.find(k);
            auto columns = it == byKey.end() ? std::vector<core::ColumnDiff>{} : rowColumns(table, *it->second, kind);
            m_entries.push_back({kind, k, std::move(columns), 1});
        }
        if (keys.empty())
            for (const auto &r : rows)
                if (r.key.empty())
                    m_entries.push_back({kind, {}, rowColumns(table, r, kind), r.copies});
    };
    add(Kind::Missing, table.missingKeys, table.missingRows);
    add(Kind::Extra, table.extraKeys, table.extraRows);
    for (const auto &d : table.differentRows)
        m_entries.push_back({Kind::Different, d.key, d.columns, 1});
    endResetModel();
    emit headerDataChanged(Qt::Horizontal, Key, Key);
}

void RowDiffModel::clear()
{
    setTable({});
}

int RowDiffModel::entryOf(const QModelIndex &index) const
{
    if (!index.isValid() || index.model() != this)
        return -1;
    return index.internalId() == kTopLevel ? index.row() : static_cast<int>(index.internalId() - 1);
}

const core::CanonicalKey &RowDiffModel::keyAt(const QModelIndex &index) const
{
    return m_entries.at(static_cast<std::size_t>(entryOf(index))).key;
}

RowDiffModel::Kind RowDiffModel::kindAt(const QModelIndex &index) const
{
    return m_entries.at(static_cast<std::size_t>(entryOf(index))).kind;
}

QModelIndex RowDiffModel::indexOfKey(const core::CanonicalKey &key) const
{
    for (std::size_t i = 0; i < m_entries.size(); ++i)
        if (m_entries[i].key == key)
            return index(static_cast<int>(i), 0);
    return {};
}

bool RowDiffModel::truncated() const
{
    if (keyless()) {
        long long listed = 0;
        for (const auto &e : m_entries)
            listed += e.copies;
        return listed < m_table.drift();
    }
    return static_cast<long long>(m_table.missingKeys.size()) < m_table.missing ||
           static_cast<long long>(m_table.extraKeys.size()) < m_table.extra ||
           static_cast<long long>(m_table.differentRows.size()) < m_table.different;
}

} // namespace driftless::ui
