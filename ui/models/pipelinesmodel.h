#pragma once

#include "core/model/workspace.h"

#include <QAbstractTableModel>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace driftless::ui {

/// One row per pipeline of a workspace: source → target, how many tables (and how many of them a
/// DBA paused) and by which strategies, the target schema. A thin view over a shared Workspace;
/// setWorkspace() resets, setPausedCounts() changes the Tables column only.
class PipelinesModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Route, Tables, Strategies, TargetSchema, ColumnCount };
    Q_ENUM(Column)

    explicit PipelinesModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Kept, not copied (a snapshot's workspace never changes); null shows no pipelines.
    void setWorkspace(std::shared_ptr<const core::Workspace> workspace);
    const core::PipelineSpec &pipelineAt(int row) const { return rows().at(static_cast<std::size_t>(row)); }
    /// The row of pipeline `name`, or -1.
    int rowOf(const QString &name) const;
    /// How many tables of each pipeline are paused (by pipeline name; its forward rows: a pause
    /// holds both directions), from the status snapshot. False when nothing changed.
    bool setPausedCounts(std::map<std::string, int> counts);
    /// How many tables of pipeline `name` are paused.
    int pausedCount(const std::string &name) const;

    /// "2 cursor, 1 CDC": the tables per strategy, most used first.
    static QString strategiesText(const core::PipelineSpec &p);

private:
    const std::vector<core::PipelineSpec> &rows() const;
    std::shared_ptr<const core::Workspace> m_workspace;
    std::map<std::string, int> m_paused;
};

} // namespace driftless::ui
