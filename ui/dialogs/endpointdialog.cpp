#include "ui/dialogs/endpointdialog.h"

#include "ui/dialogs/slotguardbox.h"
#include "ui/dialogs/sshtunnelbox.h"
#include "ui/enginedoor.h"
#include "ui/localdoor.h"
#include "ui/widgets/screenfit.h"

#include "core/engine/endpoints/endpointcalls.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/model/dsn.h"
#include "core/model/error.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace driftless::ui {

namespace {

enum KindIndex { PostgresKind, SqliteKind, MysqlKind };
enum TabIndex { ConnectionTab, SshTab, GuardTab };
constexpr int kDefaultPort = 5432;
constexpr int kMysqlPort = 3306;
const std::set<QString> kFieldKeys{QStringLiteral("host"), QStringLiteral("port"),    QStringLiteral("dbname"),
                                   QStringLiteral("user"), QStringLiteral("sslmode"), QStringLiteral("sslrootcert")};

/// A tab's page: `box` at the top, the rest of the page empty.
QWidget *wrapped(QWidget *box)
{
    auto *page = new QWidget;
    auto *layout = new QVBoxLayout(page);
    layout->addWidget(box);
    layout->addStretch(1);
    return page;
}

} // namespace

EndpointDialog::EndpointDialog(std::optional<core::Endpoint> existing, QStringList takenNames,
                               std::optional<QString> knownPassword, SecretStore::Backend backend, QWidget *parent,
                               EngineDoor *door)
    : QDialog(parent), m_existing(std::move(existing)), m_taken(std::move(takenNames)),
      m_knownPassword(std::move(knownPassword)), m_backend(backend), m_door(door), m_name(new QLineEdit(this)),
      m_kind(new QComboBox(this)), m_pgPage(new QWidget(this)), m_litePage(new QWidget(this)),
      m_fieldsMode(new QRadioButton(tr("Connection &fields"), this)),
      m_dsnMode(new QRadioButton(tr("Connection &string (DSN)"), this)), m_fieldsPage(new QWidget(this)),
      m_dsnPage(new QWidget(this)), m_host(new QLineEdit(this)), m_port(new QSpinBox(this)),
      m_database(new QLineEdit(this)), m_user(new QLineEdit(this)), m_tls(new QComboBox(this)),
      m_caFile(new QLineEdit(this)), m_caBrowse(new QPushButton(tr("B&rowse\u2026"), this)), m_dsn(new QLineEdit(this)),
      m_password(new QLineEdit(this)), m_passwordNote(new QLabel(this)), m_guard(new SlotGuardBox(this)),
      m_ssh(new SshTunnelBox(this)), m_tabs(new QTabWidget(this)), m_scroll(new QScrollArea(this)),
      m_path(new QLineEdit(this)), m_browse(new QPushButton(tr("&Browse\u2026"), this)), m_problem(new QLabel(this)),
      m_test(new QPushButton(tr("&Test Connection"), this)), m_result(new QLabel(this)),
      m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setObjectName(QStringLiteral("endpointDialog"));
    setWindowTitle(m_existing ? tr("Edit Endpoint") : tr("Add Endpoint"));

    m_name->setObjectName(QStringLiteral("endpointName"));
    m_name->setPlaceholderText(tr("e.g. app, dw or replica"));
    m_kind->setObjectName(QStringLiteral("endpointKind"));
    m_kind->addItems({tr("Postgres"), tr("SQLite"), tr("MySQL / MariaDB")});

    buildPostgresPage(m_pgPage);
    buildSqlitePage(m_litePage);

    auto *top = new QFormLayout;
    top->addRow(tr("&Name:"), m_name);
    top->addRow(tr("&Kind:"), m_kind);

    m_problem->setObjectName(QStringLiteral("endpointProblem"));
    m_problem->setWordWrap(true);
    m_problem->setTextFormat(Qt::PlainText);
    m_problem->setStyleSheet(QStringLiteral("color: #b3261e;"));
    // Its line is kept while there is no problem: Test Connection below it stays where it is
    // when the last field is filled in, rather than jumping a line up under the pointer.
    m_problem->setMinimumHeight(m_problem->fontMetrics().lineSpacing());
    QSizePolicy keep = m_problem->sizePolicy();
    keep.setRetainSizeWhenHidden(true);
    m_problem->setSizePolicy(keep);
    m_test->setObjectName(QStringLiteral("testConnection"));
    m_result->setObjectName(QStringLiteral("testResult"));
    m_result->setWordWrap(true);
    m_result->setTextFormat(Qt::RichText);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_result->setMinimumHeight(m_result->fontMetrics().lineSpacing() * 5);
    m_result->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_result->setText(intro());

    m_result->setFrameShape(QFrame::StyledPanel);
    m_result->setMargin(6);
    auto *testRow = new QHBoxLayout;
    testRow->addWidget(m_test);
    testRow->addStretch(1);

    // The connection, the tunnel and the slot guard each on a tab of their own: on one page they
    // were 813 px tall, and a 1366x768 laptop showed neither OK nor Cancel (issue 45).
    m_tabs->setObjectName(QStringLiteral("endpointTabs"));
    auto *connection = new QWidget(m_tabs);
    auto *connectionLayout = new QVBoxLayout(connection);
    connectionLayout->addWidget(m_pgPage);
    connectionLayout->addWidget(m_litePage);
    connectionLayout->addStretch(1);
    m_tabs->addTab(connection, tr("&Connection"));
    m_tabs->addTab(wrapped(m_ssh), QString());
    m_tabs->addTab(wrapped(m_guard), QString());

    // Everything but OK and Cancel scrolls when the screen is smaller still (150% scaling), so
    // the buttons stay on screen whatever the content needs.
    auto *content = new QWidget;
    content->setObjectName(QStringLiteral("endpointContent"));
    auto *contentLayout = new QVBoxLayout(content);
    contentLayout->setContentsMargins(0, 0, 0, 0);
    contentLayout->addLayout(top);
    contentLayout->addWidget(m_tabs);
    contentLayout->addWidget(m_problem);
    contentLayout->addLayout(testRow);
    contentLayout->addWidget(m_result);
    contentLayout->addStretch(1);
    m_scroll->setObjectName(QStringLiteral("endpointScroll"));
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_scroll->setWidget(content);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_scroll, 1);
    layout->addWidget(m_buttons);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_test, &QPushButton::clicked, this, &EndpointDialog::testConnection);
    connect(m_kind, &QComboBox::currentIndexChanged, this, &EndpointDialog::kindChanged);
    connect(m_fieldsMode, &QRadioButton::toggled, this, &EndpointDialog::updateState);
    for (QLineEdit *edit : {m_name, m_host, m_database, m_user, m_caFile, m_dsn, m_path})
        connect(edit, &QLineEdit::textChanged, this, &EndpointDialog::updateState);
    connect(m_port, &QSpinBox::valueChanged, this, &EndpointDialog::updateState);
    // A pasted DSN (more than a keystroke at once), or one typed to its end: a password typed a
    // key at a time is not taken half way.
    connect(m_dsn, &QLineEdit::textEdited, this, [this](const QString &text) {
        if (text.size() > m_dsnLength + 1)
            takePasswordFromDsn();
        m_dsnLength = int(m_dsn->text().size());
    });
    connect(m_dsn, &QLineEdit::editingFinished, this, &EndpointDialog::takePasswordFromDsn);
    connect(m_tls, &QComboBox::currentIndexChanged, this, &EndpointDialog::updateState);
    connect(m_browse, &QPushButton::clicked, this, &EndpointDialog::browse);
    connect(m_caBrowse, &QPushButton::clicked, this, &EndpointDialog::browseCa);
    connect(m_guard, &SlotGuardBox::guardChanged, this, &EndpointDialog::updateState);
    connect(m_ssh, &SshTunnelBox::tunnelChanged, this, &EndpointDialog::updateState);

    m_fieldsMode->setChecked(true);
    kindChanged();
    if (m_existing)
        load(*m_existing);
    showPasswordNote();
    updateState();
    resize(screenfit::bounded(this, QSize(620, height())));
    fitHeight(true);
}

