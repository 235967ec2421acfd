// racktwin rehearse: a deployment's failures and repairs over days to a year.

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cmath>

#include "app/rehearse.hpp"
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
};

std::string pct(double v, int decimals = 3) { return fmt::format("{:.{}f}%", v * 100, decimals); }

std::string hours(double s) {
  if (s < 0) return "-";
  return s < 3600 ? fmt::format("{:.0f} min", s / 60) : fmt::format("{:.1f} h", s / 3600);
}

void print_serving(const app::RehearsalOutcome& o) {
  const auto& e = o.outcome;
  const auto& s = o.surrogate;
  fmt::print("Serving: {} ({}), {} XPUs per replica: {:.0f} tok/s per replica at the target, {:.0f} "
             "at saturation\n",
             o.layout, o.surrogate_note, s.replica_xpus, s.tps_at_target, s.tps_saturated);
  fmt::print("Load: {:.1f} of {} replicas at the target ({} of the site's {} racks spare)\n\n",
             e.offered_replicas, e.replicas_total, o.rehearsal.spare_racks, o.racks);
  Table t({"availability", "attainment", "fewest replicas up", "tokens lost", "tokens late",
           "technicians busy", "swaps open at end"});
  t.add({pct(e.availability), pct(e.attainment), fmt::format("{:.0f}", e.min_replicas_up),
         pct(e.tokens_offered > 0 ? e.tokens_lost / e.tokens_offered : 0),
         pct(e.tokens_offered > 0 ? e.tokens_late / e.tokens_offered : 0),
         pct(e.technician_utilisation, 1), std::to_string(e.swaps_unfinished)});
  fmt::print("{}\n", t.render({0, 1, 2, 3, 4, 5, 6}));
}

void print_classes(const app::RehearsalOutcome& o) {
  const auto& e = o.outcome;
  const bool jobs = !o.rehearsal.serving;
  std::vector<std::string> head{"class", "tier", "failures"};
  if (jobs) head.push_back("interruptions");
  else
    for (const char* h : {"spares at start", "used", "fewest in pool", "mean recovery"}) head.push_back(h);
  Table t(head);
  for (std::size_t c = 0; c < kAllPartClasses.size(); ++c) {
    const auto& k = e.classes[c];
    double sum = 0;
    int n = 0;
    for (const auto& ev : e.events)
      if (ev.cls == kAllPartClasses[c] && ev.recovered_s >= 0 && ev.replicas_hit > 0) {
        sum += ev.recovered_s;
        ++n;
      }
    const RepairTier tier = o.rehearsal.classes[c].tier;
    std::vector<std::string> row{to_string(kAllPartClasses[c]), to_string(tier), std::to_string(k.failures)};
    if (jobs) {
      row.push_back(std::to_string(k.interruptions));
    } else {
      const bool swap = tier == RepairTier::swap;
      row.push_back(swap ? std::to_string(k.spares_at_start) : "-");
      row.push_back(swap ? std::to_string(k.spares_used) : "-");
      row.push_back(swap ? std::to_string(k.min_spares) : "-");
      row.push_back(n > 0 ? hours(sum / n) : "-");
    }
    t.add(row);
  }
  std::vector<std::size_t> right;
  for (std::size_t i = 2; i < head.size(); ++i) right.push_back(i);
  fmt::print("\n{}{}\n", jobs ? "The first job size, the first replication:\n" : "", t.render(right));
}

void print_search(const app::RehearsalOutcome& o) {
  if (o.search.empty()) return;
  Table t({"spare racks", "per domain", "offered replicas", "attainment", "tokens lost"});
  for (const auto& s : o.search)
    t.add({std::to_string(s.spare_racks),
           fmt::format("{:.2f}", static_cast<double>(s.spare_racks) / o.rehearsal.domains),
           fmt::format("{:.1f}", s.offered_replicas), pct(s.attainment), pct(s.tokens_lost_share)});
  fmt::print("\nSpare capacity for {} attainment (the same failures and repairs, less load):\n{}\n",
             pct(o.rehearsal.attainment_goal, 1), t.render({0, 1, 2, 3, 4}));
  if (o.spare_needed)
    fmt::print("{} spare racks of the site's {} ({:.2f} per domain) hold the goal.\n", *o.spare_needed,
               o.racks, static_cast<double>(*o.spare_needed) / o.rehearsal.domains);
  else
    fmt::print("No spare capacity holds the goal: failures outlast it even with one rack serving.\n");
}

void print_jobs(const app::RehearsalOutcome& o) {
  Table t({"XPUs per job", "jobs", "replications", "interruptions (mean)", "fewest", "most", "MTTF"});
  for (const auto& j : o.jobs)
    t.add({std::to_string(j.job_xpus), std::to_string(j.jobs), std::to_string(j.replications),
           fmt::format("{:.1f}", j.interruptions), fmt::format("{:.0f}", j.interruptions_lo),
           fmt::format("{:.0f}", j.interruptions_hi),
           j.interruptions > 0 ? (j.mttf_h >= 48 ? fmt::format("{:.1f} days", j.mttf_h / 24)
                                                 : fmt::format("{:.2f} h", j.mttf_h))
                               : "none"});
  fmt::print("Jobs (one failure of any part a job's XPUs depend on interrupts it):\n{}\n",
             t.render({0, 1, 2, 3, 4, 5, 6}));
}

void print_figures(const app::RehearsalOutcome& o) {
  int n = 0;
  for (const auto& f : o.figures) n += f.assumption ? 1 : 0;
  fmt::print("\n{} of {} figures are assumptions (--json lists every figure with its source):\n", n,
             o.figures.size());
  for (const auto& f : o.figures)
    if (f.assumption) fmt::print("  {} = {} ({}): {}\n", f.what, f.value, f.where, f.reason);
}

int write_outputs(const RehearseArgs& a, const app::RehearsalOutcome& o) {
  if (!a.events_csv.empty())
    if (auto w = write_file_atomically(a.events_csv, o.events_csv()); !w)
      return input_error("cannot write " + a.events_csv + ": " + w.error(),
                         "check the directory and the disk");
  if (!a.plots.empty()) {
    charts::ensure_offscreen_app(
        [](const std::string& msg) { fmt::print(stderr, "racktwin: Qt: {}\n", msg); });
    auto files = app::render_rehearsal_plots(o, a.plots);
    if (!files) return input_error("cannot write the rehearsal's charts: " + files.error());
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
  if (int rc = write_outputs(a, *o); rc != kExitOk) return rc;
  if (a.json) {
    fmt::print("{}\n", o->to_json().dump(2));
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
  cmd->add_flag("--quiet", a->quiet, "No progress bar or notes");
  add_seed_option(cmd, a->request.seed, "Master seed (default: the file's)");
  add_jobs_option(cmd, a->request.job.jobs);
  out.push_back({cmd, [a](const Catalog& cat) { return rehearse(cat, *a); }});
}

}  // namespace racktwin::cli
