#pragma once

#include "ui/backfillrunner.h"
#include "ui/dialogs/tabledetaildialog.h"
#include "ui/models/tablesmodel.h"
#include "ui/pauserunner.h"
#include "ui/promoterunner.h"
#include "ui/recoverrunner.h"

#include <QMessageBox>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <array>
#include <cstdint>
#include <vector>

class QAction;
class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace driftless::ui {

class BackfillProgress;

/// Every synced table with its state and freshness: a sortable, filterable table, a one-line
/// summary above it and the selected table's message (the why of an error) below it.
///
/// "Backfill…" copies the selected CDC table again while it streams, after a confirmation that
/// says what will happen; "Cancel backfill" stops a re-backfill under way (both through
/// BackfillRunner, off the UI thread). A running backfill (re-backfill or initial load) shows as
/// a progress bar in the Backfill column. Full refresh and cursor tables cannot be backfilled:
/// the button is disabled and its tooltip says why.
///
/// "Promote to CDC…" returns a table the slot guard moved to cursor sync back to CDC, after a
/// confirmation that says what will happen, through the page's PromoteRunner (off the UI thread;
/// a running sync is stopped and started again with the stored workspace). Its outcome lines
/// show above the table.
///
/// "Recover…" shows only for a table a change of source stopped (docs/failover.md), beside the
/// detail that names `driftless-cli recover`: after a confirmation saying what happens for its
/// source's kind, the page's RecoverRunner leaves the request and restarts a running sync. Its
/// outcome lines show above the table. The Dashboard and the Slots page ask through
/// requestRecover(pipeline).
///
/// "Pause…" and "Resume…" hold a table (kept across restarts) or sync it again, after a
/// confirmation saying what happens for its strategy, through the page's PauseRunner; the context
/// menu's "Pause Pipeline…" and "Resume Pipeline…" do it for every table of the row's pipeline in
/// one request. A double-click (or Enter) opens the table's detail: its facts, lag chart and events, live.
class TablesPage final : public QWidget {
    Q_OBJECT
public:
    TablesPage(TablesModel *model, BackfillRunner *runner, QWidget *parent = nullptr);