EndpointDialog::~EndpointDialog() = default;

void EndpointDialog::buildPostgresPage(QWidget *page)
{
    m_fieldsMode->setObjectName(QStringLiteral("fieldsMode"));
    m_dsnMode->setObjectName(QStringLiteral("dsnMode"));
    auto *modes = new QHBoxLayout;
    modes->addWidget(m_fieldsMode);
    modes->addWidget(m_dsnMode);
    modes->addStretch(1);

    m_host->setObjectName(QStringLiteral("host"));
    m_host->setPlaceholderText(tr("e.g. db1.example.com; empty: the local socket"));
    m_port->setObjectName(QStringLiteral("port"));
    m_port->setRange(1, 65535);
    m_port->setValue(kDefaultPort);
    m_database->setObjectName(QStringLiteral("database"));
    m_user->setObjectName(QStringLiteral("user"));
    m_user->setPlaceholderText(tr("empty: your login name"));
    m_tls->setObjectName(QStringLiteral("tlsMode"));
    m_caFile->setObjectName(QStringLiteral("caFile"));
    m_caBrowse->setObjectName(QStringLiteral("caBrowse"));

    auto *form = new QFormLayout(m_fieldsPage);
    form->setContentsMargins(0, 0, 0, 0);
    auto *hostRow = new QHBoxLayout;
    hostRow->addWidget(m_host, 1);
    auto *portLabel = new QLabel(tr("&Port:"), page);
    portLabel->setBuddy(m_port);
    hostRow->addWidget(portLabel);
    hostRow->addWidget(m_port);
    auto *hostLabel = new QLabel(tr("&Host:"), page);
    hostLabel->setBuddy(m_host);
    form->addRow(hostLabel, hostRow);
    form->addRow(tr("&Database:"), m_database);
    form->addRow(tr("&User:"), m_user);
    form->addRow(tr("T&LS mode:"), m_tls);
    auto *caRow = new QHBoxLayout;
    caRow->addWidget(m_caFile, 1);
    caRow->addWidget(m_caBrowse);
    // A row holding a layout gets no buddy from addRow(): the mnemonic needs one.
    auto *caLabel = new QLabel(tr("C&A file:"), page);
    caLabel->setBuddy(m_caFile);
    form->addRow(caLabel, caRow);

    auto *dsnForm = new QFormLayout(m_dsnPage);
    dsnForm->setContentsMargins(0, 0, 0, 0);
    m_dsn->setObjectName(QStringLiteral("dsn"));
    dsnForm->addRow(tr("DS&N:"), m_dsn);
    // Explicit line breaks (kindChanged): a wrapping label would make the page ask for room it
    // does not use.
    m_dsnHelp = new QLabel(m_dsnPage);
    dsnForm->addRow(QString(), m_dsnHelp);

    m_password->setObjectName(QStringLiteral("password"));
    m_password->setEchoMode(QLineEdit::Password);
    m_passwordNote->setObjectName(QStringLiteral("passwordNote"));
    // One line, never wrapped: a wrapping label inside the stacked pages would make the hidden
    // page claim its height for the shown one.
    auto *secret = new QFormLayout;
    secret->setContentsMargins(0, 0, 0, 0);
    secret->addRow(tr("Pass&word:"), m_password);
    secret->addRow(QString(), m_passwordNote);

    auto *layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(modes);
    layout->addWidget(m_fieldsPage);
    layout->addWidget(m_dsnPage);
    layout->addLayout(secret);
}

