#include "ui/dialogs/tabledetaildialog.h"

#include "ui/commandwording.h"
#include "ui/enginedoor.h"
#include "ui/widgets/screenfit.h"

#include "core/agent/agentapi.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"

#include "ui/dialogs/pauseconfirmation.h"
#include "ui/displayformat.h"
#include "ui/enginebridge.h"
#include "ui/mappingtext.h"
#include "ui/models/eventsmodel.h"
#include "ui/pauserunner.h"
#include "ui/statusicons.h"
#include "ui/widgets/lagchart.h"

#include <nlohmann/json.hpp>

#include <QChartView>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>

namespace driftless::ui {

namespace {

constexpr int kIconSize = 16;

/// The position a DBA reads first: the LSN or binlog position for CDC, the cursor value for
/// cursor tables.
QString describeCheckpoint(const core::TableReport &r)
{
    const auto tr = [](const char *text) {
        return QCoreApplication::translate("driftless::ui::TableDetailDialog", text);
    };
    if (r.checkpoint.empty())
        return tr("none yet (never synced)");
    std::optional<core::CdcPosition> cdc;
    if (r.strategy == core::Strategy::Cdc) {
        try {
            cdc = core::parseCdcPosition(r.checkpoint);
        } catch (const core::Error &) {
            // a damaged position: shown as stored below
        }
    }
    QStringList parts;
    if (cdc) {
        const std::string at = core::describeStreamPosition(*cdc);
        const bool binlog = std::holds_alternative<core::BinlogCdcPosition>(*cdc);
        if (!at.empty())
            parts << (binlog ? QStringLiteral("binlog %1") : QStringLiteral("LSN %1")).arg(QString::fromStdString(at));
        const auto &after =
            std::visit([](const auto &p) -> const std::vector<std::string> & { return p.load.after; }, *cdc);
        if (!after.empty())
            parts << QStringLiteral("after key %1").arg(QString::fromStdString(nlohmann::json(after).dump()));
        parts << (core::phaseOf(*cdc) == core::CdcPhase::Stream ? QStringLiteral("(stream)")
                                                                : QStringLiteral("(load)"));
        if (core::markedPaused(*cdc))
            parts << tr("marked paused");
        if (core::stoppedBy(*cdc))
            parts << tr("marked stopped by an error");
        return parts.join(QLatin1Char(' '));
    }
    const auto cp = nlohmann::json::parse(r.checkpoint, nullptr, false);
    if (!cp.is_object())
        return QString::fromStdString(r.checkpoint);
    if (cp.contains("cursor") && cp["cursor"].is_string())
        parts << QStringLiteral("cursor %1").arg(QString::fromStdString(cp["cursor"].get<std::string>()));
    if (cp.contains("phase") && cp["phase"].is_string())
        parts << QStringLiteral("(%1)").arg(QString::fromStdString(cp["phase"].get<std::string>()));
    if (parts.isEmpty())
        parts << QStringLiteral("version %1").arg(r.version);
    return parts.join(QLatin1Char(' '));
}

} // namespace

TableDetailDialog::TableDetailDialog(EngineBridge *engine, PauseRunner *pauser, const QString &pipeline,
                                     const QString &table, QWidget *parent)
    : QDialog(parent), m_engine(engine), m_pauser(pauser), m_pipeline(pipeline), m_table(table),
      m_title(new QLabel(this)), m_stateIcon(new QLabel(this)), m_freshnessIcon(new QLabel(this)),
      m_chart(new LagChart(this)), m_events(new EventsModel(this)), m_eventsView(new QTableView(this)),
      m_pause(new QPushButton(tr("Pause\u2026"), this)), m_resume(new QPushButton(tr("Resume\u2026"), this))
{
    setObjectName(QStringLiteral("tableDetail"));
    m_chart->setEngine(engine); // its history is where the engine is
    setWindowTitle(tr("%1 \u2014 %2").arg(table, pipeline));
    setAttribute(Qt::WA_DeleteOnClose);

    m_title->setObjectName(QStringLiteral("detailTitle"));
    m_title->setTextFormat(Qt::RichText);
    m_title->setText(
        tr("<big><b>%1</b></big> &nbsp;in pipeline <b>%2</b>").arg(table.toHtmlEscaped(), pipeline.toHtmlEscaped()));

    auto *facts = new QGroupBox(tr("At a glance"), this);
    auto *left = new QFormLayout;
    auto *right = new QFormLayout;
    for (auto *form : {left, right}) {
        form->setLabelAlignment(Qt::AlignRight);
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    }
    addFact(left, QStringLiteral("strategy"), tr("Strategy:"));
    // State and freshness: an icon with the word, never a colour alone.
    {
        auto *row = new QHBoxLayout;
        m_stateIcon->setFixedSize(kIconSize, kIconSize);
        row->addWidget(m_stateIcon);
        auto *value = new QLabel(this);
        value->setObjectName(QStringLiteral("fact_state"));
        row->addWidget(value, 1);
        left->addRow(tr("State:"), row);
    }
    {
        auto *row = new QHBoxLayout;
        m_freshnessIcon->setFixedSize(kIconSize, kIconSize);
        row->addWidget(m_freshnessIcon);
        auto *value = new QLabel(this);
        value->setObjectName(QStringLiteral("fact_freshness"));
        row->addWidget(value, 1);
        left->addRow(tr("Freshness:"), row);
    }
    addFact(left, QStringLiteral("lag"), tr("Apply lag:"));
    addFact(left, QStringLiteral("rows"), tr("Rows applied:"));
    addFact(right, QStringLiteral("lastSync"), tr("Last sync:"));
    addFact(right, QStringLiteral("checkpoint"), tr("Checkpoint:"));
    addFact(right, QStringLiteral("target"), tr("Target table:"));
    addFact(right, QStringLiteral("cursor"), tr("Cursor:"));
    addFact(right, QStringLiteral("paused"), tr("Paused since:"));
    auto *message = new QLabel(this);
    message->setObjectName(QStringLiteral("fact_message"));
    message->setWordWrap(true);
    message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *columns = new QHBoxLayout;
    columns->addLayout(left, 1);
    columns->addSpacing(24);
    columns->addLayout(right, 1);
    // The table's mapping as configured: what reaches the target and what a delete does there.
    auto *mapping = new QFormLayout;
    mapping->setLabelAlignment(Qt::AlignRight);
    mapping->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    addFact(mapping, QStringLiteral("columns"), tr("Columns:"))->setWordWrap(true);
    addFact(mapping, QStringLiteral("filter"), tr("Row filter:"))->setWordWrap(true);
    addFact(mapping, QStringLiteral("deletes"), tr("Deletes:"));
    auto *factsLayout = new QVBoxLayout(facts);
    factsLayout->addLayout(columns);
    factsLayout->addLayout(mapping);
    factsLayout->addWidget(message);

    m_chart->setOnly(pipeline, table);
    m_chart->setNote(tr("Apply lag of this table: how far the target is behind the source. Dashed: its freshness "
                        "SLA."));
    m_chart->chartView()->setMinimumHeight(200);

    m_eventsView->setObjectName(QStringLiteral("detailEvents"));
    m_eventsView->setModel(m_events);
    m_eventsView->setColumnHidden(EventsModel::Pipeline, true);
    m_eventsView->setColumnHidden(EventsModel::Table, true);
    m_eventsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_eventsView->setAlternatingRowColors(true);
    m_eventsView->setWordWrap(false);
    m_eventsView->verticalHeader()->setVisible(false);
    m_eventsView->horizontalHeader()->setStretchLastSection(true);
    m_eventsView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto *eventsBox = new QGroupBox(tr("Recent events (newest first)"), this);
    auto *eventsLayout = new QVBoxLayout(eventsBox);
    eventsLayout->addWidget(m_eventsView);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_chart);
    split->addWidget(eventsBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);

