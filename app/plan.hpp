#pragma once
// The use case `racktwin plan FILE`: a fleet rolled out quarter by quarter (plan/rollout.hpp) with
// the throughput of each generation at the plan's service target taken from simulated sweeps of
// its workload scenarios, and the same power filled with each comparator system instead.
//
// Contract:
// - The throughput sweeps run through run_scenario with reuse_finished: a finished run of the same
//   scenario text, seed, version, commit, catalog and calibration in the database is taken as it is
//   stored, so re-planning does not simulate (the throughput cache); `fresh` simulates again.
// - Never prints: notes go to PlanHooks::note, progress to PlanHooks::progress.

#include <atomic>
#include <cstdint>
#include <expected>
#include <functional>
#include <string>
#include <vector>

#include "app/json.hpp"
#include "app/run.hpp"
#include "charts/charts.hpp"
#include "core/catalog.hpp"
#include "core/plan.hpp"
#include "plan/rollout.hpp"
#include "plan/throughput.hpp"
#include "plan/uncertainty.hpp"
#include "plan/what_if.hpp"

namespace racktwin::app {

struct PlanRequest {
  std::string plan_file;
  std::string db;      // results database of the throughput sweeps (as for run)
  bool fresh = false;  // simulate the sweeps again even when a finished run is stored
  bool store = false;  // store the plan in the database (PlanOutcome::plan_id)
  // Edits of the plan's key inputs applied after it is read (a problem with them is an input
  // failure located at "what-if").
  plan::WhatIf what_if;
  JobOptions job;
};

struct PlanHooks {
  std::function<void(double)> progress;
  std::function<void(const std::string&)> note;
  const std::atomic<bool>* cancel = nullptr;
};

// Where a generation's throughput at the target comes from.
struct ThroughputOrigin {
  std::string workload;  // the plan workload's id
  std::string scenario;
  std::int64_t run_id = 0;  // 0: given in the plan
  plan::ServicePoint point;
};

// One generation or comparator as planned: its unit, power and throughput.
struct PlannedUnit {
  std::string generation, system;
  bool comparator = false;
  plan::UnitModel unit;
  double it_power_provisioned_w = 0, it_power_production_w = 0;  // per unit, both bases
  std::vector<ThroughputOrigin> throughput;  // one per workload; empty when given in the plan
  std::string throughput_note;               // "given: ..." or "simulated"
  // The share of the unit's replicas serving through failures (Generation::availability; the
  // unit's tps_per_xpu already counts it), and where it comes from; unset: not counted.
  std::optional<double> availability;
  std::string availability_note;
};

// A figure the plan rests on that is an assumption (from the plan file or a default).
struct PlanAssumption {
  std::string what;   // "costs.maintenance", "generations[2].perf_per_watt", ...
  std::string value;  // as a person reads it
  std::string where;  // "plan.yaml:12" or "default"
  std::string reason, source;
};

struct PlanOutcome {
  Plan plan;
  std::vector<PlannedUnit> units;  // the generations, then the comparators
  plan::Rollout rollout;
  std::vector<plan::Rollout> comparators;
  std::vector<PlanAssumption> assumptions;
  std::string db_path;
  std::optional<std::int64_t> plan_id;  // when stored
  // When the plan marks figures uncertain: the final quarter's sensitivity to each, and the
  // Monte Carlo band of every quarter.
  std::optional<plan::Sensitivity> sensitivity;
  std::optional<plan::MonteCarlo> monte_carlo;

  Json to_json() const;
  // One line per fleet, quarter and generation ("all" for the fleet's total), with a header.
  std::string to_csv() const;
  // The quarterly table as people read it (first row the header), for the CLI and the GUI.
  std::vector<std::vector<std::string>> quarter_table() const;
  // Each generation's deployment unit: XPUs, power, throughput with the runs it came from, cost.
  std::vector<std::vector<std::string>> unit_table() const;
  // Per quarter, the plan's and each comparator fleet's Mtok/s and $/Mtok; empty without
  // comparators.
  std::vector<std::vector<std::string>> comparator_table() const;
};

// "$523.4M"-style amounts without the dollar sign ("523.4M", "1.29B", "950"), as the tables show.
std::string money_text(double usd);

// The data of the plan's charts, for render_plan_plots and the GUI: facility MW by generation;
// tokens per second, $ per million tokens and tokens per facility MW of the plan's fleet and of
// each comparator fleet; and the quarter's three capacities (power, supply, deployment) in units
// of the newest generation, the lowest of which binds.
charts::CategoryChart mw_by_generation_chart(const PlanOutcome& o);
charts::CategoryChart tokens_chart(const PlanOutcome& o);
charts::CategoryChart usd_per_mtok_chart(const PlanOutcome& o);
charts::CategoryChart tokens_per_mw_chart(const PlanOutcome& o);
charts::CategoryChart capacities_chart(const PlanOutcome& o);

// The units of the plan's fleet (the generations, not the comparators) and of a comparator's,
// as plan::roll_out and plan::lay_out take them; empty for a fleet the outcome does not have.
std::vector<plan::UnitModel> fleet_units(const PlanOutcome& o, const std::string& fleet = "plan");
// The rollout of "plan" or of a comparator; nullptr for a fleet the outcome does not have.
const plan::Rollout* fleet_rollout(const PlanOutcome& o, const std::string& fleet);

// Writes the plan's charts into `dir` (created when missing); returns the files. The process needs
// a QApplication (charts::OffscreenApp).
std::expected<std::vector<std::string>, std::string> render_plan_plots(
    const PlanOutcome& o, const std::string& dir, charts::Formats formats = {});

std::expected<PlanOutcome, Failure> plan_fleet(const Catalog& cat, const PlanRequest& request,
                                               const PlanHooks& hooks = {});

}  // namespace racktwin::app
