#pragma once

#include "core/engine/commands/doctor.h"
#include "core/model/workspace.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace driftless::ui {

/// What applying a doctor finding's setting (core::FindingSetting) does to a workspace, to show
/// before it is stored: where (pipeline, and table), the key, its value before and after, the
/// lines of the workspace file that change, and the workspace with the change made.
struct SettingChange {
    core::Workspace workspace;
    QString where;  ///< "pipeline app_to_dw" or "table public.orders of pipeline app_to_dw"
    QString key;    ///< as the file spells it: heartbeat, strategy, ...
    QString before; ///< the value as the file has it, or empty when it is not set
    QString after;
    /// The file's lines that go ("- ...") and come ("+ ...").
    QStringList diff;
};

/// The change `finding`'s setting makes to `workspace`. Nullopt, with `why` saying so, when the
/// finding has no setting, names a pipeline or table the workspace no longer has, a key the app
/// cannot set, a value the workspace file would refuse, or one already set.
std::optional<SettingChange> settingChange(const core::Workspace &workspace, const core::Finding &finding,
                                           QString *why = nullptr);

} // namespace driftless::ui
