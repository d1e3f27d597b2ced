#pragma once

#include <QRect>
#include <QSize>
#include <QString>

class QWidget;

namespace driftless::ui {

/// Windows that fit the screen they open on: a 1366x768 laptop, or the same at 125% or 150%
/// scaling (1093x614 and 911x512 device-independent pixels), as well as a large monitor.
///
/// A window's size is what it asks for, no larger than its screen's available area less the
/// frame a window manager adds (kFrameAllowance: a title bar and borders, which the window does
/// not know before it is shown). A size the DBA gave a window is remembered under a QSettings key
/// and given back the next time, again no larger than the screen it opens on (a size kept from a
/// large monitor does not push OK off a laptop's screen).
namespace screenfit {

/// Room a window manager takes around a window: a title bar and borders.
inline constexpr QSize kFrameAllowance{16, 40};

/// The area a window of `widget` may take: its screen's available geometry (the primary screen's
/// while it has none), less kFrameAllowance.
QRect usableArea(const QWidget *widget);

/// `wanted`, no larger than usableArea(window).
QSize bounded(const QWidget *window, QSize wanted);

/// Resizes `window` to bounded(wanted).
void fit(QWidget *window, QSize wanted);

/// Resizes `window` to the size stored under `key` (QSettings "windows/<key>"), else to `wanted`;
/// bounded either way.
void restore(QWidget *window, const QString &key, QSize wanted);

/// Stores `window`'s size under `key`, for restore().
void remember(const QWidget *window, const QString &key);

} // namespace screenfit
} // namespace driftless::ui
