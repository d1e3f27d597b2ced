#pragma once

#include "ui/enginesnapshot.h"
#include "ui/models/conflictsmodel.h"

#include <nlohmann/json_fwd.hpp>

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <cstdint>
#include <memory>

class QComboBox;
class QLabel;
class QMessageBox;
class QPushButton;
class QTableView;

namespace driftless::core {
struct Workspace;
}

namespace driftless::ui {

class ConflictRowModel;
class EngineBridge;

/// Conflicts: the rows of two-way pipelines that the conflict policy left for a person (the
/// `manual` policy, or `merge_columns` with `on_overlap: manual`), oldest first, and below the
/// list the selected one side by side: each column's base, source and target value, the changed
/// cells highlighted, and for each column the sides differ in a choice of the side to keep (by
/// default the three-way merge's). "Take Source" and "Take Target" write that side's version over
/// the other side's row; "Apply Choice" writes the row as chosen per column to both sides (POST
/// /api/v1/conflicts/ID/resolve, as `driftless-cli resolve` does), then the list is read again.
/// Each asks first, in a dialog that says what will be written on which side.
///
/// - Everything goes through the engine's door (EngineBridge::door()): the app's own engine on
///   a workspace file, or an agent's; nothing here reads a database or the file on the UI thread.
/// - The list is read when another workspace is shown, when the engine's events report new or
///   resolved conflicts, every kRefreshMs, on reload() (F5) and after each resolution. Replies
///   for a workspace no longer shown are dropped (a generation counter).
/// - openCountChanged() carries the number of open conflicts (the navigation's badge), and
///   countsChanged() the count per pipeline and table.
class ConflictsPage final : public QWidget {
    Q_OBJECT
public:
    explicit ConflictsPage(EngineBridge *engine, QWidget *parent = nullptr);

    static constexpr int kRefreshMs = 10'000;

    ConflictsModel *model() const { return m_model; }
    ConflictRowModel *rowModel() const { return m_rowModel; }
    QTableView *view() const { return m_view; }
    QTableView *rowView() const { return m_rowView; }
    QPushButton *takeSourceButton() const { return m_takeSource; }
    QPushButton *takeTargetButton() const { return m_takeTarget; }
    QPushButton *applyChoiceButton() const { return m_applyChoice; }
    /// The Keep combobox of `column` in the grid, or null (the sides agree on it).
    QComboBox *choiceBox(const QString &column) const;
    /// The confirmation while it is open, else null.
    QMessageBox *confirmation() const { return m_confirmation; }
    QLabel *summaryLabel() const { return m_summary; }
    QLabel *detailsLabel() const { return m_details; }
    QLabel *resultLabel() const { return m_result; }
    /// True while a resolution is on its way.
    bool resolving() const { return m_resolving != 0; }
    /// True once a list was read for the workspace shown.
    bool loaded() const { return m_loaded; }

    /// The model row of the selected conflict, or -1.
    int selectedRow() const;
    void selectRow(int row);

public slots:
    void setSnapshot(const driftless::ui::EngineSnapshot &snapshot);
    /// Reads the list again.
    void reload();
    /// Asks, then resolves the selected conflict with `take` ("source" or "target").
    void resolveSelected(const QString &take);
    /// Asks, then resolves the selected conflict with the row as chosen per column.
    void applyChoice();

signals:
    void openCountChanged(int count);
    void countsChanged(const driftless::ui::ConflictsModel::CountByTable &counts);
    /// An outcome for the status bar.
    void statusMessage(const QString &message);

private:
    void onRead(std::uint64_t generation, const nlohmann::json &body, const QString &error);
    void showSelected();
    /// One Keep combobox per column the sides differ in.
    void makeChoiceBoxes();
    /// Opens the confirmation for `body` (the resolve request), which says what is written where.
    void confirm(const nlohmann::json &body, const QString &what);
    void post(std::int64_t id, const nlohmann::json &body, const QString &what);
    void updateButtons();
    void updateSummary();

    EngineBridge *m_engine;
    ConflictsModel *m_model;
    ConflictRowModel *m_rowModel;
    QLabel *m_summary;
    QPushButton *m_refresh;
    QTableView *m_view;
    QLabel *m_details;
    QTableView *m_rowView;
    QPushButton *m_takeSource;
    QPushButton *m_takeTarget;
    QPushButton *m_applyChoice;
    QLabel *m_result;
    QPointer<QMessageBox> m_confirmation;
    std::shared_ptr<const core::Workspace> m_workspace;
    QTimer m_timer;

    QString m_path;
    std::uint64_t m_generation = 0;
    bool m_reading = false;
    bool m_readAgain = false;
    bool m_loaded = false;
    QString m_readError;
    /// The conflict whose resolution is on its way (0: none).
    std::int64_t m_resolving = 0;
    std::int64_t m_lastEventId = 0;
};

} // namespace driftless::ui
