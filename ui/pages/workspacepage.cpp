#include "ui/pages/workspacepage.h"
#include "ui/displayformat.h"

#include "ui/dialogs/endpointdialog.h"
#include "ui/enginebridge.h"
#include "ui/models/endpointsmodel.h"
#include "ui/models/pipelinesmodel.h"
#include "ui/secrets/secretstore.h"
#include "ui/statusicons.h"
#include "ui/widgets/tableselection.h"

#include "core/config/workspacefile.h"
#include "core/engine/run/workspacestate.h"
#include "core/engine/slots/slots.h"
#include "core/model/error.h"
#include "ui/enginedoor.h"

#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSaveFile>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace driftless::ui {

/// What a write found: a plain value posted back to the UI thread.
struct WorkspacePage::Outcome {
    bool ok = false;
    QString message;
    /// The workspace as stored afterwards, when the write succeeded.
    std::optional<core::Workspace> workspace;
};

namespace {

/// Long DSN hosts and file paths are elided (the tooltip has them) so "Used by" stays readable.
constexpr int kMaxColumnWidth = 260;

QTableView *makeView(QWidget *parent, const char *name)
{
    auto *view = new QTableView(parent);
    view->setObjectName(QLatin1String(name));
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->setAlternatingRowColors(true);
    view->setWordWrap(false);
    view->verticalHeader()->setVisible(false);
    view->horizontalHeader()->setStretchLastSection(true);
    view->horizontalHeader()->setHighlightSections(false);
    view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    return view;
}

QLabel *heading(const QString &text, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    return label;
}

QString changeLines(const core::ApplySummary &summary)
{
    if (!summary.changed)
        return WorkspacePage::tr("nothing changed");
    QStringList lines;
    for (const auto &l : summary.lines)
        lines << QString::fromStdString(l);
    return lines.join(QStringLiteral("; "));
}

} // namespace

