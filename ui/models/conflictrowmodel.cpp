#include "ui/models/conflictrowmodel.h"

#include <nlohmann/json.hpp>

#include <QBrush>
#include <QColor>
#include <QFont>

#include <algorithm>
#include <set>

namespace driftless::ui {

namespace {

using json = nlohmann::json;

/// Mid grey: readable on light and dark palettes, and set apart by the italics as well.
QBrush placeholderBrush()
{
    return QBrush(QColor(0x80, 0x80, 0x80));
}

/// Amber, light enough for dark text; the overlap's a shade stronger.
QBrush changedBrush(bool overlap)
{
    return QBrush(overlap ? QColor(0xff, 0xc8, 0x6b) : QColor(0xff, 0xe7, 0xb3));
}

json parsed(const std::string &text)
{
    return text.empty() ? json(nullptr) : json::parse(text, nullptr, false);
}

/// One line per value: a line break would hide the rest of the cell.
QString oneLine(const std::string &value)
{
    QString s = QString::fromStdString(value);
    s.replace(QLatin1Char('\n'), QStringLiteral("\u21b5"));
    return s;
}

} // namespace

ConflictRowModel::ConflictRowModel(QObject *parent) : QAbstractTableModel(parent) {}

int ConflictRowModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_lines.size());
}

int ConflictRowModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ConflictRowModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Base:
            return tr("The row as both sides last agreed on it");
        case Source:
            return tr("The source's version now; highlighted where it changed since the base");
        case Target:
            return tr("The target's version now; highlighted where it changed since the base");
        case Choice:
            return tr("The side whose value both sides keep, for each column they differ in; by default the side "
                      "that changed it since the base");
        }
        return {};
    }
    if (role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case ColumnName:
        return tr("Column");
    case Base:
        return tr("Base");
    case Source:
        return tr("Source");
    case Target:
        return tr("Target");
    case Choice:
        return tr("Keep");
    }
    return {};
}

QVariant ConflictRowModel::valueData(const Line &line, int column, int role) const
{
    const Value &v = column == Base ? line.base : column == Source ? line.source : line.target;
    const bool changed = column != Base && v != line.base;
    const bool placeholder = !v.present || !v.text;
    switch (role) {
    case Qt::DisplayRole:
        return !v.present ? tr("no row") : v.text ? oneLine(*v.text) : QStringLiteral("NULL");
    case Qt::ToolTipRole:
        return !v.present ? tr("This side has no such row")
               : v.text   ? QString::fromStdString(*v.text)
                          : tr("NULL (no value)");
    case Qt::ForegroundRole:
        if (changed)
            return QBrush(Qt::black); // on the amber, whatever the palette
        return placeholder ? QVariant(placeholderBrush()) : QVariant();
    case Qt::BackgroundRole:
        return changed ? QVariant(changedBrush(line.overlap)) : QVariant();
    case Qt::FontRole:
        if (placeholder || (changed && line.overlap)) {
            QFont f;
            f.setItalic(placeholder);
            f.setBold(changed && line.overlap);
            return f;
        }
        return {};
    case NullRole:
        return placeholder;
    case ChangedRole:
        return changed;
    case OverlapRole:
        return line.overlap;
    }
    return {};
}

QVariant ConflictRowModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Line &line = m_lines[static_cast<std::size_t>(index.row())];
    if (role == ChoiceRole)
        return line.choice;
    if (role == DiffersRole)
        return line.differs();
    if (index.column() == Choice) {
        if (role == Qt::DisplayRole)
            return !line.differs() || !m_choosable          ? QString()
                   : line.choice.isEmpty()                  ? tr("choose")
                   : line.choice == QLatin1String("source") ? tr("Source")
                                                            : tr("Target");
        if (role == Qt::ToolTipRole && line.differs() && m_choosable)
            return line.merged.isEmpty() ? tr("Both sides changed %1: choose the side to keep").arg(line.column)
                                         : tr("Merged: only the %1 changed %2").arg(line.merged, line.column);
        return {};
    }
    if (index.column() != ColumnName)
        return valueData(line, index.column(), role);
    switch (role) {
    case Qt::DisplayRole:
        return line.key ? tr("%1 (key)").arg(line.column) : line.column;
    case Qt::ToolTipRole:
        return line.overlap ? tr("Both sides changed %1").arg(line.column) : QVariant();
    case Qt::FontRole:
        if (line.overlap) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    case OverlapRole:
        return line.overlap;
    case ChangedRole:
        return line.source != line.base || line.target != line.base;
    case NullRole:
        return false;
    }
    return {};
}

