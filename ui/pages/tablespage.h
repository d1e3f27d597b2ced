#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace driftless::ui {

class TablesModel;

/// Every synced table with its state and freshness: a sortable, filterable table, a one-line
/// summary above it and the selected table's message (the why of an error) below it.
class TablesPage final : public QWidget {
    Q_OBJECT
public:
    explicit TablesPage(TablesModel *model, QWidget *parent = nullptr);

    QTableView *view() const { return m_view; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    QLineEdit *filterEdit() const { return m_filter; }

public slots:
    void focusFilter();
    /// A problem with the workspace as a whole (unreadable file); empty hides it.
    void setNotice(const QString &notice);

private:
    void updateSummary();
    void updateDetails();
    void fitColumns(bool growOnly);

    TablesModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QLineEdit *m_filter;
    QLabel *m_summary;
    QLabel *m_notice;
    QLabel *m_details;
};

} // namespace driftless::ui
