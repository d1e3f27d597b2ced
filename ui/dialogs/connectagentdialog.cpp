#include "ui/dialogs/connectagentdialog.h"
#include "ui/widgets/screenfit.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QUrl>
#include <QVBoxLayout>

namespace driftless::ui {

ConnectAgentDialog::ConnectAgentDialog(const AgentEndpoint &initial, QWidget *parent)
    : QDialog(parent), m_url(new QLineEdit(initial.url, this)), m_token(new QLineEdit(initial.token, this)),
      m_fingerprint(new QLineEdit(initial.fingerprint, this)), m_message(new QLabel(this))
{
    setObjectName(QStringLiteral("connectAgentDialog"));
    setWindowTitle(tr("Connect to Agent"));
    m_url->setObjectName(QStringLiteral("agentUrl"));
    m_url->setPlaceholderText(QStringLiteral("https://db-sync.example.net:8765"));
    m_token->setObjectName(QStringLiteral("agentToken"));
    m_token->setEchoMode(QLineEdit::Password);
    m_token->setPlaceholderText(tr("what 'driftless-cli agent-token' prints on the agent"));
    m_fingerprint->setObjectName(QStringLiteral("agentFingerprint"));
    m_fingerprint->setPlaceholderText(tr("empty: shown on Connect, for you to compare"));
    m_message->setObjectName(QStringLiteral("agentMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *form = new QFormLayout;
    form->addRow(tr("&Address:"), m_url);
    form->addRow(tr("&Token:"), m_token);
    form->addRow(tr("Certificate &SHA-256:"), m_fingerprint);
    auto *note = new QLabel(tr("The agent is <tt>driftless-cli serve --tls</tt> on the server; it prints the "
                               "address and the certificate's fingerprint when it starts. The token is kept in "
                               "the system keychain."),
                            this);
    note->setWordWrap(true);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_connect = buttons->addButton(tr("&Connect"), QDialogButtonBox::AcceptRole);
    m_connect->setObjectName(QStringLiteral("agentConnect"));
    m_connect->setDefault(true);
    connect(buttons, &QDialogButtonBox::accepted, this, &ConnectAgentDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(note);
    layout->addLayout(form);
    layout->addWidget(m_message);
    layout->addWidget(buttons);
    screenfit::fit(this, QSize(560, sizeHint().height()));
}

AgentEndpoint ConnectAgentDialog::endpoint() const
{
    AgentEndpoint e;
    e.url = m_url->text().trimmed();
    while (e.url.endsWith(QLatin1Char('/')))
        e.url.chop(1);
    e.token = m_token->text().trimmed();
    e.fingerprint = m_fingerprint->text().trimmed().toUpper();
    return e;
}

void ConnectAgentDialog::setBusy(bool busy, const QString &message)
{
    m_connect->setEnabled(!busy);
    m_message->setText(message);
}

void ConnectAgentDialog::accept()
{
    const AgentEndpoint e = endpoint();
    const QUrl url(e.url);
    if (!url.isValid() || url.host().isEmpty() ||
        (url.scheme() != QLatin1String("https") && url.scheme() != QLatin1String("http"))) {
        setBusy(false, tr("Write the agent's address as https://HOST:PORT."));
        return;
    }
    if (e.token.isEmpty()) {
        setBusy(false, tr("Paste the agent's token: 'driftless-cli agent-token' on the agent prints it."));
        return;
    }
    if (url.scheme() == QLatin1String("http") || !e.fingerprint.isEmpty()) {
        QDialog::accept();
        return;
    }
    // First connect: see the certificate, without sending the token, and ask.
    setBusy(true, tr("Asking the agent for its certificate\u2026"));
    delete m_probe;
    m_probe = new AgentLink(e, this);
    m_probe->probe(this, [this](const AgentLink::Reply &r) {
        if (r.presented.isEmpty()) {
            setBusy(false, r.error.isEmpty() ? tr("The agent presented no certificate.") : r.error);
            return;
        }
        setBusy(false);
        confirm(r.presented);
    });
}

void ConnectAgentDialog::confirm(const QString &fingerprint)
{
    QMessageBox ask(QMessageBox::Question, tr("Trust this agent?"),
                    tr("The agent at %1 presents a certificate with the SHA-256 fingerprint\n\n%2\n\nIt must be "
                       "the one 'driftless-cli serve' printed on the server. Trust it from now on?")
                        .arg(endpoint().label(), fingerprint),
                    QMessageBox::Yes | QMessageBox::No, this);
    ask.setObjectName(QStringLiteral("trustAgent"));
    if (ask.exec() != QMessageBox::Yes) {
        setBusy(false, tr("Not connected: the certificate was not trusted."));
        return;
    }
    m_fingerprint->setText(fingerprint);
    QDialog::accept();
}

} // namespace driftless::ui
