// racktwin run: a scenario's sweep through the serving simulation, and the comparison table.

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <optional>

#include "app/describe.hpp"
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

void print_summary(const app::RunOutcome& o) {
  fmt::print("racktwin {} (commit {}): scenario '{}', seed {}, {} points simulated\n{}\n", kVersion,
             kGitCommit, o.scenario_name, o.seed, o.results.size(), o.efficiency_note);
  print_sections(app::describe(o));
  fmt::print("\n");
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