WorkspacePage::WorkspacePage(EngineBridge *engine, SecretStore *secrets, QWidget *parent)
    : QWidget(parent), m_engine(engine), m_secrets(secrets), m_endpoints(new EndpointsModel(this)),
      m_pipelines(new PipelinesModel(this)), m_endpointsProxy(new QSortFilterProxyModel(this)),
      m_endpointsView(makeView(this, "endpointsView")), m_pipelinesView(makeView(this, "pipelinesView")),
      m_summary(new QLabel(this)), m_result(new QLabel(this)), m_add(new QPushButton(tr("&Add Endpoint\u2026"), this)),
      m_edit(new QPushButton(tr("&Edit\u2026"), this)), m_remove(new QPushButton(tr("&Remove\u2026"), this)),
      m_password(new QPushButton(tr("&Password\u2026"), this)),
      m_import(new QPushButton(tr("&Import YAML\u2026"), this)),
      m_export(new QPushButton(tr("E&xport YAML\u2026"), this)),
      m_addPipeline(new QPushButton(tr("Add Pipe&line\u2026"), this)),
      m_editPipeline(new QPushButton(tr("Edi&t Pipeline\u2026"), this)),
      m_doctorEndpoint(new QPushButton(tr("&Doctor\u2026"), this)),
      m_doctorPipeline(new QPushButton(tr("Doct&or\u2026"), this)),
      m_removePipeline(new QPushButton(tr("Remo&ve Pipeline\u2026"), this))
{
    setObjectName(QStringLiteral("workspacePage"));
    m_endpointsProxy->setSourceModel(m_endpoints);
    m_endpointsView->setModel(m_endpointsProxy);
    m_endpointsView->setSortingEnabled(true);
    m_endpointsView->sortByColumn(EndpointsModel::Name, Qt::AscendingOrder);
    m_pipelinesView->setModel(m_pipelines);

    m_summary->setObjectName(QStringLiteral("workspaceSummary"));
    m_summary->setTextFormat(Qt::PlainText);
    m_result->setObjectName(QStringLiteral("workspaceResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Its line is kept while hidden, so an outcome appearing does not move the buttons above.
    QSizePolicy keep = m_result->sizePolicy();
    keep.setRetainSizeWhenHidden(true);
    m_result->setSizePolicy(keep);
    m_result->setVisible(false);

    m_add->setObjectName(QStringLiteral("addEndpoint"));
    m_edit->setObjectName(QStringLiteral("editEndpoint"));
    m_remove->setObjectName(QStringLiteral("removeEndpoint"));
    m_password->setObjectName(QStringLiteral("endpointPassword"));
    m_import->setObjectName(QStringLiteral("importYaml"));
    m_import->setIcon(namedIcon(QStringLiteral("open")));
    m_import->setToolTip(tr("Make the stored workspace equal to a workspace YAML file"));
    m_export->setObjectName(QStringLiteral("exportYaml"));
    m_export->setToolTip(tr("Write the stored workspace as YAML (never with passwords)"));
    m_addPipeline->setObjectName(QStringLiteral("addPipeline"));
    m_addPipeline->setToolTip(tr("Pick a source's tables and how each is kept in sync"));
    m_editPipeline->setObjectName(QStringLiteral("editPipeline"));
    m_editPipeline->setToolTip(tr("Change the selected pipeline's route and tables"));
    m_doctorEndpoint->setObjectName(QStringLiteral("doctorEndpoint"));
    m_doctorEndpoint->setToolTip(tr("Check the selected endpoint against its server: connection, TLS, settings, and "
                                    "the tables read from it (as driftless-cli doctor --endpoint)"));
    m_removePipeline->setObjectName(QStringLiteral("removePipeline"));
    m_removePipeline->setToolTip(tr("Remove the selected pipeline, and drop its replication slot and publication on "
                                    "the source so nothing is left holding WAL (the SQL is shown first)"));
    m_doctorPipeline->setObjectName(QStringLiteral("doctorPipeline"));
    m_doctorPipeline->setToolTip(tr("Check what the selected pipeline needs of its servers: keys, cursors, "
                                    "privileges, slots, publications (as driftless-cli doctor --pipeline)"));

    auto *top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_import);
    top->addWidget(m_export);
    auto *endpointButtons = new QHBoxLayout;
    endpointButtons->addWidget(heading(tr("Endpoints"), this));
    endpointButtons->addStretch(1);
    for (QPushButton *b : {m_add, m_edit, m_password, m_doctorEndpoint, m_remove})
        endpointButtons->addWidget(b);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addLayout(endpointButtons);
    layout->addWidget(m_endpointsView, 3);
    auto *pipelineButtons = new QHBoxLayout;
    pipelineButtons->addWidget(heading(tr("Pipelines"), this));
    pipelineButtons->addStretch(1);
    pipelineButtons->addWidget(m_addPipeline);
    pipelineButtons->addWidget(m_editPipeline);
    pipelineButtons->addWidget(m_doctorPipeline);
    pipelineButtons->addWidget(m_removePipeline);
    layout->addLayout(pipelineButtons);
    layout->addWidget(m_pipelinesView, 2);
    layout->addWidget(m_result);

    connect(m_add, &QPushButton::clicked, this, &WorkspacePage::addEndpoint);
    connect(m_edit, &QPushButton::clicked, this, &WorkspacePage::editEndpoint);
    connect(m_remove, &QPushButton::clicked, this, &WorkspacePage::removeEndpoint);
    connect(m_password, &QPushButton::clicked, this, &WorkspacePage::askPassword);
    connect(m_import, &QPushButton::clicked, this, &WorkspacePage::importYaml);
    connect(m_export, &QPushButton::clicked, this, &WorkspacePage::exportYaml);
    connect(m_endpointsView, &QTableView::doubleClicked, this, &WorkspacePage::editEndpoint);
    connect(m_addPipeline, &QPushButton::clicked, this, &WorkspacePage::addPipeline);
    connect(m_editPipeline, &QPushButton::clicked, this, &WorkspacePage::editPipeline);
    connect(m_pipelinesView, &QTableView::doubleClicked, this, &WorkspacePage::editPipeline);
    connect(m_doctorEndpoint, &QPushButton::clicked, this, &WorkspacePage::doctorEndpoint);
    connect(m_doctorPipeline, &QPushButton::clicked, this, &WorkspacePage::doctorPipeline);
    connect(m_removePipeline, &QPushButton::clicked, this, &WorkspacePage::removePipeline);
    connect(m_pipelinesView->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &WorkspacePage::updateButtons);
    m_pipelinesView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_pipelinesView, &QTableView::customContextMenuRequested, this, &WorkspacePage::showPipelineMenu);
    connect(m_endpointsView->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &WorkspacePage::updateButtons);
    connect(m_secrets, &SecretStore::stored, this, [this](const QString &endpoint, bool, const QString &message) {
        updatePasswordState(endpoint);
        // The window keeps agents' tokens in the same store, as agent:URL.
        static const QString passphrase = SecretStore::sshPassphraseKey(QString());
        if (!message.isEmpty())
            emit statusMessage(endpoint.startsWith(QLatin1String("agent:"))
                                   ? tr("Token of agent %1: %2").arg(endpoint.mid(6), message)
                               : endpoint.startsWith(passphrase)
                                   ? tr("SSH key passphrase of %1: %2").arg(endpoint.mid(passphrase.size()), message)
                                   : tr("Password of %1: %2").arg(endpoint, message));
    });
    connect(m_secrets, &SecretStore::passwordRead, this,
            [this](const QString &endpoint) { updatePasswordState(endpoint); });
    connect(m_secrets, &SecretStore::removed, this, &WorkspacePage::updatePasswordState);
    updateSummary();
    updateButtons();
}

