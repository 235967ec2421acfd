#pragma once
// The use case `racktwin rehearse FILE`: a deployment's failures and repairs over a horizon
// (rehearse/engine.hpp), with the per-replica serving figures taken from a simulated sweep at the
// service target, and the search for the spare capacity that holds the target.
//
// Contract:
// - The serving sweep runs through run_scenario with reuse_finished, as the planner's: a finished
//   run of the same inputs in the database is taken as stored; `fresh` simulates again.
// - The spare-capacity search reads attainment at every load off the one rehearsal's time at each
//   number of replicas up: the same failures and repairs, only the load changes.
// - Never prints: notes go to RehearseHooks::note, progress to RehearseHooks::progress.

#include <atomic>
#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/json.hpp"
#include "app/run.hpp"
#include "charts/charts.hpp"
#include "core/catalog.hpp"
#include "core/rehearsal.hpp"
#include "rehearse/engine.hpp"
#include "sim/serving.hpp"

namespace racktwin::app {

struct RehearseRequest {
  std::string file;
  std::string db;      // results database of the serving sweep (as for run)
  bool fresh = false;  // simulate the sweep again even when a finished run is stored
  std::optional<std::uint64_t> seed;  // unset: the file's
  JobOptions job;
};

struct RehearseHooks {
  std::function<void(double)> progress;
  std::function<void(const std::string&)> note;
  const std::atomic<bool>* cancel = nullptr;
};

// A figure the rehearsal rests on, with its origin.
struct RehearsalFigure {
  std::string what, value, where;  // where: "file:line" or "default"
  bool assumption = false;
  std::string reason, source;
};

// One load of the spare-capacity search.
struct SpareTrial {
  int spare_racks = 0;  // racks of the site whose replicas the load leaves spare
  double offered_replicas = 0;
  double attainment = 0, tokens_lost_share = 0;
};

struct JobCurvePoint {
  int job_xpus = 0, jobs = 0;
  int replications = 1;
  double interruptions = 0;             // per replication, the mean
  double interruptions_lo = 0, interruptions_hi = 0;  // the fewest and the most of a replication
  double mttf_h = 0;                    // job running time / interruptions, all replications
  std::vector<std::pair<std::string, double>> by_class;  // interruptions per class, the mean
};

struct RehearsalOutcome {
  Rehearsal rehearsal;
  std::uint64_t seed = 0;
  std::string db_path;
  // Serving: where the figures per unit (a replica or a group, `unit()`) come from.
  std::string surrogate_note;  // "simulated: run 4 of scenarios/..." or "given in the file"
  std::int64_t run_id = 0;
  std::string layout;
  rehearse::Surrogate surrogate;
  // The sweep's point the surrogate's target figure comes from (a simulated sweep only): what a
  // replay (app/rehearse_replay.hpp) simulates.
  std::optional<sim::PointSpec> serving_point;
  int racks = 0;                    // compute racks of the site
  double replicas_per_rack = 0;     // the units a rack's XPUs hold
  rehearse::EngineOutcome outcome;  // serving at the file's spare capacity; jobs: the first size
  // The spare-capacity search: no spare, then the loads around the answer (every load is in
  // search_curve); the fewest spare racks of the site that meet the goal, if any does.
  std::vector<SpareTrial> search;
  std::vector<SpareTrial> search_curve;
  std::optional<int> spare_needed;
  std::vector<JobCurvePoint> jobs;  // jobs rehearsals, one per size
  std::vector<RehearsalFigure> figures;

  Json to_json() const;
  // The tables as people read them (first row the header), for the CLI and the GUI: the serving
  // summary, the classes (failures, spares, recovery), the search, the job sizes, and the events
  // (the first `limit`).
  std::vector<std::vector<std::string>> summary_table() const;
  std::vector<std::vector<std::string>> class_table() const;
  std::vector<std::vector<std::string>> search_table() const;
  std::vector<std::vector<std::string>> jobs_table() const;
  std::vector<std::vector<std::string>> events_table(std::size_t limit) const;
  // Per-event rows (time, domain, part, class, XPUs out, replicas hit, recovery) as CSV.
  std::string events_csv() const;

  // What the serving counts count: "replica", or "group" for a disaggregated point's groups of
  // prefill and decode replicas (rehearse::Surrogate).
  std::string unit() const { return surrogate.grouped() ? "group" : "replica"; }
  // The unit's XPUs and replicas, e.g. "2 XPUs per replica" or "14 XPUs per group (3 prefill
  // replicas of 2 XPUs and 1 decode replica of 8)".
  std::string unit_description() const;
  // What the spares search found, as a sentence: "1 spare rack of the site's 16 (0.06 per domain)
  // holds 99.9% attainment.", or that no spare capacity holds it.
  std::string spare_sentence() const;
};

// The throughput-through-the-horizon chart and, for serving, the attainment chart.
std::vector<charts::NamedChart> rehearsal_charts(const RehearsalOutcome& o);
// Writes them into `dir` (created when missing); the process needs a QApplication.
std::expected<std::vector<std::string>, std::string> render_rehearsal_plots(
    const RehearsalOutcome& o, const std::string& dir, charts::Formats formats = {});

std::expected<RehearsalOutcome, Failure> rehearse_file(const Catalog& cat,
                                                       const RehearseRequest& request,
                                                       const RehearseHooks& hooks = {});

}  // namespace racktwin::app
