#pragma once

#include "core/model/workspace.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;

namespace driftless::ui {

/// The pipeline editor's "Pipeline" tab: the settings of a whole pipeline besides its route and
/// tables, each a key of the workspace file (README, "Configuring a workspace"):
/// `publication` and `heartbeat` (Postgres sources), `recover` (what a change of the source
/// server does: docs/failover.md), `reconcile: { every, alert_above }`, and
/// `schema_changes: { add_column, drop_column, type_change, rename_column }` (the default of the
/// pipeline's tables; a table may override it on its own tab).
///
/// An empty field or a "default" entry leaves the key out of the file; values are spelt as the
/// file spells them, so an unedited pipeline is written back as it was read.
class PipelineSettingsPanel final : public QWidget {
    Q_OBJECT
public:
    explicit PipelineSettingsPanel(QWidget *parent = nullptr);

    /// Shows `p`'s settings; `sourceKind` decides which apply (heartbeat and publication need a
    /// Postgres source; a MariaDB/MySQL source cannot tell a rename from a drop and an add).
    void setPipeline(const core::PipelineSpec &p, core::EndpointKind sourceKind);
    /// The source became another kind of endpoint: what no longer applies is greyed, with why.
    void setSourceKind(core::EndpointKind sourceKind);
    /// Writes the fields into `p` (only the keys this panel owns).
    void apply(core::PipelineSpec &p) const;
    /// Why the fields cannot be saved, or empty.
    QString problem() const;

    QLineEdit *publicationEdit() const { return m_publication; }
    QLineEdit *heartbeatEdit() const { return m_heartbeat; }
    QComboBox *recoverBox() const { return m_recover; }
    QComboBox *adoptBox() const { return m_adopt; }
    QLineEdit *reconcileEveryEdit() const { return m_reconcileEvery; }
    QLineEdit *alertAboveEdit() const { return m_alertAbove; }
    QComboBox *addColumnBox() const { return m_addColumn; }
    QComboBox *dropColumnBox() const { return m_dropColumn; }
    QComboBox *typeChangeBox() const { return m_typeChange; }
    QComboBox *renameColumnBox() const { return m_renameColumn; }

    /// The choices of each schema_changes policy, the default first (tables offer the same).
    static QStringList recoverChoices();
    static QStringList addColumnPolicies();
    static QStringList dropColumnPolicies();
    static QStringList typeChangePolicies();
    static QStringList renameColumnPolicies();

signals:
    void settingsChanged();

private:
    void updateEnabled();

    core::EndpointKind m_sourceKind = core::EndpointKind::Postgres;
    QLineEdit *m_publication;
    QLineEdit *m_heartbeat;
    QComboBox *m_recover;
    QComboBox *m_adopt;
    QLineEdit *m_reconcileEvery;
    QLineEdit *m_alertAbove;
    QComboBox *m_addColumn;
    QComboBox *m_dropColumn;
    QComboBox *m_typeChange;
    QComboBox *m_renameColumn;
    QLabel *m_note;
};

} // namespace driftless::ui
