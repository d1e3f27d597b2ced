#pragma once

// Helpers shared by the Qt Test GUI tests.

#include "tests/support/testsupport.h"
#include "ui/dialogs/endpointdialog.h"
#include "ui/models/eventsmodel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QLineEdit>
#include <QRadioButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QString>
#include <QTest>
#include <QWidget>

namespace driftless::test {

/// Where screenshots go: $DRIFTLESS_ARTIFACTS (ctest sets it), else a temporary folder.
inline QString artifactsDir()
{
    QString dir = qEnvironmentVariable("DRIFTLESS_ARTIFACTS");
    if (dir.isEmpty())
        dir = QDir::temp().filePath(QStringLiteral("driftless-artifacts"));
    QDir().mkpath(dir);
    return dir;
}

/// Saves `widget` as NAME.png among the test artifacts (fails the test when it cannot).
inline void saveShot(QWidget *widget, const QString &name)
{
    const QString path = QDir(artifactsDir()).filePath(name + QStringLiteral(".png"));
    QVERIFY2(widget->grab().save(path), qPrintable(path));
}

/// For initTestCase(): window geometry and settings go to a throwaway folder, not the
/// developer's, under the application's own names.
inline void useTestSettings()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("Driftless"));
    QCoreApplication::setApplicationName(QStringLiteral("Driftless"));
}

/// Whether the event log holds an event of `kind` whose message contains `text`.
inline bool hasEvent(const ui::EventsModel *events, const std::string &kind, const std::string &text)
{
    for (int row = 0; row < events->rowCount(); ++row) {
        const auto &e = events->event(row);
        if (e.kind == kind && e.message.find(text) != std::string::npos)
            return true;
    }
    return false;
}

/// Fills the endpoint dialog's fields for the test Postgres server (no password).
inline void fillPostgres(ui::EndpointDialog &d, const QString &name, const std::string &db, const std::string &user)
{
    const auto &s = servers();
    d.nameEdit()->setText(name);
    d.kindBox()->setCurrentIndex(0);
    d.fieldsMode()->setChecked(true);
    d.hostEdit()->setText(QString::fromStdString(s.pgHost));
    d.portBox()->setValue(s.pgPort);
    d.databaseEdit()->setText(QString::fromStdString(db));
    d.userEdit()->setText(QString::fromStdString(user));
}

} // namespace driftless::test
