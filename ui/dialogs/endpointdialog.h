#pragma once

#include "ui/secrets/secretstore.h"

#include "core/model/tlsstate.h"
#include "core/model/workspace.h"

#include <QDialog>
#include <QPointer>
#include <QStringList>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>

class QComboBox;
class QDialogButtonBox;
class QFormLayout;
class QLabel;
class QLayout;
class QLineEdit;
class QPushButton;
class QRadioButton;
class QScrollArea;
class QSpinBox;
class QTabWidget;

namespace driftless::ui {

class EngineDoor;

class SlotGuardBox;
class SshTunnelBox;

/// Adds or edits one endpoint: a Postgres server (host, port, database, user, TLS mode, CA file
/// as sslrootcert, or a raw libpq DSN), a MySQL/MariaDB server (the same fields with MySQL's TLS
/// modes and the CA file as ssl-ca, or a raw mysql:// DSN) or a SQLite file.
///
/// The password is typed here but never becomes part of the DSN: password() hands it to the
/// caller for the SecretStore, and a DSN holding one is refused in the workspace loader's words.
/// "Test connection" asks the engine's door to probe the server (POST /api/v1/probe): where the
/// engine runs, so a window on an agent tests what the agent can reach. The UI never waits for
/// it, and a result for anything but the latest test (of the kind shown) is dropped.
class EndpointDialog final : public QDialog {
    Q_OBJECT
public:
    /// `existing` is the endpoint being edited (nullopt: a new one); `takenNames` the names of the
    /// workspace's other endpoints; `knownPassword` the session's password for it, used by Test
    /// connection when the field is left empty; `door` the engine that probes (null: this
    /// machine, with no workspace needed).
    EndpointDialog(std::optional<core::Endpoint> existing, QStringList takenNames, std::optional<QString> knownPassword,
                   SecretStore::Backend backend, QWidget *parent = nullptr, EngineDoor *door = nullptr);
    ~EndpointDialog() override;

    /// The endpoint as the fields describe it, slot guard included (Postgres only).
    core::Endpoint endpoint() const;
    /// What was typed in the password field; empty: leave the stored one alone.
    QString password() const;
    /// What was typed as the SSH identity file's passphrase (empty: leave the stored one alone);
    /// empty without a tunnel or an identity file.
    QString sshPassphrase() const;
    /// Why OK is disabled, or empty.
    QString problem() const;
    /// What the workspace uses the endpoint as (its pipelines' sources and targets): Test
    /// Connection then judges the rights that use needs (REPLICATION for a CDC source, CREATE
    /// for a target) and only mentions the others. Unknown (a new endpoint): both, as notes.
    void setRoles(bool cdcSource, bool target);
    /// Says, under the password field, that a password found in a pasted DSN was moved there.
    QLabel *passwordNote() const { return m_passwordNote; }

    QLineEdit *nameEdit() const { return m_name; }
    QComboBox *kindBox() const { return m_kind; }
    QRadioButton *fieldsMode() const { return m_fieldsMode; }
    QRadioButton *dsnMode() const { return m_dsnMode; }
    QLineEdit *hostEdit() const { return m_host; }
    QSpinBox *portBox() const { return m_port; }
    QLineEdit *databaseEdit() const { return m_database; }
    QLineEdit *userEdit() const { return m_user; }
    QComboBox *tlsBox() const { return m_tls; }
    /// The CA certificate file the server's certificate is checked against: sslrootcert
    /// (Postgres) or ssl-ca (MySQL) in the DSN.
    QLineEdit *caFileEdit() const { return m_caFile; }
    QPushButton *caBrowseButton() const { return m_caBrowse; }
    QLineEdit *dsnEdit() const { return m_dsn; }
    QLineEdit *passwordEdit() const { return m_password; }
    QLineEdit *pathEdit() const { return m_path; }
    QPushButton *browseButton() const { return m_browse; }
    QPushButton *testButton() const { return m_test; }
    QLabel *resultLabel() const { return m_result; }
    QLabel *problemLabel() const { return m_problem; }
    QPushButton *okButton() const;
    SlotGuardBox *slotGuardBox() const { return m_guard; }
    SshTunnelBox *sshTunnelBox() const { return m_ssh; }
    /// Connection, SSH Tunnel (not for SQLite), Slot Guard (Postgres only).
    QTabWidget *tabs() const { return m_tabs; }
    QScrollArea *scrollArea() const { return m_scroll; }

