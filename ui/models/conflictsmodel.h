#pragma once

#include "core/model/conflictpolicy.h"

#include <QAbstractTableModel>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace driftless::ui {

/// The open conflicts of the workspace's two-way pipelines (GET /api/v1/conflicts), oldest
/// first: pipeline, table, key, the columns both sides changed, and when it was detected.
///
/// setConflicts() replaces the list in one reset; views keep their selection by id (IdRole).
class ConflictsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Pipeline, Table, Key, Columns, DetectedAt, ColumnCount };
    Q_ENUM(Column)

    enum Role {
        /// The conflict's id (qlonglong), what resolve takes.
        IdRole = Qt::UserRole + 1,
        /// Detected at as ms since the epoch for DetectedAt; the text otherwise.
        SortRole,
    };
    Q_ENUM(Role)

    explicit ConflictsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setConflicts(std::vector<core::QueuedConflict> conflicts);
    const core::QueuedConflict &conflictAt(int row) const { return m_rows.at(static_cast<std::size_t>(row)); }
    /// The row of conflict `id`, or -1.
    int rowOfId(std::int64_t id) const;

    using CountByTable = std::map<std::pair<std::string, std::string>, int>; ///< by pipeline, table
    /// Open conflicts per pipeline and table.
    CountByTable countByTable() const;

    /// `id: 11`, or `region: eu, id: 42` for a composite key: the key JSON object in words.
    static QString keyText(const std::string &keyJson);
    /// `phone, email`: the columns JSON array in words.
    static QString columnsText(const std::string &columnsJson);

private:
    std::vector<core::QueuedConflict> m_rows;
};

} // namespace driftless::ui
