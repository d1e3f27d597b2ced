#pragma once

#include "ui/agentlink.h"

#include <QDialog>

class QLabel;
class QLineEdit;
class QPushButton;

namespace driftless::ui {

/// File > Connect to Agent…: the agent's address, its token and the fingerprint of its
/// certificate. With the fingerprint left empty, Connect first asks the agent for its
/// certificate (without the token) and shows the fingerprint for the DBA to compare with what
/// `driftless-cli serve` printed (or `agent-token --fingerprint`); only a confirmed one is pinned.
class ConnectAgentDialog final : public QDialog {
    Q_OBJECT
public:
    explicit ConnectAgentDialog(const AgentEndpoint &initial, QWidget *parent = nullptr);

    AgentEndpoint endpoint() const;

    void accept() override;

private:
    void setBusy(bool busy, const QString &message = {});
    void confirm(const QString &fingerprint);

    QLineEdit *m_url;
    QLineEdit *m_token;
    QLineEdit *m_fingerprint;
    QLabel *m_message;
    QPushButton *m_connect;
    AgentLink *m_probe = nullptr;
};

} // namespace driftless::ui
