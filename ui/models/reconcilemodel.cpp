#include "ui/models/reconcilemodel.h"

#include "ui/displayformat.h"
#include "ui/statusicons.h"

#include <QBrush>
#include <QColor>
#include <QLocale>

namespace driftless::ui {

namespace {

using Summary = core::ReconcileSummary;

bool sameRow(const Summary &a, const Summary &b)
{
    return a.reportId == b.reportId && a.table == b.table;
}

bool sameOnScreen(const Summary &a, const Summary &b)
{
    return sameRow(a, b) && a.pipeline == b.pipeline && a.finishedMs == b.finishedMs && a.sourceRows == b.sourceRows &&
           a.targetRows == b.targetRows && a.missing == b.missing && a.extra == b.extra && a.different == b.different &&
           a.inFlight == b.inFlight && a.driftRatio == b.driftRatio && a.error == b.error && a.repaired == b.repaired &&
           a.supersededBy == b.supersededBy;
}

bool isNumber(int column)
{
    return column == ReconcileModel::Report || column >= ReconcileModel::SourceRows;
}

long long drift(const Summary &s)
{
    return s.missing + s.extra + s.different;
}

QString count(long long n)
{
    return QLocale().toString(n);
}

} // namespace

ReconcileModel::ReconcileModel(QObject *parent) : QAbstractTableModel(parent) {}

int ReconcileModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ReconcileModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ReconcileModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Missing:
            return tr("Rows in the source that the target lacks");
        case Extra:
            return tr("Rows in the target that the source no longer has");
        case Different:
            return tr("Rows on both sides with different values");
        case InFlight:
            return tr("Rows that differed only because the sync had not applied them yet: not drift");
        case DriftRatio:
            return tr("Missing, extra and different rows over the source's rows");
        }
        return {};
    }
    if (role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Report:
        return tr("Report");
    case When:
        return tr("When");
    case Pipeline:
        return tr("Pipeline");
    case Table:
        return tr("Table");
    case Status:
        return tr("Status");
    case SourceRows:
        return tr("Source rows");
    case TargetRows:
        return tr("Target rows");
    case Missing:
        return tr("Missing");
    case Extra:
        return tr("Extra");
    case Different:
        return tr("Different");
    case InFlight:
        return tr("In flight");
    case DriftRatio:
        return tr("Drift");
    }
    return {};
}

QString ReconcileModel::statusKind(const Summary &s)
{
    if (!s.error.empty())
        return QStringLiteral("error");
    return drift(s) > 0 ? QStringLiteral("drift") : QStringLiteral("none");
}

QString ReconcileModel::formatRatio(double ratio)
{
    if (ratio <= 0)
        return QStringLiteral("0%");
    const double percent = ratio * 100.0;
    if (percent < 0.01)
        return QStringLiteral("<%1%").arg(QLocale().toString(0.01, 'f', 2));
    return QStringLiteral("%1%").arg(QLocale().toString(percent, 'f', 2));
}

QVariant ReconcileModel::display(const Summary &s, int column) const
{
    const bool failed = !s.error.empty();
    switch (column) {
    case Report:
        return static_cast<qlonglong>(s.reportId);
    case When:
        return formatTimestamp(s.finishedMs);
    case Pipeline:
        return QString::fromStdString(s.pipeline);
    case Table:
        return QString::fromStdString(s.table);
    case Status: {
        QString status = failed ? tr("error") : drift(s) > 0 ? tr("drift") : tr("no drift");
        if (s.repaired)
            status += tr(" \u00b7 repaired");
        if (s.supersededBy)
            status += tr(" \u00b7 superseded");
        return status;
    }
    case SourceRows:
        return failed ? QStringLiteral("\u2014") : count(s.sourceRows);
    case TargetRows:
        return failed ? QStringLiteral("\u2014") : count(s.targetRows);
    case Missing:
        return failed ? QStringLiteral("\u2014") : count(s.missing);
    case Extra:
        return failed ? QStringLiteral("\u2014") : count(s.extra);
    case Different:
        return failed ? QStringLiteral("\u2014") : count(s.different);
    case InFlight:
        return failed ? QStringLiteral("\u2014") : count(s.inFlight);
    case DriftRatio:
        return failed ? QStringLiteral("\u2014") : formatRatio(s.driftRatio);
    }
    return {};
}