void EndpointDialog::buildSqlitePage(QWidget *page)
{
    m_path->setObjectName(QStringLiteral("sqlitePath"));
    m_path->setPlaceholderText(tr("the database file; created on the first sync if missing"));
    m_browse->setObjectName(QStringLiteral("browse"));
    auto *row = new QHBoxLayout;
    row->addWidget(m_path, 1);
    row->addWidget(m_browse);
    auto *form = new QFormLayout(page);
    form->setContentsMargins(0, 0, 0, 0);
    auto *fileLabel = new QLabel(tr("&File:"), page);
    fileLabel->setBuddy(m_path);
    form->addRow(fileLabel, row);
    auto *help = new QLabel(tr("SQLite files are targets only. Tables are named after the source table without "
                               "its schema."),
                            page);
    form->addRow(QString(), help);
}

const QStringList &EndpointDialog::tlsModes()
{
    static const QStringList modes{QStringLiteral("disable"),   QStringLiteral("allow"),
                                   QStringLiteral("prefer"),    QStringLiteral("require"),
                                   QStringLiteral("verify-ca"), QStringLiteral("verify-full")};
    return modes;
}

const QStringList &EndpointDialog::mysqlTlsModes()
{
    static const QStringList modes{QStringLiteral("disabled"), QStringLiteral("preferred"), QStringLiteral("required"),
                                   QStringLiteral("verify_ca"), QStringLiteral("verify_identity")};
    return modes;
}

