#include "ui/dialogs/pipelinesettingspanel.h"

#include "ui/widgets/settingfields.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QStandardItemModel>

#include <algorithm>

namespace driftless::ui {

using namespace settingfields;

namespace {
QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

bool isPublicationName(const QString &name)
{
    return !name.isEmpty() && name.size() <= 63 && std::all_of(name.begin(), name.end(), [](QChar c) {
        return (c >= QLatin1Char('a') && c <= QLatin1Char('z')) || (c >= QLatin1Char('0') && c <= QLatin1Char('9')) ||
               c == QLatin1Char('_');
    });
}
} // namespace

QStringList PipelineSettingsPanel::addColumnPolicies()
{
    return {QStringLiteral("backfill"), QStringLiteral("propagate"), QStringLiteral("ignore"), QStringLiteral("pause")};
}
QStringList PipelineSettingsPanel::dropColumnPolicies()
{
    return {QStringLiteral("keep"), QStringLiteral("drop"), QStringLiteral("pause")};
}
QStringList PipelineSettingsPanel::recoverChoices()
{
    return {QStringLiteral("manual"), QStringLiteral("auto")};
}
QStringList PipelineSettingsPanel::typeChangePolicies()
{
    return {QStringLiteral("widen"), QStringLiteral("pause")};
}
QStringList PipelineSettingsPanel::renameColumnPolicies()
{
    return {QStringLiteral("rename"), QStringLiteral("pause")};
}

PipelineSettingsPanel::PipelineSettingsPanel(QWidget *parent)
    : QWidget(parent), m_publication(new QLineEdit(this)), m_heartbeat(new QLineEdit(this)),
      m_recover(new QComboBox(this)), m_adopt(new QComboBox(this)), m_reconcileEvery(new QLineEdit(this)),
      m_alertAbove(new QLineEdit(this)), m_addColumn(new QComboBox(this)), m_dropColumn(new QComboBox(this)),
      m_typeChange(new QComboBox(this)), m_renameColumn(new QComboBox(this)), m_note(new QLabel(this))
{
    setObjectName(QStringLiteral("pipelineSettings"));
    m_publication->setObjectName(QStringLiteral("publication"));
    m_publication->setPlaceholderText(tr("driftless_<name>, made and kept by Driftless"));
    m_publication->setToolTip(tr("An existing publication to read instead of the one Driftless makes (making one "
                                 "needs table ownership); lower-case letters, digits and _"));
    m_heartbeat->setObjectName(QStringLiteral("heartbeat"));
    m_heartbeat->setPlaceholderText(tr("none"));
    m_heartbeat->setToolTip(tr("Writes a small transactional message into the source at this interval (30s, 1m), "
                               "so the slot moves while the source database is quiet and other databases of its "
                               "server write WAL"));
    fillChoices(m_recover, tr("default (manual)"), recoverChoices());
    m_recover->setObjectName(QStringLiteral("recover"));
    m_recover->setToolTip(
        tr("When the source changes under the pipeline (a promoted standby, a restore, another "
           "server behind the address): manual stops the tables and names "
           "Recover\u2026 on the Tables page (driftless-cli recover); auto brings every table back by diff at once"));
    fillChoices(m_adopt, tr("default (false)"), {QStringLiteral("true"), QStringLiteral("false")});
    m_adopt->setObjectName(QStringLiteral("adopt"));
    m_adopt->setToolTip(tr("Target tables that exist already (a pg_dump copy, another tool's replica): true takes "
                           "them, compares their rows with the source and copies only what differs; false refuses "
                           "them. Each table may say otherwise"));
    m_reconcileEvery->setObjectName(QStringLiteral("reconcileEvery"));
    m_reconcileEvery->setPlaceholderText(tr("not scheduled"));
    m_reconcileEvery->setToolTip(tr("Compares source and target on this schedule while the sync runs (24h, 6h; at "
                                    "least 1m)"));
    m_alertAbove->setObjectName(QStringLiteral("alertAbove"));
    m_alertAbove->setPlaceholderText(tr("any drift"));
    m_alertAbove->setToolTip(tr("A reconciliation raises a drift alert past this share of a table's rows: a "
                                "percentage (0.1%) or a fraction (0.001)"));

    fillChoices(m_addColumn, tr("default (backfill)"), addColumnPolicies());
    fillChoices(m_dropColumn, tr("default (keep)"), dropColumnPolicies());
    fillChoices(m_typeChange, tr("default (widen)"), typeChangePolicies());
    fillChoices(m_renameColumn, tr("default (rename)"), renameColumnPolicies());
    m_addColumn->setObjectName(QStringLiteral("addColumn"));
    m_addColumn->setToolTip(tr("A column the source gains: backfill (added, existing rows filled from the "
                               "source), propagate (added, new rows only), ignore, or pause the table"));
    m_dropColumn->setObjectName(QStringLiteral("dropColumn"));
    m_dropColumn->setToolTip(tr("A column the source drops: keep it on the target (NULL from then on), drop it "
                                "there too, or pause the table"));
    m_typeChange->setObjectName(QStringLiteral("typeChange"));
    m_typeChange->setToolTip(tr("A column retyped at the source: widen the target's column, or pause the table"));
    m_renameColumn->setObjectName(QStringLiteral("renameColumn"));
    m_renameColumn->setToolTip(tr("A column renamed at the source: rename it on the target, or pause the table"));
    m_note->setObjectName(QStringLiteral("pipelineSettingsNote"));
    m_note->setWordWrap(true);
    m_note->setTextFormat(Qt::PlainText);

    auto *cdc = new QFormLayout;
    auto *publicationLabel = new QLabel(tr("P&ublication:"), this);
    publicationLabel->setBuddy(m_publication);
    cdc->addRow(publicationLabel, m_publication);
    auto *heartbeatLabel = new QLabel(tr("&Heartbeat every:"), this);
    heartbeatLabel->setBuddy(m_heartbeat);
    cdc->addRow(heartbeatLabel, m_heartbeat);
    auto *recoverLabel = new QLabel(tr("On a source c&hange:"), this);
    recoverLabel->setBuddy(m_recover);
    cdc->addRow(recoverLabel, m_recover);
    auto *checks = new QFormLayout;
    auto *everyLabel = new QLabel(tr("Reconcile e&very:"), this);
    everyLabel->setBuddy(m_reconcileEvery);
    checks->addRow(everyLabel, m_reconcileEvery);
    auto *alertLabel = new QLabel(tr("Drift alert a&bove:"), this);
    alertLabel->setBuddy(m_alertAbove);
    checks->addRow(alertLabel, m_alertAbove);
    auto *adoptLabel = new QLabel(tr("Ado&pt existing targets:"), this);
    adoptLabel->setBuddy(m_adopt);
    checks->addRow(adoptLabel, m_adopt);

    auto *changes = new QGridLayout;
    const QList<std::pair<QString, QComboBox *>> boxes{{tr("Column &added:"), m_addColumn},
                                                       {tr("Column &dropped:"), m_dropColumn},
                                                       {tr("T&ype changed:"), m_typeChange},
                                                       {tr("Column renam&ed:"), m_renameColumn}};
    for (int i = 0; i < boxes.size(); ++i) {
        auto *label = new QLabel(boxes[i].first, this);
        label->setBuddy(boxes[i].second);
        changes->addWidget(label, i / 2, (i % 2) * 2);
        changes->addWidget(boxes[i].second, i / 2, (i % 2) * 2 + 1);
    }
    changes->setColumnStretch(1, 1);
    changes->setColumnStretch(3, 1);

    auto *grid = new QGridLayout(this);
    grid->addWidget(new QLabel(tr("<b>Change data capture</b>"), this), 0, 0);
    grid->addWidget(new QLabel(tr("<b>Reconciliation and existing tables</b>"), this), 0, 1);
    grid->addLayout(cdc, 1, 0);
    grid->addLayout(checks, 1, 1);
    grid->addWidget(new QLabel(tr("<b>Schema changes at the source</b> (each table may override them)"), this), 2, 0, 1,
                    2);
    grid->addLayout(changes, 3, 0, 1, 2);
    grid->addWidget(m_note, 4, 0, 1, 2);
    grid->setRowStretch(5, 1);
    grid->setColumnStretch(0, 1);
    grid->setColumnStretch(1, 1);

    for (QLineEdit *edit : {m_publication, m_heartbeat, m_reconcileEvery, m_alertAbove})
        connect(edit, &QLineEdit::textChanged, this, &PipelineSettingsPanel::settingsChanged);
    for (QComboBox *box : {m_recover, m_adopt, m_addColumn, m_dropColumn, m_typeChange, m_renameColumn})
        connect(box, &QComboBox::currentIndexChanged, this, &PipelineSettingsPanel::settingsChanged);
    updateEnabled();
}

void PipelineSettingsPanel::setPipeline(const core::PipelineSpec &p, core::EndpointKind sourceKind)
{
    const QSignalBlocker b1(m_publication), b2(m_heartbeat), b3(m_reconcileEvery), b4(m_alertAbove);
    const QSignalBlocker b5(m_addColumn), b6(m_dropColumn), b7(m_typeChange), b8(m_renameColumn), b9(m_recover),
        b10(m_adopt);
    m_publication->setText(qs(p.publication.value_or(std::string())));
    m_heartbeat->setText(durationText(p.heartbeat));
    setChoice(m_recover, p.recover);
    setBoolChoice(m_adopt, p.adopt);
    m_reconcileEvery->setText(durationText(p.reconcileEvery));
    m_alertAbove->setText(p.reconcileAlertAbove ? qs(core::formatShare(*p.reconcileAlertAbove)) : QString());
    setChoice(m_addColumn, p.addColumn);
    setChoice(m_dropColumn, p.dropColumn);
    setChoice(m_typeChange, p.typeChange);
    setChoice(m_renameColumn, p.renameColumn);
    m_sourceKind = sourceKind;
    updateEnabled();
}

void PipelineSettingsPanel::setSourceKind(core::EndpointKind sourceKind)
{
    m_sourceKind = sourceKind;
    updateEnabled();
    emit settingsChanged();
}

void PipelineSettingsPanel::updateEnabled()
{
    const bool postgres = m_sourceKind == core::EndpointKind::Postgres;
    m_publication->setEnabled(postgres);
    m_heartbeat->setEnabled(postgres);
    // A binlog cannot tell a rename from a drop and an add: only pause is offered there.
    const int rename = m_renameColumn->findData(QStringLiteral("rename"));
    if (auto *items = qobject_cast<QStandardItemModel *>(m_renameColumn->model()); items && rename >= 0)
        items->item(rename)->setEnabled(postgres);
    m_renameColumn->setItemText(0, postgres ? tr("default (rename)") : tr("default (pause)"));
    m_note->setText(postgres ? QString()
                             : tr("A MariaDB/MySQL source writes no heartbeat and has no publication; its binlog "
                                  "cannot tell a renamed column from a dropped and an added one, so a possible "
                                  "rename pauses the table."));
    m_note->setVisible(!postgres);
}

void PipelineSettingsPanel::apply(core::PipelineSpec &p) const
{
    const bool postgres = m_sourceKind == core::EndpointKind::Postgres;
    const QString publication = m_publication->text().trimmed();
    p.publication = publication.isEmpty() ? std::nullopt : std::optional<std::string>(publication.toStdString());
    p.heartbeat = postgres ? readDuration(m_heartbeat, tr("Heartbeat"), core::Millis(1000)).value : std::nullopt;
    p.recover = choice(m_recover);
    p.adopt = boolChoice(m_adopt);
    p.reconcileEvery = readDuration(m_reconcileEvery, tr("Reconcile every"), core::Millis(60'000)).value;
    const QString alert = m_alertAbove->text().trimmed();
    p.reconcileAlertAbove = alert.isEmpty() ? std::nullopt : core::parseShare(alert.toStdString());
    p.addColumn = choice(m_addColumn);
    p.dropColumn = choice(m_dropColumn);
    p.typeChange = choice(m_typeChange);
    p.renameColumn = choice(m_renameColumn);
}

QString PipelineSettingsPanel::problem() const
{
    const bool postgres = m_sourceKind == core::EndpointKind::Postgres;
    const QString publication = m_publication->text().trimmed();
    if (!publication.isEmpty() && !isPublicationName(publication))
        return tr("Publication '%1': publication names here are lower-case letters, digits and _, at most 63 "
                  "characters.")
            .arg(publication);
    if (postgres)
        if (const auto heartbeat = readDuration(m_heartbeat, tr("Heartbeat"), core::Millis(1000));
            !heartbeat.problem.isEmpty())
            return heartbeat.problem;
    if (const auto every = readDuration(m_reconcileEvery, tr("Reconcile every"), core::Millis(60'000));
        !every.problem.isEmpty())
        return every.problem;
    const QString alert = m_alertAbove->text().trimmed();
    if (!alert.isEmpty() && !core::parseShare(alert.toStdString()))
        return tr("Drift alert above '%1': a percentage of a table's rows (0.1%) or a fraction (0.001), from 0 "
                  "to 100%.")
            .arg(alert);
    if (!postgres && choice(m_renameColumn) == std::optional<std::string>("rename"))
        return tr("Column renamed: a MariaDB/MySQL source cannot rename (its binlog does not tell a rename from a "
                  "drop and an add); choose pause or the default.");
    return {};
}

} // namespace driftless::ui
