#include "ui/widgets/screenfit.h"

#include <QGuiApplication>
#include <QScreen>
#include <QSettings>
#include <QWidget>

#include <algorithm>

namespace driftless::ui::screenfit {

namespace {
QString settingsKey(const QString &key)
{
    return QStringLiteral("windows/") + key;
}
} // namespace

QRect usableArea(const QWidget *widget)
{
    // A dialog not shown yet has no screen of its own (QWidget::screen() guesses from where it
    // stands): its parent's is where it opens, centred on the parent.
    const QScreen *screen = nullptr;
    if (widget && !widget->windowHandle() && widget->parentWidget())
        screen = widget->parentWidget()->screen();
    else if (widget)
        screen = widget->screen();
    if (!screen)
        screen = QGuiApplication::primaryScreen();
    if (!screen)
        return QRect(0, 0, 1366, 768);
    const QRect area = screen->availableGeometry();
    return QRect(area.topLeft(), area.size() - kFrameAllowance);
}

QSize bounded(const QWidget *window, QSize wanted)
{
    const QSize room = usableArea(window).size();
    const QSize least = window ? window->minimumSize() : QSize();
    // The window's own minimum wins over the screen: a layout's minimum is what it cannot do
    // without, and a window squeezed below it would overlap its own widgets.
    return QSize(std::max(least.width(), std::min(wanted.width(), room.width())),
                 std::max(least.height(), std::min(wanted.height(), room.height())));
}

void fit(QWidget *window, QSize wanted)
{
    window->resize(bounded(window, wanted));
}

void restore(QWidget *window, const QString &key, QSize wanted)
{
    const QSize stored = QSettings().value(settingsKey(key)).toSize();
    fit(window, stored.isValid() && !stored.isEmpty() ? stored : wanted);
}

void remember(const QWidget *window, const QString &key)
{
    QSettings().setValue(settingsKey(key), window->size());
}

} // namespace driftless::ui::screenfit
