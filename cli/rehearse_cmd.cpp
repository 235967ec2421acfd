// racktwin rehearse: a deployment's failures and repairs over days to a year.

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <QChart>

#include "app/rehearse.hpp"
#include "app/rehearse_replay.hpp"
#include "cli/commands.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "core/atomic_file.hpp"
#include "racktwin/version.hpp"

namespace racktwin::cli {
namespace {

struct RehearseArgs {
  app::RehearseRequest request;
  bool json = false, quiet = false;
  std::string events_csv, plots;
  std::string replay;  // empty: no replay; "worst" or a failure's number
};

void print_serving(const app::RehearsalOutcome& o) {
  const auto& e = o.outcome;
  const auto& s = o.surrogate;
  fmt::print("Serving: {} ({}), {}: {:.0f} tok/s per {} at the target, {:.0f} at saturation\n",
             o.layout, o.surrogate_note, o.unit_description(), s.tps_at_target, o.unit(),
             s.tps_saturated);
  fmt::print("Load: {:.1f} of {} {}s at the target ({} of the site's {} racks spare)\n\n",
             e.offered_replicas, e.replicas_total, o.unit(), o.rehearsal.spare_racks, o.racks);
  fmt::print("{}\n", render_rows(o.summary_table(), {0, 1, 2, 3, 4, 5, 6}));
}

void print_classes(const app::RehearsalOutcome& o) {
  const auto rows = o.class_table();
  fmt::print("\n{}{}\n", o.rehearsal.serving ? "" : "The first job size, the first replication:\n",
             render_rows(rows, numbers_from(2, rows.front().size())));
}

void print_search(const app::RehearsalOutcome& o) {
  if (o.search.empty()) return;
  fmt::print("\nSpare capacity for {:g}% attainment (the same failures and repairs, less load):\n{}\n",
             o.rehearsal.attainment_goal * 100, render_rows(o.search_table(), {0, 1, 2, 3, 4}));
  fmt::print("{}\n", o.spare_sentence());
}

void print_jobs(const app::RehearsalOutcome& o) {
  fmt::print("Jobs (one failure of any part a job's XPUs depend on interrupts it):\n{}\n",
             render_rows(o.jobs_table(), {0, 1, 2, 3, 4, 5, 6}));
}

void print_figures(const app::RehearsalOutcome& o) {
  int n = 0;
  for (const auto& f : o.figures) n += f.assumption ? 1 : 0;
  fmt::print("\n{} of {} figures are assumptions (--json lists every figure with its source):\n", n,
             o.figures.size());
  for (const auto& f : o.figures)
    if (f.assumption) fmt::print("  {} = {} ({}): {}\n", f.what, f.value, f.where, f.reason);
}

void print_replay(const app::RehearsalOutcome& o, const app::ReplayOutcome& r) {
  const auto lines = r.summary(o.outcome.events.size());
  fmt::print("\nReplayed request by request (docs/failures.md section 3.7):\n");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    fmt::print("  {}\n", lines[i]);
    if (i == 2) fmt::print("{}\n", render_rows(r.table(), {1, 2}));  // after the arrivals
  }
}

int write_outputs(const RehearseArgs& a, const app::RehearsalOutcome& o,
                  const std::optional<app::ReplayOutcome>& replay) {
  if (!a.events_csv.empty())
    if (auto w = write_file_atomically(a.events_csv, o.events_csv()); !w)
      return input_error("cannot write " + a.events_csv + ": " + w.error(),
                         "check the directory and the disk");
  if (!a.plots.empty()) {
    const charts::OffscreenApp qt(
        [](const std::string& msg) { fmt::print(stderr, "racktwin: Qt: {}\n", msg); });
    auto files = app::render_rehearsal_plots(o, a.plots);
    if (!files) return input_error("cannot write the rehearsal's charts: " + files.error());
    if (replay) {
      auto c = app::replay_chart(o, *replay);
      auto more = charts::save_chart(std::move(c.chart), a.plots + "/" + o.rehearsal.name + "-" + c.name);
      if (!more) return input_error("cannot write the replay's chart: " + more.error());
      files->insert(files->end(), more->begin(), more->end());
    }
    if (!a.quiet) fmt::print(stderr, "racktwin: wrote {} chart files to {}\n", files->size(), a.plots);
  }
  return kExitOk;
}

int rehearse(const Catalog& cat, const RehearseArgs& a) {
  ProgressBar bar(!a.quiet && !a.json);
  app::RehearseHooks hooks;
  hooks.progress = [&](double f) { bar.update(f); };
  hooks.note = [&](const std::string& s) {
    if (!a.quiet) fmt::print(stderr, "racktwin: {}\n", s);
  };
  auto o = app::rehearse_file(cat, a.request, hooks);
  bar.clear();
  if (!o) return print_failure(o.error(), "rehearse");
  std::optional<app::ReplayOutcome> replay;
  if (!a.replay.empty()) {
    if (!a.quiet) fmt::print(stderr, "racktwin: replaying a failure request by request\n");
    auto r = app::replay_failure(cat, *o, a.replay, a.request.job);
    if (!r) return input_error("cannot replay: " + r.error(), "see docs/failures.md section 3.7");
    replay = std::move(*r);
  }
  if (int rc = write_outputs(a, *o, replay); rc != kExitOk) return rc;
  if (a.json) {
    auto j = o->to_json();
    if (replay) j["replay"] = replay->to_json();
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }
  const auto& r = o->rehearsal;
  fmt::print("racktwin {} (commit {}): rehearsal '{}', seed {}\n", kVersion, kGitCommit, r.name, o->seed);
  fmt::print("{} x {} domains = {} XPUs, {:.1f} days, {} failures\n", r.system, r.domains,
             o->outcome.xpus_total, r.horizon.value() / 86400, o->outcome.events.size());
  if (r.serving) {
    print_serving(*o);
    print_search(*o);
  } else {
    print_jobs(*o);
  }
  print_classes(*o);
  if (replay) print_replay(*o, *replay);
  print_figures(*o);
  return kExitOk;
}

}  // namespace

void add_rehearse_command(CLI::App& app, Commands& out) {
  auto a = std::make_shared<RehearseArgs>();
  auto* cmd = app.add_subcommand(
      "rehearse", "Rehearse a deployment's failures and repairs over days to a year: availability, "
                  "tokens lost, service-target attainment, recovery, spares (docs/failures.md)");
  cmd->add_option("FILE", a->request.file, "Rehearsal YAML file")->required();
  cmd->add_flag("--json", a->json, "The whole rehearsal, machine-readable");
  cmd->add_option("--events", a->events_csv, "Write every failure as a CSV row to this file");
  cmd->add_option("--plots", a->plots, "Write the rehearsal's charts (PNG and SVG) into this directory");
  cmd->add_option("--db", a->request.db,
                  "Results database of the serving sweep (default: $RACKTWIN_DB, else racktwin.db "
                  "in the working directory)");
  cmd->add_flag("--fresh", a->request.fresh,
                "Simulate the serving sweep again instead of taking a stored run");
  cmd->add_option("--replay", a->replay,
                  "Replay one failure request by request on a slice of the site: 'worst' (the "
                  "failure that took the most replicas down) or its number in --events");
  cmd->add_flag("--quiet", a->quiet, "No progress bar or notes");
  add_seed_option(cmd, a->request.seed, "Master seed (default: the file's)");
  add_jobs_option(cmd, a->request.job.jobs);
  out.push_back({cmd, [a](const Catalog& cat) { return rehearse(cat, *a); }});
}

}  // namespace racktwin::cli
