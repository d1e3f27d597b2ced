#include "ui/dialogs/comparedialog.h"

#include "ui/enginebridge.h"
#include "ui/enginedoor.h"
#include "ui/reconcilerunner.h"

#include "core/engine/endpoints/endpointcalls.h"
#include "core/engine/reconcile/reconciler.h"
#include "core/model/error.h"
#include "core/model/tableref.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include <initializer_list>
#include <stdexcept>
#include <tuple>

namespace driftless::ui {

namespace {

QString compareKindText(core::EndpointKind kind)
{
    switch (kind) {
    case core::EndpointKind::Postgres:
        return CompareDialog::tr("Postgres");
    case core::EndpointKind::Mysql:
        return CompareDialog::tr("MySQL/MariaDB");
    case core::EndpointKind::Sqlite:
        return CompareDialog::tr("SQLite");
    }
    return {};
}

/// How a table of this kind of endpoint is written, as an example.
QString compareTableExample(core::EndpointKind kind)
{
    switch (kind) {
    case core::EndpointKind::Postgres:
        return CompareDialog::tr("public.orders (schema public when left out)");
    case core::EndpointKind::Mysql:
        return CompareDialog::tr("shop.orders (the DSN's database when left out)");
    case core::EndpointKind::Sqlite:
        return CompareDialog::tr("orders");
    }
    return {};
}

/// The phases of a comparison in words (as the Reconciliation page says them).
QString comparePhaseText(const QString &phase)
{
    if (phase == QLatin1String("checksum"))
        return CompareDialog::tr("comparing checksums");
    if (phase == QLatin1String("bisect"))
        return CompareDialog::tr("narrowing down the differing ranges");
    if (phase == QLatin1String("fetch"))
        return CompareDialog::tr("fetching the differing rows");
    if (phase == QLatin1String("recheck"))
        return CompareDialog::tr("checking the differing rows again");
    if (phase == QLatin1String("done"))
        return CompareDialog::tr("storing the report");
    return phase;
}

QComboBox *tableField(QWidget *parent, const char *name)
{
    auto *combo = new QComboBox(parent);
    combo->setObjectName(QLatin1String(name));
    combo->setEditable(true);
    combo->setInsertPolicy(QComboBox::NoInsert);
    combo->setMaxVisibleItems(20);
    combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    combo->setMinimumContentsLength(28);
    return combo;
}

} // namespace

CompareDialog::CompareDialog(ReconcileRunner *runner, QWidget *parent)
    : QDialog(parent), m_runner(runner), m_leftEndpoint(new QComboBox(this)),
      m_leftTable(tableField(this, "compareLeftTable")), m_rightEndpoint(new QComboBox(this)),
      m_rightTable(tableField(this, "compareRightTable")), m_key(new QLineEdit(this)), m_columns(new QLineEdit(this)),
      m_where(new QLineEdit(this)), m_about(new QLabel(this)), m_status(new QLabel(this)),
      m_progress(new QProgressBar(this))
{
    setObjectName(QStringLiteral("compareDialog"));
    setWindowTitle(tr("Compare Tables"));
    if (const auto ws = m_runner->workspace())
        m_workspace = *ws;

    m_leftEndpoint->setObjectName(QStringLiteral("compareLeftEndpoint"));
    m_rightEndpoint->setObjectName(QStringLiteral("compareRightEndpoint"));
    for (const auto &[name, e] : m_workspace.endpoints) {
        const QString text = tr("%1 (%2)").arg(QString::fromStdString(name), compareKindText(e.kind));
        // The first table is read as the source: a SQLite file can only be the second.
        if (e.kind != core::EndpointKind::Sqlite)
            m_leftEndpoint->addItem(text, QString::fromStdString(name));
        m_rightEndpoint->addItem(text, QString::fromStdString(name));
    }
    m_leftEndpoint->setToolTip(tr("A Postgres or MySQL/MariaDB endpoint; a SQLite file can only be second"));

    m_key->setObjectName(QStringLiteral("compareKey"));
    m_key->setPlaceholderText(tr("the first table's primary key"));
    m_key->setToolTip(tr("Columns that match rows between the tables, separated by commas (e.g. id,region): unique "
                         "and never NULL on both sides. Left empty: the first table's primary key (a table without "
                         "one is compared as whole rows)."));
    m_columns->setObjectName(QStringLiteral("compareColumns"));
    m_columns->setPlaceholderText(tr("every column of the first table"));
    m_columns->setToolTip(tr("Only these columns are compared, besides the key, separated by commas"));
    m_where->setObjectName(QStringLiteral("compareWhere"));
    m_where->setPlaceholderText(tr("every row, e.g. created_at >= '2024-01-01'"));
    m_where->setToolTip(tr("Only rows this SQL condition holds for, on both sides: write it in SQL both engines take"));

    m_about->setObjectName(QStringLiteral("compareAbout"));
    m_about->setWordWrap(true);
    m_about->setTextFormat(Qt::PlainText);
    m_about->setText(tr("Compares the two tables as a reconciliation does, no pipeline needed: checksums inside each "
                        "database, narrowed down to the rows that differ. Rows only the first table has are missing, "
                        "rows only the second has are extra. Nothing is written to either database; the report "
                        "joins the others on this page."));
    m_status->setObjectName(QStringLiteral("compareStatus"));
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setVisible(false);
    m_progress->setObjectName(QStringLiteral("compareProgress"));
    m_progress->setRange(0, 0);
    m_progress->setTextVisible(false);
    m_progress->setVisible(false);

    auto *buttons = new QDialogButtonBox(this);
    buttons->setObjectName(QStringLiteral("compareButtons"));
    m_compare = buttons->addButton(tr("&Compare"), QDialogButtonBox::ActionRole);
    m_compare->setObjectName(QStringLiteral("startCompare"));
    m_compare->setDefault(true);
    m_stop = buttons->addButton(tr("Sto&p"), QDialogButtonBox::ActionRole);
    m_stop->setObjectName(QStringLiteral("stopCompare"));
    m_stop->setToolTip(tr("Stop the comparison; nothing is stored"));
    // Always there, enabled while a comparison runs: the buttons stay where they are.
    m_stop->setEnabled(false);
    m_close = buttons->addButton(QDialogButtonBox::Close);
    m_close->setObjectName(QStringLiteral("closeCompare"));
    connect(m_compare, &QPushButton::clicked, this, &CompareDialog::start);
    connect(m_stop, &QPushButton::clicked, m_runner, &ReconcileRunner::cancel);
    connect(buttons, &QDialogButtonBox::rejected, this, &CompareDialog::reject);

    // One form, no group boxes: at 150% on a 1366x768 laptop the dialog has 512 px of height.
    auto *form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("&First endpoint:"), m_leftEndpoint);
    form->addRow(tr("First &table:"), m_leftTable);
    form->addRow(tr("&Second endpoint:"), m_rightEndpoint);
    form->addRow(tr("Second t&able:"), m_rightTable);
    form->addRow(tr("&Key columns:"), m_key);
    form->addRow(tr("C&olumns:"), m_columns);
    form->addRow(tr("&Where:"), m_where);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_about);
    layout->addWidget(m_status);
    layout->addWidget(m_progress);
    layout->addStretch(1);
    layout->addWidget(buttons);
    setMinimumWidth(560);

    // The second side starts on another endpoint than the first, the likelier comparison.
    if (m_rightEndpoint->count() > 1 && m_rightEndpoint->currentData() == m_leftEndpoint->currentData())
        m_rightEndpoint->setCurrentIndex(1);
    connect(m_leftEndpoint, &QComboBox::currentIndexChanged, this,
            [this] { readTables(m_leftEndpoint, m_leftTable, m_leftRead); });
    connect(m_rightEndpoint, &QComboBox::currentIndexChanged, this,
            [this] { readTables(m_rightEndpoint, m_rightTable, m_rightRead); });
    connect(m_runner, &ReconcileRunner::progress, this,
            [this](std::uint64_t job, const QString &table, const QString &phase, int, int) {
                onProgress(job, table, phase);
            });
    connect(m_runner, &ReconcileRunner::reconcileFinished, this, &CompareDialog::onFinished);

    readTables(m_leftEndpoint, m_leftTable, m_leftRead);
    readTables(m_rightEndpoint, m_rightTable, m_rightRead);
    if (m_leftEndpoint->count() == 0)
        showProblem(tr("This workspace has no Postgres or MySQL/MariaDB endpoint to read the first table from: add "
                       "one on the Workspace page first."));
    m_compare->setEnabled(m_leftEndpoint->count() > 0);
}

