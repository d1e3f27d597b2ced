#pragma once

#include <QString>

class QTableView;

namespace driftless::ui {

/// Ctrl+C on a grid copies the selected rows, as DBeaver and spreadsheets do: the visible
/// columns' headers, then one line per selected row in the view's order, cells as displayed,
/// separated by tabs (tabs and line breaks inside a cell become spaces). Without a selection,
/// the current cell.
QString selectionAsTsv(const QTableView *view);

/// Makes Ctrl+C (QKeySequence::Copy) on `view` copy selectionAsTsv() to the clipboard.
void installTsvCopy(QTableView *view);

} // namespace driftless::ui
