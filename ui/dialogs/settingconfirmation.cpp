#include "ui/dialogs/settingconfirmation.h"

#include "ui/findingsetting.h"

#include <QCoreApplication>
#include <QMessageBox>
#include <QPushButton>

namespace driftless::ui {

namespace {
QString tr(const char *text)
{
    return QCoreApplication::translate("driftless::ui::SettingConfirmation", text);
}
} // namespace

QMessageBox *makeSettingConfirmation(QWidget *parent, const SettingChange &c)
{
    const QString before = c.before.isEmpty() ? tr("not set") : c.before.toHtmlEscaped();
    auto *box = new QMessageBox(
        QMessageBox::Question, tr("Apply Setting"),
        tr("Set <b>%1: %2</b> on %3?").arg(c.key.toHtmlEscaped(), c.after.toHtmlEscaped(), c.where.toHtmlEscaped()),
        QMessageBox::NoButton, parent);
    box->setObjectName(QStringLiteral("applySettingConfirmation"));
    box->setInformativeText(tr("<p>%1: %2 \u2192 <b>%3</b></p><p>The workspace file changes as below (Show "
                               "Details); a running sync starts again with it within a few seconds.</p>")
                                .arg(c.key.toHtmlEscaped(), before, c.after.toHtmlEscaped()));
    box->setDetailedText(c.diff.join(QLatin1Char('\n')));
    QPushButton *confirm = box->addButton(tr("Apply"), QMessageBox::AcceptRole);
    confirm->setObjectName(QStringLiteral("confirmApplySetting"));
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(confirm);
    box->setAttribute(Qt::WA_DeleteOnClose);
    return box;
}

} // namespace driftless::ui
