#pragma once
// The use case `racktwin plot RUN --out DIR` (and `racktwin run --plots DIR`): every chart of a
// stored run, rendered offscreen to PNG and SVG (charts/charts.hpp), with published points drawn
// on the Pareto charts; and the CSV export of a stored run.
//
// Contract: never prints. The process must have a QApplication (charts need one) before calling
// render_plots; front ends create it (a GUI has its own).

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "app/run.hpp"
#include "charts/charts.hpp"
#include "core/catalog.hpp"
#include "db/store.hpp"

namespace racktwin::app {

struct PlotRequest {
  std::string dir;          // where the files go (created when missing)
  std::string points_file;  // published points to overlay; empty: none
  charts::Formats formats;
  QSize size = charts::kDefaultSize;
};

struct PlotOutcome {
  std::vector<std::string> files;  // written, in order
  Diagnostics rejected_points;     // points of the file that are not drawn, and why
};

std::expected<PlotOutcome, Failure> render_plots(const Catalog& cat, const db::Store& store,
                                                 std::int64_t run, const PlotRequest& rq);

// Writes the run's CSV files (db::csv_files) into `dir`, each through a temporary file renamed
// into place; returns their names.
std::expected<std::vector<std::string>, std::string> export_csv(const db::StoredRun& run,
                                                                const std::string& dir);

}  // namespace racktwin::app
