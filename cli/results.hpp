#pragma once
// What `racktwin run` adds around the simulation: the results database (--db, RACKTWIN_DB), the
// progress bar, and the plots (--plots). run_cmd.cpp calls these at a few hook points.

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog.hpp"
#include "core/scenario.hpp"
#include "db/store.hpp"
#include "sim/serving.hpp"

namespace CLI {
class App;
}

namespace racktwin::cli {

// --db PATH, else $RACKTWIN_DB, else the scenario's output.db (for run), else racktwin.db in the
// working directory.
std::string resolve_db_path(const std::string& flag,
                            const std::optional<std::string>& scenario_db = std::nullopt);
void add_db_option(CLI::App* app, std::string& into);

// Opens the database; prints the error and returns the exit code on failure.
std::expected<db::Store, int> open_store(const std::string& path, db::Store::Mode mode);

// A run named on the command line: its id, or "latest"; prints why not when there is none.
std::optional<std::int64_t> resolve_run(const db::Store& store, const std::string& text);

// A progress bar with ETA on stderr: drawn only when stderr is a terminal, not quiet, and the work
// has taken more than a second; at most ten times a second.
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled);
  ~ProgressBar();
  void update(double fraction);
  void clear();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

// Options of `racktwin run` about where results go.
struct ResultOptions {
  std::string db;      // --db
  std::string plots;   // --plots DIR
  std::string points;  // --points FILE: published points drawn on the Pareto charts
  bool quiet = false;
  bool json = false;  // stdout carries JSON: notes go to stderr
  bool fuse = true;
};

// One run's record in the database, from before the simulation to its end.
class RunRecorder {
 public:
  // Opens the database and inserts the run (status running). On failure prints why and returns
  // the exit code.
  static std::expected<RunRecorder, int> start(const Catalog& cat, const Scenario& sc,
                                               const std::string& scenario_file, std::uint64_t seed,
                                               const std::vector<sim::PointSpec>& specs,
                                               const ResultOptions& options);
  // For sim::SimOptions::progress.
  std::function<void(double)> progress();
  // Stores the points and marks the run finished (or failed with `error`).
  void finish(const std::vector<sim::PointResult>& results);
  void fail(const std::string& error);
  // After the report: the run id line (stdout, or stderr with --json), then the plots when asked.
  // Returns an exit code (plots that cannot be written are a runtime failure).
  int report(const Catalog& cat);
  std::int64_t id() const { return id_; }

 private:
  RunRecorder() = default;
  std::unique_ptr<db::Store> store_;
  std::int64_t id_ = 0;
  ResultOptions options_;
  std::optional<std::string> scenario_plots_;
  std::shared_ptr<ProgressBar> bar_;
  std::chrono::steady_clock::time_point start_;
};

// Renders every chart of a stored run into `dir` (PNG and SVG); prints what it wrote unless
// quiet. Returns an exit code. Defined in plot_cmd.cpp.
int render_run_plots(const Catalog& cat, const db::Store& store, std::int64_t run,
                     const std::string& dir, const std::string& points_file, bool quiet);

}  // namespace racktwin::cli
