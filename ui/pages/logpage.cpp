#include "ui/pages/logpage.h"

#include "ui/models/eventsmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/widgets/freshnessbadge.h"

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
    view->setWordWrap(false);
    view->verticalHeader()->setVisible(false);
    view->horizontalHeader()->setStretchLastSection(true);
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

LogPage::LogPage(TablesModel *tables, EventsModel *events, QWidget *parent)
    : QWidget(parent), m_alerts(new QSortFilterProxyModel(this)), m_events(new QSortFilterProxyModel(this)),
      m_alertsView(new QTableView(this)), m_eventsView(new QTableView(this)),
      m_alertsTitle(heading(tr("Needs attention"), this)), m_allClear(new QLabel(this)), m_level(new QComboBox(this))
{
    setObjectName(QStringLiteral("logPage"));

    m_alerts->setSourceModel(tables);
    m_alerts->setFilterRole(TablesModel::AttentionRole);
    m_alerts->setFilterKeyColumn(TablesModel::Pipeline);
    m_alerts->setFilterFixedString(QStringLiteral("true"));
    m_alertsView->setObjectName(QStringLiteral("alertsView"));
    m_alertsView->setModel(m_alerts);
    m_alertsView->setItemDelegateForColumn(TablesModel::Freshness, new FreshnessBadge(m_alertsView));
    setUpView(m_alertsView);
    // An alert says which table and why; how it syncs and how much it moved are on the Tables page.
    for (int c : {TablesModel::Strategy, TablesModel::Rows, TablesModel::LastSync})
        m_alertsView->setColumnHidden(c, true);
    m_allClear->setObjectName(QStringLiteral("allClear"));
    m_allClear->setText(tr("Nothing needs attention: every table is syncing within its freshness SLA."));

    m_events->setSourceModel(events);
    m_events->setFilterRole(EventsModel::LevelRole);
    m_events->setFilterKeyColumn(EventsModel::Level);
    m_eventsView->setObjectName(QStringLiteral("eventsView"));
    m_eventsView->setModel(m_events);
    setUpView(m_eventsView);

    m_level->setObjectName(QStringLiteral("levelFilter"));
    m_level->addItem(tr("All events"));
    m_level->addItem(tr("Warnings and errors"));
    m_level->addItem(tr("Errors only"));
    connect(m_level, &QComboBox::currentIndexChanged, this, &LogPage::applyLevel);

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
    splitter->setObjectName(QStringLiteral("logSplitter"));
    splitter->addWidget(alertsBox);
    splitter->addWidget(eventsBox);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 2);
    splitter->setChildrenCollapsible(false);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(splitter);

    for (auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
        connect(m_alerts, signal, this, &LogPage::updateAlerts);
    connect(m_alerts, &QAbstractItemModel::modelReset, this, &LogPage::updateAlerts);
    connect(m_alerts, &QAbstractItemModel::dataChanged, this, &LogPage::updateAlerts);
    connect(m_events, &QAbstractItemModel::rowsInserted, this, [this] { m_eventsView->resizeColumnsToContents(); });
    connect(m_events, &QAbstractItemModel::modelReset, this, [this] { m_eventsView->resizeColumnsToContents(); });
    updateAlerts();
    m_eventsView->resizeColumnsToContents();
}

int LogPage::alertCount() const { return m_alerts->rowCount(); }

void LogPage::updateAlerts()
{
    const int count = alertCount();
    m_alertsTitle->setText(count ? tr("Needs attention (%1)").arg(count) : tr("Needs attention"));
    m_allClear->setVisible(count == 0);
    m_alertsView->setVisible(count > 0);
    if (count != m_lastAlertCount) {
        m_alertsView->resizeColumnsToContents();
        m_lastAlertCount = count;
        emit alertCountChanged(count);
    }
}

void LogPage::applyLevel(int index)
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
