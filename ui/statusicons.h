#pragma once

#include <QIcon>
#include <QString>

#include "core/model/vocabulary.h"

namespace driftless::ui {

/// Icons for the words the engine uses, so that no status is told by colour alone: each has its
/// own shape (check, triangle, cross, question mark, octagon).
///
/// UI thread only (the icons are cached there).

/// ok, warn, breach, unknown.
QIcon freshnessIcon(const QString &freshness);
QIcon freshnessIcon(core::Freshness freshness);
/// An icon for the table states that need a look (error, source changed: two arrows, retrying)
/// or are held (paused: two bars); a null icon for the others.
QIcon stateIcon(core::TableState state);
/// Event levels: info, warn, error.
QIcon levelIcon(const QString &level);
QIcon levelIcon(core::Level level);
/// A file under :/icons without the .svg suffix: start, stop, pause, refresh, open, io.driftless.Driftless.
QIcon namedIcon(const QString &name);

} // namespace driftless::ui
