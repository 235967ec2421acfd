#pragma once
// The results of a stored run: pick a run of the database and one of its model and workload
// groups; the Pareto charts of throughput per XPU and per all-in MW against interactivity, with
// the published points overlaid (charts::pareto_chart, as `racktwin plot` draws them); clicking a
// point shows what it simulated and every metric its stored result holds (app::point_detail_table)
// and the CDFs of its latencies (charts::point_latency_cdf_chart), drawn through the stored
// percentiles, which the view says.

#include <QWidget>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "charts/charts.hpp"
#include "core/catalog.hpp"
#include "core/reference.hpp"
#include "db/store.hpp"
#include "gui/rows_model.hpp"

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
class QScatterSeries;
QT_END_NAMESPACE
QT_FORWARD_DECLARE_CLASS(QChartView)

namespace racktwin::gui {

class ResultsView : public QWidget {
  Q_OBJECT
 public:
  ResultsView(const Catalog& catalog, std::string db_path, QWidget* parent = nullptr);

  // The published points drawn on the Pareto charts (a file in the format of
  // scenarios/reference/published.yaml; empty: none). Redraws the shown group.
  void set_points_file(const std::string& file);
  // Lists the runs of the database again; shows the newest when none is shown.
  void refresh();
  // Shows a run (its first group); false when the database has no such run.
  bool show_run(std::int64_t run);
  void show_group(int index);
  // Shows what a point of the shown run simulated and its latency CDFs (an index into its points).
  void select_point(std::size_t index);
  // A click on a marker of a Pareto chart, as the series' clicked() signal calls it.
  void click_marker(QScatterSeries* series, const QPointF& at);

  std::optional<std::int64_t> shown_run() const;
  std::optional<std::size_t> selected_point() const { return selected_; }
  RowsModel* runs_model() const { return runs_; }
  RowsModel* groups_model() const { return groups_model_; }
  RowsModel* details_model() const { return details_; }
  // The Pareto charts: 0 per XPU, 1 per all-in MW; the latency CDFs: 0 TTFT, 1 TPOT, 2 e2e.
  QChartView* pareto(int which) const { return pareto_[which]; }
  QChartView* cdf(int which) const { return cdf_[which]; }
  QString status() const;
  QString cdf_note() const;

 signals:
  void point_selected();

 private:
  QWidget* top_bar();
  QWidget* point_pane();
  void draw_paretos();
  void highlight(std::size_t index);
  void show_status();
  static void replace_chart(QChartView* view, QChart* chart);

  const Catalog& catalog_;
  std::string db_path_;
  std::vector<ReferencePoint> published_;
  std::string points_note_;
  std::string run_note_;
  std::vector<std::int64_t> run_ids_;  // the rows of runs_
  std::optional<db::StoredRun> run_;
  std::vector<charts::Group> groups_;
  int group_ = 0;
  std::optional<std::size_t> selected_;
  RowsModel* runs_ = nullptr;
  RowsModel* groups_model_ = nullptr;
  RowsModel* details_ = nullptr;
  QComboBox* runs_combo_ = nullptr;
  QComboBox* groups_combo_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* point_title_ = nullptr;
  QLabel* cdf_note_ = nullptr;
  QChartView* pareto_[2] = {nullptr, nullptr};
  QScatterSeries* highlight_[2] = {nullptr, nullptr};
  QChartView* cdf_[3] = {nullptr, nullptr, nullptr};
};

}  // namespace racktwin::gui