WorkspacePage::~WorkspacePage() = default;

void WorkspacePage::setSnapshot(const EngineSnapshot &snapshot)
{
    m_error = snapshot.error;
    m_noWorkspaceYet = snapshot.noWorkspaceYet;
    showPaused(snapshot);
    if (!snapshot.workspace) {
        if (snapshot.statePath != m_engine->statePath() || m_hasWorkspace) {
            m_hasWorkspace = false;
            showWorkspace(nullptr);
        }
        m_endpoints->setTls({});
        updateSummary();
        updateButtons();
        return;
    }
    // Snapshots come every few seconds; only a different workspace resets the views. The TLS
    // column follows every snapshot: a connection the engine just opened changes it.
    if (m_hasWorkspace && sameWorkspace(snapshot.workspace, m_workspace)) {
        if (m_endpoints->setTls(snapshot.endpointsTls))
            fitColumns();
        updateSummary();
        return;
    }
    m_hasWorkspace = true;
    m_endpoints->setTls(snapshot.endpointsTls);
    showWorkspace(snapshot.workspace);
}

void WorkspacePage::showWorkspace(std::shared_ptr<const core::Workspace> shown)
{
    const QString selected = selectedEndpoint();
    const QString selectedPipe = selectedPipeline();
    // Kept shared, not copied: at 10,000 tables a copy of the workspace was a tenth of a second.
    m_workspace = std::move(shown);
    const core::Workspace &ws = workspace();
    m_endpoints->setWorkspace(ws);
    m_pipelines->setWorkspace(m_workspace);
    m_secrets->setWorkspace(ws);
    for (const auto &[name, e] : ws.endpoints)
        updatePasswordState(QString::fromStdString(name));
    selectEndpoint(selected);
    selectPipeline(selectedPipe);
    fitColumns();
    updateSummary();
    updateButtons();
}

const core::Workspace &WorkspacePage::workspace() const
{
    static const core::Workspace none;
    return m_workspace ? *m_workspace : none;
}

QString WorkspacePage::selectedEndpoint() const
{
    const int row = selectedSourceRow(m_endpointsView, m_endpointsProxy);
    return row < 0 ? QString() : QString::fromStdString(m_endpoints->endpointAt(row).name);
}

void WorkspacePage::selectEndpoint(const QString &name)
{
    selectSourceRow(m_endpointsView, m_endpointsProxy, name.isEmpty() ? -1 : m_endpoints->rowOf(name));
}

void WorkspacePage::updatePasswordState(const QString &endpoint)
{
    QString state;
    if (m_secrets->sessionPassword(endpoint))
        state = m_secrets->backend() == SecretStore::Backend::Keychain ? tr("keychain") : tr("this session only");
    else
        state = tr("libpq's (~/.pgpass, PG*)");
    m_endpoints->setPasswordState(endpoint, state);
}

QString WorkspacePage::selectedPipeline() const
{
    const QModelIndexList rows = m_pipelinesView->selectionModel()->selectedRows();
    return rows.isEmpty() ? QString() : QString::fromStdString(m_pipelines->pipelineAt(rows.first().row()).name);
}

void WorkspacePage::selectPipeline(const QString &name)
{
    const int row = name.isEmpty() ? -1 : m_pipelines->rowOf(name);
    if (row < 0)
        m_pipelinesView->clearSelection();
    else
        m_pipelinesView->selectRow(row);
}

QString WorkspacePage::summaryText() const
{
    return m_summary->text();
}

