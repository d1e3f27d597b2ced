#include "ui/dialogs/endpointdialog.h"

// Test Connection: the probe asked of the engine's door, and its answer in words (the dialog's
// fields and pages are in endpointdialog.cpp).

#include "ui/enginedoor.h"
#include "ui/localdoor.h"

#include "core/engine/endpoints/endpointcalls.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/model/dsn.h"
#include "core/model/error.h"

#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>

namespace driftless::ui {

namespace {
QString esc(const std::string &s)
{
    return QString::fromStdString(s).toHtmlEscaped();
}
} // namespace

/// What a probe found, as a plain value posted to the UI thread.
struct EndpointDialog::Probe {
    core::EndpointKind kind = core::EndpointKind::Postgres;
    core::PgProbe pg;
    core::MysqlProbe my;
    core::SqliteProbe lite;
    /// Why the engine gave no probe (an agent unreachable, an answer not understood).
    std::string failure;
    std::string database; ///< MySQL: the DSN's database, whose tables were counted
};

void EndpointDialog::setRoles(bool cdcSource, bool target)
{
    m_cdcSource = cdcSource;
    m_target = target;
}

QString EndpointDialog::hintFor(const std::string &code, const std::string &hint, bool passwordSent) const
{
    const bool refused = code == "28P01" || code == "1045";
    if (refused && passwordSent)
        return tr("the server refused the password in the Password field (or the user name): retype it, or check "
                  "the user");
    if (refused)
        return isMysql() ? tr("no password reached the server: type it in the Password field (it goes to the "
                              "keychain), or keep it in MYSQL_PWD or ~/.my.cnf")
                         : tr("no password reached the server: type it in the Password field (it goes to the "
                              "keychain), or keep it in ~/.pgpass, PGPASSWORD or the service file");
    QString text = QString::fromStdString(hint);
    if (!m_dsnMode->isChecked())
        text.replace(QStringLiteral("check host and port in the dsn"), tr("check the Host and Port fields"))
            .replace(QStringLiteral("or fix the dsn"), tr("or fix the Database and User fields"));
    return text;
}

void EndpointDialog::testConnection()
{
    const auto e = endpoint();
    const std::uint64_t job = ++m_job;
    std::optional<std::string> password;
    if (!m_password->text().isEmpty())
        password = m_password->text().toStdString();
    else if (m_knownPassword)
        password = m_knownPassword->toStdString();
    m_passwordSent = password.has_value();
    m_test->setEnabled(false);
    const QString where =
        e.kind == core::EndpointKind::Sqlite ? QString::fromStdString(e.path) : QString::fromStdString(e.dsn);
    m_result->setText(tr("Connecting to %1\u2026").arg(where.toHtmlEscaped()));
    nlohmann::json body = {{"endpoint", core::endpointJsonValue(e)}};
    if (password)
        body["password"] = *password;
    LocalDoor::orOwn(m_door, m_ownDoor, this)
        ->post(QStringLiteral("/api/v1/probe"), body, this, [this, job, e](const EngineDoor::Reply &reply) {
            Probe p;
            p.kind = e.kind;
            try {
                if (!reply.ok())
                    p.failure = reply.error.toStdString();
                else if (const auto found = core::probeFromJson(reply.body); found.kind != e.kind)
                    p.failure = "the engine probed another kind of endpoint";
                else {
                    p.pg = found.postgres;
                    p.my = found.mysql;
                    p.lite = found.sqlite;
                }
                if (p.my.connected)
                    p.database = core::MysqlDsn::parse(e.dsn).database;
            } catch (const core::Error &x) {
                p.failure = x.what();
            }
            showProbe(job, p);
            const bool mysql = e.kind == core::EndpointKind::Mysql;
            if (job == m_job && (mysql ? p.my.code : p.pg.code) == "ssh-host-key-unknown")
                offerTrust(e, mysql ? p.my.error : p.pg.error);
        });
}

void EndpointDialog::offerTrust(const core::Endpoint &e, const std::string &refusal)
{
    static const QRegularExpression keyText(QStringLiteral("SHA256:[A-Za-z0-9+/]+ \\([A-Z0-9]+\\)"));
    const auto match = keyText.match(QString::fromStdString(refusal));
    if (!match.hasMatch() || !e.ssh)
        return;
    const QString key = match.captured(0);
    const QString fingerprint = key.section(QLatin1Char(' '), 0, 0);
    // Through a jump host, its own key is checked first: the refusal names it.
    std::optional<core::SshTunnelSpec> jump;
    if (QString::fromStdString(refusal).contains(QLatin1String("of the jump host"))) {
        try {
            jump = core::jumpHostOf(*e.ssh);
        } catch (const core::Error &) {
            return;
        }
    }
    const core::SshTunnelSpec &host = jump ? *jump : *e.ssh;
    const QString server = QStringLiteral("%1:%2").arg(QString::fromStdString(host.host)).arg(host.port);
    auto *box = new QMessageBox(QMessageBox::Question, tr("Trust the SSH Host?"),
                                (jump ? tr("The jump host %1 is not trusted yet. It offers this host key:\n\n%2\n\n"
                                           "Compare the fingerprint with the one its administrator gives you "
                                           "(ssh-keygen -lf on its host key). Trust it only if they match.")
                                      : tr("The SSH server %1 is not trusted yet. It offers this host key:\n\n%2\n\n"
                                           "Compare the fingerprint with the one its administrator gives you "
                                           "(ssh-keygen -lf on the server's host key). Trust it only if they match."))
                                    .arg(server, key),
                                QMessageBox::Yes | QMessageBox::No, this);
    box->setObjectName(QStringLiteral("trustHostPrompt"));
    box->button(QMessageBox::Yes)->setText(tr("&Trust This Key"));
    box->setDefaultButton(QMessageBox::No);
    box->setAttribute(Qt::WA_DeleteOnClose);
    // Asked after the test, not during it: the trust is a job of its own.
    connect(box, &QMessageBox::finished, this, [this, e, fingerprint, isJump = jump.has_value()](int answer) {
        if (answer != QMessageBox::Yes)
            return;
        const nlohmann::json body = {
            {"endpoint", core::endpointJsonValue(e)}, {"fingerprint", fingerprint.toStdString()}, {"jump", isJump}};
        LocalDoor::orOwn(m_door, m_ownDoor, this)
            ->post(QStringLiteral("/api/v1/trust-host"), body, this, [this](const EngineDoor::Reply &reply) {
                if (!reply.ok()) {
                    m_result->setText(QStringLiteral("<span style='color:#b3261e'>\u2716</span> ") +
                                      tr("<b>Not trusted:</b> %1").arg(reply.error.toHtmlEscaped()));
                    fitHeight(false);
                    return;
                }
                testConnection();
            });
    });
    box->open();
}

void EndpointDialog::showProbe(std::uint64_t job, const Probe &p)
{
    if (job != m_job)
        return;
    updateState();
    const QString good = QStringLiteral("<span style='color:#1b7a2f'>\u2714</span> ");
    const QString bad = QStringLiteral("<span style='color:#b3261e'>\u2716</span> ");
    const QString warn = QStringLiteral("<span style='color:#9a6700'>\u26a0</span> ");
    QStringList lines;
    bool ok = false;
    if (!p.failure.empty()) {
        lines << bad + tr("<b>The engine could not test it:</b> %1").arg(esc(p.failure));
    } else if (p.kind == core::EndpointKind::Mysql) {
        ok = p.my.connected;
        lines = mysqlLines(p);
    } else if (p.kind == core::EndpointKind::Sqlite) {
        const auto &s = p.lite;
        ok = s.ok;
        if (!s.ok)
            lines << bad + tr("<b>Cannot use this file:</b> %1").arg(esc(s.error))
                  << tr("What to do: %1").arg(esc(s.hint));
        else if (s.exists)
            lines
                << good +
                       tr("<b>SQLite %1</b> database with %2 tables, writable").arg(esc(s.sqliteVersion)).arg(s.tables);
        else
            lines << good + tr("<b>New file:</b> the folder is writable; the first sync creates the database");
    } else {
        const auto &pg = p.pg;
        ok = pg.connected && pg.error.empty();
        if (!pg.connected) {
            lines << bad + tr("<b>Could not connect:</b> %1").arg(esc(pg.error));
            if (const QString hint = hintFor(pg.code, pg.hint, m_passwordSent); !hint.isEmpty())
                lines << tr("What to do: %1").arg(hint.toHtmlEscaped());
        } else {
            lines << good + tr("<b>PostgreSQL %1</b> at %2 as <b>%3</b>")
                                .arg(esc(pg.serverVersion), esc(pg.server), esc(pg.user));
            lines << tlsLine(pg.tls, pg.loopback, pg.tlsWarning, pg.tlsFix);
            lines << (pg.logicalWal() ? good : warn) + tr("wal_level <b>%1</b>").arg(esc(pg.walLevel));
            // The rights each use needs, judged as the workspace uses the endpoint: a target
            // need not replicate, a source need not create (issue 45).
            const QString note = QStringLiteral("<span style='color:#555'>\u2139</span> ");
            const QString how = pg.superuser ? tr("superuser") : tr("REPLICATION");
            if (pg.canReplicate())
                lines << good + tr("may replicate (%1): change data capture can read from it").arg(how);
            else
                lines << (m_cdcSource.value_or(false) ? warn : note) +
                             tr("may <b>not</b> replicate (no REPLICATION, not superuser): needed only as a source of "
                                "CDC tables");
            if (pg.canCreate)
                lines << good + tr("may create tables here (CREATE): it can be a target");
            else
                lines << (m_target.value_or(false) ? warn : note) +
                             tr("may <b>not</b> CREATE in this database: needed only as a target");
            lines << (pg.selectableTables == pg.tables ? good : warn) +
                         tr("SELECT on %1 of %2 tables").arg(pg.selectableTables).arg(pg.tables);
            if (!pg.error.empty())
                lines << bad + esc(pg.error);
            for (const auto &advice : pg.advice()) {
                if (!pg.tlsWarning.empty() && advice.rfind(pg.tlsWarning, 0) == 0)
                    continue; // shown above
                // Said on the rights' own lines, as this endpoint's use needs them.
                if (advice.find(" may not replicate") != std::string::npos ||
                    advice.find(" may not CREATE") != std::string::npos)
                    continue;
                lines << warn + esc(advice);
            }
        }
    }
    m_result->setText(lines.join(QStringLiteral("<br>")));
    fitHeight(false);
    emit testFinished(ok);
}

QString EndpointDialog::tlsLine(const core::TlsState &tls, bool loopback, const std::string &warning,
                                const std::string &fix)
{
    // What the connection got, as the client library reports it; never colour alone.
    const QString good = QStringLiteral("<span style='color:#1b7a2f'>\u2714</span> ");
    const QString warn = QStringLiteral("<span style='color:#9a6700'>\u26a0</span> ");
    const QString mode = esc(tls.mode);
    QString what;
    if (!tls.encrypted)
        what = tr("<b>not encrypted</b> (%1)").arg(mode);
    else if (tls.hostVerified)
        what = tr("<b>encrypted</b> (%1), the server's certificate and host name <b>verified</b> (%2)")
                   .arg(esc(tls.protocol), mode);
    else if (tls.verified)
        what = tr("<b>encrypted</b> (%1), the server's certificate verified but <b>not its host name</b> (%2)")
                   .arg(esc(tls.protocol), mode);
    else
        what =
            tr("<b>encrypted</b> (%1), the server's certificate <b>not verified</b> (%2)").arg(esc(tls.protocol), mode);
    if (!warning.empty())
        return warn + what + QStringLiteral("<br>&nbsp;&nbsp;&nbsp;&nbsp;") + tr("What to do: %1").arg(esc(fix));
    if (loopback && !tls.hostVerified)
        return good + what + tr(": fine on this machine");
    return good + what;
}

QStringList EndpointDialog::mysqlLines(const Probe &p) const
{
    // Each line starts with a symbol and says its state in words: never colour alone.
    const QString good = QStringLiteral("<span style='color:#1b7a2f'>\u2714</span> ");
    const QString bad = QStringLiteral("<span style='color:#b3261e'>\u2716</span> ");
    const QString warn = QStringLiteral("<span style='color:#9a6700'>\u26a0</span> ");
    const QString indent = QStringLiteral("&nbsp;&nbsp;&nbsp;&nbsp;\u2022 ");
    const auto &my = p.my;
    QStringList lines;
    if (!my.connected) {
        lines << bad + tr("<b>Could not connect:</b> %1").arg(esc(my.error));
        if (const QString hint = hintFor(my.code, my.hint, m_passwordSent); !hint.isEmpty())
            lines << tr("What to do: %1").arg(hint.toHtmlEscaped());
        return lines;
    }
    lines << good + tr("<b>%1 %2</b> at %3 as <b>%4</b>")
                        .arg(my.mariadb ? tr("MariaDB") : tr("MySQL"), esc(my.version), esc(my.server), esc(my.user));
    lines << tlsLine(my.tls, my.loopback, my.tlsWarning, my.tlsFix);
    if (my.binlog.empty()) {
        lines << good + tr("binlog <b>ready for change data capture</b>: ROW format, FULL row image and metadata, "
                           "kept %1")
                            .arg(esc(my.retention));
    } else {
        lines << warn + tr("binlog <b>not ready</b> for change data capture (full refresh and cursor sync work as "
                           "it is); to fix:");
        for (const auto &b : my.binlog)
            lines << indent + tr("<b>%1</b> is %2: %3").arg(esc(b.setting), esc(b.found), esc(b.fix));
    }
    const QString user = esc(my.grantee());
    const QString position = my.mariadb ? QStringLiteral("BINLOG MONITOR") : QStringLiteral("REPLICATION CLIENT");
    if (my.canReplicate && my.canReadPosition)
        lines << good + tr("may read the binlog (REPLICATION SLAVE) and its position (%1)").arg(position);
    else if (my.canReplicate)
        lines << warn +
                     tr("may read the binlog but <b>not</b> its position: GRANT %1 ON *.* TO %2").arg(position, user);
    else
        lines << warn + tr("may <b>not</b> read the binlog: GRANT REPLICATION SLAVE%1 ON *.* TO %2")
                            .arg(my.canReadPosition ? QString() : QStringLiteral(", ") + position, user);
    if (p.database.empty())
        lines << warn + tr("no database in the DSN: pipelines then name every table as database.table");
    else
        lines << good + tr("%1 tables in database <b>%2</b>").arg(my.tables).arg(esc(p.database));
    return lines;
}

} // namespace driftless::ui
