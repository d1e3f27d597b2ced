#pragma once

#include "ui/dialogs/doctordialog.h"
#include "ui/dialogs/endpointdialog.h"
#include "ui/dialogs/pipelineeditor.h"
#include "ui/enginesnapshot.h"

#include "core/engine/commands/decommission.h"
#include "core/model/workspace.h"

#include <QInputDialog>
#include <QMessageBox>
#include <QPointer>
#include <QWidget>

#include <cstdint>
#include <memory>

class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace driftless::ui {

class EndpointsModel;
class EngineBridge;
class PipelinesModel;
class SecretStore;

/// The workspace itself: its endpoints (kind, where, how their connections are protected as the
/// engine last saw them, user, password source, slot guard, users)
/// and pipelines (source → target, tables, strategies), as stored in the workspace file.
///
/// Add/Edit open the EndpointDialog; Remove asks first and refuses an endpoint a pipeline uses.
/// Add Pipeline…/Edit Pipeline… (or a double-click on a pipeline) open the PipelineEditor.
/// Doctor… beside each list runs the doctor's checks for the selected endpoint or pipeline.
/// A pipeline's context menu has these too, and Pause Pipeline… / Resume Pipeline…, which ask the
/// Tables page's question and request (pausePipelineRequested); its Tables column says how many
/// of its tables are paused.
/// "Password…" asks for the selected endpoint's password (once per session without a keychain).
/// Import YAML… applies a workspace file (README format) declaratively, Export YAML… writes the
/// stored workspace as one; export then import gives back an equal workspace.
///
/// Every change is validated here (the YAML loader's rules) and written on a pool thread with
/// core::WorkspaceState::apply(); the page never waits. A running sync starts again with
/// the stored workspace within a few seconds (core::EngineRun). Passwords go to the SecretStore only, never to the file
/// or the YAML.
class WorkspacePage final : public QWidget {
    Q_OBJECT
public:
    WorkspacePage(EngineBridge *engine, SecretStore *secrets, QWidget *parent = nullptr);
    ~WorkspacePage() override;

    /// Shows the snapshot's workspace (only when it differs from the one shown).
    void setSnapshot(const EngineSnapshot &snapshot);
    const core::Workspace &workspace() const;