void CompareDialog::readTables(QComboBox *endpoint, QComboBox *table, std::uint64_t &generation)
{
    const std::uint64_t asked = ++generation;
    const core::Endpoint *e = m_workspace.endpoint(endpoint->currentData().toString().toStdString());
    const QString typed = table->currentText();
    table->clear();
    table->setEditText(typed);
    table->lineEdit()->setPlaceholderText(e ? compareTableExample(e->kind) : QString());
    // The list is a help, not a condition: a name can always be typed. SQLite files are not
    // listed (the engine lists the tables of sources).
    EngineDoor *door = m_runner->engine() ? m_runner->engine()->door() : nullptr;
    if (!e || e->kind == core::EndpointKind::Sqlite || !door)
        return;
    door->post(QStringLiteral("/api/v1/discover"), {{"endpoint", e->name}}, this,
               [this, table, asked, &generation](const EngineDoor::Reply &reply) {
                   if (asked != generation || !reply.ok())
                       return;
                   core::SourceDiscovery d;
                   try {
                       d = core::discoveryFromJson(reply.body);
                   } catch (const core::Error &) {
                       return;
                   }
                   QStringList names;
                   for (const auto &t : d.tables)
                       names << QString::fromStdString(t.table.display());
                   const QString typedNow = table->currentText();
                   table->addItems(names);
                   table->setCurrentIndex(-1);
                   table->setEditText(typedNow);
               });
}

