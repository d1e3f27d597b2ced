#include "ui/pages/alertspage.h"

#include "ui/models/alertsmodel.h"
#include "ui/models/eventsmodel.h"
#include "ui/widgets/visiblerowfitter.h"
#include "ui/widgets/wrapanywheredelegate.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace driftless::ui {

namespace {

void setUpView(QTableView *view)
{
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setAlternatingRowColors(true);
    view->verticalHeader()->setVisible(false);
    view->horizontalHeader()->setHighlightSections(false);
}

QLabel *heading(const QString &text, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    return label;
}

} // namespace

AlertsPage::AlertsPage(AlertsModel *alerts, EventsModel *events, QWidget *parent)
    : QWidget(parent), m_alerts(alerts), m_events(new QSortFilterProxyModel(this)), m_alertsView(new QTableView(this)),
      m_eventsView(new QTableView(this)), m_alertsTitle(heading(tr("Open alerts"), this)), m_allClear(new QLabel(this)),
      m_level(new QComboBox(this))
{
    setObjectName(QStringLiteral("alertsPage"));

    m_alertsView->setObjectName(QStringLiteral("alertsView"));
    m_alertsView->setModel(m_alerts);
    setUpView(m_alertsView);
    // What is wrong and what to do are sentences: they wrap, and share the width left over.
    m_alertsView->setWordWrap(true);
    m_alertsView->setTextElideMode(Qt::ElideNone);
    QHeaderView *header = m_alertsView->horizontalHeader();
    header->setSectionResizeMode(AlertsModel::Level, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(AlertsModel::Subject, QHeaderView::Stretch);
    header->setSectionResizeMode(AlertsModel::Message, QHeaderView::Stretch);
    header->setSectionResizeMode(AlertsModel::Action, QHeaderView::Stretch);
    // Names and statements inside those sentences (a slot, a table, a SELECT) wrap too, instead
    // of running past the column's edge; what it is about shares the width with them.
    auto *wrap = new WrapAnywhereDelegate(m_alertsView);
    for (int c : {AlertsModel::Subject, AlertsModel::Message, AlertsModel::Action})
        m_alertsView->setItemDelegateForColumn(c, wrap);
    header->setSectionResizeMode(AlertsModel::Since, QHeaderView::ResizeToContents);
    // Fitted to the rows on screen: measuring every alert's text on each change blocked the UI
    // thread with 1,000 tables (B12).
    header->setResizeContentsPrecision(0);
    // Rows as tall as their wrapped text, measured for the rows on screen only (B12).
    new VisibleRowFitter(m_alertsView);
    m_allClear->setObjectName(QStringLiteral("allClear"));
    m_allClear->setWordWrap(true);
    m_allClear->setText(tr("No open alerts: every table is within its freshness SLA and every slot is healthy."));

    m_events->setSourceModel(events);
    m_events->setFilterRole(EventsModel::LevelRole);
    m_events->setFilterKeyColumn(EventsModel::Level);
    m_eventsView->setObjectName(QStringLiteral("eventsView"));
    m_eventsView->setModel(m_events);
    m_eventsView->setWordWrap(false);
    m_eventsView->horizontalHeader()->setResizeContentsPrecision(0);
    m_eventsView->horizontalHeader()->setStretchLastSection(true);
    setUpView(m_eventsView);

    m_level->setObjectName(QStringLiteral("levelFilter"));
    m_level->addItem(tr("All events"));
    m_level->addItem(tr("Warnings and errors"));
    m_level->addItem(tr("Errors only"));
    connect(m_level, &QComboBox::currentIndexChanged, this, &AlertsPage::applyLevel);

    auto *alertsBox = new QWidget(this);
    auto *alertsLayout = new QVBoxLayout(alertsBox);
    alertsLayout->setContentsMargins(0, 0, 0, 0);
    alertsLayout->addWidget(m_alertsTitle);
    alertsLayout->addWidget(m_allClear);
    alertsLayout->addWidget(m_alertsView, 1);

    auto *eventsBox = new QWidget(this);
    auto *eventsLayout = new QVBoxLayout(eventsBox);
    eventsLayout->setContentsMargins(0, 0, 0, 0);
    auto *eventsTop = new QHBoxLayout;
    eventsTop->addWidget(heading(tr("Event log"), eventsBox), 1);
    eventsTop->addWidget(m_level);
    eventsLayout->addLayout(eventsTop);
    eventsLayout->addWidget(m_eventsView, 1);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setObjectName(QStringLiteral("alertsSplitter"));
    splitter->addWidget(alertsBox);
    splitter->addWidget(eventsBox);
    // The alerts are the point of the page; the log is the history behind them.
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setSizes({3000, 2000});
    splitter->setChildrenCollapsible(false);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(splitter);

    connect(m_alerts, &QAbstractItemModel::modelReset, this, &AlertsPage::updateAlerts);
    connect(m_alerts, &QAbstractItemModel::rowsInserted, this, &AlertsPage::updateAlerts);
    connect(m_alerts, &QAbstractItemModel::rowsRemoved, this, &AlertsPage::updateAlerts);
    connect(m_events, &QAbstractItemModel::rowsInserted, this, &AlertsPage::fitEventColumns);
    connect(m_events, &QAbstractItemModel::modelReset, this, &AlertsPage::fitEventColumns);
    updateAlerts();
    fitEventColumns();
}

void AlertsPage::fitEventColumns()
{
    // Everything but the message fits its contents; the message takes the rest of the width
    // (its tooltip has all of it), so the log never scrolls sideways.
    for (int c = 0; c < EventsModel::Message; ++c)
        m_eventsView->resizeColumnToContents(c);
}

int AlertsPage::alertCount() const
{
    return m_alerts->rowCount();
}

void AlertsPage::updateAlerts()
{
    const int count = alertCount();
    m_alertsTitle->setText(count ? tr("Open alerts (%1)").arg(count) : tr("Open alerts"));
    m_allClear->setVisible(count == 0);
    m_alertsView->setVisible(count > 0);
    if (count != m_lastAlertCount) {
        m_lastAlertCount = count;
        emit alertCountChanged(count);
    }
}

void AlertsPage::applyLevel(int index)
{
    switch (index) {
    case 1:
        m_events->setFilterRegularExpression(QStringLiteral("^(warn|error)$"));
        break;
    case 2:
        m_events->setFilterRegularExpression(QStringLiteral("^error$"));
        break;
    default:
        m_events->setFilterRegularExpression(QString());
        break;
    }
}

} // namespace driftless::ui
