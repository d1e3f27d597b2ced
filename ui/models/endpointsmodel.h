#pragma once

#include "core/engine/endpoints/endpointtls.h"
#include "core/model/workspace.h"

#include <QAbstractTableModel>
#include <QColor>

#include <map>
#include <vector>

namespace driftless::ui {

/// One row per endpoint of a workspace, by name: its kind, where it is (host:port/database or
/// the SQLite file), how its connections are protected (TLS), the user, where its password comes
/// from, its slot guard and the pipelines that use it. A thin view over a Workspace value;
/// setWorkspace() resets. The TLS column reads the engine's ledger as the snapshot carries it
/// (setTls), the one `/sync/status` reads: verified, encrypted but not verified, not encrypted,
/// on this machine, or unknown until the engine connects. A connection off this machine that is
/// not verified has the warning icon and colour, and its tooltip says the DSN to use.
class EndpointsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Kind, Location, Tls, User, Password, SlotGuard, UsedBy, ColumnCount };
    Q_ENUM(Column)

    explicit EndpointsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setWorkspace(const core::Workspace &workspace);
    /// What the Password column says for `endpoint` ("keychain", "this session", ...).
    void setPasswordState(const QString &endpoint, const QString &state);
    /// What the engine's ledger says of each database endpoint (EngineSnapshot::endpointsTls);
    /// only rows whose TLS text or tooltip changed are updated; true when one was.
    bool setTls(const std::vector<core::EndpointTlsStatus> &endpoints);

    const core::Endpoint &endpointAt(int row) const { return m_rows.at(static_cast<std::size_t>(row)); }
    /// The row of endpoint `name`, or -1.
    int rowOf(const QString &name) const;

    /// host:port/database of a Postgres DSN (libpq's defaults left out), or the SQLite path.
    static QString location(const core::Endpoint &e);
    static QString user(const core::Endpoint &e);
    static QString slotGuardText(const core::Endpoint &e);
    /// "verified (verify-full)", "encrypted, not verified", "not encrypted", "local
    /// (socket/loopback)" or "unknown until connected"; empty for a SQLite file.
    static QString tlsText(const core::Endpoint &e, const core::EndpointTlsStatus *tls);
    static QString tlsToolTip(const core::Endpoint &e, const core::EndpointTlsStatus *tls);
    /// Off this machine and not verified: shown in the warning colour with what to change.
    static bool tlsWeak(const core::EndpointTlsStatus *tls) { return tls && tls->warning.has_value(); }
    /// The colour of a weak TLS row's text.
    static QColor warningColour();

private:
    std::vector<core::Endpoint> m_rows;
    std::map<QString, QStringList> m_usedBy;
    std::map<QString, QString> m_passwords;
    std::map<QString, core::EndpointTlsStatus> m_tls;

    const core::EndpointTlsStatus *tlsOf(const core::Endpoint &e) const;
};

} // namespace driftless::ui
