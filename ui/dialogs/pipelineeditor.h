#pragma once

#include "core/engine/endpoints/tablediscovery.h"
#include "core/model/workspace.h"

#include <QDialog>
#include <QPointer>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QDialogButtonBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSplitter;
class QTabWidget;
class QTreeWidget;
class QTreeWidgetItem;

namespace driftless::ui {

class ColumnMappingPanel;
class ConflictPolicyPicker;
class EngineDoor;
class PatternSettingsPanel;
class PipelineSettingsPanel;
class TableSettingsPanel;

/// Adds or edits one pipeline: its name, source (a Postgres or MySQL/MariaDB endpoint), target
/// (any other endpoint), target schema (Postgres targets; the database for MySQL ones), and the
/// tables it keeps in sync.
///
/// The source's tables are discovered by the engine's door (POST /api/v1/discover: where the
/// engine runs, so an agent reads its own sources; Postgres: core::discoverTables, with
/// core::probePostgres for what CDC needs; MySQL: core::discoverMysqlTables in the DSN's
/// database, or in every database when it names none, with core::probeMysql for the binlog and
/// grants CDC needs) whenever the source changes; a result for any source but the latest is
/// dropped.
/// Each table gets core::recommendStrategy()'s strategy and reason; strategies it refuses are
/// disabled in the table's combo box, with the reason as tooltip. Editing keeps the pipeline's tables with
/// their settings, including tables discovery did not find.
///
/// The selected table's columns panel (ColumnMappingPanel) edits its `columns:`, `where:`,
/// `deletes:` and `target_table:`; the editor refuses what `apply` would: the workspace loader's
/// checks (WorkspaceFile::parse of the edited workspace) and core::checkColumnMapping against the
/// discovered columns, with core's message shown under the grid and beside OK.
///
/// Below the tables, four tabs: the selected table's settings (TableSettingsPanel: cursor,
/// lookback, page size, every, freshness SLA, truncate, fallback cursor, schema changes, and
/// conflicts for two-way pipelines), its columns, the pipeline's own settings
/// (PipelineSettingsPanel: publication, heartbeat, reconcile schedule and alert, schema changes),
/// and its tables by pattern (PatternSettingsPanel: include_tables, exclude_tables,
/// discover_every, table_defaults). A pipeline with include_tables needs no listed table.
///
/// Tables the patterns picked up while the sync ran (TableSpec::discovered) are listed
/// half-ticked, their settings read-only, and come back from pipeline() as they were given, still
/// picked up (never listed, so never written to the YAML). Ticking one lists it under `tables:`
/// with its settings as a start (a listed table wins over the patterns); unticking it again makes
/// it a picked-up table as it was.
/// Every key of a pipeline in the workspace file has a field here; one opened and closed
/// without an edit gives back the pipeline it was given.
///
/// The dialog fits the screen it opens on (a 1366x768 laptop included) and remembers the size
/// and the split between the tables and the tabs the DBA gave it.
///
/// The dialog never writes anything: pipeline() is the result, saved by the caller.
class PipelineEditor final : public QDialog {
    Q_OBJECT
public:
    /// Tree columns.
    enum Column { Table, Strategy, Reason, Rows, Size, PrimaryKey, Candidates, ColumnCount };

    /// `workspace` gives the endpoints and the other pipelines' names; `existing` is the pipeline
    /// being edited (nullopt: a new one); `door` the engine that reads the source (null: this
    /// machine, with no workspace needed).
    PipelineEditor(core::Workspace workspace, std::optional<core::PipelineSpec> existing, QWidget *parent = nullptr,
                   EngineDoor *door = nullptr);
    ~PipelineEditor() override;

    /// The pipeline as the fields describe it; tables in the order they were first included.
    core::PipelineSpec pipeline() const;
    /// Why OK is disabled, or empty.
    QString problem() const;
    /// True while the latest discovery runs.
    bool discovering() const { return m_discovering; }

    QLineEdit *nameEdit() const { return m_name; }
    QLabel *nameRule() const { return m_nameRule; }
    QComboBox *sourceBox() const { return m_source; }
    QComboBox *targetBox() const { return m_target; }
    /// One way (source to target) or both ways (`direction: both`, a two-way pipeline).
    QComboBox *directionBox() const { return m_direction; }
    QLineEdit *targetSchemaEdit() const { return m_targetSchema; }
    QTreeWidget *tablesTree() const { return m_tree; }
    QLabel *discoveryLabel() const { return m_status; }
    QPushButton *refreshButton() const { return m_refresh; }
    QLabel *problemLabel() const { return m_problem; }
    QPushButton *okButton() const;
    QLabel *selectedLabel() const { return m_selected; }
    QLabel *selectedReason() const { return m_selectedReason; }
    QComboBox *cursorBox() const;
    QLineEdit *lookbackEdit() const;
    QLineEdit *slaEdit() const;
    /// The selected table's settings, on the "Table" tab.
    TableSettingsPanel *tableSettings() const { return m_tableSettings; }
    /// The pipeline's own settings, on the "Pipeline" tab.
    PipelineSettingsPanel *pipelineSettings() const { return m_settings; }
    /// include_tables, exclude_tables, discover_every and table_defaults, on the "Patterns" tab.
    PatternSettingsPanel *patternSettings() const { return m_patterns; }
    /// Table, Columns, Pipeline, Patterns.
    QTabWidget *settingsTabs() const { return m_tabs; }
    /// Between the tables and the tabs; its handle is visible and its sizes are remembered.
    QSplitter *splitter() const { return m_split; }
    /// The selected table's `conflicts:` policy; shown when Both ways is chosen.
    ConflictPolicyPicker *conflictsPicker() const { return m_conflicts; }
    /// Gives every included table the selected table's conflicts policy.
    QPushButton *conflictsToAllButton() const { return m_conflictsToAll; }
    ColumnMappingPanel *columnsPanel() const { return m_columns; }

