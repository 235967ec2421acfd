// racktwin plan: a fleet's rollout by quarter, with throughput, power, costs and comparators.

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>

#include "app/plan.hpp"
#include "cli/commands.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "racktwin/version.hpp"

namespace racktwin::cli {
namespace {

struct PlanArgs {
  app::PlanRequest request;
  bool json = false, quiet = false, no_store = false;
  std::string csv, plots;
};

std::string num(double v, int decimals = 0) {
  return fmt::format("{:.{}f}", v, decimals);
}

void print_tables(const app::PlanOutcome& o) {
  const auto units = o.unit_table();
  // Numbers from XPUs to tok/s/XPU (the availability column shows only when a unit has one).
  const auto tps = std::find(units.front().begin(), units.front().end(), "tok/s/XPU");
  fmt::print("{}\n\n", render_rows(units, numbers_from(3, static_cast<std::size_t>(
                                                              tps - units.front().begin() + 1))));
  fmt::print("{}\n", render_rows(o.quarter_table(), {2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13}));
  const auto comparators = o.comparator_table();
  if (comparators.empty()) return;
  fmt::print("\nThe same sites and power, filled with each comparator alone:\n{}\n",
             render_rows(comparators, numbers_from(1, comparators.front().size())));
}

void print_uncertainty(const app::PlanOutcome& o) {
  if (!o.sensitivity || !o.monte_carlo || o.monte_carlo->quarters.empty()) return;
  const auto& s = *o.sensitivity;
  fmt::print("\nSensitivity of {} ({} $/Mtok, {} Mtok/s), each figure alone at its low and high:\n",
             to_string(o.monte_carlo->quarters.back().quarter), num(s.usd_per_mtok, 4),
             num(s.tps / 1e6, 1));
  Table t({"figure", "low", "high", "$/Mtok at low", "$/Mtok at high", "Mtok/s at low",
           "Mtok/s at high"});
  for (std::size_t i = 0; i < s.by_cost.size() && i < 10; ++i) {
    const auto& w = s.by_cost[i];
    t.add({w.figure, fmt::format("{:.4g}", w.low), fmt::format("{:.4g}", w.high),
           num(w.usd_per_mtok_low, 4), num(w.usd_per_mtok_high, 4), num(w.tps_low / 1e6, 1),
           num(w.tps_high / 1e6, 1)});
  }
  fmt::print("{}\n", t.render({1, 2, 3, 4, 5, 6}));
  const auto& last = o.monte_carlo->quarters.back();
  fmt::print(
      "Monte Carlo, {} draws (seed {}), {}: $/Mtok P10 {} P50 {} P90 {}; Mtok/s P10 {} P50 {} "
      "P90 {}\n",
      o.monte_carlo->draws, o.plan.uncertainty.seed, to_string(last.quarter),
      num(last.usd_per_mtok.p10, 4), num(last.usd_per_mtok.p50, 4), num(last.usd_per_mtok.p90, 4),
      num(last.tps.p10 / 1e6, 1), num(last.tps.p50 / 1e6, 1), num(last.tps.p90 / 1e6, 1));
}

void print_assumptions(const app::PlanOutcome& o) {
  fmt::print("\n{} assumptions:\n", o.assumptions.size());
  for (const auto& a : o.assumptions)
    fmt::print("  {} = {} ({}): {}\n", a.what, a.value, a.where, a.reason);
}

int plan(const Catalog& cat, PlanArgs a) {
  ProgressBar bar(!a.quiet && !a.json);
  app::PlanHooks hooks;
  hooks.progress = [&](double f) { bar.update(f); };
  hooks.note = [&](const std::string& s) {
    if (!a.quiet) fmt::print(stderr, "racktwin: {}\n", s);
  };
  a.request.store = !a.no_store;
  auto o = app::plan_fleet(cat, a.request, hooks);
  bar.clear();
  if (!o) return print_failure(o.error(), "plan");
  if (!a.csv.empty()) {
    std::ofstream out(a.csv, std::ios::binary | std::ios::trunc);
    out << o->to_csv();
    if (!out) return input_error("cannot write " + a.csv, "check the directory and the disk");
  }
  if (!a.plots.empty()) {
    const charts::OffscreenApp qt(
        [](const std::string& msg) { fmt::print(stderr, "racktwin: Qt: {}\n", msg); });
    auto files = app::render_plan_plots(*o, a.plots);
    if (!files) return input_error("cannot write the plan's charts: " + files.error());
    if (!a.quiet)
      fmt::print(stderr, "racktwin: wrote {} chart files to {}\n", files->size(), a.plots);
  }
  if (a.json) {
    fmt::print("{}\n", o->to_json().dump(2));
    if (o->plan_id && !a.quiet)
      fmt::print(stderr, "racktwin: stored as plan {} in {}\n", *o->plan_id, o->db_path);
    return kExitOk;
  }
  fmt::print("racktwin {} (commit {}): plan {} ({}), power basis {}\n\n", kVersion, kGitCommit,
             o->plan.name, o->plan.file, to_string(o->plan.basis));
  print_tables(*o);
  print_uncertainty(*o);
  print_assumptions(*o);
  if (o->plan_id) fmt::print("\nStored as plan {} in {}\n", *o->plan_id, o->db_path);
  return kExitOk;
}

}  // namespace

void add_plan_command(CLI::App& app, Commands& out) {
  auto a = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand(
      "plan",
      "Roll a fleet out quarter by quarter: racks, MW, tokens/s, capex, TCO and $/Mtok, "
      "with the binding constraint and comparator fleets on the same power (docs/plan.md)");
  cmd->add_option("FILE", a->request.plan_file, "Plan YAML file")->required();
  cmd->add_flag("--json", a->json, "The whole plan, machine-readable");
  cmd->add_option("--csv", a->csv, "Write the quarterly table as CSV to this file");
  cmd->add_option("--plots", a->plots, "Write the plan's charts (PNG and SVG) into this directory");
  cmd->add_option("--db", a->request.db,
                  "Results database of the throughput sweeps (default: $RACKTWIN_DB, else "
                  "racktwin.db in the working directory)");
  cmd->add_flag("--fresh", a->request.fresh,
                "Simulate the throughput sweeps again instead of taking stored runs");
  cmd->add_flag("--no-store", a->no_store, "Do not store the plan in the results database");
  cmd->add_flag("--quiet", a->quiet, "No progress bar or notes");
  add_jobs_option(cmd, a->request.job.jobs);
  out.push_back({cmd, [a](const Catalog& cat) { return plan(cat, *a); }});
}

}  // namespace racktwin::cli