    /// libpq's sslmode values, in order of strength ("" first: Driftless's default, prefer on
    /// this machine and verify-full off it).
    static const QStringList &tlsModes();
    /// MySQL's ssl-mode values as MysqlDsn takes them, in order of strength.
    static const QStringList &mysqlTlsModes();
    /// A key=value DSN from the fields (keys host, port, dbname, user, sslmode, sslrootcert);
    /// values quoted where libpq needs it.
    static QString composeDsn(const std::map<QString, QString> &fields);
    /// A mysql://user@host:port/database?ssl-mode=...&ssl-ca=... DSN from the fields (keys host,
    /// port, user, database, ssl-mode, ssl-ca), percent-encoded where MysqlDsn::parse decodes.
    static QString composeMysqlDsn(const std::map<QString, QString> &fields);

public slots:
    /// Probes what the fields describe, off the UI thread; testFinished() when it answers.
    void testConnection();

signals:
    void testFinished(bool ok);

private:
    struct Probe;
    bool isMysql() const;
    void buildPostgresPage(QWidget *page);
    void buildSqlitePage(QWidget *page);
    void load(const core::Endpoint &e);
    std::map<QString, QString> fields() const;
    void updateState();
    /// Fits the height to the shown page and the test result (grows always, shrinks when asked).
    void fitHeight(bool shrink);
    void browse();
    void browseCa();
    /// Fills the TLS modes, placeholders and help of the server page for the chosen kind.
    void kindChanged();
    QString intro() const;
    void showProbe(std::uint64_t job, const Probe &probe);
    QStringList mysqlLines(const Probe &probe) const;
    /// The connection's TLS in words: encrypted or not, verified or not; off this machine and
    /// weaker than verify-full, with the DSN change that fixes it.
    static QString tlsLine(const core::TlsState &tls, bool loopback, const std::string &warning,
                           const std::string &fix);
    void showPasswordNote();
    /// A DSN pasted with a password in it: the password goes to the Password field (and from
    /// there to the keychain), the DSN keeps the rest.
    void takePasswordFromDsn();
    /// The probe's advice in the dialog's words: the field a password was typed in, the Host and
    /// Port fields when they were used (the engine's hint speaks of ~/.pgpass and "the dsn").
    QString hintFor(const std::string &code, const std::string &hint, bool passwordSent) const;
    /// Test Connection found the SSH host key not trusted yet: shows the fingerprint the refusal
    /// named and, when the DBA confirms it, asks the engine to trust that key (POST
    /// /api/v1/trust-host), then tests again. A changed key is only shown, never offered.
    void offerTrust(const core::Endpoint &e, const std::string &refusal);

    std::optional<core::Endpoint> m_existing;
    QStringList m_taken;
    std::optional<QString> m_knownPassword;
    SecretStore::Backend m_backend;
    std::map<QString, QString> m_originalFields; ///< the edited DSN's fields, to keep its exact text
    QPointer<EngineDoor> m_door;
    EngineDoor *m_ownDoor = nullptr; ///< made when there is no door to ask, or it went away
    std::uint64_t m_job = 0;
    bool m_passwordSent = false;     ///< the latest test sent a password (typed, or the session's)
    int m_dsnLength = 0;             ///< the DSN's length after the last edit: more at once is a paste
    std::optional<bool> m_cdcSource; ///< setRoles(); unknown for a new endpoint
    std::optional<bool> m_target;

    QLineEdit *m_name;
    QComboBox *m_kind;
    /// Shown one at a time; hidden ones take no room, so the dialog fits what is shown.
    QWidget *m_pgPage;
    QWidget *m_litePage;
    QRadioButton *m_fieldsMode;
    QRadioButton *m_dsnMode;
    QWidget *m_fieldsPage;
    QWidget *m_dsnPage;
    QLineEdit *m_host;
    QSpinBox *m_port;
    QLineEdit *m_database;
    QLineEdit *m_user;
    QComboBox *m_tls;
    QLineEdit *m_caFile;
    QPushButton *m_caBrowse;
    QLineEdit *m_dsn;
    QLabel *m_dsnHelp = nullptr;
    QLineEdit *m_password;
    QLabel *m_passwordNote;
    SlotGuardBox *m_guard;
    SshTunnelBox *m_ssh;
    /// Connection, SSH tunnel, slot guard.
    QTabWidget *m_tabs;
    /// All but OK and Cancel: scrolls when the screen is too small for it.
    QScrollArea *m_scroll;
    QLineEdit *m_path;
    QPushButton *m_browse;
    QLabel *m_problem;
    QPushButton *m_test;
    QLabel *m_result;
    QDialogButtonBox *m_buttons;
};

} // namespace driftless::ui
