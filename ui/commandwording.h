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

/// A table a change of source stopped: its engine message is the why, then the fix ("...; bring
/// the target back ...: driftless-cli recover P ..., or load it again: driftless-cli resnapshot P"),
/// and the Tables page says the fix in a line of its own. `why` is the message without the
/// clause that names `driftless-cli recover` and what follows it (empty when the message is the
/// fix alone); `otherWay` is a way back that clause names before recover and the page's line
/// does not ("point the endpoint back at server_id 3"), else empty. A message naming no recover
/// is all `why`.
struct SourceChangeWords {
    QString why;
    QString otherWay;
};
SourceChangeWords sourceChangeWords(const QString &message);

} // namespace driftless::ui
