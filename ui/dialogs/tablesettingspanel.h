#pragma once

#include "core/model/workspace.h"

#include <QStringList>
#include <QWidget>

#include <optional>
#include <string>

class QComboBox;
class QLabel;
class QLineEdit;

namespace driftless::ui {

/// The pipeline editor's settings of the selected table, each a key of the workspace file:
/// `cursor` and `lookback` (cursor sync), `page_size` (cursor pages, CDC load chunks), `every`
/// (full refresh and cursor passes), `freshness_sla`, `truncate` and `fallback_cursor` (CDC), and
/// `schema_changes` overriding the pipeline's, and `adopt` (take a target table that exists,
/// overriding the pipeline's). A table the slot guard switched to cursor sync
/// (`fallback_from: cdc`) says so; Promote to CDC on the Tables page switches it back.
///
/// Fields that do not apply to the table's strategy are greyed, their values kept. An empty field
/// or a "default" entry leaves the key out of the file; an unedited table is written back as it
/// was read.
class TableSettingsPanel final : public QWidget {
    Q_OBJECT
public:
    explicit TableSettingsPanel(QWidget *parent = nullptr);

    /// Shows `spec`'s settings. `candidates`: the columns a cursor could follow, best first;
    /// `suggestedCursor`: the recommendation's, shown while the table names none; `included`:
    /// the table is part of the pipeline (else every field is greyed).
    void setTable(const core::TableSpec &spec, const QStringList &candidates,
                  const std::optional<std::string> &suggestedCursor, bool included, core::EndpointKind sourceKind);
    /// The pipeline's `table_defaults` (PatternSettingsPanel): `keys`' settings for every table
    /// a pattern picks up. With `strategy` unset (each table gets the recommended one) every
    /// field applies; the cursor column is typed, since the tables are not known yet.
    void setDefaults(const core::TableSpec &keys, std::optional<core::Strategy> strategy,
                     core::EndpointKind sourceKind);
    /// No table selected: every field empty and greyed.
    void clearTable();
    /// Writes the valid fields into `spec` (only the keys this panel owns); fields that do not
    /// parse leave their key as it was.
    void apply(core::TableSpec &spec) const;
    /// Why a field cannot be saved, or empty. Only fields that apply are judged.
    QString problem() const;

    QComboBox *cursorBox() const { return m_cursor; }
    QLineEdit *lookbackEdit() const { return m_lookback; }
    QLineEdit *pageSizeEdit() const { return m_pageSize; }
    QLineEdit *everyEdit() const { return m_every; }
    QLineEdit *slaEdit() const { return m_sla; }
    QComboBox *truncateBox() const { return m_truncate; }
    QComboBox *fallbackCursorBox() const { return m_fallbackCursor; }
    QComboBox *addColumnBox() const { return m_addColumn; }
    QComboBox *dropColumnBox() const { return m_dropColumn; }
    QComboBox *typeChangeBox() const { return m_typeChange; }
    QComboBox *renameColumnBox() const { return m_renameColumn; }
    QComboBox *adoptBox() const { return m_adopt; }
    QLineEdit *keyEdit() const { return m_key; }
    /// Says when the slot guard switched the table to cursor sync.
    QLabel *fallbackNote() const { return m_fallbackNote; }

signals:
    void settingsChanged();

private:
    /// The Key columns field's names, in order.
    QStringList keyColumns() const;
    core::Strategy m_strategy = core::Strategy::FullRefresh;
    bool m_included = false;
    bool m_defaults = false; ///< showing table_defaults (setDefaults()), not one table
    QComboBox *m_cursor;
    QLineEdit *m_lookback;
    QLineEdit *m_pageSize;
    QLineEdit *m_every;
    QLineEdit *m_sla;
    QComboBox *m_truncate;
    QComboBox *m_fallbackCursor;
    QComboBox *m_addColumn;
    QComboBox *m_dropColumn;
    QComboBox *m_typeChange;
    QComboBox *m_renameColumn;
    QComboBox *m_adopt;
    QLineEdit *m_key; ///< `key:` columns, comma-separated
    QLabel *m_fallbackNote;
};

} // namespace driftless::ui
