#pragma once
// The racktwin desktop application: one tab per view, over the same use cases as the CLI (app/).
// Long work (a plan that simulates its
// throughput sweeps) runs off the UI thread; the simulations themselves run in worker processes
// through app::SimJob.

#include <QFutureWatcher>
#include <QMainWindow>
#include <expected>
#include <memory>
#include <cstdint>
#include <string>
#include <vector>

#include "app/plan.hpp"
#include "core/catalog.hpp"
#include "gui/domain_view.hpp"
#include "gui/failures_view.hpp"
#include "gui/plan_view.hpp"
#include "gui/rack_view.hpp"
#include "gui/results_view.hpp"
#include "gui/rows_model.hpp"
#include "gui/scenario_view.hpp"

QT_BEGIN_NAMESPACE
class QLabel;
class QComboBox;
class QLineEdit;
class QSortFilterProxyModel;
class QSplitter;
class QTabWidget;
class QTableView;
class QTextBrowser;
QT_END_NAMESPACE
QT_FORWARD_DECLARE_CLASS(QChartView)

namespace racktwin::gui {

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  MainWindow(const Catalog& catalog, std::string db_path, QWidget* parent = nullptr);
  ~MainWindow() override;

  // The views, for tests and scripted screenshots.
  QTabWidget* tabs() const { return tabs_; }
  RowsModel* systems_model() const { return systems_; }
  RowsModel* runs_model() const { return runs_; }
  // The runs the filter lets through, as the Runs table shows them; the filter: text matched
  // (case-insensitive) in one column by its header ("any column": every column).
  QSortFilterProxyModel* runs_shown() const { return runs_filter_; }
  void filter_runs(const QString& text, const QString& column = "any column");
  RowsModel* comparison_model() const { return comparison_; }
  QString runs_status() const;
  // The runs selected in the Runs view (ids, ascending); selects runs by id.
  std::vector<std::int64_t> selected_runs() const;
  void select_runs(const std::vector<std::int64_t>& ids);
  // Compares the two selected runs (the `racktwin runs compare` content); exports one as CSV.
  void compare_selected();
  void export_selected(const QString& dir);
  RowsModel* plan_model() const { return plan_view_->model(); }
  PlanView* plan_view() const { return plan_view_; }
  FailuresView* failures() const { return failures_; }
  ScenarioView* scenario() const { return scenario_; }
  ResultsView* results() const { return results_; }
  RackView* rack() const { return rack_; }
  QString rack_status() const;
  // The selected system's figures as plain text (what its Figures tab shows).
  QString system_figures() const;
  // Selects a system in the catalog table (its figures and its rack elevation).
  void select_system(const QString& id);
  // Fails a part of the selected system's rack and shows the blast radius.
  void fail_part(const QString& name);
  // Shows the Systems tab with the rack elevation (or the whole domain) in front.
  void show_rack();
  void show_domain();
  DomainPane* domain() const { return domain_; }
  // Plans the file off the UI thread; planned() is emitted when it is shown (or failed).
  void open_plan(const QString& file);
  QString plan_status() const;

 signals:
  void planned();

 private:
  QWidget* systems_view();
  QWidget* runs_view();
  QWidget* rack_view_pane(QWidget* parent);
  void show_stored_run(std::int64_t run);
  void show_system(const QModelIndex& index);
  void refresh_runs();

  const Catalog& catalog_;
  std::string db_path_;
  QTabWidget* tabs_ = nullptr;
  RowsModel* systems_ = nullptr;
  QTextBrowser* system_detail_ = nullptr;
  RowsModel* runs_ = nullptr;
  QTableView* runs_table_ = nullptr;
  QTextBrowser* comparison_text_ = nullptr;
  RowsModel* comparison_ = nullptr;
  QLabel* runs_status_ = nullptr;
  QSortFilterProxyModel* runs_filter_ = nullptr;
  QLineEdit* runs_filter_text_ = nullptr;
  QComboBox* runs_filter_column_ = nullptr;
  PlanView* plan_view_ = nullptr;
  DomainPane* domain_ = nullptr;
  QSplitter* systems_split_ = nullptr;
  FailuresView* failures_ = nullptr;
  ScenarioView* scenario_ = nullptr;
  ResultsView* results_ = nullptr;
  RackView* rack_ = nullptr;
  QLabel* rack_status_ = nullptr;
  QTableView* systems_table_ = nullptr;
  QTabWidget* system_tabs_ = nullptr;
};

}  // namespace racktwin::gui