void WorkspacePage::updateSummary()
{
    if (!m_hasWorkspace) {
        m_summary->setText(m_engine->statePath().isEmpty()
                               ? tr("No workspace open: File \u25b8 Open Workspace\u2026 opens one")
                               : (m_error.isEmpty() ? tr("Reading the workspace\u2026") : m_error));
        return;
    }
    std::size_t tables = 0;
    for (const auto &p : workspace().pipelines)
        tables += p.tables.size();
    const auto n = [](std::size_t count, const QString &one, const QString &many) {
        return count == 1 ? one : many.arg(count);
    };
    m_summary->setText(tr("%1: %2, %3 with %4")
                           .arg(QFileInfo(m_engine->statePath()).fileName(),
                                n(workspace().endpoints.size(), tr("1 endpoint"), tr("%1 endpoints")),
                                n(workspace().pipelines.size(), tr("1 pipeline"), tr("%1 pipelines")),
                                n(tables, tr("1 table"), tr("%1 tables"))));
}

void WorkspacePage::updateButtons()
{
    const bool idle = !m_saving && !m_planning && !m_dialog && !m_prompt && !m_confirmation && !m_pipelineEditor;
    const bool ready = m_hasWorkspace && idle;
    m_addPipeline->setEnabled(ready);
    m_editPipeline->setEnabled(ready && !selectedPipeline().isEmpty());
    m_removePipeline->setEnabled(ready && !selectedPipeline().isEmpty());
    // The doctor only reads: it may run beside an open dialog or a save.
    m_doctorPipeline->setEnabled(m_hasWorkspace && !selectedPipeline().isEmpty());
    m_doctorEndpoint->setEnabled(m_hasWorkspace && !selectedEndpoint().isEmpty());
    const QString name = selectedEndpoint();
    // A new user's first endpoint makes the workspace file.
    m_add->setEnabled(idle && (m_hasWorkspace || m_noWorkspaceYet));
    m_import->setEnabled(!m_engine->statePath().isEmpty() && !m_saving);
    m_export->setEnabled(m_hasWorkspace);
    m_edit->setEnabled(ready && !name.isEmpty());
    const core::Endpoint *e = name.isEmpty() ? nullptr : workspace().endpoint(name.toStdString());
    m_password->setEnabled(ready && e && SecretStore::takesPassword(*e));
    m_password->setToolTip(e && !SecretStore::takesPassword(*e)
                               ? tr("SQLite files need no password")
                               : tr("Type the selected endpoint's password: kept in the keychain, or for this "
                                    "session when there is none"));
    QStringList users;
    for (const auto &p : workspace().pipelines)
        if (e && (p.source == e->name || p.target == e->name))
            users << QString::fromStdString(p.name);
    m_remove->setEnabled(ready && e && users.isEmpty());
    m_remove->setToolTip(users.isEmpty() ? tr("Remove the selected endpoint and forget its password")
                                         : tr("Pipeline %1 uses %2: remove or change the pipeline first")
                                               .arg(users.join(QStringLiteral(", ")), name));
}

void WorkspacePage::addEndpoint()
{
    if ((!m_hasWorkspace && !m_noWorkspaceYet) || m_dialog)
        return;
    QStringList taken;
    for (const auto &[name, e] : workspace().endpoints)
        taken << QString::fromStdString(name);
    m_dialog = new EndpointDialog(std::nullopt, taken, std::nullopt, m_secrets->backend(), this,
                                  m_engine ? m_engine->door() : nullptr);
    m_dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(m_dialog, &QDialog::accepted, this, [this] { finishDialog({}, true); });
    // Deleted on close: the buttons come back once it is gone.
    connect(m_dialog, &QObject::destroyed, this, &WorkspacePage::updateButtons, Qt::QueuedConnection);
    m_dialog->open();
    updateButtons();
}

void WorkspacePage::editEndpoint()
{
    const QString name = selectedEndpoint();
    const core::Endpoint *e = workspace().endpoint(name.toStdString());
    if (!e || m_dialog || m_saving)
        return;
    QStringList taken;
    for (const auto &[other, _] : workspace().endpoints)
        if (other != e->name)
            taken << QString::fromStdString(other);
    m_dialog = new EndpointDialog(*e, taken, m_secrets->sessionPassword(name), m_secrets->backend(), this,
                                  m_engine ? m_engine->door() : nullptr);
    // Test Connection judges the rights this endpoint's use needs: REPLICATION as a CDC source
    // (either side of a two-way pipeline), CREATE as a target.
    bool cdcSource = false, target = false;
    for (const auto &p : workspace().pipelines) {
        const bool streams = std::any_of(p.tables.begin(), p.tables.end(),
                                         [](const core::TableSpec &t) { return t.strategy == core::Strategy::Cdc; });
        cdcSource = cdcSource || (streams && (p.source == e->name || (p.twoWay && p.target == e->name)));
        target = target || p.target == e->name || (p.twoWay && p.source == e->name);
    }
    m_dialog->setRoles(cdcSource, target);
    m_dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(m_dialog, &QDialog::accepted, this, [this, before = *e] { finishDialog(before, false); });
    // Deleted on close: the buttons come back once it is gone.
    connect(m_dialog, &QObject::destroyed, this, &WorkspacePage::updateButtons, Qt::QueuedConnection);
    m_dialog->open();
    updateButtons();
}

