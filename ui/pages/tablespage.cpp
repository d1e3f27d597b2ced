#include "ui/pages/tablespage.h"

#include "ui/models/tablesmodel.h"
#include "ui/widgets/freshnessbadge.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace driftless::ui {

TablesPage::TablesPage(TablesModel *model, QWidget *parent)
    : QWidget(parent), m_model(model), m_proxy(new QSortFilterProxyModel(this)), m_view(new QTableView(this)),
      m_filter(new QLineEdit(this)), m_summary(new QLabel(this)), m_notice(new QLabel(this)),
      m_details(new QLabel(this))
{
    setObjectName(QStringLiteral("tablesPage"));
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(TablesModel::SortRole);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);

    m_filter->setObjectName(QStringLiteral("tablesFilter"));
    m_filter->setPlaceholderText(tr("Filter tables (Ctrl+F)"));
    m_filter->setClearButtonEnabled(true);
    // Wide enough for the placeholder: the shortcut in it is how DBAs learn Ctrl+F.
    m_filter->setMinimumWidth(m_filter->fontMetrics().horizontalAdvance(m_filter->placeholderText()) + 48);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);

    m_notice->setObjectName(QStringLiteral("tablesNotice"));
    m_notice->setWordWrap(true);
    m_notice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notice->setVisible(false);

    m_view->setObjectName(QStringLiteral("tablesView"));
    m_view->setModel(m_proxy);
    m_view->setItemDelegateForColumn(TablesModel::Freshness, new FreshnessBadge(m_view));
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->setVisible(false);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setHighlightSections(false);
    // The workspace's own order until the DBA clicks a header.
    m_view->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_view->setSortingEnabled(true);

    m_details->setObjectName(QStringLiteral("tableDetails"));
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setVisible(false);

    auto *top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_filter);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_notice);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_details);

    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        updateSummary();
        fitColumns(false);
    });
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this] {
        updateSummary();
        fitColumns(false);
    });
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &TablesPage::updateSummary);
    connect(m_model, &QAbstractItemModel::dataChanged, this, [this] {
        updateSummary();
        updateDetails();
        fitColumns(true);
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &TablesPage::updateDetails);
    updateSummary();
    fitColumns(false);
}

void TablesPage::focusFilter()
{
    m_filter->setFocus(Qt::ShortcutFocusReason);
    m_filter->selectAll();
}

void TablesPage::setNotice(const QString &notice)
{
    m_notice->setText(notice);
    m_notice->setVisible(!notice.isEmpty());
}

void TablesPage::updateSummary()
{
    const int total = m_model->rowCount();
    if (total == 0) {
        m_summary->setText(tr("No tables yet. A workspace lists them; store one with "
                              "<tt>driftless-cli apply FILE</tt> and open it here."));
        return;
    }
    int ok = 0, warn = 0, breach = 0, unknown = 0, errors = 0;
    for (int row = 0; row < total; ++row) {
        const auto &r = m_model->report(row);
        if (r.state == "error")
            ++errors;
        if (r.freshness == "ok")
            ++ok;
        else if (r.freshness == "warn")
            ++warn;
        else if (r.freshness == "breach")
            ++breach;
        else
            ++unknown;
    }
    QString text = (total == 1 ? tr("1 table: ") : tr("%1 tables: ").arg(total)) +
                   tr("%1 ok, %2 warn, %3 breach, %4 unknown").arg(ok).arg(warn).arg(breach).arg(unknown);
    if (errors)
        text += tr("; <b>%1 in error</b>").arg(errors);
    m_summary->setText(text);
}

void TablesPage::updateDetails()
{
    const QModelIndex current = m_proxy->mapToSource(m_view->currentIndex());
    if (!current.isValid()) {
        m_details->setVisible(false);
        return;
    }
    const auto &r = m_model->report(current.row());
    QString text = tr("<b>%1 / %2</b> &rarr; %3")
                       .arg(QString::fromStdString(r.pipeline).toHtmlEscaped(),
                            QString::fromStdString(r.table).toHtmlEscaped(),
                            QString::fromStdString(r.target).toHtmlEscaped());
    if (!r.message.empty())
        text += QStringLiteral("<br>") + QString::fromStdString(r.message).toHtmlEscaped();
    m_details->setText(text);
    m_details->setVisible(true);
}

void TablesPage::fitColumns(bool growOnly)
{
    // Fitted to the contents when rows come or go; on updates columns only grow (a timestamp
    // replacing "never"), so nothing jumps back and forth twice a second. The message column
    // takes what is left.
    const QAbstractItemView *view = m_view;
    for (int c = 0; c < TablesModel::Message; ++c) {
        const int wanted = std::max(view->sizeHintForColumn(c), m_view->horizontalHeader()->sectionSizeHint(c)) + 12;
        if (!growOnly || wanted > m_view->columnWidth(c))
            m_view->setColumnWidth(c, wanted);
    }
}

} // namespace driftless::ui
