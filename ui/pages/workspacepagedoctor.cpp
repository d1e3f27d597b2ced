#include "ui/pages/workspacepage.h"

// The Doctor opened from the Workspace page, and a finding's setting applied from it (the page's
// lists and edits are in workspacepage.cpp).

#include "ui/dialogs/settingconfirmation.h"
#include "ui/enginebridge.h"
#include "ui/findingsetting.h"

#include <QMessageBox>
#include <QPushButton>

namespace driftless::ui {

void WorkspacePage::doctorEndpoint()
{
    if (const QString name = selectedEndpoint(); !name.isEmpty())
        openDoctor({{}, name.toStdString()});
}

void WorkspacePage::doctorPipeline()
{
    if (const QString name = selectedPipeline(); !name.isEmpty())
        openDoctor({name.toStdString(), {}});
}

void WorkspacePage::openDoctor(core::DoctorScope scope)
{
    // One doctor window at a time: a new question replaces the last one's.
    if (m_doctor)
        m_doctor->close();
    m_doctor = new DoctorDialog(m_engine ? m_engine->door() : nullptr, std::move(scope), this);
    connect(m_doctor, &DoctorDialog::settingRequested, this, &WorkspacePage::applyFindingSetting);
    m_doctor->show();
    m_doctor->check();
}

void WorkspacePage::applyFindingSetting(const core::Finding &finding)
{
    QString why;
    const auto change = settingChange(workspace(), finding, &why);
    if (!change || m_saving || m_confirmation) {
        showResult(false, tr("Apply setting: %1").arg(why.isEmpty() ? tr("wait for the change being stored") : why));
        return;
    }
    // Shown first, over the doctor that offered it; stored as any edit of the workspace is.
    auto *box = makeSettingConfirmation(m_doctor ? static_cast<QWidget *>(m_doctor) : this, *change);
    m_confirmation = box;
    connect(box, &QMessageBox::finished, this, [this, box, change = *change] {
        const bool apply =
            box->clickedButton() && box->clickedButton()->objectName() == QLatin1String("confirmApplySetting");
        updateButtons();
        if (!apply)
            return;
        if (m_doctor)
            connect(
                this, &WorkspacePage::saved, m_doctor,
                [doctor = m_doctor](bool ok) {
                    if (ok && doctor)
                        doctor->check();
                },
                Qt::SingleShotConnection);
        save(change.workspace, tr("Set %1: %2 on %3").arg(change.key, change.after, change.where));
    });
    box->open();
}

} // namespace driftless::ui
