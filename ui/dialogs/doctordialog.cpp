#include "ui/dialogs/doctordialog.h"
#include "ui/widgets/screenfit.h"

#include "ui/enginedoor.h"
#include "ui/statusicons.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTime>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace driftless::ui {

namespace {

enum Column { Severity, Pipeline, Subject, Message, ColumnCount };

/// Errors first, then warnings, then what passed.
int rank(core::FindingLevel level)
{
    return level == core::FindingLevel::Error ? 0 : level == core::FindingLevel::Warn ? 1 : 2;
}

QString levelWord(core::FindingLevel level)
{
    return level == core::FindingLevel::Error  ? DoctorDialog::tr("Error")
           : level == core::FindingLevel::Warn ? DoctorDialog::tr("Warning")
                                               : DoctorDialog::tr("OK");
}

QIcon levelIconOf(core::FindingLevel level)
{
    return level == core::FindingLevel::Ok ? freshnessIcon(QStringLiteral("ok"))
                                           : levelIcon(QString::fromLatin1(core::toString(level)));
}

} // namespace

DoctorDialog::DoctorDialog(EngineDoor *door, core::DoctorScope scope, QWidget *parent)
    : QDialog(parent), m_door(door), m_scope(std::move(scope)), m_summary(new QLabel(this)),
      m_view(new QTreeWidget(this)), m_fix(new QLabel(this)), m_sql(new QPlainTextEdit(this)),
      m_copy(new QPushButton(tr("&Copy SQL"), this)), m_again(new QPushButton(tr("Check &Again"), this)),
      m_showPassed(new QCheckBox(tr("Show &passed checks"), this)),
      m_apply(new QPushButton(tr("&Apply Setting\u2026"), this))
{
    setObjectName(QStringLiteral("doctorDialog"));
    setWindowTitle(tr("Doctor: %1").arg(scopeText()));
    setAttribute(Qt::WA_DeleteOnClose);
    screenfit::restore(this, QStringLiteral("doctor"), QSize(980, 560));

    m_summary->setObjectName(QStringLiteral("doctorSummary"));
    m_summary->setWordWrap(true);
    m_view->setObjectName(QStringLiteral("doctorFindings"));
    m_view->setColumnCount(ColumnCount);
    m_view->setHeaderLabels({tr("Severity"), tr("Pipeline"), tr("Subject"), tr("Finding")});
    m_view->setRootIsDecorated(false);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(true);
    m_view->setUniformRowHeights(false);
    m_view->header()->setStretchLastSection(true);
    m_view->setColumnWidth(Severity, 100);
    m_view->setColumnWidth(Pipeline, 120);
    m_view->setColumnWidth(Subject, 220);

    m_fix->setObjectName(QStringLiteral("doctorFix"));
    m_fix->setWordWrap(true);
    m_fix->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_sql->setObjectName(QStringLiteral("doctorSql"));
    m_sql->setReadOnly(true);
    m_sql->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_sql->setMaximumHeight(90);
    m_sql->setPlaceholderText(tr("No SQL fixes the selected finding"));
    m_copy->setObjectName(QStringLiteral("copySql"));
    m_copy->setToolTip(tr("Copy the selected finding's statements, to run them as a user allowed to"));
    m_again->setObjectName(QStringLiteral("checkAgain"));
    m_again->setIcon(namedIcon(QStringLiteral("refresh")));
    m_showPassed->setObjectName(QStringLiteral("showPassed"));
    m_apply->setObjectName(QStringLiteral("applySetting"));
    m_showPassed->setChecked(true);

    auto *sqlRow = new QHBoxLayout;
    sqlRow->addWidget(m_sql, 1);
    sqlRow->addWidget(m_copy, 0, Qt::AlignTop);
    // The fix and, when it is a setting, the button that applies it, side by side.
    auto *fixRow = new QHBoxLayout;
    fixRow->addWidget(m_fix, 1);
    fixRow->addWidget(m_apply, 0, Qt::AlignTop);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(m_again, QDialogButtonBox::ActionRole);
    auto *layout = new QVBoxLayout(this);
    auto *top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_showPassed);
    layout->addLayout(top);
    layout->addWidget(m_view, 1);
    layout->addLayout(fixRow);
    layout->addLayout(sqlRow);
    layout->addWidget(buttons);

    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_again, &QPushButton::clicked, this, &DoctorDialog::check);
    connect(m_showPassed, &QCheckBox::toggled, this, &DoctorDialog::showFindings);
    connect(m_view, &QTreeWidget::currentItemChanged, this, &DoctorDialog::showSelected);
    connect(m_apply, &QPushButton::clicked, this, [this] {
        if (const core::Finding *f = selectedFinding(); f && f->setting)
            emit settingRequested(*f);
    });
    connect(m_copy, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(m_sql->toPlainText()); });
    showSelected();
}

QString DoctorDialog::scopeText() const
{
    if (!m_scope.endpoint.empty())
        return tr("endpoint %1").arg(QString::fromStdString(m_scope.endpoint));
    if (!m_scope.pipeline.empty())
        return tr("pipeline %1").arg(QString::fromStdString(m_scope.pipeline));
    return tr("the workspace");
}

