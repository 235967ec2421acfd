#pragma once
// The charts of a stored run, built once with Qt Charts for every front end: the CLI renders them
// offscreen to PNG and SVG (`racktwin plot`, `racktwin run --plots`), the GUI will show the same
// QChart objects in its views.
//
// Contract:
// - Builders read a db::StoredRun (and optional published points) and return a new QChart the
//   caller owns; they never print. A QApplication must exist (Qt Charts is built on Qt Widgets);
//   front ends create it, with QT_QPA_PLATFORM=offscreen when there is no display.
// - Charts are per (model, workload) group of the run. Per system they draw, where one point
//   stands for a system, the point with the highest total tok/s/XPU (its "peak" point, as the
//   comparison table of `racktwin run`).
// - What each chart shows and how published points are overlaid: docs/results.md.

#include <QColor>
#include <QSize>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/reference.hpp"
#include "db/store.hpp"

QT_BEGIN_NAMESPACE
class QApplication;
class QChart;
QT_END_NAMESPACE

namespace racktwin::charts {

// One model and workload of a run; charts compare systems within it.
struct Group {
  std::string model, workload;
  int isl = 0, osl = 0;  // nominal lengths (0 for trace and agentic workloads)
};
std::vector<Group> groups(const db::StoredRun& run);

// Per system of a group, the index (into run.points) of its peak-throughput point.
std::vector<std::pair<std::string, std::size_t>> peak_points(const db::StoredRun& run,
                                                             const Group& g);

// The colour of the i-th series of the charts (a system of a run, a generation of a plan), so a
// view drawn beside a chart colours the same thing alike.
QColor series_colour(std::size_t i);

enum class ParetoAxis { per_xpu, per_allin_mw };

// Throughput against interactivity: each system's Pareto envelope (line) over its points
// (markers); published points of the same model and lengths overlaid. Each system's markers (a
// QScatterSeries) carry as the property kPointIndices the index into run.points of each marker,
// in the order of its points (a QList<qulonglong>), so a view can tell which point was clicked.
std::unique_ptr<QChart> pareto_chart(const db::StoredRun& run, const Group& g, ParetoAxis axis,
                                     const std::vector<ReferencePoint>& published = {});
inline constexpr const char* kPointIndices = "racktwin_point_indices";
// The distribution of a latency (ttft_s, tpot_s or e2e_s) at each system's peak point, drawn
// through the point's stored percentiles (0 to 100).
std::unique_ptr<QChart> latency_cdf_chart(const db::StoredRun& run, const Group& g,
                                          const std::string& metric);
// The same for one point of the run (an index into run.points), e.g. one a user picked.
std::unique_ptr<QChart> point_latency_cdf_chart(const db::StoredRun& run, std::size_t point,
                                                const std::string& metric);
// All-in power per XPU by component at each system's peak point.
std::unique_ptr<QChart> power_breakdown_chart(const db::StoredRun& run, const Group& g);
// Mean iteration time by kind (compute, memory, communication, overhead) at each peak point.
std::unique_ptr<QChart> iteration_breakdown_chart(const db::StoredRun& run, const Group& g);

// Charts of plain data by category (quarters of a plan, ...), for use cases that are not runs.
struct CategorySeries {
  std::string name;
  std::vector<double> values;  // one per category
};
struct CategoryChart {
  std::string title, y_title;
  std::vector<std::string> categories;
  std::vector<CategorySeries> series;
};
// One stacked bar per category, a set per series.
std::unique_ptr<QChart> stacked_bar_chart(const CategoryChart& data);
// One line with markers per series; `log_y` draws the values on a log scale (values <= 0 left out).
std::unique_ptr<QChart> category_line_chart(const CategoryChart& data, bool log_y = false);
// Horizontal bars from a centre value: per category the low and the high of the series (a tornado
// chart); series[0] holds the lows, series[1] the highs; `centre` is where the bars meet.
std::unique_ptr<QChart> tornado_chart(const CategoryChart& data, double centre);

// Lines through (x, y) points, for time series (a rehearsal's throughput through its horizon).
struct XYSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // x increasing
  bool dashed = false;
};
struct XYChart {
  std::string title, x_title, y_title;
  std::vector<XYSeries> series;
  std::optional<std::pair<double, double>> y_range;  // unset: from 0 to the largest value
};
std::unique_ptr<QChart> xy_line_chart(const XYChart& data);

struct NamedChart {
  std::string name;  // file stem: <model>-<workload>-<chart>
  std::unique_ptr<QChart> chart;
};
// Every chart of the run.
std::vector<NamedChart> run_charts(const db::StoredRun& run,
                                   const std::vector<ReferencePoint>& published = {});

inline constexpr QSize kDefaultSize{1200, 750};
struct Formats {
  bool png = true, svg = true;
};
// The QApplication charts need, for processes without a GUI of their own (the CLI, tests): offscreen
// unless QT_QPA_PLATFORM names a platform. Qt's own notes are dropped; its errors go to `on_error`
// while the object lives. It owns the application it creates and destroys it with itself, so the
// application ends in the scope that made it, never among the process's static destructors (where
// Qt's own statics may already be gone). Where a QApplication exists already it creates none.
// A GUI creates its own application instead.
class OffscreenApp {
 public:
  explicit OffscreenApp(std::function<void(const std::string&)> on_error);
  ~OffscreenApp();
  OffscreenApp(const OffscreenApp&) = delete;
  OffscreenApp& operator=(const OffscreenApp&) = delete;

 private:
  std::unique_ptr<QApplication> app_;
};

// "png", "svg" or "png,svg"; the reason for any other word.
std::expected<Formats, std::string> parse_formats(const std::string& text);
// Renders a chart offscreen to `stem`.png and/or `stem`.svg, `size` pixels; returns the files
// written. The chart is consumed.
std::expected<std::vector<std::string>, std::string> save_chart(std::unique_ptr<QChart> chart,
                                                                const std::string& stem,
                                                                Formats formats = {},
                                                                QSize size = kDefaultSize);

}  // namespace racktwin::charts
