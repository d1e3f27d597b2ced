#pragma once

#include <QObject>
#include <QTimer>

class QTableView;

namespace driftless::ui {

/// Fits the heights of a word-wrapping table's rows to their text, for the rows on screen only.
///
/// QHeaderView::ResizeToContents on the vertical header lays out every cell of every row whenever
/// anything changes: with 1,000 alerts that blocked the UI thread for 0.1-0.7 s on a page switch
/// (B12). Here rows are measured when they are on screen (after a scroll, a resize, a change of
/// the rows), coalesced to once per event-loop turn; rows off screen keep the default height
/// until they scroll into view.
class VisibleRowFitter : public QObject {
    Q_OBJECT
public:
    /// Attaches to `view` (and its current model); the view owns the fitter.
    explicit VisibleRowFitter(QTableView *view);
    /// Measures at the next turn of the event loop.
    void schedule();
    /// Measures now; returns how many rows were measured (tests).
    int fitNow();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QTableView *m_view;
    QTimer m_timer;
};

} // namespace driftless::ui