QString EndpointDialog::composeMysqlDsn(const std::map<QString, QString> &fields)
{
    auto value = [&](const char *key) {
        const auto it = fields.find(QLatin1String(key));
        return it == fields.end() ? QString() : it->second;
    };
    auto encode = [](const QString &v, const QByteArray &keep = {}) {
        return QString::fromLatin1(v.toUtf8().toPercentEncoding(keep));
    };
    QString host = value("host");
    if (host.isEmpty())
        host = QStringLiteral("127.0.0.1");
    // An IPv6 address goes in brackets, which MysqlDsn::parse reads without decoding.
    host = host.contains(QLatin1Char(':')) ? QLatin1Char('[') + host + QLatin1Char(']') : encode(host);
    QString dsn = QStringLiteral("mysql://");
    if (!value("user").isEmpty())
        dsn += encode(value("user")) + QLatin1Char('@');
    dsn += host + QLatin1Char(':') + (value("port").isEmpty() ? QString::number(kMysqlPort) : value("port"));
    dsn += QLatin1Char('/') + encode(value("database"));
    QStringList options;
    if (!value("ssl-mode").isEmpty())
        options << QStringLiteral("ssl-mode=") + value("ssl-mode");
    if (!value("ssl-ca").isEmpty())
        options << QStringLiteral("ssl-ca=") + encode(value("ssl-ca"), "/");
    if (!options.isEmpty())
        dsn += QLatin1Char('?') + options.join(QLatin1Char('&'));
    return dsn;
}

QString EndpointDialog::composeDsn(const std::map<QString, QString> &fields)
{
    // libpq's order of mention, for readability; every key of kFieldKeys.
    static const QStringList order{QStringLiteral("host"), QStringLiteral("port"),    QStringLiteral("dbname"),
                                   QStringLiteral("user"), QStringLiteral("sslmode"), QStringLiteral("sslrootcert")};
    QStringList parts;
    for (const QString &key : order) {
        const auto it = fields.find(key);
        if (it == fields.end() || it->second.isEmpty())
            continue;
        QString value = it->second;
        const bool quote = value.contains(QLatin1Char(' ')) || value.contains(QLatin1Char('\'')) ||
                           value.contains(QLatin1Char('\\')) || value.contains(QLatin1Char('='));
        if (quote) {
            value.replace(QLatin1String("\\"), QLatin1String("\\\\")).replace(QLatin1String("'"), QLatin1String("\\'"));
            value = QLatin1Char('\'') + value + QLatin1Char('\'');
        }
        parts << key + QLatin1Char('=') + value;
    }
    return parts.join(QLatin1Char(' '));
}

bool EndpointDialog::isMysql() const
{
    return m_kind->currentIndex() == MysqlKind;
}

