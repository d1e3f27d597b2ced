#include "ui/findingsetting.h"

#include "core/config/workspacefile.h"
#include "core/model/duration.h"
#include "core/model/error.h"
#include "core/model/strategy.h"

#include <QCoreApplication>

#include <algorithm>
#include <set>

namespace driftless::ui {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("driftless::ui::SettingChange", text);
}
QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

QString durationOf(const std::optional<core::Millis> &d)
{
    return d ? qs(core::formatDuration(*d)) : QString();
}

/// Sets `key` of pipeline `p` to `value`; false for a key the app does not set this way.
bool setPipelineKey(core::PipelineSpec &p, const std::string &key, const std::string &value, QString &before)
{
    if (key == "heartbeat") {
        before = durationOf(p.heartbeat);
        p.heartbeat = core::parseDuration(value);
        return p.heartbeat.has_value();
    }
    if (key == "publication") {
        before = qs(p.publication.value_or(std::string()));
        p.publication = value;
        return true;
    }
    return false;
}

bool setTableKey(core::TableSpec &t, const std::string &key, const std::string &value, QString &before)
{
    if (key == "strategy") {
        before = qs(std::string(core::toString(t.strategy)));
        const auto s = core::strategyFromString(value);
        if (!s)
            return false;
        t.strategy = *s;
        // What only cursor sync reads goes with it, as the editor drops it when the strategy changes.
        if (t.strategy != core::Strategy::Cursor) {
            t.cursor.reset();
            t.lookback.reset();
        }
        return true;
    }
    if (key == "every" || key == "freshness_sla") {
        std::optional<core::Millis> &field = key == "every" ? t.every : t.freshnessSla;
        before = durationOf(field);
        field = core::parseDuration(value);
        return field.has_value();
    }
    if (key == "truncate" || key == "fallback_cursor") {
        std::optional<std::string> &field = key == "truncate" ? t.truncate : t.fallbackCursor;
        before = qs(field.value_or(std::string()));
        field = value;
        return true;
    }
    return false;
}

QStringList lines(const std::string &yaml)
{
    return qs(yaml).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

} // namespace

std::optional<SettingChange> settingChange(const core::Workspace &workspace, const core::Finding &finding, QString *why)
{
    auto refuse = [&](const QString &text) -> std::optional<SettingChange> {
        if (why)
            *why = text;
        return std::nullopt;
    };
    if (!finding.setting)
        return refuse(tr("this finding's fix is not a setting of the workspace"));
    const core::FindingSetting &s = *finding.setting;
    SettingChange c;
    c.workspace = workspace;
    c.key = qs(s.key);
    c.after = qs(s.value);
    auto p = std::find_if(c.workspace.pipelines.begin(), c.workspace.pipelines.end(),
                          [&](const core::PipelineSpec &q) { return q.name == finding.pipeline; });
    if (p == c.workspace.pipelines.end())
        return refuse(tr("the workspace has no pipeline %1 any more").arg(qs(finding.pipeline)));
    bool known = false;
    if (s.table.empty()) {
        c.where = tr("pipeline %1").arg(qs(p->name));
        known = setPipelineKey(*p, s.key, s.value, c.before);
    } else {
        auto t = std::find_if(p->tables.begin(), p->tables.end(),
                              [&](const core::TableSpec &q) { return q.table.display() == s.table; });
        if (t == p->tables.end())
            return refuse(tr("pipeline %1 has no table %2 any more").arg(qs(p->name), qs(s.table)));
        c.where = tr("table %1 of pipeline %2").arg(qs(s.table), qs(p->name));
        known = setTableKey(*t, s.key, s.value, c.before);
    }
    if (!known)
        return refuse(
            tr("'%1: %2' is not a setting the app can apply; set it in the pipeline editor").arg(c.key, c.after));
    if (c.before == c.after)
        return refuse(tr("%1 already has %2: %3").arg(c.where, c.key, c.after));
    std::string before, after;
    try {
        before = core::WorkspaceFile::toYaml(workspace);
        after = core::WorkspaceFile::toYaml(c.workspace);
        core::WorkspaceFile::validate(c.workspace);
    } catch (const core::Error &e) {
        return refuse(tr("the workspace would refuse it: %1").arg(qs(e.what())));
    }
    const QStringList was = lines(before), is = lines(after);
    const std::set<QString> wasSet(was.begin(), was.end()), isSet(is.begin(), is.end());
    for (const QString &line : was)
        if (!isSet.count(line))
            c.diff << QStringLiteral("- ") + line.trimmed();
    for (const QString &line : is)
        if (!wasSet.count(line))
            c.diff << QStringLiteral("+ ") + line.trimmed();
    return c;
}

} // namespace driftless::ui
