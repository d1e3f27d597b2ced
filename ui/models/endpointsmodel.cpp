#include "ui/models/endpointsmodel.h"
#include "ui/displayformat.h"
#include "ui/statusicons.h"

#include "core/model/dsn.h"
#include "core/model/duration.h"
#include "core/model/error.h"

namespace driftless::ui {

namespace {

/// The DSN's fields with libpq's names (host, port, dbname, user), a mysql:// URI's included: read
/// by libpq's parser, a MariaDB endpoint showed its whole URI as its host and "(login name)" as its
/// user (issue 45).
std::map<std::string, std::string> dsnFields(const core::Endpoint &e)
{
    std::map<std::string, std::string> fields;
    try {
        if (e.kind == core::EndpointKind::Mysql) {
            const auto d = core::MysqlDsn::parse(e.dsn);
            fields["host"] = d.socket.empty() ? d.host : d.socket;
            if (d.socket.empty())
                fields["port"] = std::to_string(d.port);
            if (!d.database.empty())
                fields["dbname"] = d.database;
            if (!d.user.empty())
                fields["user"] = d.user;
            return fields;
        }
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

int EndpointsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

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

QString EndpointsModel::tlsText(const core::Endpoint &e, const core::EndpointTlsStatus *tls)
{
    if (e.kind == core::EndpointKind::Sqlite)
        return {};
    if (e.ssh) {
        const auto &t = tls ? tls->tunnel : nlohmann::json();
        if (t.is_object() && t.value("state", std::string()) == "down")
            return tr("SSH tunnel down");
        return tr("SSH tunnel (not TLS to the server)");
    }
    if (tls && tls->loopback)
        return tr("local (socket/loopback)");
    if (!tls || !tls->tls)
        return tr("unknown until connected");
    const auto &t = tls->tls->tls;
    if (t.hostVerified)
        return tr("verified (%1)").arg(QString::fromStdString(t.mode));
    if (!t.encrypted)
        return tr("not encrypted");
    // verify-ca, verify_ca: the CA is checked, the name is not.
    if (t.verified)
        return tr("encrypted, host name not verified");
    return tr("encrypted, not verified");
}

QString EndpointsModel::tlsToolTip(const core::Endpoint &e, const core::EndpointTlsStatus *tls)
{
    if (e.kind == core::EndpointKind::Sqlite)
        return tr("A file on this machine: no connection to protect");
    const QString name = QString::fromStdString(e.name);
    if (e.ssh) {
        QString text = tr("%1 is reached through an SSH tunnel via %2: the tunnel encrypts the way to the SSH "
                          "server and its host key is checked; from there to the database, nothing is encrypted "
                          "unless that network is trusted.")
                           .arg(name, QString::fromStdString(e.ssh->display()));
        const auto &t = tls ? tls->tunnel : nlohmann::json();
        if (t.is_object() && t.value("state", std::string()) == "down")
            text += tr("\n\nThe tunnel is down: %1").arg(QString::fromStdString(t.value("reason", std::string())));
        return text;
    }
    if (!tls || !tls->tls) {
        if (tls && tls->loopback)
            return tr("%1 is on this machine (a Unix socket or a loopback address): nothing crosses a network. "
                      "Driftless has not connected to it with this DSN yet.")
                .arg(name);
        return tr("Driftless has not connected to %1 with this DSN since it started: the sync, or Doctor…, "
                  "connects and then this says whether the connection is encrypted and the server verified.")
            .arg(name);
    }
    const auto &seen = *tls->tls;
    const QString connection = tr("The newest connection (%1): %2, its mode chosen by %3.")
                                   .arg(formatTimestamp(seen.atMs), QString::fromStdString(seen.tls.describe()),
                                        QString::fromStdString(seen.chosenBy));
    if (tls->warning)
        return tr("%1.\n\nTo fix: %2.\n\n%3")
            .arg(QString::fromStdString(tls->warning->message), QString::fromStdString(tls->warning->fix), connection);
    if (tls->loopback)
        return tr("%1 is on this machine (a Unix socket or a loopback address): nothing crosses a network.\n\n%2")
            .arg(name, connection);
    return connection;
}

QColor EndpointsModel::warningColour()
{
    // The amber of the endpoint dialog's warning sign, dark enough to read as text.
    return QColor(0x9a, 0x67, 0x00);
}

const core::EndpointTlsStatus *EndpointsModel::tlsOf(const core::Endpoint &e) const
{
    const auto it = m_tls.find(QString::fromStdString(e.name));
    return it == m_tls.end() ? nullptr : &it->second;
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
        case Tls:
            return tlsText(e, tlsOf(e));
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
    } else if (index.column() == Tls && role == Qt::ForegroundRole) {
        if (tlsWeak(tlsOf(e)))
            return warningColour();
    } else if (index.column() == Tls && role == Qt::DecorationRole) {
        // The triangle says it without the colour.
        if (tlsWeak(tlsOf(e)))
            return freshnessIcon(QStringLiteral("warn"));
    } else if (role == Qt::ToolTipRole) {
        if (index.column() == Tls)
            return tlsToolTip(e, tlsOf(e));
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
    case Tls:
        return tr("TLS");
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

bool EndpointsModel::setTls(const std::vector<core::EndpointTlsStatus> &endpoints)
{
    std::map<QString, core::EndpointTlsStatus> next;
    for (const auto &s : endpoints)
        next.emplace(QString::fromStdString(s.name), s);
    std::vector<int> changed;
    for (std::size_t row = 0; row < m_rows.size(); ++row) {
        const auto &e = m_rows[row];
        const auto it = next.find(QString::fromStdString(e.name));
        const core::EndpointTlsStatus *after = it == next.end() ? nullptr : &it->second;
        const core::EndpointTlsStatus *before = tlsOf(e);
        if (tlsText(e, before) != tlsText(e, after) || tlsToolTip(e, before) != tlsToolTip(e, after) ||
            tlsWeak(before) != tlsWeak(after))
            changed.push_back(static_cast<int>(row));
    }
    m_tls = std::move(next);
    for (int row : changed)
        emit dataChanged(index(row, Tls), index(row, Tls),
                         {Qt::DisplayRole, Qt::ToolTipRole, Qt::ForegroundRole, Qt::DecorationRole});
    return !changed.empty();
}

int EndpointsModel::rowOf(const QString &name) const
{
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (QString::fromStdString(m_rows[i].name) == name)
            return static_cast<int>(i);
    return -1;
}

} // namespace driftless::ui
