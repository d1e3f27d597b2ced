#include "ui/models/pipelinesmodel.h"

#include <algorithm>
#include <map>

namespace driftless::ui {

PipelinesModel::PipelinesModel(QObject *parent) : QAbstractTableModel(parent) {}

int PipelinesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(rows().size());
}

int PipelinesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString PipelinesModel::strategiesText(const core::PipelineSpec &p)
{
    std::map<core::Strategy, int> counts;
    for (const auto &t : p.tables)
        ++counts[t.strategy];
    std::vector<std::pair<core::Strategy, int>> sorted(counts.begin(), counts.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
    QStringList parts;
    for (const auto &[strategy, n] : sorted) {
        const QString name = strategy == core::Strategy::FullRefresh ? tr("full refresh")
                             : strategy == core::Strategy::Cursor    ? tr("cursor")
                                                                     : tr("CDC");
        parts << QStringLiteral("%1 %2").arg(n).arg(name);
    }
    return parts.join(QStringLiteral(", "));
}

QVariant PipelinesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &p = rows()[static_cast<std::size_t>(index.row())];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Name:
            return QString::fromStdString(p.name);
        case Route:
            return QStringLiteral("%1 \u2192 %2")
                .arg(QString::fromStdString(p.source), QString::fromStdString(p.target));
        case Tables: {
            // A number while none is paused (it sorts and reads as one); otherwise how many are.
            const int paused = pausedCount(p.name);
            if (paused == 0)
                return static_cast<int>(p.tables.size());
            return tr("%1 (%2 paused)").arg(p.tables.size()).arg(paused);
        }
        case Strategies:
            return strategiesText(p);
        case TargetSchema:
            return p.targetSchema ? QString::fromStdString(*p.targetSchema) : tr("as the source");
        }
    } else if (role == Qt::TextAlignmentRole && index.column() == Tables) {
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    } else if (role == Qt::ToolTipRole && index.column() == Tables) {
        QStringList names;
        for (const auto &t : p.tables)
            names << QString::fromStdString(t.table.display());
        return names.join(QLatin1Char('\n'));
    }
    return {};
}

QVariant PipelinesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Name:
        return tr("Pipeline");
    case Route:
        return tr("Source \u2192 target");
    case Tables:
        return tr("Tables");
    case Strategies:
        return tr("Strategies");
    case TargetSchema:
        return tr("Target schema");
    }
    return {};
}

void PipelinesModel::setWorkspace(std::shared_ptr<const core::Workspace> workspace)
{
    beginResetModel();
    m_workspace = std::move(workspace);
    endResetModel();
}

const std::vector<core::PipelineSpec> &PipelinesModel::rows() const
{
    static const std::vector<core::PipelineSpec> none;
    return m_workspace ? m_workspace->pipelines : none;
}

bool PipelinesModel::setPausedCounts(std::map<std::string, int> counts)
{
    std::erase_if(counts, [](const auto &c) { return c.second == 0; });
    if (counts == m_paused)
        return false;
    m_paused = std::move(counts);
    if (rowCount() > 0)
        emit dataChanged(index(0, Tables), index(rowCount() - 1, Tables), {Qt::DisplayRole});
    return true;
}

int PipelinesModel::pausedCount(const std::string &name) const
{
    const auto it = m_paused.find(name);
    return it == m_paused.end() ? 0 : it->second;
}

int PipelinesModel::rowOf(const QString &name) const
{
    for (std::size_t i = 0; i < rows().size(); ++i)
        if (QString::fromStdString(rows()[i].name) == name)
            return static_cast<int>(i);
    return -1;
}

} // namespace driftless::ui
