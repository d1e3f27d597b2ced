#include "ui/commandwording.h"

#include <QCoreApplication>
#include <QRegularExpression>

#include <algorithm>

namespace driftless::ui {

namespace {
QString tr(const char *text)
{
    return QCoreApplication::translate("driftless::ui::CommandWording", text);
}

// A pipeline or table name as the engine writes it (app, public.orders, "db"."t"): a sentence's
// closing full stop or comma is not part of it.
constexpr auto kName = R"(((?:[\w"$-]+)(?:\.[\w"$-]+)*))";

/// One command the app has a control for: the words the engine uses, the control and where it is.
struct Command {
    const char *verb;   ///< after `driftless-cli `
    int names;          ///< how many names follow (pipeline, table), at most
    const char *button; ///< the control's text
    const char *where;  ///< where the DBA finds it
};

#define DRIFTLESS_WORDS(text) QT_TRANSLATE_NOOP("driftless::ui::CommandWording", text)
const Command kCommands[] = {
    {"recover", 1, DRIFTLESS_WORDS("Recover\u2026"),
     DRIFTLESS_WORDS("the Tables page's button or the table's context menu")},
    {"backfill", 2, DRIFTLESS_WORDS("Backfill\u2026"), DRIFTLESS_WORDS("the Tables page")},
    {"resume", 2, DRIFTLESS_WORDS("Resume\u2026"), DRIFTLESS_WORDS("the Tables page")},
    {"promote", 2, DRIFTLESS_WORDS("Promote to CDC\u2026"), DRIFTLESS_WORDS("the Tables page")},
    {"reconcile", 2, DRIFTLESS_WORDS("Reconcile Now\u2026"), DRIFTLESS_WORDS("the Reconciliation page")},
};
#undef DRIFTLESS_WORDS

/// Every match of `c` in `text` named by its control, the command kept after it.
QString nameControl(const QString &text, const Command &c)
{
    QString pattern = QStringLiteral("driftless-cli %1 ").arg(QLatin1String(c.verb)) + kName;
    if (c.names > 1)
        pattern += QStringLiteral("(?: ") + kName + QStringLiteral(")?");
    const QRegularExpression re(pattern);
    QString out;
    qsizetype from = 0;
    for (auto it = re.globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        const qsizetype start = m.capturedStart();
        const qsizetype end = m.capturedEnd();
        // Already in parentheses ("(driftless-cli promote app public.orders)"): no second pair.
        const bool inParens = start > 0 && text.at(start - 1) == QLatin1Char('(') && end < text.size() &&
                              text.at(end) == QLatin1Char(')');
        out += text.mid(from, start - from);
        out += inParens ? QStringLiteral("%1, %2; %3").arg(tr(c.button), tr(c.where), m.captured(0))
                        : QStringLiteral("%1 (%2; %3)").arg(tr(c.button), tr(c.where), m.captured(0));
        from = end;
    }
    out += text.mid(from);
    return out;
}
} // namespace

QString inAppWords(const QString &text)
{
    if (!text.contains(QLatin1String("driftless-cli")))
        return text;
    QString out = text;
    // "start one (driftless-cli run, or the app)": the app is the Start Sync button.
    out.replace(QStringLiteral("(driftless-cli run, serve, or the app)"), tr("(Start Sync)"));
    out.replace(QStringLiteral("(driftless-cli run, or the app)"), tr("(Start Sync)"));
    out.replace(QStringLiteral("(driftless-cli reconcile shows it again)"),
                tr("(the Reconciliation page shows it again)"));
    // "(driftless-cli run, or run --once)", "(driftless-cli run)": inside parentheses already.
    static const QRegularExpression runInParens(QStringLiteral(R"(\(driftless-cli run\b(?!-)([^)]*)\))"));
    out.replace(runInParens, tr("(Start Sync; driftless-cli run\\1)"));
    static const QRegularExpression run(QStringLiteral(R"((?<!Start Sync; )driftless-cli run\b(?!-))"));
    out.replace(run, tr("Start Sync (driftless-cli run)"));
    // "driftless-cli repair 12 --table public.orders": Repair Table… on that report.
    static const QRegularExpression repair(QStringLiteral(R"(driftless-cli repair (\d+)( --table )?)") + kName +
                                           QStringLiteral("?"));
    out.replace(repair, tr("Repair Table\u2026 (the Reconciliation page, report \\1; driftless-cli repair \\1\\2\\3)"));
    out.replace(QStringLiteral("(driftless-cli promote to go back to cdc)"),
                tr("(Promote to CDC\u2026 on the Tables page goes back to cdc; driftless-cli promote)"));
    for (const Command &c : kCommands)
        out = nameControl(out, c);
    return out;
}

SourceChangeWords sourceChangeWords(const QString &message)
{
    const qsizetype command = message.indexOf(QLatin1String("driftless-cli recover"));
    if (command < 0)
        return {message, {}};
    // The fix's clause starts after the last "; " before the command outside parentheses (the
    // hint's own "(or set recover: auto on the pipeline; it compares ...)" is inside them).
    qsizetype start = -1;
    int depth = 0;
    for (qsizetype i = 0; i + 1 < command; ++i) {
        const QChar c = message.at(i);
        if (c == QLatin1Char('('))
            ++depth;
        else if (c == QLatin1Char(')'))
            depth = std::max(0, depth - 1);
        else if (depth == 0 && c == QLatin1Char(';') && message.at(i + 1) == QLatin1Char(' '))
            start = i;
    }
    SourceChangeWords out;
    out.why = start < 0 ? QString() : message.left(start);
    const QString clause = message.mid(start < 0 ? 0 : start + 2, command - (start < 0 ? 0 : start + 2));
    static const QString point = QStringLiteral("point the endpoint back at ");
    if (const qsizetype orAt = clause.indexOf(QLatin1String(", or ")); clause.startsWith(point) && orAt > 0)
        out.otherWay = clause.left(orAt);
    return out;
}

} // namespace driftless::ui
