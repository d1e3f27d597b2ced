#pragma once

#include "core/engine/status/alerts.h"

#include <QString>

namespace driftless::ui {

/// What to do about `alert`, in the app's words: where the engine's advice names a
/// driftless-cli command for something the app has a button for (Start Sync, Repair Table on the
/// Reconciliation page, Recover… on the Tables page, a table's detail), the button is named
/// instead (inAppWords). Advice with no button in the app (a re-snapshot, a server setting) is
/// kept as the engine gives it.
QString appAction(const core::Alert &alert);

} // namespace driftless::ui