    EndpointsModel *endpointsModel() const { return m_endpoints; }
    PipelinesModel *pipelinesModel() const { return m_pipelines; }
    QTableView *endpointsView() const { return m_endpointsView; }
    QTableView *pipelinesView() const { return m_pipelinesView; }
    QPushButton *addButton() const { return m_add; }
    QPushButton *editButton() const { return m_edit; }
    QPushButton *removeButton() const { return m_remove; }
    QPushButton *passwordButton() const { return m_password; }
    QPushButton *importButton() const { return m_import; }
    QPushButton *exportButton() const { return m_export; }
    QPushButton *addPipelineButton() const { return m_addPipeline; }
    QPushButton *editPipelineButton() const { return m_editPipeline; }
    QPushButton *doctorEndpointButton() const { return m_doctorEndpoint; }
    QPushButton *doctorPipelineButton() const { return m_doctorPipeline; }
    QPushButton *removePipelineButton() const { return m_removePipeline; }
    /// The doctor's window while open, else null.
    DoctorDialog *doctorDialog() const { return m_doctor; }
    QLabel *resultLabel() const { return m_result; }
    QString summaryText() const;
    /// The endpoint dialog, password prompt or removal confirmation while open, else null.
    EndpointDialog *endpointDialog() const { return m_dialog; }
    /// The pipeline editor while open, else null.
    PipelineEditor *pipelineEditor() const { return m_pipelineEditor; }
    QInputDialog *passwordPrompt() const { return m_prompt; }
    QMessageBox *confirmation() const { return m_confirmation; }
    /// The selected endpoint's name, or empty.
    QString selectedEndpoint() const;
    void selectEndpoint(const QString &name);
    /// The selected pipeline's name, or empty.
    QString selectedPipeline() const;
    void selectPipeline(const QString &name);
    /// True while a change is being written.
    bool saving() const { return m_saving; }
    /// Opens the context menu of the pipeline in `row` (its Edit, Doctor, Pause Pipeline…
    /// (pausePipeline), Resume Pipeline… (resumePipeline) and Remove actions) at `pos` of the
    /// pipelines view's viewport.
    void showPipelineMenu(const QPoint &pos);

public slots:
    void addEndpoint();
    void editEndpoint();
    void removeEndpoint();
    void askPassword();
    void addPipeline();
    void editPipeline();
    void importYaml();
    void exportYaml();
    /// Asks the engine what the selected pipeline holds on its source (its slot, Driftless's
    /// publication), shows the exact statements in a confirmation (removePipelineConfirmation,
    /// its accept button confirmRemovePipeline, a check box to leave them), then decommissions it.
    void removePipeline();
    /// Opens the doctor for the selected endpoint or pipeline and runs its checks.
    void doctorEndpoint();
    void doctorPipeline();
    /// A doctor finding's fix is a setting: shows the change (applySettingConfirmation) and, when
    /// the DBA confirms it, stores it and checks again.
    void applyFindingSetting(const core::Finding &finding);
    /// Applies the workspace YAML at `path` (off the UI thread); saved() when done.
    void importFile(const QString &path);
    /// Writes the shown workspace as YAML to `path`; false (and the result line says why) on failure.
    bool exportFile(const QString &path);

signals:
    /// A change was written (ok) or refused; `message` says what happened.
    void saved(bool ok, const QString &message);
    void statusMessage(const QString &message);
    /// Pause Pipeline… (`pause`) or Resume Pipeline… was chosen for `pipeline`: the window asks
    /// the Tables page, whose confirmation and request they are.
    void pausePipelineRequested(const QString &pipeline, bool pause);

private:
    struct Outcome;
    void showWorkspace(std::shared_ptr<const core::Workspace> shown);
    /// The snapshot's paused tables, counted per pipeline for the Tables column and the menu.
    void showPaused(const EngineSnapshot &snapshot);
    void save(core::Workspace workspace, const QString &what);
    /// Stores `workspace` through the engine's door (PUT /api/v1/workspace).
    void store(const QString &what, core::Workspace workspace);
    void onSaved(std::uint64_t job, const QString &statePath, const QString &what, const Outcome &outcome);
    void finishDialog(const core::Endpoint &before, bool isNew);
    void openPipelineEditor(std::optional<core::PipelineSpec> existing);
    void finishPipelineEditor(const std::optional<core::PipelineSpec> &before);
    void updatePasswordState(const QString &endpoint);
    void updateButtons();
    void updateSummary();
    void showResult(bool ok, const QString &message);
    void fitColumns();
    void openDoctor(core::DoctorScope scope);
    void confirmRemovePipeline(const core::DecommissionPlan &plan);

    EngineBridge *m_engine;
    SecretStore *m_secrets;
    std::shared_ptr<const core::Workspace> m_workspace; ///< the snapshot's; null shows none
    bool m_hasWorkspace = false;
    /// No workspace file yet: Add Endpoint… and Import YAML… make one.
    bool m_noWorkspaceYet = false;
    QString m_error;
    std::uint64_t m_job = 0;
    bool m_saving = false;

    EndpointsModel *m_endpoints;
    PipelinesModel *m_pipelines;
    QSortFilterProxyModel *m_endpointsProxy;
    QTableView *m_endpointsView;
    QTableView *m_pipelinesView;
    QLabel *m_summary;
    QLabel *m_result;
    QPushButton *m_add;
    QPushButton *m_edit;
    QPushButton *m_remove;
    QPushButton *m_password;
    QPushButton *m_import;
    QPushButton *m_export;
    QPushButton *m_addPipeline;
    QPushButton *m_editPipeline;
    QPushButton *m_doctorEndpoint;
    QPushButton *m_doctorPipeline;
    QPushButton *m_removePipeline;
    /// A decommission plan is being asked for.
    bool m_planning = false;
    QPointer<DoctorDialog> m_doctor;
    QPointer<EndpointDialog> m_dialog;
    QPointer<PipelineEditor> m_pipelineEditor;
    QPointer<QInputDialog> m_prompt;
    QPointer<QMessageBox> m_confirmation;
};

} // namespace driftless::ui