void DoctorDialog::check()
{
    if (!m_door) {
        m_summary->setText(tr("No engine to ask: open a workspace or attach to an agent"));
        emit checked(false);
        return;
    }
    const std::uint64_t run = ++m_run;
    m_checking = true;
    m_again->setEnabled(false);
    m_summary->setText(tr("Checking %1 against its servers\u2026").arg(scopeText()));
    nlohmann::json body = nlohmann::json::object();
    if (!m_scope.pipeline.empty())
        body["pipeline"] = m_scope.pipeline;
    if (!m_scope.endpoint.empty())
        body["endpoint"] = m_scope.endpoint;
    m_door->post(QStringLiteral("/api/v1/doctor"), body, this, [this, run](const EngineDoor::Reply &reply) {
        if (run != m_run)
            return; // a newer run is on its way
        m_checking = false;
        m_again->setEnabled(true);
        if (!reply.ok()) {
            m_summary->setText(tr("The engine could not run the checks: %1").arg(reply.error));
            emit checked(false);
            return;
        }
        m_findings = core::findingsFromJson(reply.body);
        showFindings();
        emit checked(true);
    });
}

void DoctorDialog::showFindings()
{
    const QString current = m_view->currentItem() ? m_view->currentItem()->data(0, Qt::UserRole).toString() : QString();
    m_view->clear();
    std::vector<std::size_t> order(m_findings.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
        return rank(m_findings[a].level) < rank(m_findings[b].level);
    });
    int errors = 0, warnings = 0, passed = 0;
    QTreeWidgetItem *select = nullptr;
    for (std::size_t i : order) {
        const auto &f = m_findings[i];
        errors += f.level == core::FindingLevel::Error;
        warnings += f.level == core::FindingLevel::Warn;
        passed += f.level == core::FindingLevel::Ok;
        if (f.level == core::FindingLevel::Ok && !m_showPassed->isChecked())
            continue;
        auto *item = new QTreeWidgetItem(m_view);
        item->setIcon(Severity, levelIconOf(f.level));
        item->setText(Severity, levelWord(f.level));
        item->setText(Pipeline, QString::fromStdString(f.pipeline));
        item->setText(Subject, QString::fromStdString(f.subject));
        item->setText(Message, QString::fromStdString(f.message));
        item->setToolTip(Message, QString::fromStdString(f.message));
        item->setData(0, Qt::UserRole, QString::number(i));
        if (item->data(0, Qt::UserRole).toString() == current || (!select && current.isEmpty()))
            select = item;
    }
    if (!select && m_view->topLevelItemCount() > 0)
        select = m_view->topLevelItem(0);
    m_view->setCurrentItem(select);
    const QString when = QTime::currentTime().toString(QStringLiteral("HH:mm:ss"));
    const auto count = [](int n, const QString &one, const QString &many) { return n == 1 ? one : many.arg(n); };
    if (errors == 0 && warnings == 0)
        m_summary->setText(tr("%1 of %2 passed (checked at %3)")
                               .arg(count(passed, tr("The check"), tr("All %1 checks")), scopeText(), when));
    else
        m_summary->setText(tr("%1: %2 and %3; %4 passed (checked at %5)")
                               .arg(scopeText().left(1).toUpper() + scopeText().mid(1),
                                    count(errors, tr("1 error"), tr("%1 errors")),
                                    count(warnings, tr("1 warning"), tr("%1 warnings")))
                               .arg(passed)
                               .arg(when));
    showSelected();
}

const core::Finding *DoctorDialog::selectedFinding() const
{
    QTreeWidgetItem *item = m_view->currentItem();
    bool ok = false;
    const std::size_t i = item ? item->data(0, Qt::UserRole).toString().toULongLong(&ok) : 0;
    return ok && i < m_findings.size() ? &m_findings[i] : nullptr;
}

void DoctorDialog::showSelected()
{
    const core::Finding *f = selectedFinding();
    // The list's Finding column is cut on a laptop's screen: the selected finding is said whole
    // here, its fix under it.
    const QString message = f ? QString::fromStdString(f->message) : QString();
    m_fix->setText(!f               ? QString()
                   : f->fix.empty() ? message
                                    : message + QLatin1Char('\n') + tr("Fix: %1").arg(QString::fromStdString(f->fix)));
    m_sql->setPlainText(f ? QString::fromStdString(f->sql) : QString());
    m_copy->setEnabled(f && !f->sql.empty());
    m_apply->setEnabled(f && f->setting);
    m_apply->setText(f && f->setting
                         ? tr("&Apply %1: %2\u2026")
                               .arg(QString::fromStdString(f->setting->key), QString::fromStdString(f->setting->value))
                         : tr("&Apply Setting\u2026"));
    m_apply->setToolTip(f && f->setting ? tr("Show what changes in the workspace, then store it")
                                        : tr("The selected finding's fix is not a setting of the workspace"));
}

void DoctorDialog::done(int result)
{
    screenfit::remember(this, QStringLiteral("doctor"));
    QDialog::done(result);
}

} // namespace driftless::ui
