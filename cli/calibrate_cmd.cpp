// racktwin calibrate: fit each system's efficiency parameters to a published-points file and write
// them to the catalog's calibration file.

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>

#include "app/validate.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"

namespace racktwin::cli {
namespace {

std::string param_text(const perf::Efficiency& e, const std::string& name) {
  const double v = *perf::efficiency_parameter(e, name);
  if (name == "alpha" || name == "layer_overhead" || name == "step_overhead" ||
      name == "seq_overhead")
    return fmt::format("{:.3g} us", v * 1e6);
  if (name == "request_latency")  // below a microsecond it is nothing a user could measure
    return v < 1e-6 ? std::string("0 ms") : fmt::format("{:.3g} ms", v * 1e3);
  return fmt::format("{:.3g}", v);
}

// The busy shares fitted to measured sustained power, and the systems that have no measurement.
void print_power(const app::Calibration& c) {
  Table t({"system", "measured W", "busy share", "highest W", "sweep points", "highest at"});
  for (const auto& p : c.fit.power)
    t.add({p.system, app::figure_text(p.measured_w),
           p.error.empty() ? fmt::format("{:.6g}", p.busy_share) : "not fitted",
           p.sweep_points > 0 ? app::figure_text(p.highest_w) : "-", std::to_string(p.sweep_points),
           p.error.empty() ? p.highest_at : p.error});
  if (!t.empty())
    fmt::print("\nXPU busy share fitted to the chip's measured sustained power\n{}\n",
               t.render({1, 2, 3, 4}));
  if (!c.power_unmeasured.empty())
    fmt::print(
        "no measured sustained power for {}: power.xpu_busy_share stays the catalog's "
        "assumption\n",
        fmt::join(c.power_unmeasured, ", "));
}

// A family's pooled values, who uses them, and each member's weight in them (calib::pool_weights).
void print_family(const app::Calibration& c, const CalibratedEfficiency& f) {
  std::string vals;
  for (const auto& name : f.fitted)
    vals += (vals.empty() ? "" : ", ") + name + " " + param_text(f.values, name);
  const auto users = c.family_users.find(f.id);
  fmt::print("family {} (pooled from {}): {}; used by {}\n", f.id, fmt::join(f.pooled, ", "), vals,
             users == c.family_users.end() ? "no other system"
                                           : fmt::format("{}", fmt::join(users->second, ", ")));
  std::vector<calib::SystemFit> members;
  for (const auto& id : f.pooled)
    for (const auto& s : c.fit.systems)
      if (s.system == id) members.push_back(s);
  if (members.size() < 2) return;
  std::vector<std::string> head{"parameter", "pooled"};
  std::vector<std::size_t> right{1};
  for (const auto& m : members) {
    right.push_back(head.size());
    head.push_back(m.system + " %");
  }
  Table t(head);
  for (const auto& name : f.fitted) {
    std::vector<std::string> row{name, param_text(f.values, name)};
    for (double w : calib::pool_weights(name, members))
      row.push_back(fmt::format("{:.0f}", 100 * w));
    t.add(row);
  }
  fmt::print("  each member's weight: its precision about the parameter (docs/model.md 13.4)\n{}\n",
             t.render(right));
}

void print_report(const app::Calibration& c, double wall_s) {
  Table pt({"system", "prior", "points", "parameter", "prior value", "fitted", "pinned"});
  for (const auto& s : c.fit.systems)
    for (const auto& name : s.params) {
      const bool pinned = std::find(s.pinned.begin(), s.pinned.end(), name) != s.pinned.end();
      pt.add({s.system, s.prior_id, std::to_string(s.points.size()), name,
              param_text(s.prior, name), param_text(s.fitted, name), pinned ? "at a bound" : ""});
    }
  // dequant_eff is fitted only where a system's points dequantise: say so when a system has fewer.
  const bool fewer = std::any_of(c.fit.systems.begin(), c.fit.systems.end(),
                                 [&](const auto& s) { return s.params.size() < c.params.size(); });
  fmt::print("Fitted parameters ({} per system{}; the others keep their priors)\n{}\n",
             c.params.size(),
             fewer ? ", dequant_eff only where a system's points dequantise" : "",
             pt.render({2, 4, 5}));
  for (const auto& f : c.file.families) print_family(c, f);
  Table rt({"id", "system", "metric", "published", "predicted", "error %"});
  for (const auto& p : c.fit.final) {
    const bool fitted = std::any_of(c.fit.systems.begin(), c.fit.systems.end(),
                                    [&](const auto& s) { return s.system == p.point->system; });
    if (!fitted) continue;
    rt.add({p.point->id, p.point->system, to_string(p.point->metric),
            app::figure_text(p.point->value), p.predicted ? app::figure_text(*p.predicted) : "-",
            p.predicted ? fmt::format("{:+.1f}", p.error_pct) : "failed: " + p.error});
  }
  fmt::print("\nResiduals over the full sweeps\n{}\n", rt.render({3, 4, 5}));
  fmt::print("median |error| {:.1f}%, max |error| {:.1f}%; {} sweep points simulated in {:.0f} s\n",
             c.file.record.median_abs_error_pct, c.file.record.max_abs_error_pct,
             c.fit.simulated_points, wall_s);
  print_power(c);
  fmt::print("wrote {}\n", c.written);
  for (const auto& s : c.fit.systems)
    for (const auto& name : s.pinned)
      fmt::print("note: {} of {} ended at its bound\n", name, s.system);
}

int calibrate(const Catalog& cat, app::CalibrateRequest rq) {
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  rq.progress = [&](const std::string& line) {
    fmt::print(stderr, "[{:6.1f} s] {}\n", seconds(), line);
  };
  auto c = app::calibrate_points(cat, rq);
  if (!c) {
    const int code = print_failure(c.error(), "calibrate");
    if (!c.error().diagnostics.empty())
      fmt::print(stderr,
                 "racktwin calibrate: fix or remove the invalid points (racktwin validate "
                 "reports the same)\n");
    return code;
  }
  print_report(*c, seconds());
  if (const std::string narrowed = rq.sweep.describe(); !narrowed.empty())
    fmt::print("sweep narrowed to {}: the fit saw only those sweep points\n", narrowed);
  return kExitOk;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Commands& out, std::string command_line) {
  auto a = std::make_shared<app::CalibrateRequest>();
  a->command = std::move(command_line);
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Fit each system's efficiency parameters to published-points files and write them to the "
      "catalog's calibration file");
  cmd->add_option("FILE", a->points_files,
                  "Points files (format of scenarios/reference/published.yaml), read as one")
      ->required();
  cmd->add_option("--systems", a->systems, "Fit only these systems (default: every one in FILE)")
      ->delimiter(',');
  cmd->add_option(
         "--params", a->params,
         fmt::format("Parameters to fit (default: {})", fmt::join(calib::FitOptions{}.params, ",")))
      ->delimiter(',');
  cmd->add_option("--out", a->out,
                  "Calibration file to write (default: calibration.yaml in the catalog directory)");
  add_jobs_option(cmd, a->job.jobs);
  add_sweep_options(cmd, a->sweep);
  cmd->add_option(
         "--iterations", a->iterations,
         fmt::format("Optimiser steps per round (default: {})", calib::FitOptions{}.max_iterations))
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--rounds", a->rounds,
                  fmt::format("Most rounds of choosing the decisive sweep points and fitting "
                              "(default: {})",
                              calib::FitOptions{}.rounds))
      ->check(CLI::Range(1, 20));
  out.push_back({cmd, [a](const Catalog& cat) { return calibrate(cat, *a); }});
}

}  // namespace racktwin::cli
