#pragma once
// The Fleet plan view: a plan file planned off the UI thread (app::plan_fleet; its throughput
// sweeps, when not stored, simulate in worker processes), shown as the quarterly table, the
// site/hall heatmap of the selected quarter (gui/site_heatmap.hpp) and the quarter timeline charts
// (facility MW by generation, tokens per second, $ per million tokens, the capacities that bind).
// A what-if form edits the plan's key inputs; each edit re-plans off the UI thread against the
// stored sweeps (plan::WhatIf, applied by the planner) and updates the table, charts and heatmap.

#include <QFutureWatcher>
#include <QWidget>
#include <expected>
#include <memory>
#include <optional>
#include <string>

#include "app/plan.hpp"
#include "core/catalog.hpp"
#include "gui/rows_model.hpp"
#include "gui/site_heatmap.hpp"

QT_BEGIN_NAMESPACE
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSlider;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTimer;
QT_END_NAMESPACE
QT_FORWARD_DECLARE_CLASS(QChartView)

namespace racktwin::gui {

class PlanView : public QWidget {
  Q_OBJECT
 public:
  PlanView(const Catalog& catalog, std::string db_path, QWidget* parent = nullptr);
  ~PlanView() override;

  // Plans the file off the UI thread (stored in the database), what-if edits cleared; planned() is
  // emitted when it is shown (or failed).
  void open_plan(const QString& file);
  // Re-plans the open plan with these edits (not stored); the form shows them.
  void set_what_if(const plan::WhatIf& w);
  plan::WhatIf what_if() const;      // what the form says
  void select_quarter(int quarter);  // index from the plan's first quarter
  int quarter() const;
  void select_fleet(const QString& fleet);  // the heatmap's fleet: "plan" or a comparator

  QString status() const;
  RowsModel* model() const { return table_; }
  RowsModel* units_model() const { return units_; }
  SiteHeatmap* heatmap() const { return heatmap_; }
  const app::PlanOutcome* outcome() const { return outcome_.get(); }
  int charts_shown() const;

 signals:
  void planned();

 private:
  using Result = std::expected<app::PlanOutcome, app::Failure>;
  QWidget* what_if_form();
  QWidget* heatmap_pane();
  void run(app::PlanRequest rq);
  void replan();
  void show_outcome();
  void fill_form();
  void show_quarter(int quarter);

  const Catalog& catalog_;
  std::string db_path_;
  QString file_;
  QLabel* status_ = nullptr;
  QLabel* what_if_status_ = nullptr;
  QLabel* quarter_label_ = nullptr;
  RowsModel* table_ = nullptr;
  RowsModel* units_ = nullptr;  // the generations and comparators as planned
  QTableView* table_view_ = nullptr;
  QTabWidget* timeline_ = nullptr;
  QChartView* charts_[5] = {};
  SiteHeatmap* heatmap_ = nullptr;
  QSlider* slider_ = nullptr;
  QComboBox* fleet_ = nullptr;
  QSpinBox* power_ = nullptr;
  QSpinBox* supply_ = nullptr;
  QDoubleSpinBox* price_ = nullptr;
  QDoubleSpinBox* pue_ = nullptr;
  QComboBox* comparators_ = nullptr;
  QTimer* edits_ = nullptr;
  double base_price_kwh_ = 0, base_pue_ = 0;  // the plan file's values
  bool pending_ = false;  // an edit arrived while planning: plan again when done
  std::shared_ptr<const app::PlanOutcome> outcome_;
  QFutureWatcher<Result>* watcher_ = nullptr;
};

}  // namespace racktwin::gui
