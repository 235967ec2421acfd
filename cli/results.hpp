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

#include "app/locations.hpp"
#include "core/catalog.hpp"
#include "core/scenario.hpp"
#include "db/store.hpp"
#include "sim/serving.hpp"

namespace CLI {
class App;
}

namespace racktwin::cli {

inline std::string resolve_db_path(const std::string& flag) { return app::db_path(flag); }
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

// Renders every chart of a stored run into `dir` (PNG and SVG); prints what it wrote unless
// quiet. Returns an exit code. Defined in plot_cmd.cpp.
int render_run_plots(const Catalog& cat, const db::Store& store, std::int64_t run,
                     const std::string& dir, const std::string& points_file, bool quiet);

}  // namespace racktwin::cli
