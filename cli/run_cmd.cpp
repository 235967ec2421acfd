// racktwin run: a scenario's sweep through the serving simulation, and the comparison table.

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <optional>

#include "app/run.hpp"
#include "cli/commands.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "racktwin/version.hpp"

namespace racktwin::cli {
namespace {

struct RunArgs {
  app::RunRequest request;
  std::string backend = "local";
  bool json = false;
  bool no_fuse = false;
  bool fresh = false;
  bool timeseries = false;
  std::string plots, points;  // --plots DIR, --points FILE
  bool quiet = false;
};

std::string fmt_num(double x, int digits = 0) {
  return fmt::format("{:.{}f}", x, digits);
}

std::string ratio(const std::optional<double>& r) {
  return r ? fmt::format("{:.2f}", *r) : std::string("-");
}

void print_published(const app::RunOutcome& o, const std::string& wid, const std::string& mid) {
  const auto it = o.published.find({wid, mid});
  if (it == o.published.end() || it->second.empty()) return;
  const std::string& base = o.systems.front();
  Table t(
      {"metric", "system", "twin", "published", "twin x " + base, "published x " + base, "point"});
  for (const auto& r : it->second) {
    t.add({r.metric, r.system, r.twin ? format_value(*r.twin) : "-", format_value(r.published),
           ratio(r.twin_ratio), ratio(r.published_ratio), r.point_id});
  }
  fmt::print("published ({}) beside the twin, {} / {}\n{}\n", o.reference_file, mid, wid,
             t.render({2, 3, 4, 5}));
}

// What the facility's IT power budget holds of each system, at its provisioned power.
void print_budget(const app::RunOutcome& o, std::size_t first, double budget_w) {
  fmt::print("within the IT power budget of {:.1f} MW (whole units at provisioned power; "
             "racktwin plan for a rollout):\n",
             budget_w / 1e6);
  for (std::size_t k = first; k < first + o.systems.size(); ++k)
    if (const auto& b = o.rows[k].budget)
      fmt::print("  {}: {:.0f} {}s, {:.0f} XPUs, {:.1f} MW IT, {:.0f} tok/s at peak\n",
                 o.rows[k].system, b->units, b->unit, b->xpus, b->it_w / 1e6, b->tps);
}

// The failures the scenario rehearsed, when any point had one.
void print_failures(const app::RunOutcome& o, std::size_t first) {
  bool any = false;
  for (std::size_t k = first; k < first + o.systems.size(); ++k)
    any = any || o.rows[k].replica_down_s > 0 || o.rows[k].retried_requests > 0;
  if (!any) return;
  Table t({"system", "retried requests", "replica-down s", "mean recovery s"});
  for (std::size_t k = first; k < first + o.systems.size(); ++k) {
    const auto& r = o.rows[k];
    t.add({r.system, std::to_string(r.retried_requests), fmt_num(r.replica_down_s, 1),
           r.recovery_s ? fmt_num(*r.recovery_s, 1) : "-"});
  }
  fmt::print("failures over the sweep's points (docs/simulation.md section 3.9):\n{}\n",
             t.render({1, 2, 3}));
}

// Points whose queues grew without bound: their latencies grow with the run's length.
void print_overloaded(const app::RunOutcome& o, std::size_t first) {
  for (std::size_t k = first; k < first + o.systems.size(); ++k) {
    const auto& r = o.rows[k];
    if (r.overloaded.empty()) continue;
    fmt::print("{}: {} overloaded (arrivals above what the replicas serve; the queue grows "
               "without bound, so latencies depend on the run's length; docs/simulation.md "
               "section 6):\n",
               r.system, r.overloaded.size() == 1 ? std::string("1 point")
                                                  : fmt::format("{} points", r.overloaded.size()));
    for (const auto& p : r.overloaded) fmt::print("  {}\n", p);
  }
}

void print_summary(const app::RunOutcome& o) {
  fmt::print("racktwin {} (commit {}): scenario '{}', seed {}, {} points simulated\n", kVersion,
             kGitCommit, o.scenario_name, o.seed, o.results.size());
  fmt::print("{}\n\n", o.efficiency_note);
  const std::string x = "x " + o.systems.front();
  for (std::size_t i = 0; i < o.rows.size(); i += o.systems.size()) {
    Table t({"system", "peak tok/s/XPU", "best layout", "peak tok/s per rated kW", x,
             "peak tok/s per all-in MW", "min TBT ms", "min E2E s", x, "TTFT s at min E2E"});
    for (std::size_t k = i; k < i + o.systems.size(); ++k) {
      const app::SummaryRow& r = o.rows[k];
      if (!r.best) {
        t.add({r.system, r.failed > 0 ? "every point failed" : "no layout fits"});
        continue;
      }
      const sim::SweepSummary& b = *r.best;
      t.add({r.system, fmt_num(b.peak_tps), b.best_layout, fmt_num(b.peak_rated_kw),
             ratio(r.rated_kw_ratio),
             fmt_num(b.peak_allin_mw) + (b.allin_computed ? " (computed)" : ""),
             b.min_tbt ? fmt_num(*b.min_tbt * 1e3, 2) : "-", fmt_num(b.min_e2e, 2), ratio(r.min_e2e_ratio),
             fmt_num(b.ttft_at_min_e2e, 3)});
    }
    fmt::print("{} / {}\n{}\n", o.rows[i].model, o.rows[i].workload,
               t.render({1, 3, 4, 5, 6, 7, 8, 9}));
    if (o.power_budget_w) print_budget(o, i, *o.power_budget_w);
    print_failures(o, i);
    print_overloaded(o, i);
    print_published(o, o.rows[i].workload, o.rows[i].model);
  }
  if (o.failed_points > 0)
    fmt::print("{} points could not run (see --json for each reason)\n", o.failed_points);
}

int run_scenario(const Catalog& cat, RunArgs a) {
  a.request.fuse = !a.no_fuse;
  a.request.resume = !a.fresh;
  a.request.job.backend = a.backend == "mpi" ? app::Backend::mpi : app::Backend::local;
  ProgressBar bar(!a.quiet);
  app::RunHooks hooks;
  hooks.progress = [&](double f) { bar.update(f); };
  hooks.note = [&](const std::string& s) {
    if (!a.quiet) fmt::print(stderr, "racktwin: {}\n", s);
  };
  auto o = app::run_scenario(cat, a.request, hooks);
  bar.clear();
  if (!o) {
    const int code = print_failure(o.error(), "run");
    if (o.error().run_id)
      fmt::print(stderr,
                 "racktwin run: the points simulated so far are kept in run {}; the same "
                 "command resumes it\n",
                 *o.error().run_id);
    return code;
  }
  if (o->resumed > 0 && !a.quiet)
    fmt::print(stderr, "racktwin: {} points simulated now, {} taken from the interrupted run\n",
               o->simulated, o->resumed);
  if (a.json)
    print_json(o->to_json(a.timeseries));
  else
    print_summary(*o);
  const std::string note = fmt::format("Stored as run {} in {} (racktwin runs show {} --db {})",
                                       o->run_id, o->db_path, o->run_id, o->db_path);
  if (!a.json)
    fmt::print("{}\n", note);
  else if (!a.quiet)
    fmt::print(stderr, "racktwin: {}\n", note);
  // Not one point could run: the command failed, whatever it printed and stored.
  if (o->failed_points == static_cast<int>(o->results.size())) return kExitRuntime;
  const std::string dir = !a.plots.empty() ? a.plots : o->plots_dir.value_or("");
  if (dir.empty()) return kExitOk;
  std::fflush(stdout);
  auto store = open_store(o->db_path, db::Store::Mode::read);
  if (!store) return store.error();
  return render_run_plots(cat, *store, o->run_id, dir, a.points, a.quiet || a.json);
}

}  // namespace

void add_run_command(CLI::App& app, Commands& out) {
  auto a = std::make_shared<RunArgs>();
  auto* run = app.add_subcommand(
      "run", "Run a scenario's sweep through the serving simulation and compare systems");
  run->add_option("SCENARIO", a->request.scenario_file, "Scenario YAML file")->required();
  add_seed_option(run, a->request.seed, "Master seed (default: the scenario's)");
  run->add_flag("--json", a->json, "Every point's metrics, machine-readable");
  run->add_flag("--no-fuse", a->no_fuse,
                "Simulate every decode iteration on its own (slower; same results)");
  auto* json_flag = run->get_option("--json");
  run->add_flag("--timeseries", a->timeseries,
                "With --json: each point's one-second series (tokens, completions, power)")
      ->needs(json_flag);
  add_db_option(run, a->request.db);
  run->add_option("--jobs", a->request.job.jobs,
                  "Simulation worker processes at once (default: the cores)")
      ->check(CLI::Range(1, 1024));
  run->add_option("--backend", a->backend,
                  "local: worker processes on this machine; mpi: under mpirun (--ranks, --mpirun)")
      ->check(CLI::IsMember({"local", "mpi"}));
  run->add_option("--ranks", a->request.job.ranks, "MPI ranks, with --backend mpi (default 2)")
      ->check(CLI::Range(1, 100000));
  run->add_option("--mpirun", a->request.job.mpirun,
                  "The MPI launcher before -n, with --backend mpi (default: mpirun)");
  run->add_flag("--fresh", a->fresh,
                "Start a new run even when an interrupted run of the same inputs can be resumed");
  run->add_option("--plots", a->plots,
                  "Directory for the run's charts, PNG and SVG (as 'racktwin plot')");
  run->add_option("--points", a->points,
                  "Published points (YAML) to overlay on the Pareto charts of --plots");
  run->add_flag("--quiet", a->quiet, "No progress bar");
  out.push_back({run, [a](const Catalog& cat) { return run_scenario(cat, *a); }});
}

}  // namespace racktwin::cli