    /// The row of table `display` ("schema.name" as Postgres prints it; for MySQL sources
    /// "database.table" with the case kept, backticks only where needed), or null.
    QTreeWidgetItem *tableItem(const QString &display) const;
    /// The strategy combo box of table `display`, or null.
    QComboBox *strategyBox(const QString &display) const;
    /// What recommendStrategy() said for table `display`; nullopt when it was not discovered.
    std::optional<core::Recommendation> recommendation(const QString &display) const;
    /// Includes or leaves out table `display` (its checkbox).
    void setIncluded(const QString &display, bool included);
    /// Selects table `display` for the cursor, lookback and SLA fields.
    void selectTable(const QString &display);

public slots:
    /// Reads the selected source's tables off the UI thread; discoveryFinished() when done.
    void discover();

signals:
    void discoveryFinished(bool ok);

protected:
    void done(int result) override;
    void showEvent(QShowEvent *event) override;

private:
    /// One table of the tree: what discovery found (if it did) and its settings.
    struct Row {
        std::optional<core::DiscoveredTable> found;
        std::optional<core::Recommendation> rec;
        core::TableSpec spec;
        bool included = false;
        /// Picked up by include_tables (as the edited pipeline gave it): shown half-ticked and
        /// given back as it was, unless ticked (then listed).
        std::optional<core::TableSpec> pickedUp;
        QTreeWidgetItem *item = nullptr;
        QComboBox *strategy = nullptr;
    };

    void showDiscovery(std::uint64_t job, const core::SourceDiscovery &d);
    void rebuildTree();
    void addRow(const core::TableRef &ref);
    Row *rowOf(const QTreeWidgetItem *item);
    Row *rowOf(const QString &display);
    const Row *rowOf(const QString &display) const;
    Row *selectedRow();
    void onItemChanged(QTreeWidgetItem *item, int column);
    void onStrategyChosen(const core::TableRef &ref);
    void loadSelected();
    void storeSelected();
    void updateTargets();
    /// The source endpoint's kind (Postgres when none is chosen).
    core::EndpointKind sourceKind() const;
    void updateState();
    /// The Patterns tab's title, with the tables they picked up.
    void showPickedUp();
    /// Both ways: every included table streams (a two-way pipeline is CDC only).
    void applyDirection();
    QString strategyReason(const Row &row) const;
    /// The Primary key column of `r`'s row: its declared `key:` (marked so) or the source's own key.
    void showKey(const Row &r) const;
    /// core::checkColumnMapping's message for the row's mapping against its discovered columns,
    /// or empty (fits, or nothing to check it against).
    QString mappingProblem(const Row &row) const;
    void onColumnsEdited();
    void applyConflictsToAll();
    /// The table's name as the tree and the accessors know it (see tableItem()).
    QString displayOf(const core::TableRef &ref) const;

    core::Workspace m_workspace;
    std::optional<core::PipelineSpec> m_existing;
    QPointer<EngineDoor> m_door;
    EngineDoor *m_ownDoor = nullptr; ///< made when there is no door to ask
    std::uint64_t m_job = 0;
    bool m_discovering = false;
    bool m_loading = false; ///< filling fields from a row: their signals are not edits
    bool m_mysql = false;   ///< the source is MySQL/MariaDB: names as MySQL prints them
    bool m_splitRestored = false;

    std::map<core::TableRef, Row> m_rows;
    /// Included tables in the order they were included (an edited pipeline's order first).
    std::vector<core::TableRef> m_order;
    /// The edited pipeline's picked-up tables, in its order.
    std::vector<core::TableRef> m_pickedUp;

    QLineEdit *m_name;
    QLabel *m_nameRule;
    QComboBox *m_source;
    QComboBox *m_target;
    QComboBox *m_direction = nullptr;
    QLabel *m_arrow = nullptr;
    QLabel *m_targetSchemaLabel;
    QLineEdit *m_targetSchema;
    QTreeWidget *m_tree;
    QLabel *m_status;
    QPushButton *m_refresh;
    QWidget *m_details;
    QLabel *m_selected;
    QLabel *m_selectedReason;
    TableSettingsPanel *m_tableSettings;
    QWidget *m_columnsBox;
    ColumnMappingPanel *m_columns;
    PipelineSettingsPanel *m_settings;
    PatternSettingsPanel *m_patterns;
    QTabWidget *m_tabs;
    QSplitter *m_split;
    ConflictPolicyPicker *m_conflicts = nullptr;
    QLabel *m_conflictsLabel = nullptr;
    QPushButton *m_conflictsToAll = nullptr;
    QLabel *m_problem;
    QDialogButtonBox *m_buttons;
};

} // namespace driftless::ui
