#include "ui/dialogs/helpdialog.h"
#include "ui/widgets/screenfit.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QFile>
#include <QHBoxLayout>
#include <QListWidget>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

namespace driftless::ui {

QList<std::pair<QString, QString>> HelpDialog::documents()
{
    return {{tr("Overview and configuration"), QStringLiteral(":/docs/README.md")},
            {tr("What each strategy guarantees"), QStringLiteral(":/docs/strategies.md")},
            {tr("Change data capture"), QStringLiteral(":/docs/cdc.md")},
            {tr("Pausing and resuming"), QStringLiteral(":/docs/pause.md")},
            {tr("Schema changes"), QStringLiteral(":/docs/schema-changes.md")},
            {tr("Column mapping"), QStringLiteral(":/docs/column-mapping.md")},
            {tr("SSH tunnels"), QStringLiteral(":/docs/ssh-tunnels.md")},
            {tr("Two-way pipelines"), QStringLiteral(":/docs/two-way.md")},
            {tr("Type mapping"), QStringLiteral(":/docs/type-mapping.md")},
            {tr("The agent API"), QStringLiteral(":/docs/agent-api.md")}};
}

HelpDialog::HelpDialog(const QList<QAction *> &actions, QWidget *parent)
    : QDialog(parent), m_actions(actions), m_topics(new QListWidget(this)), m_text(new QTextBrowser(this))
{
    setObjectName(QStringLiteral("helpDialog"));
    setWindowTitle(tr("Driftless Help"));
    setAttribute(Qt::WA_DeleteOnClose);
    m_topics->setObjectName(QStringLiteral("helpTopics"));
    m_text->setObjectName(QStringLiteral("helpText"));
    m_text->setOpenExternalLinks(true);
    m_topics->addItem(tr("Keyboard shortcuts"));
    for (const auto &[title, path] : documents())
        m_topics->addItem(title);
    auto *split = new QSplitter(this);
    split->addWidget(m_topics);
    split->addWidget(m_text);
    split->setStretchFactor(1, 1);
    split->setSizes({220, 700});
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(split, 1);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_topics, &QListWidget::currentRowChanged, this, &HelpDialog::showTopic);
    screenfit::restore(this, QStringLiteral("help"), QSize(960, 680));
    m_topics->setCurrentRow(0);
}

void HelpDialog::showTopic(int row)
{
    if (row <= 0) {
        m_text->setHtml(shortcutsHtml());
        return;
    }
    const auto docs = documents();
    if (row - 1 >= docs.size())
        return;
    QFile f(docs[row - 1].second);
    if (!f.open(QIODevice::ReadOnly)) {
        m_text->setPlainText(tr("%1 is missing from this build.").arg(docs[row - 1].first));
        return;
    }
    m_text->setMarkdown(QString::fromUtf8(f.readAll()));
}

QString HelpDialog::shortcutsHtml() const
{
    QStringList rows;
    for (const QAction *a : m_actions)
        if (!a->shortcut().isEmpty())
            rows << QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                        .arg(a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped(),
                             a->text().remove(QLatin1Char('&')).toHtmlEscaped());
    rows << tr("<tr><td><b>Ctrl+C</b></td><td>Copy the selected rows of a grid (tab-separated, with its "
               "headers)</td></tr>")
         << tr("<tr><td><b>Ctrl+Tab</b></td><td>Next tab of a dialog</td></tr>");
    return tr("<h3>Keyboard shortcuts</h3><table cellpadding=4>%1</table>").arg(rows.join(QString()));
}

void HelpDialog::done(int result)
{
    screenfit::remember(this, QStringLiteral("help"));
    QDialog::done(result);
}

} // namespace driftless::ui
