#include "ui/widgets/reconciledialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace driftless::ui {

ReconcileDialog::ReconcileDialog(const core::Workspace &workspace, QWidget *parent)
    : QDialog(parent), m_workspace(workspace), m_pipeline(new QComboBox(this)), m_table(new QComboBox(this)),
      m_about(new QLabel(this)), m_start(nullptr)
{
    setObjectName(QStringLiteral("reconcileDialog"));
    setWindowTitle(tr("Reconcile Now"));
    m_pipeline->setObjectName(QStringLiteral("reconcilePipeline"));
    m_table->setObjectName(QStringLiteral("reconcileTable"));
    for (const auto &p : m_workspace.pipelines)
        m_pipeline->addItem(QString::fromStdString(p.name));

    m_about->setWordWrap(true);
    m_about->setTextFormat(Qt::PlainText);
    m_about->setText(tr("Counts the rows on both sides, then compares checksums of key ranges computed inside each "
                        "database, narrowing down to the rows that differ. Only those rows travel to this "
                        "workstation. Nothing is written to the source or the target; the report is kept in the "
                        "workspace file. Rows the sync has yet to apply are checked again and counted as in "
                        "flight, not as drift."));

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_start = buttons->addButton(tr("Reconcile"), QDialogButtonBox::AcceptRole);
    m_start->setObjectName(QStringLiteral("startReconcile"));
    m_start->setDefault(true);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *form = new QFormLayout;
    form->addRow(tr("&Pipeline:"), m_pipeline);
    form->addRow(tr("&Table:"), m_table);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_about);
    layout->addWidget(buttons);
    setMinimumWidth(460);

    connect(m_pipeline, &QComboBox::currentIndexChanged, this, &ReconcileDialog::fillTables);
    fillTables();
}

void ReconcileDialog::fillTables()
{
    m_table->clear();
    m_table->addItem(tr("All tables of the pipeline"), QString());
    if (const auto *p = m_workspace.pipeline(pipeline().toStdString()))
        for (const auto &t : p->tables) {
            const QString name = QString::fromStdString(t.table.display());
            m_table->addItem(name, name);
        }
    m_start->setEnabled(m_pipeline->count() > 0);
}

QString ReconcileDialog::pipeline() const
{
    return m_pipeline->currentText();
}

QString ReconcileDialog::table() const
{
    return m_table->currentData().toString();
}

void ReconcileDialog::choose(const QString &pipeline, const QString &table)
{
    m_pipeline->setCurrentIndex(m_pipeline->findText(pipeline));
    const int row = m_table->findData(table);
    m_table->setCurrentIndex(row < 0 ? 0 : row);
}

} // namespace driftless::ui