void WorkspacePage::finishDialog(const core::Endpoint &before, bool isNew)
{
    const core::Endpoint e = m_dialog->endpoint();
    const QString name = QString::fromStdString(e.name);
    const QString oldName = QString::fromStdString(before.name);
    const QString password = m_dialog->password();
    core::Workspace ws = workspace();
    if (!isNew && before.name != e.name) {
        ws.endpoints.erase(before.name);
        for (auto &p : ws.pipelines) {
            if (p.source == before.name)
                p.source = e.name;
            if (p.target == before.name)
                p.target = e.name;
        }
    }
    ws.endpoints[e.name] = e;
    // The password follows the endpoint: typed now, or moved under its new name.
    const auto known = isNew ? std::nullopt : m_secrets->sessionPassword(oldName);
    if (!isNew && oldName != name)
        m_secrets->remove(oldName);
    if (SecretStore::takesPassword(e) && !password.isEmpty())
        m_secrets->store(name, password);
    else if (SecretStore::takesPassword(e) && known && oldName != name)
        m_secrets->store(name, *known);
    else if (!SecretStore::takesPassword(e) && known)
        m_secrets->remove(oldName);
    // The identity file's passphrase likewise, under its own item; gone with the identity file.
    const QString passphrase = m_dialog->sshPassphrase();
    const QString oldKey = SecretStore::sshPassphraseKey(oldName), newKey = SecretStore::sshPassphraseKey(name);
    const auto knownPassphrase = isNew ? std::nullopt : m_secrets->sessionPassword(oldKey);
    const bool hasIdentity = e.ssh && e.ssh->identityFile;
    if (knownPassphrase && (oldName != name || !hasIdentity))
        m_secrets->remove(oldKey);
    if (hasIdentity && !passphrase.isEmpty())
        m_secrets->store(newKey, passphrase);
    else if (hasIdentity && knownPassphrase && oldName != name)
        m_secrets->store(newKey, *knownPassphrase);
    save(std::move(ws), isNew ? tr("Added endpoint %1").arg(name) : tr("Saved endpoint %1").arg(name));
}

void WorkspacePage::addPipeline()
{
    if (m_addPipeline->isEnabled())
        openPipelineEditor(std::nullopt);
}

void WorkspacePage::editPipeline()
{
    const core::PipelineSpec *p = workspace().pipeline(selectedPipeline().toStdString());
    if (p && m_editPipeline->isEnabled())
        openPipelineEditor(*p);
}

void WorkspacePage::openPipelineEditor(std::optional<core::PipelineSpec> existing)
{
    m_pipelineEditor = new PipelineEditor(workspace(), existing, this, m_engine ? m_engine->door() : nullptr);
    m_pipelineEditor->setAttribute(Qt::WA_DeleteOnClose);
    connect(m_pipelineEditor, &QDialog::accepted, this, [this, existing] { finishPipelineEditor(existing); });
    // Deleted on close: the buttons come back once it is gone.
    connect(m_pipelineEditor, &QObject::destroyed, this, &WorkspacePage::updateButtons, Qt::QueuedConnection);
    m_pipelineEditor->open();
    updateButtons();
}

void WorkspacePage::finishPipelineEditor(const std::optional<core::PipelineSpec> &before)
{
    const core::PipelineSpec p = m_pipelineEditor->pipeline();
    core::Workspace ws = workspace();
    // An edited pipeline keeps its place (and a renamed one replaces its old name).
    auto it = std::find_if(ws.pipelines.begin(), ws.pipelines.end(),
                           [&](const core::PipelineSpec &q) { return before && q.name == before->name; });
    if (it != ws.pipelines.end())
        *it = p;
    else
        ws.pipelines.push_back(p);
    const QString name = QString::fromStdString(p.name);
    save(std::move(ws), before ? tr("Saved pipeline %1").arg(name) : tr("Added pipeline %1").arg(name));
}

