// racktwin validate: predict every point of a published-points file and report the errors.

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cmath>

#include "app/validate.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "racktwin/version.hpp"

namespace racktwin::cli {

int print_failure(const app::Failure& f, const std::string& command) {
  if (!f.diagnostics.empty())
    print_diagnostics(f.diagnostics, f.file);
  else
    fmt::print(stderr, "racktwin {}: {}\n", command, f.message);
  return f.kind == app::Failure::Kind::input ? kExitInput : kExitRuntime;
}

namespace {

struct ValidateArgs {
  app::ValidateRequest request;
  bool json = false;
};

void print_power(const app::Validation& v);

void print_table(const app::Validation& v) {
  const std::string& path = v.points->file;
  for (const auto& r : v.points->rejected)
    for (const auto& d : r.problems)
      fmt::print(stderr, "racktwin validate: point {}: {}\n", r.id, d.to_string());
  for (const auto& p : v.predictions)
    if (!p.predicted)
      fmt::print(stderr, "racktwin validate: point {} ({}:{}): cannot predict: {}\n", p.point->id,
                 path, p.point->where.line, p.error);
  fmt::print("racktwin {} (commit {}): {} ({}), seed {}{}\n", kVersion, kGitCommit, path,
             v.points->hash, v.seed, v.sweep.empty() ? "" : ", sweep narrowed to " + v.sweep);
  fmt::print("efficiency: {}\n\n", app::efficiency_origins(v.origins));
  Table t({"id", "system", "model", "metric", "published", "predicted", "error %", "decided by"});
  for (const auto& p : v.predictions) {
    const ReferencePoint& q = *p.point;
    std::string metric = to_string(q.metric);
    if (q.at) metric += fmt::format(" @{}", app::figure_text(*q.at));
    t.add({q.id, q.system, q.model, metric, app::figure_text(q.value),
           p.predicted ? app::figure_text(*p.predicted) : "-",
           p.predicted ? fmt::format("{:+.1f}", p.error_pct) : "failed",
           p.decided_by.empty() ? "-" : p.decided_by});
  }
  fmt::print("{}\n", t.render({4, 5, 6}));
  const auto& s = v.summary;
  const std::size_t rejected = v.points->rejected.size();
  fmt::print("{} points: {} predicted, median |error| {:.1f}%, max |error| {:.1f}%",
             v.predictions.size() + rejected, s.predicted, s.median_abs_pct, s.max_abs_pct);
  if (s.failed > 0) fmt::print(", {} could not be predicted", s.failed);
  if (rejected > 0) fmt::print(", {} rejected", rejected);
  fmt::print("\n");
  if (!v.power.empty()) print_power(v);
  if (!v.power_unmeasured.empty())
    fmt::print(
        "{}no measured sustained power for {}: their XPU power rests on the catalog's "
        "assumed shares (docs/power.md)\n",
        v.power.empty() ? "\n" : "", fmt::join(v.power_unmeasured, ", "));
}

void print_power(const app::Validation& v) {
  fmt::print("\nXPU power against the chip's measured sustained power (a bound: at most)\n");
  Table w({"system", "model", "workload", "measured W", "at peak W", "peak / measured", "highest W",
           "holds", "busy share"});
  for (const auto& c : v.power)
    w.add({c.system, c.model, c.workload_id, app::figure_text(c.measured_w),
           app::figure_text(c.peak_w), fmt::format("{:.2f}", c.peak_ratio()),
           app::figure_text(c.highest_w), c.holds() ? "yes" : "NO",
           fmt::format("{:.4g} ({})", c.busy_share, c.share_fitted ? "fitted" : "assumed")});
  fmt::print("{}\n", w.render({3, 4, 5, 6}));
}

int validate(const Catalog& cat, ValidateArgs a) {
  auto v = app::validate_points(cat, a.request);
  if (!v) return print_failure(v.error(), "validate");
  if (a.json)
    print_json(v->to_json());
  else
    print_table(*v);
  return v->exit_code();
}

}  // namespace

void add_jobs_option(CLI::App* cmd, int& jobs) {
  cmd->add_option("--jobs", jobs, "Simulation worker processes at once (default: the cores)")
      ->check(CLI::Range(1, 1024));
}

void add_sweep_options(CLI::App* cmd, app::SweepChoice& sweep) {
  cmd->add_option("--replica-xpus", sweep.replica_xpus,
                  "Replica sizes whose layouts the sweeps try (default: the compute tray, 8, the "
                  "powers of two below them and the wide expert-parallel sizes within the "
                  "domain, as racktwin run)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--concurrency", sweep.concurrency,
                  "Client counts the sweeps run, e.g. 1,16 for a quick look (default: 1 to 1024 "
                  "by factors of 2, as the InferenceX sweeps, and each published multi-node "
                  "deployment at the clients it ran; given, these alone, in the modes of "
                  "--serving; a smaller sweep may miss a peak)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20));
  const CLI::Validator mode(
      [](std::string& s) -> std::string {
        const auto m = parse_serving_mode(s);
        return m ? std::string() : m.error();
      },
      "MODE", "serving mode");
  cmd->add_option("--serving", sweep.serving,
                  "Serving modes the sweeps run, e.g. 3p1d/tp2 for a published multi-node "
                  "configuration (default: aggregated, and the multi-node deployments published "
                  "for the point's system, model, precision and shape "
                  "(scenarios/catalog/multinode.yaml), else 1p1d and 2p1d; disaggregated modes "
                  "only on systems whose stack offers them; given, these modes everywhere)")
      ->delimiter(',')
      ->check(mode);
}

void add_seed_option(CLI::App* cmd, std::optional<std::uint64_t>& seed, const std::string& what) {
  // Without this check CLI11 reads "-1" into the unsigned seed as 18446744073709551615.
  const CLI::Validator digits(
      [](std::string& s) -> std::string {
        if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos) return {};
        return "expected a seed from 0 to 18446744073709551615, found '" + s + "'";
      },
      "", "digits");
  cmd->add_option("--seed", seed, what)->check(digits);
}

void add_validate_command(CLI::App& app, Commands& out) {
  auto a = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Predict every point of published-points files with the current catalog and report the "
      "errors\n(exit 0: all predicted; 1: some could not be predicted; 2: some points are "
      "invalid)");
  cmd->add_option("FILE", a->request.points_files,
                  "Points files (format of scenarios/reference/published.yaml), read as one")
      ->required();
  cmd->add_flag("--json", a->json, "Every point and the summary, machine-readable");
  add_seed_option(cmd, a->request.seed, "Master seed of the sweeps (default: 20260801)");
  add_sweep_options(cmd, a->request.sweep);
  add_jobs_option(cmd, a->request.job.jobs);
  out.push_back({cmd, [a](const Catalog& cat) { return validate(cat, *a); }});
}

}  // namespace racktwin::cli
