#pragma once

namespace driftless::ui {

/// Registers the icons compiled into driftless_ui (resources/icons/driftless.qrc).
///
/// A resource in a static library is only linked in when something refers to it, so every user
/// of `:/icons/...` calls this first; calling it again does nothing. Call after QGuiApplication
/// exists, on the UI thread.
void initResources();

} // namespace driftless::ui
