#include "ui/alertwording.h"

#include "ui/commandwording.h"

#include <QCoreApplication>

namespace driftless::ui {

namespace {
QString tr(const char *text)
{
    return QCoreApplication::translate("driftless::ui::AlertWording", text);
}
} // namespace

QString appAction(const core::Alert &a)
{
    QString action = QString::fromStdString(a.action);
    if (a.kind == "drift") {
        // The report id is in the message ("reconciliation 12 found ..."); the page lists it.
        return tr("open the newest report of %1 on the Reconciliation page and repair it there (Repair Table, or "
                  "Repair Selected for the rows you pick); each repair shows its statements first")
            .arg(QString::fromStdString(a.table));
    }
    if (a.kind == "lag_breach" && action.startsWith(QLatin1String("no sync is running")))
        return tr("no sync is running for it: press Start Sync");
    action.replace(QStringLiteral("(driftless-cli status)"), tr("(double-click it on the Tables page)"));
    return inAppWords(action);
}

} // namespace driftless::ui
