#pragma once

#include <QString>

namespace driftless::ui {

/// `text` from the engine (a table's message, an alert's advice) in the app's words: each
/// `driftless-cli` command the app has a button or menu item for is named by that button, where
/// it is, with the command kept after it in parentheses for DBAs who script ("Recover… (the
/// Tables page's button or the table's context menu; driftless-cli recover app)"). Commands with
/// no control in the app (resnapshot, apply, status) are left as the engine wrote them. Plain
/// text in, plain text out: escape it for a rich-text label afterwards.
QString inAppWords(const QString &text);

} // namespace driftless::ui