void ConflictRowModel::setConflict(const core::QueuedConflict &conflict)
{
    const json key = parsed(conflict.record.key);
    const json columns = parsed(conflict.record.columns);
    const json base = parsed(conflict.record.base);
    const json source = parsed(conflict.record.source);
    const json target = parsed(conflict.record.target);
    std::set<std::string> overlap;
    if (columns.is_array())
        for (const auto &c : columns)
            if (c.is_string())
                overlap.insert(c.get<std::string>());
    // Key columns first, then every column any side has, in the order the queue lists them.
    std::vector<std::string> names;
    auto add = [&names](const json &row) {
        if (!row.is_object())
            return;
        for (const auto &[name, value] : row.items())
            if (std::find(names.begin(), names.end(), name) == names.end())
                names.push_back(name);
    };
    add(key);
    const std::size_t keyCount = names.size();
    add(base);
    add(source);
    add(target);
    auto valueOf = [](const json &row, const std::string &name) {
        Value v;
        v.present = row.is_object();
        if (v.present)
            if (auto it = row.find(name); it != row.end() && !it->is_null())
                v.text = it->is_string() ? it->get<std::string>() : it->dump();
        return v;
    };
    beginResetModel();
    m_lines.clear();
    m_choosable = source.is_object() && target.is_object();
    for (std::size_t i = 0; i < names.size(); ++i) {
        Line line;
        line.column = QString::fromStdString(names[i]);
        line.key = i < keyCount;
        line.overlap = overlap.count(names[i]) > 0;
        line.base = valueOf(base, names[i]);
        line.source = valueOf(source, names[i]);
        line.target = valueOf(target, names[i]);
        // The three-way merge: the side that changed the column since the base (with no base,
        // both sides inserted the row and changed everything).
        if (line.differs()) {
            const bool sourceChanged = !base.is_object() || line.source != line.base;
            const bool targetChanged = !base.is_object() || line.target != line.base;
            if (sourceChanged != targetChanged)
                line.merged = sourceChanged ? QStringLiteral("source") : QStringLiteral("target");
        }
        line.choice = m_choosable ? line.merged : QString();
        m_lines.push_back(std::move(line));
    }
    endResetModel();
}

void ConflictRowModel::clear()
{
    beginResetModel();
    m_lines.clear();
    m_choosable = false;
    endResetModel();
}

QString ConflictRowModel::columnAt(int row) const
{
    return row >= 0 && row < rowCount() ? m_lines[static_cast<std::size_t>(row)].column : QString();
}

bool ConflictRowModel::setChoice(const QString &column, const QString &side)
{
    const int row = rowOf(column);
    if (row < 0 || !m_choosable || !m_lines[static_cast<std::size_t>(row)].differs())
        return false;
    if (!side.isEmpty() && side != QLatin1String("source") && side != QLatin1String("target"))
        return false;
    Line &line = m_lines[static_cast<std::size_t>(row)];
    if (line.choice == side)
        return true;
    line.choice = side;
    emit dataChanged(index(row, Choice), index(row, Choice), {Qt::DisplayRole, ChoiceRole});
    return true;
}

QString ConflictRowModel::mergeChoice(const QString &column) const
{
    const int row = rowOf(column);
    return row < 0 ? QString() : m_lines[static_cast<std::size_t>(row)].merged;
}

bool ConflictRowModel::choiceComplete() const
{
    return m_choosable && std::all_of(m_lines.begin(), m_lines.end(),
                                      [](const Line &l) { return !l.differs() || !l.choice.isEmpty(); });
}

std::vector<std::pair<std::string, std::string>> ConflictRowModel::choicesBeyondMerge() const
{
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto &l : m_lines)
        if (l.differs() && !l.choice.isEmpty() && l.choice != l.merged)
            out.emplace_back(l.column.toStdString(), l.choice.toStdString());
    return out;
}

void ConflictRowModel::resetChoices()
{
    for (std::size_t i = 0; i < m_lines.size(); ++i)
        if (m_lines[i].choice != (m_choosable ? m_lines[i].merged : QString()))
            setChoice(m_lines[i].column, m_lines[i].merged);
}

int ConflictRowModel::rowOf(const QString &column) const
{
    for (std::size_t i = 0; i < m_lines.size(); ++i)
        if (m_lines[i].column == column)
            return static_cast<int>(i);
    return -1;
}

} // namespace driftless::ui
