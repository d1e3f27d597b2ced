#pragma once

#include "core/model/workspace.h"

#include <QStringList>
#include <QWidget>

#include <optional>
#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;

namespace driftless::ui {

class TableSettingsPanel;

/// The pipeline editor's "Patterns" tab: the tables a pipeline syncs by name pattern besides
/// its listed ones (docs/patterns.md), each a key of the workspace file: `include_tables`,
/// `exclude_tables` (lists of `schema.name` patterns, written here separated by commas),
/// `discover_every`, and `table_defaults`: the strategy ("Recommended per table" leaves it out,
/// so each table gets the recommender's) and every other per-table key but `table` and
/// `target_table`, through a TableSettingsPanel (cursor, lookback, page size, every, freshness
/// SLA, truncate, fallback cursor, schema changes) and fields for `deletes`, `where` and the
/// columns a picked-up table leaves out (`columns: { exclude: [...] }`).
///
/// Like the other tabs, an empty field or a "default" entry leaves the key out, and an unedited
/// pipeline is written back as it was read: keys of `table_defaults` this tab has no field for
/// (a `columns:` mapping's include, rename and mask entries) are kept as they were, and said.
class PatternSettingsPanel final : public QWidget {
    Q_OBJECT
public:
    explicit PatternSettingsPanel(QWidget *parent = nullptr);

    /// Shows `p`'s patterns and table defaults.
    void setPipeline(const core::PipelineSpec &p, core::EndpointKind sourceKind);
    /// The source became another kind of endpoint (a MariaDB source has no fallback cursor).
    void setSourceKind(core::EndpointKind sourceKind);
    /// How many tables the patterns have picked up so far (the editor lists them, marked).
    void setPickedUp(std::size_t count);
    /// Writes the fields into `p` (only the keys this panel owns).
    void apply(core::PipelineSpec &p) const;
    /// Why the fields cannot be saved (in the loader's words), or empty.
    QString problem() const;
    /// Include tables names at least one pattern.
    bool hasPatterns() const;

    QLineEdit *includeEdit() const { return m_include; }
    QLineEdit *excludeEdit() const { return m_exclude; }
    QLineEdit *discoverEveryEdit() const { return m_discoverEvery; }
    /// "Recommended per table" (no data: the key left out), then each strategy (its int value).
    QComboBox *defaultStrategyBox() const { return m_strategy; }
    TableSettingsPanel *defaultsPanel() const { return m_defaults; }
    QComboBox *defaultDeletesBox() const { return m_deletes; }
    QLineEdit *defaultWhereEdit() const { return m_where; }
    QLineEdit *defaultExcludedColumnsEdit() const { return m_columns; }
    QLabel *noteLabel() const { return m_note; }

    /// "public.*, sales.order_[ab]*" as a list: split at commas outside [...], each trimmed.
    static std::vector<std::string> splitPatterns(const QString &text);
    static QString joinPatterns(const std::vector<std::string> &patterns);

signals:
    void settingsChanged();

private:
    std::optional<core::PipelineSpec::TableDefaults> defaults() const;
    void updateEnabled();
    void showNote();

    core::EndpointKind m_sourceKind = core::EndpointKind::Postgres;
    /// The pipeline's table_defaults as handed in: the keys no field here shows are kept from it.
    std::optional<core::PipelineSpec::TableDefaults> m_original;
    std::size_t m_pickedUp = 0;
    QLineEdit *m_include;
    QLineEdit *m_exclude;
    QLineEdit *m_discoverEvery;
    QComboBox *m_strategy;
    TableSettingsPanel *m_defaults;
    QComboBox *m_deletes;
    QLineEdit *m_where;
    QLineEdit *m_columns;
    QLabel *m_note;
};

} // namespace driftless::ui
