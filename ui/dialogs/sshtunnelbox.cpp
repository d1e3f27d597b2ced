#include "ui/dialogs/sshtunnelbox.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

namespace driftless::ui {

SshTunnelBox::SshTunnelBox(QWidget *parent)
    : QGroupBox(tr("SS&H tunnel (the server is reached through an SSH host)"), parent), m_host(new QLineEdit(this)),
      m_port(new QSpinBox(this)), m_user(new QLineEdit(this)), m_identity(new QLineEdit(this)),
      m_jump(new QLineEdit(this)), m_passphrase(new QLineEdit(this))
{
    setObjectName(QStringLiteral("sshTunnel"));
    setCheckable(true);
    setChecked(false);
    setToolTip(tr("Driftless runs the system ssh client (agent, ~/.ssh/config, ProxyJump) and connects through a "
                  "private Unix socket. The host and port above are where the SSH host forwards to."));
    m_host->setObjectName(QStringLiteral("sshHost"));
    m_host->setPlaceholderText(tr("e.g. bastion.example.com"));
    m_port->setObjectName(QStringLiteral("sshPort"));
    m_port->setRange(1, 65535);
    m_port->setValue(22);
    m_user->setObjectName(QStringLiteral("sshUser"));
    m_user->setPlaceholderText(tr("the login on the SSH host"));
    m_identity->setObjectName(QStringLiteral("sshIdentity"));
    m_identity->setPlaceholderText(tr("optional, e.g. ~/.ssh/id_ed25519; empty: the agent and ssh's defaults"));
    m_jump->setObjectName(QStringLiteral("sshJump"));
    m_jump->setPlaceholderText(tr("optional: [user@]host[:port] to hop through"));
    m_passphrase->setObjectName(QStringLiteral("sshPassphrase"));
    m_passphrase->setEchoMode(QLineEdit::Password);
    m_passphrase->setPlaceholderText(tr("only for a key protected by one; empty: unchanged, or ssh-agent"));
    m_passphrase->setToolTip(tr("Saved in the system keychain beside the endpoint's password (never in the "
                                "workspace), and given to ssh when the tunnel starts. driftless-cli reads it too."));
    m_passphrase->setEnabled(false);

    auto *form = new QFormLayout(this);
    auto *hostRow = new QHBoxLayout;
    hostRow->addWidget(m_host, 1);
    auto *portLabel = new QLabel(tr("P&ort:"), this);
    portLabel->setBuddy(m_port);
    hostRow->addWidget(portLabel);
    hostRow->addWidget(m_port);
    auto *hostLabel = new QLabel(tr("SSH ho&st:"), this);
    hostLabel->setBuddy(m_host);
    form->addRow(hostLabel, hostRow);
    form->addRow(tr("SSH us&er:"), m_user);
    form->addRow(tr("&Identity file:"), m_identity);
    form->addRow(tr("Key pass&phrase:"), m_passphrase);
    form->addRow(tr("&Jump host:"), m_jump);
    connect(m_identity, &QLineEdit::textChanged, this,
            [this](const QString &text) { m_passphrase->setEnabled(!text.trimmed().isEmpty()); });

    connect(this, &QGroupBox::toggled, this, &SshTunnelBox::tunnelChanged);
    for (QLineEdit *edit : {m_host, m_user, m_identity, m_jump})
        connect(edit, &QLineEdit::textChanged, this, &SshTunnelBox::tunnelChanged);
    connect(m_port, &QSpinBox::valueChanged, this, &SshTunnelBox::tunnelChanged);
}

void SshTunnelBox::setTunnel(const std::optional<core::SshTunnelSpec> &tunnel)
{
    setChecked(tunnel.has_value());
    if (!tunnel)
        return;
    m_host->setText(QString::fromStdString(tunnel->host));
    m_port->setValue(tunnel->port);
    m_user->setText(QString::fromStdString(tunnel->user));
    m_identity->setText(QString::fromStdString(tunnel->identityFile.value_or("")));
    m_jump->setText(QString::fromStdString(tunnel->jump.value_or("")));
}

std::optional<core::SshTunnelSpec> SshTunnelBox::tunnel() const
{
    if (!isChecked())
        return std::nullopt;
    core::SshTunnelSpec t;
    t.host = m_host->text().trimmed().toStdString();
    t.port = m_port->value();
    t.user = m_user->text().trimmed().toStdString();
    if (const QString id = m_identity->text().trimmed(); !id.isEmpty())
        t.identityFile = id.toStdString();
    if (const QString jump = m_jump->text().trimmed(); !jump.isEmpty())
        t.jump = jump.toStdString();
    return t;
}

} // namespace driftless::ui