    m_pause->setObjectName(QStringLiteral("detailPause"));
    m_pause->setIcon(namedIcon(QStringLiteral("pause")));
    connect(m_pause, &QPushButton::clicked, this, &TableDetailDialog::requestPause);
    m_resume->setObjectName(QStringLiteral("detailResume"));
    m_resume->setIcon(namedIcon(QStringLiteral("start")));
    connect(m_resume, &QPushButton::clicked, this, &TableDetailDialog::requestResume);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(m_pause, QDialogButtonBox::ActionRole);
    buttons->addButton(m_resume, QDialogButtonBox::ActionRole);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);

    // All but the buttons scrolls when the screen is smaller than the facts, the chart and the
    // events need (a laptop at 125% or 150%): Close, Pause and Resume stay on screen.
    auto *content = new QWidget;
    auto *contentLayout = new QVBoxLayout(content);
    contentLayout->setContentsMargins(0, 0, 0, 0);
    contentLayout->addWidget(m_title);
    contentLayout->addWidget(facts);
    contentLayout->addWidget(split, 1);
    auto *scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("detailScroll"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidget(content);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(scroll, 1);
    layout->addWidget(buttons);
    // 760 px tall did not fit a 1366x768 laptop with its panel and title bar (issue 45).
    screenfit::restore(this, QStringLiteral("tableDetail"), QSize(900, 760));

    connect(m_engine, &EngineBridge::snapshotReady, this, &TableDetailDialog::setSnapshot);
    connect(m_pauser, &PauseRunner::started, this, [this] { showReport(); });
    connect(m_pauser, &PauseRunner::finished, this, [this] {
        showReport();
        if (!m_eventsInFlight)
            readEvents(); // the pause or resume is an event of this table
    });
    setSnapshot(m_engine->snapshot());
}

