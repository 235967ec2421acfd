// racktwin crossval: leave-one-system-, model- and shape-out cross-validation of the calibration.

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>

#include "app/validate.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "racktwin/version.hpp"

namespace racktwin::cli {
namespace {

struct CrossvalArgs {
  app::CrossvalRequest request;
  std::vector<std::string> by;
};

// The held-out point with the largest |error| of a fold, as "id +12.3%".
std::string worst_of(const calib::FoldResult& f) {
  const calib::Prediction* worst = nullptr;
  for (const auto& p : f.predictions)
    if (p.predicted && (worst == nullptr || std::fabs(p.error_pct) > std::fabs(worst->error_pct)))
      worst = &p;
  return worst == nullptr ? "-" : fmt::format("{} {:+.1f}%", worst->point->id, worst->error_pct);
}

// The error over the held-out points that differ from a training point in the fold alone.
std::string alone_summary(const calib::CrossValidation& cv) {
  const auto& a = cv.pooled_alone;
  if (a.predicted == 0) return "no held-out point differs from a training point in it alone";
  return fmt::format("{} of the held-out points, median |error| {:.1f}%, max |error| {:.1f}%",
                     a.predicted, a.median_abs_pct, a.max_abs_pct);
}

void print_run(const calib::CrossValidation& cv) {
  const std::string by = calib::to_string(cv.by);
  fmt::print("\nleave one {} out: {} folds\n", by, cv.folds.size());
  Table ft({"held out", "train points", "test points", "median |error| %", "max |error| %",
            "worst"});
  for (const auto& f : cv.folds)
    ft.add({f.held_out, std::to_string(f.train_points), std::to_string(f.predictions.size()),
            fmt::format("{:.1f}", f.summary.median_abs_pct),
            fmt::format("{:.1f}", f.summary.max_abs_pct), worst_of(f)});
  fmt::print("{}\n", ft.render({1, 2, 3, 4}));
  Table pt({"id", "held out", "parameters from", by + " alone", "published", "predicted",
            "error %"});
  for (const auto& f : cv.folds)
    for (std::size_t k = 0; k < f.predictions.size(); ++k) {
      const auto& p = f.predictions[k];
      pt.add({p.point->id, f.held_out, f.origins[k], f.alone[k] ? "yes" : "no",
              app::figure_text(p.point->value), p.predicted ? app::figure_text(*p.predicted) : "-",
              p.predicted ? fmt::format("{:+.1f}", p.error_pct) : "failed: " + p.error});
    }
  fmt::print("{}\n", pt.render({4, 5, 6}));
  fmt::print("leave one {} out: {} held-out points predicted, median |error| {:.1f}%, max |error| "
             "{:.1f}%",
             by, cv.pooled.predicted, cv.pooled.median_abs_pct, cv.pooled.max_abs_pct);
  if (cv.pooled.failed > 0) fmt::print(", {} could not be predicted", cv.pooled.failed);
  fmt::print("; {} sweep points simulated\n", cv.simulated_points);
  fmt::print("{} alone: {} (\"{} alone\" yes: a training point of the same metric differs from "
             "it in the {} and nothing else; calib::differs_alone)\n",
             by, alone_summary(cv), by, by);
}

int crossval(const Catalog& cat, CrossvalArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  for (const auto& b : a.by) a.request.by.push_back(*calib::parse_hold_out(b));
  a.request.progress = [&](const std::string& line) {
    fmt::print(stderr, "[{:6.1f} s] {}\n", seconds(), line);
  };
  auto cv = app::crossval_points(cat, a.request);
  if (!cv) return print_failure(cv.error(), "crossval");
  const std::string narrowed = a.request.sweep.describe();
  fmt::print("racktwin {} (commit {}): {} ({}), {} points{}\n", kVersion, kGitCommit,
             cv->points->file, cv->points->hash, cv->points->points.size(),
             narrowed.empty() ? "" : ", sweep narrowed to " + narrowed);
  for (const auto& run : cv->runs) print_run(run);
  fmt::print("\n");
  for (const auto& run : cv->runs)
    fmt::print("leave one {} out: median |error| {:.1f}%, max |error| {:.1f}%; {} alone: {}\n",
               calib::to_string(run.by), run.pooled.median_abs_pct, run.pooled.max_abs_pct,
               calib::to_string(run.by), alone_summary(run));
  fmt::print("{:.0f} s\n", seconds());
  return cv->runs.end() != std::find_if(cv->runs.begin(), cv->runs.end(),
                                        [](const auto& r) { return r.pooled.failed > 0; })
             ? 1
             : 0;
}

}  // namespace

void add_crossval_command(CLI::App& app, Commands& out) {
  auto a = std::make_shared<CrossvalArgs>();
  auto* cmd = app.add_subcommand(
      "crossval",
      "Cross-validate the calibration: predict each system's, model's or workload shape's points "
      "with parameters fitted without them (never writes the calibration file)\n(exit 0: every "
      "held-out point predicted; 1: some could not be; 2: invalid points)");
  cmd->add_option("FILE", a->request.points_files,
                  "Points files (format of scenarios/reference/published.yaml), read as one")
      ->required();
  cmd->add_option("--by", a->by, "What to hold out: system, model, shape (default: all three)")
      ->delimiter(',')
      ->check(CLI::IsMember({"system", "model", "shape"}));
  cmd->add_option("--params", a->request.params,
                  "Parameters to fit (default: as racktwin calibrate)")
      ->delimiter(',');
  add_jobs_option(cmd, a->request.job.jobs);
  add_sweep_options(cmd, a->request.sweep);
  cmd->add_option(
         "--iterations", a->request.iterations,
         fmt::format("Optimiser steps per round (default: {})", calib::FitOptions{}.max_iterations))
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--rounds", a->request.rounds,
                  fmt::format("Most rounds of choosing the decisive sweep points and fitting "
                              "(default: {})",
                              calib::FitOptions{}.rounds))
      ->check(CLI::Range(1, 20));
  out.push_back({cmd, [a](const Catalog& cat) { return crossval(cat, *a); }});
}

}  // namespace racktwin::cli
