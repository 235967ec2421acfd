// racktwin validate: predict every point of a published-points file and report the errors.

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "calib/predict.hpp"
#include "app/sim_job.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "racktwin/version.hpp"
#include "scenarios/points_loader.hpp"

namespace racktwin::cli {

int default_jobs() {
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
}

std::string format_value(double v) {
  const double a = std::fabs(v);
  if (a >= 1000) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3g}", v);
}

std::string efficiency_origins(const Catalog& cat, const std::vector<ReferencePoint>& points) {
  std::map<std::string, std::string> origin;
  for (const auto& p : points)
    if (auto c = cat.efficiency_for(p.system)) origin[p.system] = c->origin;
  std::string out;
  for (const auto& [s, o] : origin) out += (out.empty() ? "" : ", ") + s + " " + o;
  return out;
}

namespace {

using json = nlohmann::ordered_json;

struct ValidateArgs {
  std::string path;
  bool json = false;
  std::optional<std::uint64_t> seed;
  int jobs = 0;
  std::vector<int> replica_xpus;
};

json workload_json(const InferenceXWorkload& w) {
  json j{{"isl", w.isl}, {"osl", w.osl}, {"range_ratio", w.range_ratio}, {"mtp", w.mtp}};
  if (w.precision) j["precision"] = *w.precision;
  return j;
}

int validate(const Catalog& cat, const ValidateArgs& a) {
  auto pf = load_points_file(a.path, cat);
  if (!pf) {
    print_diagnostics(pf.error(), a.path);
    return kExitInput;
  }
  calib::PredictOptions opt;
  if (a.seed) opt.seed = *a.seed;
  opt.replica_xpus = a.replica_xpus;
  const auto plan = calib::plan_predictions(cat, pf->points, opt);
  app::JobOptions jobs;
  jobs.jobs = a.jobs > 0 ? a.jobs : default_jobs();
  auto results = app::simulate_in_workers(cat, plan.specs, jobs);
  if (!results) {
    fmt::print(stderr, "racktwin validate: {}\n", results.error());
    return kExitRuntime;
  }
  const auto preds = calib::predictions(pf->points, plan, *results);
  const auto sum = calib::summarise_errors(preds);
  const int rejected = static_cast<int>(pf->rejected.size());
  const int exit_code = rejected > 0 ? kExitInput : sum.failed > 0 ? kExitRuntime : kExitOk;

  if (a.json) {
    json pts = json::array();
    for (const auto& r : pf->rejected) {
      json msgs = json::array();
      for (const auto& d : r.problems) msgs.push_back(d.to_string());
      pts.push_back(
          {{"id", r.id}, {"status", "rejected"}, {"line", r.where.line}, {"messages", msgs}});
    }
    for (const auto& p : preds) {
      const ReferencePoint& q = *p.point;
      json j{{"id", q.id},
             {"status", p.predicted ? "ok" : "failed"},
             {"line", q.where.line},
             {"system", q.system},
             {"model", q.model},
             {"workload", workload_json(q.workload)},
             {"metric", to_string(q.metric)},
             {"at", q.at ? json(*q.at) : json(nullptr)},
             {"published", q.value},
             {"predicted", p.predicted ? json(*p.predicted) : json(nullptr)},
             {"error_pct", p.predicted ? json(p.error_pct) : json(nullptr)}};
      if (!p.predicted) j["messages"] = json::array({p.error});
      pts.push_back(j);
    }
    std::map<std::string, std::string> origins;
    for (const auto& q : pf->points)
      if (auto c = cat.efficiency_for(q.system)) origins[q.system] = c->origin;
    json j{{"racktwin", kVersion},
           {"commit", kGitCommit},
           {"file", a.path},
           {"points_hash", pf->hash},
           {"seed", opt.seed},
           {"efficiency", origins},
           {"points", pts},
           {"summary",
            {{"points", static_cast<int>(pf->points.size()) + rejected},
             {"predicted", sum.predicted},
             {"failed", sum.failed},
             {"rejected", rejected},
             {"median_abs_error_pct", sum.median_abs_pct},
             {"max_abs_error_pct", sum.max_abs_pct}}}};
    fmt::print("{}\n", j.dump(2));
    return exit_code;
  }

  for (const auto& r : pf->rejected)
    for (const auto& d : r.problems)
      fmt::print(stderr, "racktwin validate: point {}: {}\n", r.id, d.to_string());
  for (const auto& p : preds)
    if (!p.predicted)
      fmt::print(stderr, "racktwin validate: point {} ({}:{}): cannot predict: {}\n", p.point->id,
                 a.path, p.point->where.line, p.error);

  fmt::print("racktwin {} (commit {}): {} ({}), seed {}\n", kVersion, kGitCommit, a.path, pf->hash,
             opt.seed);
  fmt::print("efficiency: {}\n\n", efficiency_origins(cat, pf->points));
  Table t({"id", "system", "model", "metric", "published", "predicted", "error %"});
  for (const auto& p : preds) {
    const ReferencePoint& q = *p.point;
    std::string metric = to_string(q.metric);
    if (q.at) metric += fmt::format(" @{}", format_value(*q.at));
    t.add({q.id, q.system, q.model, metric, format_value(q.value),
           p.predicted ? format_value(*p.predicted) : "-",
           p.predicted ? fmt::format("{:+.1f}", p.error_pct) : "failed"});
  }
  fmt::print("{}\n", t.render({4, 5, 6}));
  fmt::print("{} points: {} predicted, median |error| {:.1f}%, max |error| {:.1f}%",
             preds.size() + rejected, sum.predicted, sum.median_abs_pct, sum.max_abs_pct);
  if (sum.failed > 0) fmt::print(", {} could not be predicted", sum.failed);
  if (rejected > 0) fmt::print(", {} rejected", rejected);
  fmt::print("\n");
  return exit_code;
}

}  // namespace

void add_validate_command(CLI::App& app, Commands& out) {
  auto a = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Predict every point of a published-points file with the current catalog and report the "
      "errors\n(exit 0: all predicted; 1: some could not be predicted; 2: some points are "
      "invalid)");
  cmd->add_option("FILE", a->path, "Points file (format of scenarios/reference/published.yaml)")
      ->required();
  cmd->add_flag("--json", a->json, "Every point and the summary, machine-readable");
  cmd->add_option("--seed", a->seed, "Master seed of the sweeps (default: 20260801)");
  cmd->add_option("--replica-xpus", a->replica_xpus,
                  "Replica sizes whose layouts the sweeps try (default: the compute tray and 8)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--jobs", a->jobs, "Simulation processes (default: the cores, at most 4)")
      ->check(CLI::Range(1, 256));
  out.push_back({cmd, [a](const Catalog& cat) { return validate(cat, *a); }});
}

}  // namespace racktwin::cli