TableDetailDialog::~TableDetailDialog() = default;

QLabel *TableDetailDialog::addFact(QFormLayout *form, const QString &name, const QString &label)
{
    auto *value = new QLabel(this);
    value->setObjectName(QStringLiteral("fact_") + name);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(label, value);
    return value;
}

QLabel *TableDetailDialog::fact(const QString &name) const
{
    return findChild<QLabel *>(QStringLiteral("fact_") + name);
}

void TableDetailDialog::setSnapshot(const EngineSnapshot &snapshot)
{
    m_report.reset();
    for (const auto &t : snapshot.tables)
        if (t.pipeline == m_pipeline.toStdString() && t.table == m_table.toStdString())
            m_report = t;
    m_workspace = snapshot.workspace;
    m_chart->setSnapshot(snapshot);
    showReport();
    if (snapshot.statePath != m_path) {
        m_path = snapshot.statePath;
        ++m_eventsGeneration; // a read of another file no longer counts
        m_eventsInFlight = false;
        readEvents();
    } else if (!m_eventsInFlight && m_sinceEventsRead.isValid() && m_sinceEventsRead.elapsed() >= kEventsRefreshMs) {
        readEvents();
    }
}

void TableDetailDialog::showReport()
{
    const QLocale locale;
    if (!m_report) {
        for (const char *name : {"strategy", "state", "freshness", "lag", "rows", "lastSync", "checkpoint", "target",
                                 "cursor", "paused", "message", "columns", "filter", "deletes"})
            fact(QString::fromLatin1(name))->clear();
        fact(QStringLiteral("message"))->setText(tr("This table is not in the workspace shown."));
        m_stateIcon->clear();
        m_freshnessIcon->clear();
        m_pause->setEnabled(false);
        m_resume->setEnabled(false);
        return;
    }
    const auto &r = *m_report;
    QString strategy = strategyLabel(r.strategy);
    if (r.fellBackFromCdc)
        strategy += tr(" (fell back from CDC)");
    if (r.pickedUp)
        strategy += tr(", picked up by include_tables");
    fact(QStringLiteral("strategy"))->setText(strategy);
    fact(QStringLiteral("strategy"))
        ->setToolTip(r.pickedUp ? tr("Not listed in the workspace file: the pipeline's include_tables picked it up "
                                     "while the sync ran, and its settings come from the pipeline's table_defaults.")
                                : QString());
    const QString state = stateLabel(r.state);
    QString stateText = state;
    if (r.backfill)
        stateText += QStringLiteral(" \u2014 ") + formatBackfill(*r.backfill);
    fact(QStringLiteral("state"))->setText(stateText);
    QIcon icon = stateIcon(r.state);
    if (icon.isNull())
        icon = namedIcon(r.state == core::TableState::Ok || r.state == core::TableState::Streaming
                             ? QStringLiteral("ok")
                             : QStringLiteral("info"));
    m_stateIcon->setPixmap(icon.pixmap(kIconSize, kIconSize));
    const QString freshness = spelled(r.freshness);
    fact(QStringLiteral("freshness"))->setText(tr("%1 (SLA %2)").arg(freshness, formatDuration(r.slaSeconds)));
    m_freshnessIcon->setPixmap(freshnessIcon(r.freshness).pixmap(kIconSize, kIconSize));
    fact(QStringLiteral("lag"))->setText(formatLag(r.lagSeconds));
    fact(QStringLiteral("rows"))->setText(locale.toString(static_cast<qlonglong>(r.rowsApplied)));
    fact(QStringLiteral("lastSync"))->setText(r.lastSyncAtMs ? formatTimestamp(*r.lastSyncAtMs) : tr("never"));
    QLabel *checkpoint = fact(QStringLiteral("checkpoint"));
    checkpoint->setText(checkpoint->fontMetrics().elidedText(describeCheckpoint(r), Qt::ElideMiddle, 360));
    checkpoint->setToolTip(QString::fromStdString(r.checkpoint));
    fact(QStringLiteral("target"))->setText(QString::fromStdString(r.target));
    QString cursor = tr("\u2014 (only cursor tables have one)");
    if (r.strategy == core::Strategy::Cursor && m_workspace)
        if (const auto *p = m_workspace->pipeline(r.pipeline))
            for (const auto &t : p->tables)
                if (t.table.display() == r.table)
                    cursor = tr("%1, lookback %2")
                                 .arg(QString::fromStdString(t.cursorColumn()),
                                      QString::fromStdString(t.lookback.value_or(core::TableSpec::kDefaultLookback)));
    fact(QStringLiteral("cursor"))->setText(cursor);
    const core::TableSpec *spec = nullptr;
    if (m_workspace)
        if (const auto *p = m_workspace->pipeline(r.pipeline))
            for (const auto &t : p->tables)
                if (t.table.display() == r.table)
                    spec = &t;
    fact(QStringLiteral("columns"))->setText(spec ? mappingText(*spec) : QString());
    fact(QStringLiteral("filter"))->setText(spec ? filterText(*spec) : QString());
    fact(QStringLiteral("deletes"))->setText(spec ? deletesText(*spec) : QString());
    fact(QStringLiteral("paused"))
        ->setText(r.paused && r.pausedAtMs ? formatTimestamp(*r.pausedAtMs) : tr("not paused"));
    fact(QStringLiteral("message"))->setText(inAppWords(QString::fromStdString(r.message)));

    const bool busy = m_pauser->busy(m_pipeline, m_table);
    m_pause->setEnabled(!r.paused && !busy);
    m_resume->setEnabled(r.paused && !busy);
    m_pause->setToolTip(r.paused ? tr("%1 is paused").arg(m_table) : tr("Stop syncing %1 until resumed").arg(m_table));
    m_resume->setToolTip(r.paused ? tr("Sync %1 again").arg(m_table) : tr("%1 is not paused").arg(m_table));
}