    QTableView *view() const { return m_view; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    QLineEdit *filterEdit() const { return m_filter; }
    QPushButton *backfillButton() const { return m_backfill; }
    QPushButton *cancelButton() const { return m_cancel; }
    QPushButton *promoteButton() const { return m_promote; }
    QPushButton *pauseButton() const { return m_pause; }
    QPushButton *resumeButton() const { return m_resume; }
    QPushButton *recoverButton() const { return m_recover; }
    RecoverRunner *recoverRunner() const { return m_recoverer; }
    /// The outcome of the last recovery request (one line per table, then the sync's).
    QLabel *recoverResult() const { return m_recoverResult; }
    PauseRunner *pauseRunner() const { return m_pauser; }
    /// The open table detail, else null.
    TableDetailDialog *detail() const { return m_detail; }
    PromoteRunner *promoteRunner() const { return m_promoter; }
    /// The outcome of the last promotion (one line per table).
    QLabel *promoteResult() const { return m_promoteResult; }
    BackfillProgress *progressDelegate() const { return m_progress; }
    /// The backfill, cancel or promote confirmation while it is open, else null.
    QMessageBox *confirmation() const { return m_confirmation; }
    /// The model row of the selected table, or -1.
    int selectedRow() const;
    /// The source-model rows of every selected table, in model order.
    std::vector<int> selectedRows() const;
    /// Selects every table of `pipeline`: Pause and Resume then act on the whole pipeline.
    void selectPipeline(const QString &pipeline);
    void selectTable(const QString &pipeline, const QString &table);

public slots:
    void focusFilter();
    /// A problem with the workspace as a whole (unreadable file); empty hides it.
    void setNotice(const QString &notice);
    /// Asks to backfill the selected table (the button's and the context menu's action).
    void requestBackfill();
    /// Asks to cancel the selected table's re-backfill.
    void requestCancel();
    /// Asks to return the selected table, which fell back from CDC, to CDC.
    void requestPromote();
    /// Asks to recover `pipeline` (empty: the selected table's), whose source changed.
    void requestRecover(const QString &pipeline = QString());
    /// Asks to pause / resume the selected table.
    void requestPause();
    void requestResume();
    /// Asks to pause (`pause`) or resume every table of `pipeline`, in one request: the context
    /// menu's Pause Pipeline… and Resume Pipeline…. Nothing to change: nothing asked.
    void requestPipelinePaused(const QString &pipeline, bool pause);
    /// Opens the detail of the table in model row `row` (a double-click's action); returns it.
    TableDetailDialog *openDetail(int row);

signals:
    /// An outcome for the status bar: a request taken, refused, or failed.
    void statusMessage(const QString &message);

protected:
    void showEvent(QShowEvent *event) override;
    /// The grid's viewport resized: the columns are shared out again (shareColumns).
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void updateSummary();
    void updateDetails();
    void updateButtons();
    /// Several tables selected: Pause and Resume act on those they can; the rest wait for one.
    void updateButtonsForMany(const std::vector<int> &rows);
    /// Of `rows`, those Pause (`pause`) or Resume acts on.
    std::vector<int> actionable(const std::vector<int> &rows, bool pause) const;
    /// Asks, then pauses (or resumes) every selected table it can.
    void requestPaused(bool pause);
    /// The forward rows of `pipeline` that pausing (`pause`) or resuming it would change.
    std::vector<int> pipelineRows(const QString &pipeline, bool pause) const;
    /// Fits columns first..last (all but the message column by default).
    void fitColumns(bool growOnly, int first = 0, int last = -1);
    /// fitColumns once the current burst of model signals is over, and only while the page is
    /// shown (hidden, it fits when shown): measuring columns on every snapshot of 1,000 tables
    /// was ~9% of the UI thread's time (B12).
    /// Updates fit only the columns that changed (first..last; -1: all).
    void fitColumnsSoon(bool growOnly, int first = 0, int last = -1);
    /// Sets the columns to their fitted widths, the text columns cut (elided) where the grid is
    /// too narrow for them all and Message's room: Message stays on screen.
    void shareColumns();
    /// The width column `c`'s header needs for its words, the sort arrow only where it shows.
    int headerLeast(int c) const;
    void showContextMenu(const QPoint &pos);
    void showOutcome(std::uint64_t job, BackfillRunner::Action action, const QString &pipeline, const QString &table,
                     bool ok, const QString &message);
    void showPromoted(const QString &pipeline, bool ok, const QStringList &lines);
    void showRecovered(const QString &pipeline, bool ok, const QStringList &lines);

    TablesModel *m_model;
    BackfillRunner *m_runner;
    PromoteRunner *m_promoter;
    RecoverRunner *m_recoverer;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QLineEdit *m_filter;
    QLabel *m_summary;
    QLabel *m_notice;
    QLabel *m_details;
    QPushButton *m_backfill;
    QPushButton *m_cancel;
    QPushButton *m_promote;
    QPushButton *m_pause;
    QPushButton *m_resume;
    QPushButton *m_recover;
    PauseRunner *m_pauser;
    QPointer<TableDetailDialog> m_detail;
    QLabel *m_promoteResult;
    QLabel *m_recoverResult;
    BackfillProgress *m_progress;
    QPointer<QMessageBox> m_confirmation;
    QTimer *m_fitTimer;
    bool m_fitGrowOnly = true;
    bool m_fitOnShow = false;
    /// The columns the next fit measures; first > last: none yet.
    int m_fitFirst = 1, m_fitLast = 0;
    /// Each column's width as fitted to its contents, before shareColumns cuts any.
    std::array<int, TablesModel::Message> m_fitted{};
    /// Columns the DBA sized by hand since the last full fit: kept, never cut.
    std::array<bool, TablesModel::Message> m_byHand{};
    /// Each column's widest text among the rows measured: numbers and times are never cut below.
    std::array<int, TablesModel::Message> m_content{};
    bool m_sharing = false; ///< shareColumns is setting widths: not the DBA's
};

} // namespace driftless::ui