void WorkspacePage::removeEndpoint()
{
    const QString name = selectedEndpoint();
    if (!m_remove->isEnabled() || name.isEmpty() || m_confirmation)
        return;
    auto *box = new QMessageBox(QMessageBox::Question, tr("Remove Endpoint"),
                                tr("Remove endpoint <b>%1</b> from the workspace?").arg(name.toHtmlEscaped()),
                                QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("removeConfirmation"));
    box->setInformativeText(tr("No pipeline uses it. Its password is deleted from the keychain as well."));
    QPushButton *remove = box->addButton(tr("Remove"), QMessageBox::DestructiveRole);
    remove->setObjectName(QStringLiteral("confirmRemove"));
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, box, remove, name] {
        if (box->clickedButton() != remove)
            return;
        core::Workspace ws = workspace();
        ws.endpoints.erase(name.toStdString());
        m_secrets->remove(name);
        save(std::move(ws), tr("Removed endpoint %1").arg(name));
    });
    connect(box, &QObject::destroyed, this, &WorkspacePage::updateButtons, Qt::QueuedConnection);
    m_confirmation = box;
    box->open();
    updateButtons();
}

void WorkspacePage::askPassword()
{
    const QString name = selectedEndpoint();
    if (!m_password->isEnabled() || name.isEmpty() || m_prompt)
        return;
    auto *prompt = new QInputDialog(this);
    prompt->setObjectName(QStringLiteral("passwordPrompt"));
    prompt->setWindowTitle(tr("Password of %1").arg(name));
    prompt->setLabelText(m_secrets->backend() == SecretStore::Backend::SessionOnly
                             ? tr("Password for %1 (no keychain on this desktop: kept in memory until Driftless "
                                  "quits):")
                                   .arg(name)
                             : tr("Password for %1 (saved in the system keychain):").arg(name));
    prompt->setTextEchoMode(QLineEdit::Password);
    prompt->setAttribute(Qt::WA_DeleteOnClose);
    connect(prompt, &QInputDialog::textValueSelected, this, [this, name](const QString &password) {
        if (!password.isEmpty())
            m_secrets->store(name, password);
    });
    connect(prompt, &QObject::destroyed, this, &WorkspacePage::updateButtons, Qt::QueuedConnection);
    m_prompt = prompt;
    prompt->open();
    updateButtons();
}

void WorkspacePage::save(core::Workspace workspace, const QString &what)
{
    try {
        core::WorkspaceFile::validate(workspace, QFileInfo(m_engine->statePath()).fileName().toStdString());
    } catch (const core::Error &e) {
        showResult(false, tr("%1 refused: %2").arg(what, QString::fromStdString(e.what())));
        emit saved(false, m_result->text());
        return;
    }
    store(what, std::move(workspace));
}

void WorkspacePage::store(const QString &what, core::Workspace workspace)
{
    EngineDoor *door = m_engine->door();
    if (!door) {
        showResult(false, tr("%1 failed: no workspace is open").arg(what));
        emit saved(false, m_result->text());
        return;
    }
    const std::uint64_t job = ++m_job;
    m_saving = true;
    updateButtons();
    showResult(true, tr("%1\u2026").arg(what));
    // An agent checks the workspace against its servers first (what it cannot reach, it
    // refuses); the app's own engine stores it as the DBA wrote it, as before.
    const QString path =
        m_engine->remote() ? QStringLiteral("/api/v1/workspace") : QStringLiteral("/api/v1/workspace?check=false");
    const std::string yaml = core::WorkspaceFile::toYaml(workspace);
    door->request("PUT", path, QByteArray::fromStdString(yaml), this,
                  [this, job, statePath = m_engine->statePath(), what,
                   workspace = std::move(workspace)](const EngineDoor::Reply &r) {
                      Outcome o;
                      o.ok = r.ok();
                      if (r.ok()) {
                          core::ApplySummary summary;
                          summary.changed = r.body.value("changed", false);
                          for (const auto &l : r.body.value("lines", nlohmann::json::array()))
                              summary.lines.push_back(l.get<std::string>());
                          o.message = changeLines(summary);
                          o.workspace = workspace;
                      } else {
                          QStringList problems{r.error};
                          for (const auto &p : r.body.is_object() ? r.body.value("problems", nlohmann::json::array())
                                                                  : nlohmann::json::array())
                              problems << QString::fromStdString(p.value("message", std::string()));
                          o.message = problems.join(QStringLiteral("; "));
                      }
                      onSaved(job, statePath, what, o);
                  });
}