QVariant ReconcileModel::sortKey(const Summary &s, int column) const
{
    switch (column) {
    case Report:
        return static_cast<qlonglong>(s.reportId);
    case When:
        return static_cast<qlonglong>(s.finishedMs);
    case Status:
        return !s.error.empty() ? 2 : (drift(s) > 0 ? 1 : 0);
    case SourceRows:
        return static_cast<qlonglong>(s.sourceRows);
    case TargetRows:
        return static_cast<qlonglong>(s.targetRows);
    case Missing:
        return static_cast<qlonglong>(s.missing);
    case Extra:
        return static_cast<qlonglong>(s.extra);
    case Different:
        return static_cast<qlonglong>(s.different);
    case InFlight:
        return static_cast<qlonglong>(s.inFlight);
    case DriftRatio:
        return s.driftRatio;
    }
    return display(s, column);
}

QString ReconcileModel::toolTip(const Summary &s, int column) const
{
    switch (column) {
    case Status: {
        QString tip;
        if (!s.error.empty())
            tip = tr("The comparison failed: %1").arg(QString::fromStdString(s.error));
        else if (drift(s) > 0 && !s.supersededBy)
            tip = tr("%1 rows differ; select the row to see them and repair them").arg(count(drift(s)));
        else if (drift(s) > 0)
            tip = tr("%1 rows differed").arg(count(drift(s)));
        else
            tip = s.inFlight ? tr("Equal, apart from %1 rows the sync had yet to apply").arg(count(s.inFlight))
                             : tr("Source and target held the same rows");
        if (s.repaired)
            tip += tr("\nA repair ran from this report.");
        if (s.supersededBy)
            tip += tr("\nSuperseded: report %1 compared this table again since.").arg(s.supersededBy);
        return tip;
    }
    case DriftRatio:
        return s.error.empty() ? tr("%1 of %2 rows").arg(count(drift(s)), count(s.sourceRows)) : QString();
    case When:
        return tr("When the comparison finished (this workstation's clock)");
    }
    return {};
}

QVariant ReconcileModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &s = m_rows[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return display(s, index.column());
    case Qt::DecorationRole:
        // The icon's shape and the word carry the status, never the colour alone.
        if (index.column() == Status) {
            const QString kind = statusKind(s);
            if (kind == QLatin1String("error"))
                return levelIcon(QStringLiteral("error"));
            return freshnessIcon(kind == QLatin1String("drift") ? QStringLiteral("warn") : QStringLiteral("ok"));
        }
        return {};
    case Qt::ToolTipRole:
        return toolTip(s, index.column());
    case Qt::ForegroundRole:
        // An older comparison of a table shown after: history, set back (its Status says so too).
        if (s.supersededBy)
            return QBrush(QColor(0x80, 0x80, 0x80));
        return {};
    case Qt::TextAlignmentRole:
        if (isNumber(index.column()))
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case SortRole:
        return sortKey(s, index.column());
    case ReportIdRole:
        return static_cast<qlonglong>(s.reportId);
    case StatusRole:
        return statusKind(s);
    }
    return {};
}

void ReconcileModel::setSummaries(const std::vector<Summary> &rows)
{
    bool sameRows = rows.size() == m_rows.size();
    for (std::size_t i = 0; sameRows && i < rows.size(); ++i)
        sameRows = sameRow(rows[i], m_rows[i]);
    if (!sameRows) {
        beginResetModel();
        m_rows = rows;
        endResetModel();
        return;
    }
    int first = -1, last = -1;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (sameOnScreen(rows[i], m_rows[i]))
            continue;
        if (first < 0)
            first = static_cast<int>(i);
        last = static_cast<int>(i);
    }
    m_rows = rows;
    if (first >= 0)
        emit dataChanged(index(first, 0), index(last, ColumnCount - 1));
}

int ReconcileModel::rowOf(std::int64_t reportId, const QString &table) const
{
    const std::string name = table.toStdString();
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].reportId == reportId && m_rows[i].table == name)
            return static_cast<int>(i);
    return -1;
}

} // namespace driftless::ui
