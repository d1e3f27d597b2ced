#include "ui/models/endpointsmodel.h"

#include "core/model/dsn.h"
#include "core/model/duration.h"
#include "core/model/error.h"

namespace driftless::ui {

namespace {

std::map<std::string, std::string> dsnFields(const core::Endpoint &e)
{
    std::map<std::string, std::string> fields;
    try {
        for (auto &[k, v] : core::parsePgDsn(e.dsn))
            fields[k] = v;
    } catch (const core::Error &) {
    }
    return fields;
}

} // namespace

EndpointsModel::EndpointsModel(QObject *parent) : QAbstractTableModel(parent) {}

int EndpointsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int EndpointsModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString EndpointsModel::location(const core::Endpoint &e)
{
    if (e.kind == core::EndpointKind::Sqlite)
        return QString::fromStdString(e.path);
    auto f = dsnFields(e);
    if (f.empty())
        return QString::fromStdString(e.dsn);
    std::string host = f.count("host") ? f["host"] : f.count("hostaddr") ? f["hostaddr"] : "";
    if (f.count("service"))
        host = "service " + f["service"];
    std::string text = host.empty() ? "(local socket)" : host;
    if (f.count("port"))
        text += ":" + f["port"];
    if (f.count("dbname"))
        text += "/" + f["dbname"];
    return QString::fromStdString(text);
}

QString EndpointsModel::user(const core::Endpoint &e)
{
    if (e.kind == core::EndpointKind::Sqlite)
        return {};
    auto f = dsnFields(e);
    return f.count("user") ? QString::fromStdString(f["user"]) : tr("(login name)");
}

QString EndpointsModel::slotGuardText(const core::Endpoint &e)
{
    if (!e.slotGuard)
        return {};
    const auto &g = *e.slotGuard;
    QString text = tr("%1 past %2 (warn at %3)")
                       .arg(QString::fromUtf8(toString(g.action).data(), static_cast<int>(toString(g.action).size())),
                            QString::fromStdString(core::formatByteSize(g.maxRetained)),
                            QString::fromStdString(core::formatByteSize(g.effectiveWarn())));
    if (g.minSafeWal)
        text += tr(", safe WAL under %1").arg(QString::fromStdString(core::formatByteSize(*g.minSafeWal)));
    return text;
}

QVariant EndpointsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &e = m_rows[static_cast<std::size_t>(index.row())];
    const QString name = QString::fromStdString(e.name);
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Name:
            return name;
        case Kind:
            return e.kind == core::EndpointKind::Postgres ? tr("Postgres")
                   : e.kind == core::EndpointKind::Sqlite ? tr("SQLite")
                                                          : tr("MySQL");
        case Location:
            return location(e);
        case User:
            return user(e);
        case Password: {
            if (e.kind == core::EndpointKind::Sqlite)
                return tr("not needed");
            const auto it = m_passwords.find(name);
            return it != m_passwords.end() ? it->second : QString();
        }
        case SlotGuard:
            return slotGuardText(e);
        case UsedBy: {
            const auto it = m_usedBy.find(name);
            return it != m_usedBy.end() ? it->second.join(QStringLiteral(", ")) : tr("no pipeline");
        }
        }
    } else if (role == Qt::ToolTipRole) {
        if (index.column() == Location)
            return QString::fromStdString(e.kind == core::EndpointKind::Sqlite ? e.path : e.dsn);
        if (index.column() == Password && e.kind != core::EndpointKind::Sqlite)
            return tr("Where libpq's password comes from: the keychain, this session's memory, or else "
                      "~/.pgpass, PGPASSWORD and the service file");
    }
    return {};
}

QVariant EndpointsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Name:
        return tr("Endpoint");
    case Kind:
        return tr("Kind");
    case Location:
        return tr("Host / file");
    case User:
        return tr("User");
    case Password:
        return tr("Password");
    case SlotGuard:
        return tr("Slot guard");
    case UsedBy:
        return tr("Used by");
    }
    return {};
}

void EndpointsModel::setWorkspace(const core::Workspace &workspace)
{
    beginResetModel();
    m_rows.clear();
    m_usedBy.clear();
    for (const auto &[name, e] : workspace.endpoints)
        m_rows.push_back(e);
    for (const auto &p : workspace.pipelines) {
        const QString pipeline = QString::fromStdString(p.name);
        m_usedBy[QString::fromStdString(p.source)] << tr("%1 (source)").arg(pipeline);
        m_usedBy[QString::fromStdString(p.target)] << tr("%1 (target)").arg(pipeline);
    }
    endResetModel();
}

void EndpointsModel::setPasswordState(const QString &endpoint, const QString &state)
{
    m_passwords[endpoint] = state;
    const int row = rowOf(endpoint);
    if (row >= 0)
        emit dataChanged(index(row, Password), index(row, Password), {Qt::DisplayRole});
}

int EndpointsModel::rowOf(const QString &name) const
{
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (QString::fromStdString(m_rows[i].name) == name)
            return static_cast<int>(i);
    return -1;
}

} // namespace driftless::ui