void WorkspacePage::onSaved(std::uint64_t job, const QString &statePath, const QString &what, const Outcome &outcome)
{
    if (job != m_job)
        return;
    m_saving = false;
    // Another workspace is shown now: its page must not show this one's endpoints.
    if (statePath != m_engine->statePath()) {
        updateButtons();
        return;
    }
    QString message;
    if (outcome.ok) {
        m_hasWorkspace = true;
        showWorkspace(std::make_shared<const core::Workspace>(std::move(*outcome.workspace)));
        message = tr("%1: %2.").arg(what, outcome.message);
        if (m_engine->state() != EngineBridge::State::Stopped)
            message += tr(" The running sync starts again with it within a few seconds.");
        m_engine->refresh();
    } else {
        message = tr("%1 failed: %2").arg(what, outcome.message);
    }
    showResult(outcome.ok, message);
    updateButtons();
    emit statusMessage(message);
    emit saved(outcome.ok, message);
}

void WorkspacePage::importYaml()
{
    const QString dir = QFileInfo(m_engine->statePath()).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Import Workspace YAML"), dir,
                                                      tr("Workspace files (*.yaml *.yml);;All files (*)"));
    if (!path.isEmpty())
        importFile(path);
}

void WorkspacePage::importFile(const QString &path)
{
    if (m_engine->statePath().isEmpty() || m_saving)
        return;
    const QString what = tr("Imported %1").arg(QFileInfo(path).fileName());
    core::Workspace workspace;
    try {
        // A small text file on this machine; the engine, wherever it runs, stores what it says.
        workspace = core::WorkspaceFile::load(path.toStdString());
    } catch (const std::exception &e) {
        // Said from the event loop, as every import's outcome is.
        QMetaObject::invokeMethod(
            this,
            [this, message = tr("%1 failed: %2").arg(what, describe(e))] {
                showResult(false, message);
                emit saved(false, message);
            },
            Qt::QueuedConnection);
        return;
    }
    store(what, std::move(workspace));
}

void WorkspacePage::exportYaml()
{
    const QString dir = QFileInfo(m_engine->statePath()).absolutePath();
    const QString name = QFileInfo(m_engine->statePath()).completeBaseName() + QStringLiteral(".yaml");
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Workspace YAML"), QDir(dir).filePath(name),
                                                      tr("Workspace files (*.yaml *.yml);;All files (*)"));
    if (!path.isEmpty())
        exportFile(path);
}