void EndpointDialog::kindChanged()
{
    const bool mysql = isMysql();
    // The other kind's default port becomes this kind's.
    if (mysql && m_port->value() == kDefaultPort)
        m_port->setValue(kMysqlPort);
    else if (!mysql && m_port->value() == kMysqlPort)
        m_port->setValue(kDefaultPort);
    {
        const QSignalBlocker block(m_tls);
        m_tls->clear();
        QStringList tips;
        if (mysql) {
            m_tls->addItem(tr("Driftless default (preferred on this machine, else verify_identity)"), QString());
            tips = QStringList{tr("never use TLS"), tr("TLS when the server offers it"),
                               tr("always TLS, without checking the certificate"),
                               tr("always TLS, certificate signed by the CA file below"),
                               tr("always TLS, certificate signed by the CA file whose name matches the host")};
        } else {
            m_tls->addItem(tr("Driftless default (prefer on this machine, else verify-full)"), QString());
            tips = QStringList{tr("never use TLS"),
                               tr("TLS only if the server insists"),
                               tr("TLS when the server offers it"),
                               tr("always TLS, without checking the certificate"),
                               tr("always TLS, certificate signed by the CA file below (sslrootcert)"),
                               tr("always TLS, trusted certificate whose name matches the host")};
        }
        const QStringList &modes = mysql ? mysqlTlsModes() : tlsModes();
        for (int i = 0; i < modes.size(); ++i) {
            m_tls->addItem(modes[i], modes[i]);
            m_tls->setItemData(i + 1, tips[i], Qt::ToolTipRole);
        }
    }
    m_caFile->setPlaceholderText(mysql ? tr("ssl-ca: the CA certificate (PEM) that signed the server's")
                                       : tr("sslrootcert: the CA certificate (PEM); empty: ~/.postgresql/root.crt"));
    m_caFile->setToolTip(mysql ? tr("Written into the DSN as ssl-ca=FILE: verify_ca and verify_identity check the "
                                    "server's certificate against it")
                               : tr("Written into the DSN as sslrootcert=FILE: verify-ca and verify-full check the "
                                    "server's certificate against it (without it libpq reads ~/.postgresql/root.crt)"));
    m_host->setPlaceholderText(mysql ? tr("e.g. db1.example.com; empty: 127.0.0.1")
                                     : tr("e.g. db1.example.com; empty: the local socket"));
    m_user->setPlaceholderText(mysql ? tr("the MySQL user, e.g. sync") : tr("empty: your login name"));
    m_dsn->setPlaceholderText(mysql ? tr("mysql://sync@db1:3306/app?ssl-mode=verify_identity")
                                    : tr("host=db1 port=5432 dbname=app user=sync, or postgresql://sync@db1/app"));
    m_dsnHelp->setText(mysql ? tr("A mysql:// URI; options ssl-mode, ssl-ca, ssl-cert, ssl-key, socket and "
                                  "connect-timeout.\nNever a password: it goes in the field below.")
                             : tr("Anything libpq takes: key=value pairs, a URI, or service=name from "
                                  "pg_service.conf.\nNever a password: it goes in the field below."));
    // A result or a running test of another kind is stale.
    ++m_job;
    m_result->setText(intro());
    showPasswordNote();
    updateState();
}

QString EndpointDialog::intro() const
{
    if (m_kind->currentIndex() == SqliteKind)
        return tr("<i>Test the file before saving: Driftless opens it read-only, or checks that its folder is "
                  "writable.</i>");
    if (isMysql())
        return tr("<i>Test the connection before saving: Driftless reports the server's version, whether its "
                  "binlog is ready for change data capture, the user's replication grants and the database's "
                  "tables.</i>");
    return tr("<i>Test the connection before saving: Driftless reports the server's version, its wal_level, "
              "whether the user may replicate and which tables it may read.</i>");
}

void EndpointDialog::load(const core::Endpoint &e)
{
    m_name->setText(QString::fromStdString(e.name));
    if (e.kind == core::EndpointKind::Sqlite) {
        m_kind->setCurrentIndex(SqliteKind);
        m_path->setText(QString::fromStdString(e.path));
        return;
    }
    m_ssh->setTunnel(e.ssh);
    if (e.kind == core::EndpointKind::Mysql) {
        m_kind->setCurrentIndex(MysqlKind);
        m_dsn->setText(QString::fromStdString(e.dsn));
        const QString text = QString::fromStdString(e.dsn).toLower();
        try {
            const auto d = core::MysqlDsn::parse(e.dsn);
            // Options the fields do not show keep the DSN as written.
            if (d.password || !d.socket.empty() || !d.sslCert.empty() || !d.sslKey.empty() ||
                text.contains(QLatin1String("connect-timeout")) || text.contains(QLatin1String("connect_timeout"))) {
                m_dsnMode->setChecked(true);
                return;
            }
            m_host->setText(QString::fromStdString(d.host));
            m_port->setValue(d.port);
            m_database->setText(QString::fromStdString(d.database));
            m_user->setText(QString::fromStdString(d.user));
            // The parsed mode is the default when the DSN names none: keep it unnamed then.
            const bool named = text.contains(QLatin1String("ssl-mode=")) || text.contains(QLatin1String("sslmode=")) ||
                               text.contains(QLatin1String("ssl_mode="));
            const int tls = named ? m_tls->findData(QString::fromStdString(d.sslMode)) : 0;
            m_tls->setCurrentIndex(std::max(0, tls));
            m_caFile->setText(QString::fromStdString(d.sslCa));
            m_originalFields = fields();
        } catch (const core::Error &) {
            m_dsnMode->setChecked(true);
        }
        return;
    }
    m_kind->setCurrentIndex(PostgresKind);
    m_guard->setGuard(e.slotGuard);
    m_dsn->setText(QString::fromStdString(e.dsn));
    bool fits = true;
    try {
        for (auto &[k, v] : core::parsePgDsn(e.dsn)) {
            const QString key = QString::fromStdString(k);
            fits = fits && kFieldKeys.count(key);
            m_originalFields[key] = QString::fromStdString(v);
        }
    } catch (const core::Error &) {
        fits = false;
    }
    if (!fits) {
        m_dsnMode->setChecked(true);
        return;
    }
    auto value = [&](const char *key) {
        const auto it = m_originalFields.find(QLatin1String(key));
        return it == m_originalFields.end() ? QString() : it->second;
    };
    m_host->setText(value("host"));
    m_port->setValue(value("port").isEmpty() ? kDefaultPort : value("port").toInt());
    m_database->setText(value("dbname"));
    m_user->setText(value("user"));
    const int tls = m_tls->findData(value("sslmode"));
    m_tls->setCurrentIndex(tls < 0 ? 0 : tls);
    m_caFile->setText(value("sslrootcert"));
}

