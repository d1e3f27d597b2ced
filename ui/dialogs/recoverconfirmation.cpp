#include "ui/dialogs/recoverconfirmation.h"

#include "ui/statusicons.h"

#include <QCoreApplication>
#include <QMessageBox>
#include <QPushButton>
#include <QStringList>

#include <optional>

namespace driftless::ui {

namespace {
QString tr(const char *text)
{
    return QCoreApplication::translate("driftless::ui::RecoverConfirmation", text);
}

/// At most this many tables are named; the rest are counted.
constexpr int kNamed = 4;
} // namespace

QMessageBox *makeRecoverConfirmation(QWidget *parent, const QString &pipeline, const core::Workspace *workspace,
                                     const std::vector<core::TableReport> &tables, RecoverSync sync)
{
    QString source = tr("its source");
    std::optional<core::EndpointKind> kind;
    if (workspace)
        if (const auto *p = workspace->pipeline(pipeline.toStdString())) {
            source = QStringLiteral("<b>%1</b>").arg(QString::fromStdString(p->source).toHtmlEscaped());
            if (const auto *e = workspace->endpoint(p->source))
                kind = e->kind;
        }
    QStringList changed, others;
    for (const auto &r : tables)
        if (QString::fromStdString(r.pipeline) == pipeline && r.strategy == core::Strategy::Cdc && !r.reverse)
            (r.state == core::TableState::SourceChanged ? changed : others)
                << QString::fromStdString(r.table).toHtmlEscaped();
    const int count = static_cast<int>(changed.size() + others.size());
    QStringList named = changed + others;
    if (named.size() > kNamed) {
        const int rest = static_cast<int>(named.size()) - kNamed;
        named = named.mid(0, kNamed);
        named << tr("%1 more").arg(rest);
    }

    auto *box = new QMessageBox(
        QMessageBox::Warning, tr("Recover Pipeline"),
        tr("Bring pipeline <b>%1</b> back to the server now behind %2?").arg(pipeline.toHtmlEscaped(), source),
        QMessageBox::NoButton, parent);
    box->setObjectName(QStringLiteral("recoverConfirmation"));
    const QString which = count == 0 ? tr("Its CDC tables are")
                          : count == 1
                              ? tr("Its CDC table %1 is").arg(named.join(QString()))
                              : tr("Its %1 CDC tables (%2) are").arg(count).arg(named.join(QStringLiteral(", ")));
    QString what = tr("<p>The server behind %1 is not the one the target follows (a failover, a switchover or a "
                      "restore). %2 brought back to it:</p>")
                       .arg(source, which);
    if (kind == core::EndpointKind::Mysql)
        what += tr("<ul><li>Each table is read again from the new server and compared <b>by diff</b>, chunk by "
                   "chunk, with the rows the target holds: only the rows that differ are copied, under a new row "
                   "version epoch; then the stream goes on from the new server.</li>");
    else
        what += tr("<ul><li>A new replication slot is created on the new server (a slot of the pipeline's name "
                   "there is dropped first) and the stream goes on from it.</li>"
                   "<li>Each table is compared <b>by diff</b> with the new server's snapshot, page by page; only "
                   "the rows that differ are copied, while the stream applies the new server's changes.</li>");
    what += tr("<li><b>Rows the new server lacks are removed</b> from the target: changes the old server had and "
               "this one never had leave the target too.</li></ul>");
    switch (sync) {
    case RecoverSync::Running:
        what += tr("<p>The running sync is restarted so the pipeline takes the request now: the app restarts its "
                   "whole engine, so every pipeline stops after its batches in flight and starts again.</p>");
        break;
    case RecoverSync::Stopped:
        what += tr("<p>The sync is stopped: the request waits for the next Start Sync.</p>");
        break;
    case RecoverSync::Agent:
        what += tr("<p>The agent's sync takes the request when it next starts the pipeline (within 5 "
                   "minutes).</p>");
        break;
    }
    what += tr("<p>The same from a shell: <code>driftless-cli recover %1</code>.</p>").arg(pipeline.toHtmlEscaped());
    box->setInformativeText(what);
    QPushButton *confirm = box->addButton(tr("Recover"), QMessageBox::AcceptRole);
    confirm->setObjectName(QStringLiteral("confirmRecover"));
    confirm->setIcon(namedIcon(QStringLiteral("refresh")));
    QPushButton *cancel = box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    return box;
}

} // namespace driftless::ui
