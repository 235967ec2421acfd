#include "gui/widgets.hpp"

#include <QHeaderView>
#include <QLegend>

#include "gui/palette.hpp"

namespace racktwin::gui {

QTableView* table_over(QAbstractItemModel* model, QWidget* parent) {
  auto* t = new QTableView(parent);
  t->setModel(model);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->verticalHeader()->setVisible(false);
  t->setAlternatingRowColors(true);
  return t;
}

QChart* compact_chart(QChart* chart) {
  match_palette(chart);  // first: a theme sets the fonts again
  QFont title = chart->titleFont();
  title.setPointSize(10);
  chart->setTitleFont(title);
  QFont legend = chart->legend()->font();
  legend.setPointSize(8);
  chart->legend()->setFont(legend);
  chart->setMargins(QMargins(2, 2, 2, 2));
  return chart;
}

}  // namespace racktwin::gui