std::map<QString, QString> EndpointDialog::fields() const
{
    std::map<QString, QString> f;
    auto put = [&](const char *key, const QString &v) {
        if (!v.trimmed().isEmpty())
            f[QLatin1String(key)] = v.trimmed();
    };
    if (isMysql()) {
        put("host", m_host->text());
        put("port", QString::number(m_port->value()));
        put("database", m_database->text());
        put("user", m_user->text());
        const QString mode = m_tls->currentData().toString();
        put("ssl-mode", mode);
        if (mode != QLatin1String("disabled"))
            put("ssl-ca", m_caFile->text());
        return f;
    }
    put("host", m_host->text());
    // The default port stays implicit unless the edited DSN named it.
    if (m_port->value() != kDefaultPort || m_originalFields.count(QStringLiteral("port")))
        put("port", QString::number(m_port->value()));
    put("dbname", m_database->text());
    put("user", m_user->text());
    const QString mode = m_tls->currentData().toString();
    put("sslmode", mode);
    // Without TLS there is no certificate to check.
    if (mode != QLatin1String("disable"))
        put("sslrootcert", m_caFile->text());
    return f;
}

core::Endpoint EndpointDialog::endpoint() const
{
    core::Endpoint e;
    e.name = m_name->text().trimmed().toStdString();
    if (m_kind->currentIndex() == SqliteKind) {
        e.kind = core::EndpointKind::Sqlite;
        const QString path = m_path->text().trimmed();
        e.path = path.isEmpty() ? std::string() : QDir::cleanPath(QFileInfo(path).absoluteFilePath()).toStdString();
        return e;
    }
    e.ssh = m_ssh->tunnel();
    if (isMysql()) {
        e.kind = core::EndpointKind::Mysql;
        if (m_dsnMode->isChecked()) {
            e.dsn = m_dsn->text().trimmed().toStdString();
        } else {
            const auto f = fields();
            const bool unchanged = m_existing && m_existing->kind == core::EndpointKind::Mysql && f == m_originalFields;
            e.dsn = unchanged ? m_existing->dsn : composeMysqlDsn(f).toStdString();
        }
        return e;
    }
    e.kind = core::EndpointKind::Postgres;
    e.slotGuard = m_guard->guard();
    if (m_dsnMode->isChecked()) {
        e.dsn = m_dsn->text().trimmed().toStdString();
    } else {
        const auto f = fields();
        // Unchanged fields keep the edited DSN's exact text (a URI stays a URI).
        const bool unchanged = m_existing && m_existing->kind == core::EndpointKind::Postgres && f == m_originalFields;
        e.dsn = unchanged ? m_existing->dsn : composeDsn(f).toStdString();
    }
    return e;
}

QString EndpointDialog::password() const
{
    return m_password->text();
}

QString EndpointDialog::sshPassphrase() const
{
    const auto e = endpoint();
    return e.ssh && e.ssh->identityFile ? m_ssh->passphraseEdit()->text() : QString();
}

QPushButton *EndpointDialog::okButton() const
{
    return m_buttons->button(QDialogButtonBox::Ok);
}