bool WorkspacePage::exportFile(const QString &path)
{
    // A small text file from memory: no database involved, so written here.
    QSaveFile file(path);
    const std::string yaml = core::WorkspaceFile::toYaml(workspace());
    const bool ok = file.open(QIODevice::WriteOnly) &&
                    file.write(yaml.data(), static_cast<qint64>(yaml.size())) == static_cast<qint64>(yaml.size()) &&
                    file.commit();
    showResult(ok, ok ? tr("Exported the workspace to %1 (no passwords: they stay in the keychain).")
                            .arg(QDir::toNativeSeparators(path))
                      : tr("Could not write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
    emit statusMessage(m_result->text());
    return ok;
}

void WorkspacePage::showResult(bool ok, const QString &message)
{
    m_result->setStyleSheet(ok ? QString() : QStringLiteral("color: #b3261e;"));
    m_result->setText(message);
    m_result->setVisible(!message.isEmpty());
}

void WorkspacePage::fitColumns()
{
    for (QTableView *view : {m_endpointsView, m_pipelinesView}) {
        const int last = view->model()->columnCount() - 1;
        for (int c = 0; c < last; ++c)
            view->setColumnWidth(
                c,
                std::min(kMaxColumnWidth, std::max(static_cast<const QAbstractItemView *>(view)->sizeHintForColumn(c),
                                                   view->horizontalHeader()->sectionSizeHint(c)) +
                                              16));
    }
}

void WorkspacePage::removePipeline()
{
    const QString name = selectedPipeline();
    EngineDoor *door = m_engine ? m_engine->door() : nullptr;
    if (!m_removePipeline->isEnabled() || name.isEmpty() || !door)
        return;
    m_planning = true;
    updateButtons();
    showResult(true, tr("Looking at what pipeline %1 holds on its source\u2026").arg(name));
    door->post(QStringLiteral("/api/v1/decommission"), {{"pipeline", name.toStdString()}, {"dry_run", true}}, this,
               [this, name](const EngineDoor::Reply &r) {
                   m_planning = false;
                   if (!r.ok()) {
                       showResult(false, tr("Remove pipeline %1: %2").arg(name, r.error));
                       updateButtons();
                       return;
                   }
                   m_result->setVisible(false);
                   confirmRemovePipeline(core::decommissionPlanFromJson(r.body));
               });
}

void WorkspacePage::confirmRemovePipeline(const core::DecommissionPlan &plan)
{
    const QString name = QString::fromStdString(plan.pipeline);
    const QString source = QString::fromStdString(plan.source).toHtmlEscaped();
    auto *box =
        new QMessageBox(QMessageBox::Warning, tr("Remove Pipeline"),
                        tr("Remove pipeline <b>%1</b>?").arg(name.toHtmlEscaped()), QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("removePipelineConfirmation"));
    box->setTextFormat(Qt::RichText);
    QString info;
    QCheckBox *drop = nullptr;
    if (!plan.sourceError.empty()) {
        const std::string slotSql = core::dropSlotSql("driftless_" + plan.pipeline);
        info += tr("<p>Source %1 could not be reached (%2), so what the pipeline holds there cannot be dropped now. "
                   "Removing it leaves that in place: once the source is back, drop its slot if it still exists:"
                   "</p><pre>%3</pre>")
                    .arg(source, QString::fromStdString(plan.sourceError).toHtmlEscaped(),
                         QString::fromStdString(slotSql).toHtmlEscaped());
    } else if (!plan.statements.empty()) {
        QStringList sql;
        for (const auto &st : plan.statements)
            sql << QString::fromStdString(st).toHtmlEscaped();
        info += tr("<p>It holds on %1, keeping WAL there until they are dropped:</p><pre>%2</pre>")
                    .arg(source, sql.join(QStringLiteral("\n")));
        if (plan.slotActivePid)
            info += tr("<p>The sync is reading its slot now: it lets go once the pipeline is removed, then the "
                       "statements run.</p>");
        drop = new QCheckBox(tr("Run these on %1").arg(QString::fromStdString(plan.source)), box);
        drop->setObjectName(QStringLiteral("dropOnSource"));
        drop->setChecked(true);
        box->setCheckBox(drop);
    }
    QStringList notes;
    for (const auto &n : plan.notes)
        notes << QString::fromStdString(n).toHtmlEscaped();
    notes << tr("its checkpoints are forgotten: a pipeline of this name added later starts with a fresh load");
    QString noted = notes.join(QStringLiteral("; "));
    noted[0] = noted[0].toUpper();
    info += QStringLiteral("<p>") + noted + QStringLiteral(".</p>");
    box->setInformativeText(info);
    QPushButton *remove = box->addButton(tr("Remove Pipeline"), QMessageBox::DestructiveRole);
    remove->setObjectName(QStringLiteral("confirmRemovePipeline"));
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    const bool unreachable = !plan.sourceError.empty();
    connect(box, &QMessageBox::finished, this, [this, box, remove, drop, name, unreachable] {
        if (box->clickedButton() != remove)
            return;
        EngineDoor *door = m_engine ? m_engine->door() : nullptr;
        if (!door)
            return;
        const bool keep = unreachable || (drop && !drop->isChecked());
        const std::uint64_t job = ++m_job;
        m_saving = true;
        updateButtons();
        const QString what = tr("Removed pipeline %1").arg(name);
        showResult(true, tr("Removing pipeline %1\u2026").arg(name));
        core::Workspace after = workspace();
        std::erase_if(after.pipelines, [&](const core::PipelineSpec &p) { return p.name == name.toStdString(); });
        door->post(QStringLiteral("/api/v1/decommission"), {{"pipeline", name.toStdString()}, {"keep_slot", keep}},
                   this, [this, job, statePath = m_engine->statePath(), what, after](const EngineDoor::Reply &r) {
                       Outcome o;
                       o.ok = r.ok();
                       QStringList lines;
                       for (const auto &l :
                            r.ok() ? r.body.value("lines", nlohmann::json::array()) : nlohmann::json::array())
                           lines << QString::fromStdString(l.get<std::string>());
                       o.message = r.ok() ? lines.join(QStringLiteral("; ")) : r.error;
                       if (r.ok())
                           o.workspace = after;
                       onSaved(job, statePath, what, o);
                   });
    });
    connect(box, &QObject::destroyed, this, &WorkspacePage::updateButtons, Qt::QueuedConnection);
    m_confirmation = box;
    box->open();
    updateButtons();
}

} // namespace driftless::ui