void CompareDialog::choose(const QString &leftEndpoint, const QString &leftTable, const QString &rightEndpoint,
                           const QString &rightTable)
{
    m_leftEndpoint->setCurrentIndex(m_leftEndpoint->findData(leftEndpoint));
    m_rightEndpoint->setCurrentIndex(m_rightEndpoint->findData(rightEndpoint));
    m_leftTable->setEditText(leftTable);
    m_rightTable->setEditText(rightTable);
}

void CompareDialog::start()
{
    if (running())
        return;
    const QString leftTable = m_leftTable->currentText().trimmed();
    const QString rightTable = m_rightTable->currentText().trimmed();
    if (m_leftEndpoint->currentIndex() < 0 || m_rightEndpoint->currentIndex() < 0) {
        showProblem(tr("Choose the endpoint of each table."));
        return;
    }
    if (leftTable.isEmpty() || rightTable.isEmpty()) {
        showProblem(tr("Name both tables, e.g. public.orders."));
        (leftTable.isEmpty() ? m_leftTable : m_rightTable)->setFocus();
        return;
    }
    ReconcileRunner::Comparison c;
    // ENDPOINT:TABLE, as `driftless-cli compare` takes each side; the engine parses the table.
    c.left = m_leftEndpoint->currentData().toString() + QLatin1Char(':') + leftTable;
    c.right = m_rightEndpoint->currentData().toString() + QLatin1Char(':') + rightTable;
    for (auto [field, list, what] :
         {std::tuple{m_key, &c.key, tr("Key columns")}, std::tuple{m_columns, &c.columns, tr("Columns")}}) {
        try {
            *list = core::splitColumnList(field->text().toStdString());
        } catch (const std::invalid_argument &) {
            showProblem(tr("%1: write column names separated by commas, e.g. id,region.").arg(what));
            field->setFocus();
            return;
        }
    }
    c.where = m_where->text().trimmed();
    m_reportId = 0;
    m_job = m_runner->compare(c);
    if (!m_job) {
        showProblem(m_runner->busy() ? tr("A comparison or repair is running; start this one when it ends.")
                                     : tr("No workspace is open."));
        return;
    }
    m_status->setStyleSheet(QString());
    m_status->setText(tr("Comparing %1 with %2\u2026").arg(c.left, c.right));
    m_status->setVisible(true);
    setRunning(true);
}

void CompareDialog::setRunning(bool running)
{
    for (QWidget *w : std::initializer_list<QWidget *>{m_leftEndpoint, m_leftTable, m_rightEndpoint, m_rightTable,
                                                       m_key, m_columns, m_where, m_compare})
        w->setEnabled(!running);
    m_progress->setVisible(running);
    m_stop->setEnabled(running);
}

void CompareDialog::showProblem(const QString &text)
{
    m_status->setStyleSheet(QStringLiteral("color: #b3261e;"));
    m_status->setText(text);
    m_status->setVisible(true);
}

void CompareDialog::onProgress(std::uint64_t job, const QString &table, const QString &phase)
{
    if (job != m_job || !m_job)
        return;
    m_status->setText(tr("Comparing %1: %2").arg(table, comparePhaseText(phase)));
}

void CompareDialog::onFinished(std::uint64_t job, std::int64_t reportId, const QString &error)
{
    if (job != m_job || !m_job)
        return;
    m_job = 0;
    m_reportId = reportId;
    setRunning(false);
    if (error.isEmpty() && reportId) {
        accept(); // the page lists the report and selects it
        return;
    }
    if (m_runner->lastJobCancelled() && !reportId) {
        m_status->setStyleSheet(QString());
        m_status->setText(tr("Stopped; nothing was stored."));
        return;
    }
    showProblem(reportId ? tr("The tables could not be compared: %1. Report %2 keeps this.").arg(error).arg(reportId)
                         : tr("The tables could not be compared: %1").arg(error));
}

void CompareDialog::reject()
{
    // Closed while it runs: the comparison is not wanted any more.
    if (running())
        m_runner->cancel();
    m_job = 0;
    QDialog::reject();
}

} // namespace driftless::ui