QString EndpointDialog::problem() const
{
    const auto e = endpoint();
    const QString name = QString::fromStdString(e.name);
    if (name.isEmpty())
        return tr("Name the endpoint.");
    if (m_taken.contains(name))
        return tr("There is already an endpoint named %1.").arg(name);
    if (e.kind == core::EndpointKind::Sqlite && e.path.empty())
        return tr("Choose the SQLite file.");
    if (e.kind != core::EndpointKind::Sqlite && e.dsn.empty())
        return m_dsnMode->isChecked() ? tr("Enter a DSN.") : tr("Enter at least the host or the database.");
    if (e.kind == core::EndpointKind::Mysql && !m_dsnMode->isChecked() && m_host->text().trimmed().isEmpty() &&
        m_database->text().trimmed().isEmpty())
        return tr("Enter at least the host or the database.");
    // The tunnel's fields are on a tab of their own: name the tab, the loader's words do not.
    if (e.ssh && e.ssh->host.empty())
        return tr("SSH tunnel: enter the SSH host (on the SSH Tunnel tab), or untick the tunnel.");
    if (e.ssh && e.ssh->user.empty())
        return tr("SSH tunnel: enter the login on the SSH host (on the SSH Tunnel tab).");
    if (e.kind == core::EndpointKind::Postgres)
        if (const QString guard = m_guard->problem(); !guard.isEmpty())
            return guard;
    if (const auto problem = core::endpointProblem(e)) {
        QString text = QString::fromStdString(*problem);
        // The loader's advice to "remove it" from the file: here it has a field of its own.
        if (text.contains(QLatin1String("contains a password")))
            text += tr(" (type it in the Password field: it goes to the keychain)");
        return text;
    }
    return {};
}

void EndpointDialog::fitHeight(bool shrink)
{
    // The pages' own layouts cache their size hints until their (posted) layout requests run.
    for (QLayout *l : findChildren<QLayout *>())
        l->invalidate();
    layout()->activate();
    QWidget *content = m_scroll->widget();
    // Wrapped labels (the problem, the result) need their height for the width they get.
    const int contentWidth = width() - layout()->contentsMargins().left() - layout()->contentsMargins().right();
    const int contentHeight = std::max(content->sizeHint().height(),
                                       content->hasHeightForWidth() ? content->heightForWidth(contentWidth) : 0);
    const QMargins margins = layout()->contentsMargins();
    int wanted =
        contentHeight + margins.top() + margins.bottom() + layout()->spacing() + m_buttons->sizeHint().height();
    // A scroll area squeezes a wrapped label to its minimum rather than scroll: what the result
    // and the problem lack at their width is room the dialog needs.
    int lacking = 0;
    for (const QLabel *label : {m_result, m_problem})
        if (!label->isHidden() && label->width() > 0)
            lacking += std::max(0, label->heightForWidth(label->width()) - label->height());
    wanted = std::max(wanted, height() + lacking);
    // Never taller than the screen: what does not fit scrolls, and OK and Cancel stay on it.
    const int room = screenfit::usableArea(this).height();
    const int target = std::min(wanted, room);
    if (target > height() || (shrink && target < height()) || height() > room)
        resize(std::min(width(), screenfit::usableArea(this).width()), target);
}

void EndpointDialog::updateState()
{
    const bool sqlite = m_kind->currentIndex() == SqliteKind;
    const bool postgres = m_kind->currentIndex() == PostgresKind;
    const bool dsn = m_dsnMode->isChecked();
    const bool pagesChanged =
        m_litePage->isHidden() == sqlite || m_dsnPage->isHidden() == dsn || m_tabs->isTabVisible(GuardTab) != postgres;
    m_tabs->setTabVisible(SshTab, !sqlite);
    m_tabs->setTabVisible(GuardTab, postgres);
    m_tabs->setTabText(SshTab, m_ssh->isChecked() ? tr("SSH Tunnel (on)") : tr("SSH Tunnel"));
    m_tabs->setTabText(GuardTab, m_guard->isChecked() ? tr("Slot Guard (on)") : tr("Slot Guard"));
    m_pgPage->setVisible(!sqlite);
    m_litePage->setVisible(sqlite);
    m_fieldsPage->setVisible(!dsn);
    m_dsnPage->setVisible(dsn);
    m_guard->setVisible(postgres);
    const QString mode = m_tls->currentData().toString();
    const bool tls = mode != QLatin1String("disabled") && mode != QLatin1String("disable");
    // Through a tunnel the last hop is a Unix socket: the TLS options would not be used.
    const bool tunneled = !sqlite && m_ssh->isChecked();
    m_tls->setEnabled(!tunneled);
    m_tls->setToolTip(tunneled ? tr("Not used through the SSH tunnel: its last hop is a Unix socket on this machine, "
                                    "and SSH encrypts the way to the SSH host")
                               : QString());
    m_caFile->setEnabled(tls && !tunneled);
    m_caBrowse->setEnabled(tls && !tunneled);
    const QString why = problem();
    m_problem->setText(why);
    m_problem->setVisible(!why.isEmpty());
    okButton()->setEnabled(why.isEmpty());
    okButton()->setToolTip(why);
    // Testing needs only a place to connect to, not a good name.
    auto e = endpoint();
    e.name = "test";
    m_test->setEnabled(sqlite ? !e.path.empty() : !e.dsn.empty() && !core::endpointProblem(e));
    fitHeight(pagesChanged);
}

