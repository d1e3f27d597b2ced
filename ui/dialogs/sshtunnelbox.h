#pragma once

#include "core/model/workspace.h"

#include <QGroupBox>

#include <optional>

class QLineEdit;
class QSpinBox;

namespace driftless::ui {

/// The "SSH tunnel" group of the endpoint dialog (core::SshTunnelSpec, YAML `ssh:`): the SSH
/// server, its port and login, an optional identity file and jump host. The group's checkbox
/// turns the tunnel on; unchecked, the endpoint connects directly.
class SshTunnelBox final : public QGroupBox {
    Q_OBJECT
public:
    explicit SshTunnelBox(QWidget *parent = nullptr);

    void setTunnel(const std::optional<core::SshTunnelSpec> &tunnel);
    /// The tunnel the fields describe; nullopt when the group is unchecked.
    std::optional<core::SshTunnelSpec> tunnel() const;

    QLineEdit *hostEdit() const { return m_host; }
    QSpinBox *portBox() const { return m_port; }
    QLineEdit *userEdit() const { return m_user; }
    QLineEdit *identityEdit() const { return m_identity; }
    QLineEdit *jumpEdit() const { return m_jump; }
    /// The identity file's passphrase as typed (never part of the tunnel spec or the YAML: the
    /// workspace page keeps it in the keychain); enabled only with an identity file.
    QLineEdit *passphraseEdit() const { return m_passphrase; }

signals:
    void tunnelChanged();

private:
    QLineEdit *m_host;
    QSpinBox *m_port;
    QLineEdit *m_user;
    QLineEdit *m_identity;
    QLineEdit *m_jump;
    QLineEdit *m_passphrase;
};

} // namespace driftless::ui
