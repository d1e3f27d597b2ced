#include "ui/pages/dashboardpage.h"

#include "ui/widgets/dashboardgrid.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

namespace driftless::ui {

namespace {
QString howToStart(bool firstRun)
{
    return (firstRun ? DashboardPage::tr("<h3>Welcome to Driftless</h3>"
                                         "<p>Driftless keeps tables in two databases in sync and shows, here, that "
                                         "they are fresh and correct.</p>")
                     : DashboardPage::tr("<h3>No tables yet</h3>")) +
           DashboardPage::tr(
               "<p>To start syncing, open the <b>Workspace</b> page:</p>"
               "<ol><li><b>Add Endpoint\u2026</b> for the source database and again for the target;</li>"
               "<li><b>Add Pipeline\u2026</b> to pick the tables and a strategy for each "
               "(or <b>Import YAML\u2026</b> to read a workspace written as a file);</li>"
               "<li><b>Start Sync</b> in the toolbar.</li></ol>"
               "<p>Each pipeline and table then shows here with its freshness. The syncs an agent runs on "
               "a server are shown with <b>Connect to Agent\u2026</b>.</p>");
}
} // namespace

DashboardPage::DashboardPage(QWidget *parent)
    : QWidget(parent), m_filter(new QLineEdit(this)), m_group(new QComboBox(this)), m_order(new QComboBox(this)),
      m_summary(new QLabel(this)), m_emptyPage(new QWidget(this)), m_empty(new QLabel(m_emptyPage)),
      m_welcome(new QWidget(m_emptyPage)), m_scroll(new QScrollArea(this)), m_grid(new DashboardGrid(m_scroll))
{
    setObjectName(QStringLiteral("dashboardPage"));
    m_filter->setObjectName(QStringLiteral("dashboardFilter"));
    m_filter->setPlaceholderText(tr("Filter tables by pipeline, name or strategy"));
    m_filter->setClearButtonEnabled(true);
    m_group->setObjectName(QStringLiteral("dashboardGroup"));
    m_group->addItem(tr("Group by pipeline"), int(DashboardTiles::Grouping::Pipeline));
    m_group->addItem(tr("Group by strategy"), int(DashboardTiles::Grouping::Strategy));
    m_group->addItem(tr("Group by schema"), int(DashboardTiles::Grouping::Schema));
    m_order->setObjectName(QStringLiteral("dashboardOrder"));
    m_order->addItem(tr("Worst first"), int(DashboardTiles::Order::Worst));
    m_order->addItem(tr("By name"), int(DashboardTiles::Order::Name));
    m_summary->setObjectName(QStringLiteral("dashboardSummary"));
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_empty->setObjectName(QStringLiteral("dashboardEmpty"));
    m_empty->setWordWrap(true);
    m_empty->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_empty->setMargin(16);
    m_empty->setTextFormat(Qt::RichText);

    // The first steps, a click away: the page a new user opens on.
    m_welcome->setObjectName(QStringLiteral("welcomeButtons"));
    auto *steps = new QHBoxLayout(m_welcome);
    steps->setContentsMargins(16, 0, 16, 16);
    const std::pair<const char *, QString> buttons[] = {{"welcomeAddEndpoint", tr("Add &Endpoint\u2026")},
                                                        {"welcomeImportYaml", tr("&Import YAML\u2026")},
                                                        {"welcomeConnectAgent", tr("Connect to A&gent\u2026")},
                                                        {"welcomeDocs", tr("Documentation")}};
    for (const auto &[name, text] : buttons) {
        auto *b = new QPushButton(text, m_welcome);
        b->setObjectName(QLatin1String(name));
        steps->addWidget(b);
    }
    steps->addStretch(1);
    connect(m_welcome->findChild<QPushButton *>(QStringLiteral("welcomeAddEndpoint")), &QPushButton::clicked, this,
            &DashboardPage::addEndpointRequested);
    connect(m_welcome->findChild<QPushButton *>(QStringLiteral("welcomeImportYaml")), &QPushButton::clicked, this,
            &DashboardPage::importYamlRequested);
    connect(m_welcome->findChild<QPushButton *>(QStringLiteral("welcomeConnectAgent")), &QPushButton::clicked, this,
            &DashboardPage::connectAgentRequested);
    connect(m_welcome->findChild<QPushButton *>(QStringLiteral("welcomeDocs")), &QPushButton::clicked, this,
            &DashboardPage::docsRequested);

    m_scroll->setObjectName(QStringLiteral("dashboardScroll"));
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setWidget(m_grid);

    auto *bar = new QHBoxLayout;
    bar->addWidget(m_filter, 1);
    bar->addWidget(m_group);
    bar->addWidget(m_order);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_summary);
    // The text and the first steps' buttons in one page, standing in for the tiles.
    auto *emptyLayout = new QVBoxLayout(m_emptyPage);
    emptyLayout->setContentsMargins(0, 0, 0, 0);
    emptyLayout->addWidget(m_empty);
    emptyLayout->addWidget(m_welcome);
    emptyLayout->addStretch(1);
    layout->addWidget(m_emptyPage, 1);
    layout->addWidget(m_scroll, 1);
    m_emptyPage->setVisible(false);

    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString &text) {
        m_tiles.setFilter(text);
        rebuild();
    });
    connect(m_group, &QComboBox::currentIndexChanged, this, [this] {
        m_tiles.setGrouping(DashboardTiles::Grouping(m_group->currentData().toInt()));
        rebuild();
    });
    connect(m_order, &QComboBox::currentIndexChanged, this, [this] {
        m_tiles.setOrder(DashboardTiles::Order(m_order->currentData().toInt()));
        rebuild();
    });
    connect(m_grid, &DashboardGrid::tableClicked, this, &DashboardPage::tableActivated);
    connect(m_grid, &DashboardGrid::recoverRequested, this, &DashboardPage::recoverRequested);
    connect(m_grid, &DashboardGrid::pausePipelineRequested, this, &DashboardPage::pausePipelineRequested);
    connect(m_grid, &DashboardGrid::pipelineClicked, this, [this](const QString &pipeline) {
        showPipeline(m_tiles.pipelineFilter() == pipeline ? QString() : pipeline);
    });
    rebuild();
}