void EndpointDialog::takePasswordFromDsn()
{
    QString dsn = m_dsn->text();
    QString password;
    // A URI: scheme://user:password@host...
    static const QRegularExpression uri(QStringLiteral("^([a-z]+://[^:@/?]*):([^@/?]*)@"));
    // key=value: password=... or password='...'
    static const QRegularExpression pair(QStringLiteral("(^|\\s)password\\s*=\\s*('((?:[^'\\\\]|\\\\.)*)'|(\\S*))"));
    if (const auto m = uri.match(dsn); m.hasMatch()) {
        password = QUrl::fromPercentEncoding(m.captured(2).toUtf8());
        dsn.replace(m.capturedStart(0), m.capturedLength(0), m.captured(1) + QLatin1Char('@'));
    } else if (const auto k = pair.match(dsn); k.hasMatch()) {
        password = k.capturedLength(3) > 0 ? k.captured(3)
                                                 .replace(QStringLiteral("\\'"), QStringLiteral("'"))
                                                 .replace(QStringLiteral("\\\\"), QStringLiteral("\\"))
                                           : k.captured(4);
        dsn.remove(k.capturedStart(0), k.capturedLength(0));
        dsn = dsn.simplified();
    } else {
        return;
    }
    if (password.isEmpty())
        return;
    const int cursor = m_dsn->cursorPosition();
    m_dsnLength = int(dsn.size());
    {
        const QSignalBlocker block(m_dsn);
        m_dsn->setText(dsn);
        m_dsn->setCursorPosition(std::min<int>(cursor, int(dsn.size())));
    }
    m_password->setText(password);
    showPasswordNote();
    m_passwordNote->setText(tr("The password in the pasted DSN was moved here: it goes to the keychain, never "
                               "into the workspace."));
    updateState();
}

void EndpointDialog::showPasswordNote()
{
    QString note;
    switch (m_backend) {
    case SecretStore::Backend::Keychain:
        note = tr("Saved in the system keychain (service \u201cDriftless\u201d), never in the workspace.");
        break;
    case SecretStore::Backend::SessionOnly:
        note = tr("No keychain on this desktop: kept in memory until Driftless quits.");
        break;
    case SecretStore::Backend::Unknown:
        note = tr("Saved in the system keychain, or kept in memory until Driftless quits.");
        break;
    }
    m_password->setPlaceholderText(m_knownPassword ? tr("unchanged (known for this session)")
                                   : isMysql()     ? tr("empty: MYSQL_PWD or ~/.my.cnf [client] password=")
                                                   : tr("empty: libpq's ~/.pgpass, PGPASSWORD or service file"));
    m_passwordNote->setText(note);
}

void EndpointDialog::browse()
{
    const QString current = m_path->text().trimmed();
    const QString start = current.isEmpty() ? QDir::homePath() : current;
    const QString path = QFileDialog::getSaveFileName(this, tr("SQLite Target File"), start,
                                                      tr("SQLite databases (*.db *.sqlite *.sqlite3);;All files (*)"),
                                                      nullptr, QFileDialog::DontConfirmOverwrite);
    if (!path.isEmpty())
        m_path->setText(QDir::toNativeSeparators(path));
}

void EndpointDialog::browseCa()
{
    const QString current = m_caFile->text().trimmed();
    const QString path =
        QFileDialog::getOpenFileName(this, tr("CA Certificate"), current.isEmpty() ? QDir::homePath() : current,
                                     tr("Certificates (*.pem *.crt);;All files (*)"));
    if (!path.isEmpty())
        m_caFile->setText(QDir::toNativeSeparators(path));
}

} // namespace driftless::ui
