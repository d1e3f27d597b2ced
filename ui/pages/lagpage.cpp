#include "ui/pages/lagpage.h"

#include "ui/widgets/lagchart.h"

#include <QVBoxLayout>

namespace driftless::ui {

LagPage::LagPage(QWidget *parent) : QWidget(parent), m_chart(new LagChart(this))
{
    setObjectName(QStringLiteral("lagPage"));
    m_chart->setNote(tr("Apply lag per table: how far the target is behind the source. "
                        "Dashed lines: the freshness SLAs (grey when several tables share one)."));
    connect(m_chart, &LagChart::historyReady, this, &LagPage::historyReady);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_chart);
}

QChart *LagPage::chart() const
{
    return m_chart->chart();
}
QChartView *LagPage::chartView() const
{
    return m_chart->chartView();
}
QComboBox *LagPage::windowCombo() const
{
    return m_chart->windowCombo();
}
std::int64_t LagPage::windowMs() const
{
    return m_chart->windowMs();
}
void LagPage::setWindowMs(std::int64_t ms)
{
    m_chart->setWindowMs(ms);
}
bool LagPage::historyLoaded() const
{
    return m_chart->historyLoaded();
}
void LagPage::setSnapshot(const EngineSnapshot &snapshot)
{
    m_chart->setSnapshot(snapshot);
}
void LagPage::reload()
{
    m_chart->reload();
}
void LagPage::setEngine(EngineBridge *engine)
{
    m_chart->setEngine(engine);
}

QLineSeries *LagPage::lagSeries(const QString &pipeline, const QString &table) const
{
    return m_chart->lagSeries(pipeline, table);
}

QList<QPointF> LagPage::lagPoints(const QString &pipeline, const QString &table) const
{
    return m_chart->lagPoints(pipeline, table);
}

int LagPage::segmentCount(const QString &pipeline, const QString &table) const
{
    return m_chart->segmentCount(pipeline, table);
}

QLineSeries *LagPage::slaSeries(const QString &pipeline, const QString &table) const
{
    return m_chart->slaSeries(pipeline, table);
}

} // namespace driftless::ui
