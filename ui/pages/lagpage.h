#pragma once

#include "ui/enginesnapshot.h"

#include <QList>
#include <QPointF>
#include <QWidget>

#include <cstdint>

class QChart;
class QChartView;
class QComboBox;
class QLineSeries;

namespace driftless::ui {

class EngineBridge;

class LagChart;

/// Apply lag of every table over time, with each table's freshness SLA: a LagChart (the same
/// widget a table's detail charts that table with) over the whole workspace. The accessors
/// reach into it, for tests and the window's F5.
class LagPage final : public QWidget {
    Q_OBJECT
public:
    explicit LagPage(QWidget *parent = nullptr);

    LagChart *lagChart() const { return m_chart; }
    QChart *chart() const;
    QChartView *chartView() const;
    QComboBox *windowCombo() const;
    std::int64_t windowMs() const;
    void setWindowMs(std::int64_t ms);
    /// See LagChart.
    QLineSeries *lagSeries(const QString &pipeline, const QString &table) const;
    QList<QPointF> lagPoints(const QString &pipeline, const QString &table) const;
    int segmentCount(const QString &pipeline, const QString &table) const;
    QLineSeries *slaSeries(const QString &pipeline, const QString &table) const;
    bool historyLoaded() const;
    /// See LagChart::setEngine().
    void setEngine(EngineBridge *engine);

public slots:
    void setSnapshot(const driftless::ui::EngineSnapshot &snapshot);
    /// Reads the history again (F5).
    void reload();

signals:
    /// The history of the current tables and window is on screen.
    void historyReady();

private:
    LagChart *m_chart;
};

} // namespace driftless::ui
