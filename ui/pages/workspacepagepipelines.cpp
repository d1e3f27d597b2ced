#include "ui/pages/workspacepage.h"

// A pipeline's context menu on the Workspace page, and its paused tables counted from the status
// (the page's lists and edits are in workspacepage.cpp).

#include "ui/models/pipelinesmodel.h"
#include "ui/statusicons.h"

#include <QMenu>
#include <QPushButton>
#include <QTableView>

#include <map>
#include <string>

namespace driftless::ui {

void WorkspacePage::showPaused(const EngineSnapshot &snapshot)
{
    // Forward rows only: a two-way pipeline's reverse row is paused with its forward one.
    std::map<std::string, int> paused;
    for (const auto &t : snapshot.tables)
        if (t.paused && !t.reverse)
            ++paused[t.pipeline];
    if (m_pipelines->setPausedCounts(std::move(paused)))
        fitColumns();
}

void WorkspacePage::showPipelineMenu(const QPoint &pos)
{
    const QModelIndex index = m_pipelinesView->indexAt(pos);
    if (!index.isValid())
        return;
    m_pipelinesView->selectRow(index.row());
    const core::PipelineSpec &p = m_pipelines->pipelineAt(index.row());
    const QString name = QString::fromStdString(p.name);
    const int paused = m_pipelines->pausedCount(p.name);
    const int tables = static_cast<int>(p.tables.size());

    QMenu menu(this);
    const auto mirror = [&menu](QPushButton *button, auto slot) {
        QAction *a = menu.addAction(button->text(), button, slot);
        a->setEnabled(button->isEnabled());
        a->setToolTip(button->toolTip());
    };
    mirror(m_editPipeline, [this] { editPipeline(); });
    mirror(m_doctorPipeline, [this] { doctorPipeline(); });
    menu.addSeparator();
    // The Tables page's own choices: its confirmation names the tables, its runner writes them.
    QAction *pause = menu.addAction(namedIcon(QStringLiteral("pause")), tr("Pause Pipeline %1\u2026").arg(name), this,
                                    [this, name] { emit pausePipelineRequested(name, true); });
    pause->setObjectName(QStringLiteral("pausePipeline"));
    pause->setEnabled(m_hasWorkspace && paused < tables);
    pause->setToolTip(paused < tables ? tr("Stop syncing its tables until resumed (asked first)")
                                      : tr("Every table of %1 is paused").arg(name));
    QAction *resume = menu.addAction(namedIcon(QStringLiteral("start")), tr("Resume Pipeline %1\u2026").arg(name), this,
                                     [this, name] { emit pausePipelineRequested(name, false); });
    resume->setObjectName(QStringLiteral("resumePipeline"));
    resume->setEnabled(m_hasWorkspace && paused > 0);
    resume->setToolTip(paused > 0 ? tr("Sync its paused tables again (%1 of %2; asked first)").arg(paused).arg(tables)
                                  : tr("No table of %1 is paused").arg(name));
    menu.addSeparator();
    mirror(m_removePipeline, [this] { removePipeline(); });
    menu.setToolTipsVisible(true);
    menu.exec(m_pipelinesView->viewport()->mapToGlobal(pos));
}

} // namespace driftless::ui
