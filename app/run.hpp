#pragma once
// The use case `racktwin run SCENARIO`: the scenario's sweep simulated in worker processes, every
// point stored in the results database as its group finishes, the run resumed when the same
// command was interrupted before, and the summaries a report shows.
//
// Contract:
// - The results come back from the database (db/codec.hpp), whether simulated now or by an
//   interrupted run of the same inputs, so an interrupted and resumed run reports the same bytes
//   as an uninterrupted one.
// - A run resumes when the database holds an unfinished run (failed, or its process gone) of the
//   same scenario text, seed, version, commit, catalog, calibration and options; only the groups
//   with missing points are simulated.
// - Never prints: notes go to RunHooks::note, progress to RunHooks::progress.

#include <atomic>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/json.hpp"
#include "app/sim_job.hpp"
#include "core/catalog.hpp"
#include "core/reference.hpp"
#include "core/scenario.hpp"
#include "sim/serving.hpp"
#include "sim/sweep.hpp"

namespace racktwin::app {

struct RunRequest {
  std::string scenario_file;
  std::optional<std::uint64_t> seed;  // unset: the scenario's
  bool fuse = true;
  std::string db;      // --db; empty: $RACKTWIN_DB, the scenario's output.db, racktwin.db
  bool resume = true;  // continue an unfinished run of the same inputs
  // Take the points of a finished run of the same inputs instead of simulating again (the
  // planner's throughput cache); the run is reported as it was stored.
  bool reuse_finished = false;
  JobOptions job;
};

struct RunHooks {
  std::function<void(double)> progress;          // share of the simulation done
  std::function<void(const std::string&)> note;  // "resuming run 3: ..."
  const std::atomic<bool>* cancel = nullptr;     // set to stop the run (its points are kept)
};

// One published point beside the twin's figure for it.
struct PublishedRow {
  std::string metric, system, point_id;
  std::optional<double> twin;  // nullopt: the twin's sweep cannot give it
  double published = 0;
  std::optional<double> twin_ratio, published_ratio;  // to the scenario's first system
};

// One system's best figures for one workload and model, with ratios to the scenario's first
// system (unset when either side has no point or the base is zero).
// What the scenario's facility.power_budget holds of one system: whole deployment units (a rack
// pair, an NVL72 rack, ...) at their provisioned IT power, and their tokens/s at the peak point.
struct BudgetFit {
  std::string unit;  // "rack pair", "rack"
  double units = 0, xpus = 0, it_w = 0, tps = 0;
};

struct SummaryRow {
  std::string workload, model, system;
  std::optional<sim::SweepSummary> best;  // nullopt: no layout fits
  std::optional<double> rated_kw_ratio, min_e2e_ratio;
  std::optional<BudgetFit> budget;  // when the scenario sets facility.power_budget
  int failed = 0;  // points that ran into an error (each point's error is in the JSON output)
  // Failures rehearsed in the sweep (the scenario's `failures`), over the group's points: requests
  // restarted, replica-seconds out of service, and the mean recovery of the points that had one.
  std::int64_t retried_requests = 0;
  double replica_down_s = 0;
  std::optional<double> recovery_s;
  // Points whose arrivals outran their replicas (open loop, trace replay): each as its layout, its
  // load and its queue growth.
  std::vector<std::string> overloaded;
};

struct RunOutcome {
  std::string scenario_name, scenario_file;
  std::vector<std::string> systems, models, workload_ids;
  std::uint64_t seed = 0;
  std::int64_t run_id = 0;
  std::string db_path;
  std::optional<std::string> plots_dir;   // the scenario's output.plots
  std::size_t simulated = 0;              // points simulated by this command
  std::size_t resumed = 0;                // points an interrupted run had stored
  bool reused = false;                    // a finished run of the same inputs, taken whole
  std::vector<sim::PointResult> results;  // every point, in sweep order
  std::map<sim::SummaryKey, sim::SweepSummary> summary;
  std::vector<SummaryRow> rows;  // workload by workload, model by model, the scenario's systems
  // Per (workload, model): the scenario's reference points beside the twin.
  std::map<std::pair<std::string, std::string>, std::vector<PublishedRow>> published;
  std::string reference_file;
  std::string efficiency_note;  // where the systems' efficiencies come from
  int failed_points = 0;
  std::optional<double> power_budget_w;  // the scenario's facility.power_budget

  // The `racktwin run --json` document: the scenario, seed, every point (db/codec.hpp) and the
  // Pareto envelope of each system, model and workload.
  Json to_json(bool timeseries) const;
};

struct RunError {
  enum class Kind { input, runtime } kind = Kind::runtime;
  std::string message;
  Diagnostics diagnostics;             // input errors of a file
  std::string file;                    // the file the diagnostics are about
  std::optional<std::int64_t> run_id;  // the stored run, when it got that far

  static RunError input(Diagnostics d, std::string file) {
    return {Kind::input, {}, std::move(d), std::move(file), std::nullopt};
  }
  static RunError of(Kind kind, std::string message) {
    return {kind, std::move(message), {}, {}, std::nullopt};
  }
};

// The failure of any use case: an input error (with its diagnostics when a file is at fault) or a
// runtime one.
using Failure = RunError;

std::expected<RunOutcome, RunError> run_scenario(const Catalog& cat, const RunRequest& request,
                                                 const RunHooks& hooks = {});

}  // namespace racktwin::app
