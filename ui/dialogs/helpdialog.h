#pragma once

#include <QDialog>
#include <QList>

class QAction;
class QListWidget;
class QTextBrowser;

namespace driftless::ui {

/// Help > Documentation and Help > Keyboard Shortcuts: the documents shipped inside the app (the
/// README and docs/, as Markdown in the resources, so they are there with or without a network)
/// and the window's shortcuts, each action's own, listed on the first page.
///
/// Object names: helpDialog, helpTopics, helpText.
class HelpDialog final : public QDialog {
    Q_OBJECT
public:
    /// `actions`: the window's actions; those with a shortcut are listed.
    explicit HelpDialog(const QList<QAction *> &actions, QWidget *parent = nullptr);

    /// Shows the topic at `row` (0: the keyboard shortcuts).
    void showTopic(int row);
    QListWidget *topics() const { return m_topics; }
    QTextBrowser *text() const { return m_text; }

    /// The documents shipped: title and resource path, in the order listed.
    static QList<std::pair<QString, QString>> documents();

protected:
    void done(int result) override;

private:
    QString shortcutsHtml() const;

    QList<QAction *> m_actions;
    QListWidget *m_topics;
    QTextBrowser *m_text;
};

} // namespace driftless::ui
