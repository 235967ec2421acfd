#pragma once
// Small pieces every view builds with: text from the libraries, the tables over their models and
// charts that share a screen.

#include <QChart>
#include <QString>
#include <QTableView>
#include <string>

namespace racktwin::gui {

inline QString q(const std::string& s) {
  return QString::fromStdString(s);
}

// A table over a model: whole rows selected one at a time, columns sized to their contents, no row
// numbers, alternating row colours.
QTableView* table_over(QAbstractItemModel* model, QWidget* parent);

// A chart that shares its view with others: a smaller title and legend, thin margins, the
// application's palette.
QChart* compact_chart(QChart* chart);

}  // namespace racktwin::gui
