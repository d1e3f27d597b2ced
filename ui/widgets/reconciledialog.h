#pragma once

#include "core/model/workspace.h"

#include <QDialog>

class QComboBox;
class QLabel;
class QPushButton;

namespace driftless::ui {

/// Asks which pipeline (and, optionally, which one of its tables) to compare, and says what a
/// comparison does before it starts: it reads both sides and writes nothing but the report.
///
/// Takes a copy of the workspace's pipelines; reads nothing from any database.
class ReconcileDialog final : public QDialog {
    Q_OBJECT
public:
    explicit ReconcileDialog(const core::Workspace &workspace, QWidget *parent = nullptr);

    QComboBox *pipelineCombo() const { return m_pipeline; }
    QComboBox *tableCombo() const { return m_table; }
    QPushButton *startButton() const { return m_start; }

    QString pipeline() const;
    /// The chosen table, or empty for every table of the pipeline.
    QString table() const;
    /// Chooses a pipeline and a table (empty: all), as a user would in the combos.
    void choose(const QString &pipeline, const QString &table = {});

private:
    void fillTables();

    core::Workspace m_workspace;
    QComboBox *m_pipeline;
    QComboBox *m_table;
    QLabel *m_about;
    QPushButton *m_start;
};

} // namespace driftless::ui
