#pragma once

// Helpers shared by the Qt Test GUI tests.

#include <QCoreApplication>
#include <QDir>
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

} // namespace driftless::test
