#pragma once

// Small helpers the pipeline editor's two source files share (pipelineeditor.cpp: the dialog and
// the selected table's fields; pipelineeditortree.cpp: discovery and the tables tree). Internal
// to the editor.

#include "ui/dialogs/pipelineeditor.h"

#include "core/model/tableref.h"

#include <QString>
#include <QStringList>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace driftless::ui::editor {

inline constexpr core::Strategy kStrategies[] = {core::Strategy::FullRefresh, core::Strategy::Cursor,
                                                 core::Strategy::Cdc};
inline constexpr int kReasonWidth = 400;

inline QString strategyName(core::Strategy s)
{
    switch (s) {
    case core::Strategy::FullRefresh:
        return PipelineEditor::tr("full refresh");
    case core::Strategy::Cursor:
        return PipelineEditor::tr("cursor");
    case core::Strategy::Cdc:
        return PipelineEditor::tr("CDC");
    }
    return {};
}

inline QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

/// A name as its server prints it: Postgres quotes what is not plain lower case; MySQL keeps the
/// case and backticks only what is not a plain word.
inline QString ident(const std::string &name, bool mysql)
{
    if (!mysql)
        return qs(core::displayIdent(name));
    const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '_' || c == '$';
    });
    return plain ? qs(name) : qs(core::mysqlIdent(name));
}

inline QString joined(const std::vector<std::string> &parts, bool mysql)
{
    QStringList list;
    for (const auto &p : parts)
        list << ident(p, mysql);
    return list.join(QStringLiteral(", "));
}

/// "1 table", "6 tables": without translations loaded, tr()'s %n plurals would print "table(s)".
inline QString count(std::size_t n, const QString &one, const QString &many)
{
    return n == 1 ? one : many.arg(n);
}

inline bool isCount(const QString &text)
{
    return !text.isEmpty() && std::all_of(text.begin(), text.end(), [](QChar c) { return c.isDigit(); });
}

} // namespace driftless::ui::editor
