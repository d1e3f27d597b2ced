#include "ui/dialogs/conflictpolicypicker.h"

#include "core/model/conflictpolicy.h"
#include "core/model/duration.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>

namespace driftless::ui {

namespace {
using Rule = core::ConflictPolicy::Rule;

void addRule(QComboBox *box, const QString &text, Rule r)
{
    box->addItem(text, static_cast<int>(r));
}
Rule ruleOf(const QComboBox *box)
{
    return static_cast<Rule>(box->currentData().toInt());
}
void selectRule(QComboBox *box, Rule r)
{
    box->setCurrentIndex(std::max(0, box->findData(static_cast<int>(r))));
}
} // namespace

ConflictPolicyPicker::ConflictPolicyPicker(QWidget *parent)
    : QWidget(parent), m_rule(new QComboBox(this)), m_overlap(new QComboBox(this)), m_clock(new QComboBox(this)),
      m_column(new QLineEdit(this)), m_skew(new QLineEdit(this)), m_overlapLabel(new QLabel(tr("on overlap:"), this)),
      m_clockLabel(new QLabel(tr("by:"), this)), m_skewLabel(new QLabel(tr("max skew:"), this))
{
    m_rule->setObjectName(QStringLiteral("conflictPolicy"));
    addRule(m_rule, tr("Merge columns"), Rule::MergeColumns);
    addRule(m_rule, tr("Source wins"), Rule::SourceWins);
    addRule(m_rule, tr("Target wins"), Rule::TargetWins);
    addRule(m_rule, tr("Newer wins"), Rule::NewerWins);
    addRule(m_rule, tr("Manual (queue)"), Rule::Manual);
    m_rule->setToolTip(tr("What happens to a change for a row the other side also changed since they last agreed "
                          "(docs/two-way.md)"));
    m_overlap->setObjectName(QStringLiteral("conflictOnOverlap"));
    addRule(m_overlap, tr("Manual (queue)"), Rule::Manual);
    addRule(m_overlap, tr("Source wins"), Rule::SourceWins);
    addRule(m_overlap, tr("Target wins"), Rule::TargetWins);
    addRule(m_overlap, tr("Newer wins"), Rule::NewerWins);
    m_overlap->setToolTip(tr("When both sides changed the same column"));
    m_clock->setObjectName(QStringLiteral("conflictClock"));
    m_clock->addItem(tr("Column"), QStringLiteral("column"));
    m_clock->addItem(tr("Commit time"), QStringLiteral("commit_time"));
    m_clock->setToolTip(tr("Newer wins compares a timestamp column both sides have, or the transactions' commit "
                           "times (track_commit_timestamp = on on both servers)"));
    m_column->setObjectName(QStringLiteral("conflictColumn"));
    m_column->setPlaceholderText(tr("timestamp column"));
    m_skew->setObjectName(QStringLiteral("conflictMaxSkew"));
    m_skew->setPlaceholderText(tr("5s (default)"));
    m_skew->setToolTip(tr("Two times this far apart or closer decide nothing: the conflict is queued"));
    m_overlapLabel->setBuddy(m_overlap);
    m_clockLabel->setBuddy(m_clock);
    m_skewLabel->setBuddy(m_skew);

    auto *row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_rule);
    row->addWidget(m_overlapLabel);
    row->addWidget(m_overlap);
    row->addWidget(m_clockLabel);
    row->addWidget(m_clock);
    row->addWidget(m_column, 1);
    row->addWidget(m_skewLabel);
    row->addWidget(m_skew);
    row->addStretch();

    for (QComboBox *box : {m_rule, m_overlap, m_clock})
        connect(box, &QComboBox::currentIndexChanged, this, &ConflictPolicyPicker::onEdited);
    for (QLineEdit *edit : {m_column, m_skew})
        connect(edit, &QLineEdit::textChanged, this, &ConflictPolicyPicker::onEdited);
    updateFields();
}

void ConflictPolicyPicker::setPolicy(const std::optional<std::string> &stored)
{
    m_loading = true;
    const core::ConflictPolicy p =
        stored ? core::ConflictPolicy::parse(*stored).value_or(core::ConflictPolicy{}) : core::ConflictPolicy{};
    m_default = !stored;
    selectRule(m_rule, p.rule);
    selectRule(m_overlap, p.rule == Rule::MergeColumns ? p.onOverlap : Rule::Manual);
    const bool newer = p.usesNewer();
    m_clock->setCurrentIndex(newer && p.newer.clock == core::NewerWins::Clock::CommitTime ? 1 : 0);
    m_column->setText(newer ? QString::fromStdString(p.newer.column) : QString());
    m_skew->setText(newer && p.newer.maxSkewMs != core::NewerWins{}.maxSkewMs
                        ? QString::fromStdString(core::formatDuration(core::Millis(p.newer.maxSkewMs)))
                        : QString());
    updateFields();
    m_loading = false;
}

std::optional<std::string> ConflictPolicyPicker::policy() const
{
    if (m_default)
        return std::nullopt;
    core::ConflictPolicy p;
    p.rule = ruleOf(m_rule);
    if (p.rule == Rule::MergeColumns)
        p.onOverlap = ruleOf(m_overlap);
    if (p.usesNewer()) {
        if (m_clock->currentData().toString() == QLatin1String("commit_time")) {
            p.newer.clock = core::NewerWins::Clock::CommitTime;
        } else {
            p.newer.clock = core::NewerWins::Clock::Column;
            p.newer.column = m_column->text().trimmed().toStdString();
        }
        if (auto d = core::parseDuration(m_skew->text().trimmed().toStdString()))
            p.newer.maxSkewMs = d->count();
    }
    return p.text();
}

QString ConflictPolicyPicker::problem() const
{
    const bool newer = ruleOf(m_rule) == Rule::NewerWins ||
                       (ruleOf(m_rule) == Rule::MergeColumns && ruleOf(m_overlap) == Rule::NewerWins);
    if (!newer)
        return {};
    if (m_clock->currentData().toString() == QLatin1String("column") && m_column->text().trimmed().isEmpty())
        return tr("Name the timestamp column Newer wins compares, or compare commit times.");
    const QString skew = m_skew->text().trimmed();
    if (!skew.isEmpty() && !core::parseDuration(skew.toStdString()))
        return tr("Max skew '%1' is not a duration (0s, 5s, 1m).").arg(skew);
    return {};
}

void ConflictPolicyPicker::updateFields()
{
    const Rule rule = ruleOf(m_rule);
    const bool merge = rule == Rule::MergeColumns;
    const bool newer = rule == Rule::NewerWins || (merge && ruleOf(m_overlap) == Rule::NewerWins);
    m_overlapLabel->setVisible(merge);
    m_overlap->setVisible(merge);
    for (QWidget *w : std::initializer_list<QWidget *>{m_clockLabel, m_clock, m_skewLabel, m_skew})
        w->setVisible(newer);
    m_column->setVisible(newer && m_clock->currentData().toString() == QLatin1String("column"));
}

void ConflictPolicyPicker::onEdited()
{
    updateFields();
    if (m_loading)
        return;
    m_default = false;
    Q_EMIT policyChanged();
}

} // namespace driftless::ui
