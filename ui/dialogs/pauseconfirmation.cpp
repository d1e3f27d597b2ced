#include "ui/dialogs/pauseconfirmation.h"

#include "ui/displayformat.h"
#include "ui/statusicons.h"

#include <QCoreApplication>
#include <QMessageBox>
#include <QPushButton>
#include <QStringList>

#include <cstdint>

namespace driftless::ui {

namespace {
QString tr(const char *text)
{
    return QCoreApplication::translate("driftless::ui::PauseConfirmation", text);
}

/// The question's names, its accept button (`confirmText`) and Cancel; deletes itself when closed.
QMessageBox *finish(QMessageBox *box, bool pause, const QString &what, const QString &confirmText)
{
    box->setObjectName(pause ? QStringLiteral("pauseConfirmation") : QStringLiteral("resumeConfirmation"));
    box->setInformativeText(what);
    QPushButton *confirm = box->addButton(confirmText, QMessageBox::AcceptRole);
    confirm->setObjectName(pause ? QStringLiteral("confirmPause") : QStringLiteral("confirmResume"));
    confirm->setIcon(namedIcon(pause ? QStringLiteral("pause") : QStringLiteral("start")));
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(confirm);
    box->setAttribute(Qt::WA_DeleteOnClose);
    return box;
}
} // namespace

QMessageBox *makePauseConfirmation(QWidget *parent, const core::TableReport &r, bool pause, bool engineRunning)
{
    const QString table = QString::fromStdString(r.table).toHtmlEscaped();
    const QString pipeline = QString::fromStdString(r.pipeline).toHtmlEscaped();
    const bool cdc = r.strategy == core::Strategy::Cdc;
    QString what;
    if (pause && cdc)
        what = tr("<p>Its changes stop being applied; the pipeline's other tables keep streaming and the replication "
                  "slot keeps moving, so the source holds no WAL back for it.</p>"
                  "<p>Its rows, state and checkpoint stay as they are, across restarts, until you resume it. Its "
                  "lag grows meanwhile (no lag alert is raised for a paused table).</p>"
                  "<p>Resume re-copies the table through the guarded merge; only rows that differ are written.</p>");
    else if (pause)
        what = tr("<p>The scheduler skips it: a pass under way stops between batches, and what it committed "
                  "stays.</p><p>Its rows, state and checkpoint stay as they are, across restarts, until you resume "
                  "it. Its lag grows meanwhile (no lag alert is raised for a paused table).</p>");
    else if (cdc)
        what = tr("<p>Resuming re-copies the table through the guarded merge; only rows that differ are written. "
                  "It is read from a fresh snapshot of the source without locks while the stream goes on, rows the "
                  "source no longer has are removed, and every change made while it was paused arrives that "
                  "way.</p>");
    else if (r.strategy == core::Strategy::Cursor)
        what = tr("<p>Its next pass runs at once and catches up from its cursor (minus the lookback).</p>");
    else
        what = tr("<p>Its next pass runs at once and reloads it whole.</p>");
    what += QStringLiteral("<p>%1</p>")
                .arg(engineRunning ? tr("The running sync takes it within a second.")
                                   : tr("No sync runs now: the next one starts with it (a driftless-cli sync of this "
                                        "workspace takes it within a second)."));

    auto *box = new QMessageBox(
        QMessageBox::Question, pause ? tr("Pause Table") : tr("Resume Table"),
        (pause ? tr("Pause <b>%1</b> of pipeline <b>%2</b>?") : tr("Resume <b>%1</b> of pipeline <b>%2</b>?"))
            .arg(table, pipeline),
        QMessageBox::NoButton, parent);
    return finish(box, pause, what, pause ? tr("Pause") : tr("Resume"));
}

namespace {
/// What pausing (or resuming) `tables` does, naming at most `shown` of them, each with its
/// strategy as the grid says it, and its pipeline unless the question names the one they are of.
QString whatForMany(const std::vector<core::TableReport> &tables, bool pause, bool engineRunning,
                    std::size_t shown = SIZE_MAX, bool namePipelines = true)
{
    QStringList names;
    bool cdc = false, passes = false;
    for (const auto &r : tables) {
        if (static_cast<std::size_t>(names.size()) < shown)
            names << (namePipelines
                          ? QStringLiteral("<li>%1 <small>(%2, %3)</small></li>")
                                .arg(QString::fromStdString(r.table).toHtmlEscaped(),
                                     QString::fromStdString(r.pipeline).toHtmlEscaped(), strategyLabel(r.strategy))
                          : QStringLiteral("<li>%1 <small>(%2)</small></li>")
                                .arg(QString::fromStdString(r.table).toHtmlEscaped(), strategyLabel(r.strategy)));
        (r.strategy == core::Strategy::Cdc ? cdc : passes) = true;
    }
    if (tables.size() > shown)
        names << QStringLiteral("<li>") + tr("and %1 more").arg(tables.size() - shown) + QStringLiteral("</li>");
    QString what = QStringLiteral("<ul>%1</ul>").arg(names.join(QString()));
    if (pause)
        what += tr("<p>They stop being synced until resumed; their rows, states and checkpoints stay. CDC tables "
                   "stop being applied while their slot keeps moving; the others' passes are skipped.</p>");
    else
        what += (cdc ? tr("<p>The CDC tables are re-copied through the guarded merge while they stream; only rows "
                          "that differ are written.</p>")
                     : QString()) +
                (passes ? tr("<p>The others' next passes run at once.</p>") : QString());
    what += QStringLiteral("<p>%1</p>")
                .arg(engineRunning ? tr("The running sync takes it within a second.")
                                   : tr("No sync runs now: the next one starts with it."));
    return what;
}
} // namespace

QMessageBox *makePauseConfirmation(QWidget *parent, const std::vector<core::TableReport> &tables, bool pause,
                                   bool engineRunning)
{
    auto *box =
        new QMessageBox(QMessageBox::Question, pause ? tr("Pause Tables") : tr("Resume Tables"),
                        (pause ? tr("Pause these %1 tables?") : tr("Resume these %1 tables?")).arg(tables.size()),
                        QMessageBox::NoButton, parent);
    return finish(box, pause, whatForMany(tables, pause, engineRunning),
                  pause ? tr("Pause %1 Tables").arg(tables.size()) : tr("Resume %1 Tables").arg(tables.size()));
}

QMessageBox *makePipelinePauseConfirmation(QWidget *parent, const QString &pipeline,
                                           const std::vector<core::TableReport> &tables, bool pause, bool engineRunning)
{
    // A pipeline of hundreds of tables: the box stays on a laptop's screen.
    constexpr std::size_t kNamed = 8;
    const QString name = pipeline.toHtmlEscaped();
    const QString question = tables.size() == 1 ? (pause ? tr("Pause pipeline <b>%1</b>? Its one table not paused yet:")
                                                         : tr("Resume pipeline <b>%1</b>? Its one paused table:"))
                                                      .arg(name)
                                                : (pause ? tr("Pause pipeline <b>%1</b>? Its %2 tables not paused yet:")
                                                         : tr("Resume pipeline <b>%1</b>? Its %2 paused tables:"))
                                                      .arg(name)
                                                      .arg(tables.size());
    auto *box = new QMessageBox(QMessageBox::Question, pause ? tr("Pause Pipeline") : tr("Resume Pipeline"), question,
                                QMessageBox::NoButton, parent);
    return finish(box, pause, whatForMany(tables, pause, engineRunning, kNamed, false),
                  pause ? tr("Pause Pipeline") : tr("Resume Pipeline"));
}

} // namespace driftless::ui
