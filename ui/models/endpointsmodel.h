#pragma once

#include "core/model/workspace.h"

#include <QAbstractTableModel>

#include <map>
#include <vector>

namespace driftless::ui {

/// One row per endpoint of a workspace, by name: its kind, where it is (host:port/database or
/// the SQLite file), the user, where its password comes from, its slot guard and the pipelines
/// that use it. A thin view over a Workspace value; setWorkspace() resets.
class EndpointsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Kind, Location, User, Password, SlotGuard, UsedBy, ColumnCount };
    Q_ENUM(Column)

    explicit EndpointsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setWorkspace(const core::Workspace &workspace);
    /// What the Password column says for `endpoint` ("keychain", "this session", ...).
    void setPasswordState(const QString &endpoint, const QString &state);

    const core::Endpoint &endpointAt(int row) const { return m_rows.at(static_cast<std::size_t>(row)); }
    /// The row of endpoint `name`, or -1.
    int rowOf(const QString &name) const;

    /// host:port/database of a Postgres DSN (libpq's defaults left out), or the SQLite path.
    static QString location(const core::Endpoint &e);
    static QString user(const core::Endpoint &e);
    static QString slotGuardText(const core::Endpoint &e);

private:
    std::vector<core::Endpoint> m_rows;
    std::map<QString, QStringList> m_usedBy;
    std::map<QString, QString> m_passwords;
};

} // namespace driftless::ui