void DashboardPage::setSnapshot(const EngineSnapshot &snapshot)
{
    setSnapshot(snapshot, SIZE_MAX);
}

bool DashboardPage::setSnapshot(const EngineSnapshot &snapshot, std::size_t newTiles)
{
    if (!m_tiles.setSnapshot(snapshot, newTiles))
        return false;
    m_error = snapshot.error;
    m_noWorkspaceYet = snapshot.noWorkspaceYet;
    rebuild();
    return true;
}

void DashboardPage::setSlotSample(const SlotSample &sample)
{
    m_tiles.setSlotSample(sample);
    rebuild();
}

void DashboardPage::showPipeline(const QString &pipeline)
{
    m_tiles.setPipelineFilter(pipeline);
    rebuild();
}

void DashboardPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_stale)
        rebuild();
}

void DashboardPage::rebuild()
{
    // Hidden, the rings are current already; tiles and text wait until the page is shown.
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    m_stale = false;
    const bool empty = m_tiles.tableCount() == 0;
    m_emptyPage->setVisible(empty);
    m_scroll->setVisible(!empty);
    // No workspace file yet is a first run, not a failure: the first endpoint or import makes it.
    if (empty)
        m_empty->setText(m_error.isEmpty() || m_noWorkspaceYet
                             ? howToStart(m_noWorkspaceYet)
                             : tr("<h3>The workspace could not be read</h3><p>%1</p>").arg(m_error.toHtmlEscaped()) +
                                   howToStart(false));
    m_grid->setContent(m_tiles.pipelines(), m_tiles.groups(), m_tiles.pipelineFilter());
    updateSummary();
}

void DashboardPage::updateSummary()
{
    const int total = m_tiles.tableCount();
    if (total == 0) {
        m_summary->clear();
        return;
    }
    const int shown = m_grid->shownCount();
    QString text = total == 1 ? tr("1 table") : tr("%1 tables").arg(total);
    if (shown != total)
        text += tr(", %1 shown").arg(shown);
    if (!m_tiles.pipelineFilter().isEmpty())
        text += tr(" \u2014 only %1's (click its tile again to show all)").arg(m_tiles.pipelineFilter());
    if (!m_error.isEmpty() && !m_noWorkspaceYet)
        text += QStringLiteral(" \u2014 ") + m_error;
    m_summary->setText(text);
}

} // namespace driftless::ui