void TableDetailDialog::readEvents()
{
    EngineDoor *door = m_engine->door();
    // The window shows another engine now: this table's events are not there.
    if (m_path.isEmpty() || m_path != m_engine->statePath() || !door)
        return;
    m_eventsInFlight = true;
    m_sinceEventsRead.start();
    auto encoded = [](const QString &v) { return QString::fromLatin1(QUrl::toPercentEncoding(v)); };
    door->request("GET",
                  QStringLiteral("/api/v1/events?limit=%1&pipeline=%2&table=%3")
                      .arg(kEventLimit)
                      .arg(encoded(m_pipeline), encoded(m_table)),
                  {}, this, [this, generation = m_eventsGeneration](const EngineDoor::Reply &r) {
                      if (generation != m_eventsGeneration)
                          return;
                      m_eventsInFlight = false;
                      if (!r.ok())
                          return; // busy or unreachable: the next snapshot asks again
                      m_events->setEvents(core::eventsFromJson(r.body));
                      if (!m_eventsLoaded)
                          m_eventsView->resizeColumnsToContents();
                      m_eventsLoaded = true;
                      emit eventsReady();
                  });
}

void TableDetailDialog::requestPause()
{
    if (!m_report || m_confirmation || !m_pause->isEnabled())
        return;
    auto *box = makePauseConfirmation(this, *m_report, true, m_engine->state() == EngineBridge::State::Running);
    connect(box, &QMessageBox::finished, this, [this, box] {
        if (box->clickedButton() == box->findChild<QPushButton *>(QStringLiteral("confirmPause")))
            m_pauser->setPaused(m_pipeline, m_table, true);
    });
    m_confirmation = box;
    box->open();
}

void TableDetailDialog::requestResume()
{
    if (!m_report || m_confirmation || !m_resume->isEnabled())
        return;
    auto *box = makePauseConfirmation(this, *m_report, false, m_engine->state() == EngineBridge::State::Running);
    connect(box, &QMessageBox::finished, this, [this, box] {
        if (box->clickedButton() == box->findChild<QPushButton *>(QStringLiteral("confirmResume")))
            m_pauser->setPaused(m_pipeline, m_table, false);
    });
    m_confirmation = box;
    box->open();
}

void TableDetailDialog::done(int result)
{
    screenfit::remember(this, QStringLiteral("tableDetail"));
    QDialog::done(result);
}

} // namespace driftless::ui
