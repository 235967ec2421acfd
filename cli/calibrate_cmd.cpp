// racktwin calibrate: fit each system's efficiency parameters to a published-points file and write
// them to the catalog's calibration file.

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "calib/calibrate.hpp"
#include "calib/report.hpp"
#include "app/sim_job.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "scenarios/points_loader.hpp"

namespace racktwin::cli {
namespace {

struct CalibrateArgs {
  std::string path;
  std::vector<std::string> systems;
  std::vector<std::string> params;
  std::string out;
  int jobs = 0;
  int iterations = 0;
  int rounds = 0;
  std::vector<int> replica_xpus;
  std::string command;
};

std::string today_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string param_text(const perf::Efficiency& e, const std::string& name) {
  const double v = *perf::efficiency_parameter(e, name);
  if (name == "alpha" || name == "layer_overhead" || name == "step_overhead")
    return fmt::format("{:.3g} us", v * 1e6);
  if (name == "request_latency")  // below a microsecond it is nothing a user could measure
    return v < 1e-6 ? std::string("0 ms") : fmt::format("{:.3g} ms", v * 1e3);
  return fmt::format("{:.3g}", v);
}

int calibrate(const Catalog& cat, const CalibrateArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  auto pf = load_points_file(a.path, cat);
  if (!pf) {
    print_diagnostics(pf.error(), a.path);
    return kExitInput;
  }
  if (!pf->rejected.empty()) {
    for (const auto& r : pf->rejected)
      for (const auto& d : r.problems)
        fmt::print(stderr, "racktwin calibrate: point {}: {}\n", r.id, d.to_string());
    fmt::print(stderr,
               "racktwin calibrate: {} invalid points; fix or remove them (racktwin validate "
               "reports the same)\n",
               pf->rejected.size());
    return kExitInput;
  }
  calib::FitOptions opt;
  opt.systems = a.systems;
  if (!a.params.empty()) opt.params = a.params;
  app::JobOptions jobs;
  jobs.jobs = a.jobs > 0 ? a.jobs : default_jobs();
  opt.simulate = [&cat, jobs](const std::vector<sim::PointSpec>& specs) {
    return app::simulate_in_workers(cat, specs, jobs);
  };
  if (a.iterations > 0) opt.max_iterations = a.iterations;
  if (a.rounds > 0) opt.rounds = a.rounds;
  opt.predict.replica_xpus = a.replica_xpus;
  opt.progress = [&](const std::string& line) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(stderr, "[{:6.1f} s] {}\n", s, line);
  };
  auto fit = calib::calibrate(cat, pf->points, opt);
  if (!fit) {
    fmt::print(stderr, "racktwin calibrate: {}\n", fit.error());
    return kExitInput;
  }

  std::map<std::string, perf::Efficiency> fitted;
  for (const auto& s : fit->systems) fitted[s.system] = s.fitted;
  const auto& preds = fit->final;  // over the full sweeps with the fitted parameters

  CalibrationRecord rec;
  rec.points_file = a.path;
  rec.points_hash = pf->hash;
  rec.date = today_utc();
  rec.command = a.command;
  const auto cal = calib::assemble(cat, *fit, preds, rec);
  std::string out = a.out;
  if (out.empty()) {
    if (cat.files.empty()) {
      fmt::print(stderr, "racktwin calibrate: no catalog directory; give --out FILE\n");
      return kExitInput;
    }
    out = (std::filesystem::path(cat.files.front()).parent_path() / "calibration.yaml").string();
  }
  {
    std::ofstream f(out, std::ios::binary | std::ios::trunc);
    f << calib::calibration_yaml(cal);
    if (!f) {
      fmt::print(stderr, "racktwin calibrate: cannot write {}\n", out);
      return kExitRuntime;
    }
  }

  Table pt({"system", "prior", "points", "parameter", "prior value", "fitted", "pinned"});
  for (const auto& s : fit->systems)
    for (const auto& name : s.params) {
      const bool pinned = std::find(s.pinned.begin(), s.pinned.end(), name) != s.pinned.end();
      pt.add({s.system, s.prior_id, std::to_string(s.points.size()), name,
              param_text(s.prior, name), param_text(s.fitted, name), pinned ? "at a bound" : ""});
    }
  fmt::print("Fitted parameters ({} per system; the others keep their priors)\n{}\n",
             opt.params.size(), pt.render({2, 4, 5}));
  for (const auto& f : cal.families) {
    std::string vals;
    for (const auto& name : f.fitted)
      vals += (vals.empty() ? "" : ", ") + name + " " + param_text(f.values, name);
    std::string members;
    for (const auto& [sid, sys] : cat.systems) {
      const EfficiencyPrior* p = cat.efficiency_prior_for(sid);
      if (p != nullptr && p->id == f.id && !fitted.contains(sid))
        members += (members.empty() ? "" : ", ") + sid;
    }
    fmt::print("family {} (pooled from {}): {}; used by {}\n", f.id, fmt::join(f.pooled, ", "),
               vals, members.empty() ? "no other system" : members);
  }
  Table rt({"id", "system", "metric", "published", "predicted", "error %"});
  for (const auto& p : preds) {
    if (!fitted.contains(p.point->system)) continue;
    rt.add({p.point->id, p.point->system, to_string(p.point->metric), format_value(p.point->value),
            p.predicted ? format_value(*p.predicted) : "-",
            p.predicted ? fmt::format("{:+.1f}", p.error_pct) : "failed: " + p.error});
  }
  fmt::print("\nResiduals over the full sweeps\n{}\n", rt.render({3, 4, 5}));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("median |error| {:.1f}%, max |error| {:.1f}%; {} sweep points simulated in {:.0f} s\n",
             cal.record.median_abs_error_pct, cal.record.max_abs_error_pct, fit->simulated_points,
             wall);
  fmt::print("wrote {}\n", out);
  for (const auto& s : fit->systems)
    for (const auto& name : s.pinned)
      fmt::print("note: {} of {} ended at its bound\n", name, s.system);
  return kExitOk;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Commands& out, std::string command_line) {
  auto a = std::make_shared<CalibrateArgs>();
  a->command = std::move(command_line);
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Fit each system's efficiency parameters to a published-points file and write them to the "
      "catalog's calibration file");
  cmd->add_option("FILE", a->path, "Points file (format of scenarios/reference/published.yaml)")
      ->required();
  cmd->add_option("--systems", a->systems, "Fit only these systems (default: every one in FILE)")
      ->delimiter(',');
  cmd->add_option("--params", a->params,
                  "Parameters to fit (default: mfu,mbu,comm_eff,alpha,layer_overhead,step_overhead,"
                  "request_latency)")
      ->delimiter(',');
  cmd->add_option("--out", a->out,
                  "Calibration file to write (default: calibration.yaml in the catalog directory)");
  cmd->add_option("--jobs", a->jobs, "Simulation processes (default: the cores, at most 4)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--replica-xpus", a->replica_xpus,
                  "Replica sizes whose layouts the sweeps try (default: the compute tray and 8)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--iterations", a->iterations, "Optimiser steps per round (default: 12)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--rounds", a->rounds,
                  "Most rounds of choosing the decisive sweep points and fitting (default: 3)")
      ->check(CLI::Range(1, 20));
  out.push_back({cmd, [a](const Catalog& cat) { return calibrate(cat, *a); }});
}

}  // namespace racktwin::cli
