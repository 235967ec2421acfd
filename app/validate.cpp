#include "app/validate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "racktwin/version.hpp"
#include "scenarios/points_loader.hpp"

namespace racktwin::app {
namespace {

std::string joined(const std::vector<std::string>& files) {
  std::string out;
  for (const auto& f : files) out += (out.empty() ? "" : " + ") + f;
  return out;
}

std::expected<std::shared_ptr<const PointsFile>, Failure> load_points(
    const Catalog& cat, const std::vector<std::string>& files) {
  auto pf = load_points_files(files, cat);
  if (!pf) return std::unexpected(Failure::input(pf.error(), joined(files)));
  return std::make_shared<const PointsFile>(std::move(*pf));
}

// The points of the files, failing with every rejected point's problems when there is one: a fit
// takes no partial file.
std::expected<std::shared_ptr<const PointsFile>, Failure> load_valid_points(
    const Catalog& cat, const std::vector<std::string>& files) {
  auto pf = load_points(cat, files);
  if (!pf || (*pf)->rejected.empty()) return pf;
  Diagnostics all;
  for (const auto& r : (*pf)->rejected) all.insert(all.end(), r.problems.begin(), r.problems.end());
  return std::unexpected(Failure::input(all, joined(files)));
}

// Fit options simulating in worker processes; empty params and zero counts keep the defaults.
calib::FitOptions fit_options(const Catalog& cat, const std::vector<std::string>& params,
                              int iterations, int rounds, const JobOptions& job) {
  calib::FitOptions opt;
  if (!params.empty()) opt.params = params;
  opt.simulate = [&cat, job](const std::vector<sim::PointSpec>& specs) {
    return simulate_in_workers(cat, specs, job);
  };
  if (iterations > 0) opt.max_iterations = iterations;
  if (rounds > 0) opt.rounds = rounds;
  return opt;
}

Json workload_json(const InferenceXWorkload& w) {
  Json j{{"isl", w.isl}, {"osl", w.osl}, {"range_ratio", w.range_ratio}, {"mtp", w.mtp}};
  if (w.precision) j["precision"] = *w.precision;
  return j;
}

std::string today_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace

std::string efficiency_origins(const std::map<std::string, std::string>& origins) {
  std::string out;
  for (const auto& [s, o] : origins) out += (out.empty() ? "" : ", ") + s + " " + o;
  return out;
}

std::string efficiency_origins(const Catalog& cat, const std::vector<ReferencePoint>& points) {
  std::map<std::string, std::string> origin;
  for (const auto& p : points)
    if (auto c = cat.efficiency_for(p.system)) origin[p.system] = c->origin;
  return efficiency_origins(origin);
}

void SweepChoice::apply(calib::PredictOptions& opt) const {
  if (!replica_xpus.empty()) opt.replica_xpus = replica_xpus;
  if (!concurrency.empty()) {
    opt.concurrency = concurrency;
    opt.multinode_concurrency = false;
    opt.recipes = false;
  }
  if (!serving.empty()) {
    opt.recipes = false;
    opt.aggregated = false;
    opt.disaggregated.clear();
    for (const auto& label : serving) {
      const auto m = parse_serving_mode(label);
      if (!m) continue;  // checked on the command line
      if (m->disaggregated())
        opt.disaggregated.push_back(*m);
      else
        opt.aggregated = true;
    }
  }
}

std::string SweepChoice::describe() const {
  std::string out;
  if (!concurrency.empty()) out = fmt::format("clients {}", fmt::join(concurrency, ","));
  if (!replica_xpus.empty())
    out +=
        fmt::format("{}replicas of {} XPUs", out.empty() ? "" : "; ", fmt::join(replica_xpus, ","));
  if (!serving.empty())
    out += fmt::format("{}serving {}", out.empty() ? "" : "; ", fmt::join(serving, ","));
  return out;
}

int Validation::exit_code() const {
  return !points->rejected.empty() ? 2 : summary.failed > 0 ? 1 : 0;
}

std::vector<std::string> power_unmeasured(const Catalog& cat, const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  for (const auto& id : ids)
    if (const System* s = cat.find_system(id); s && s->chip && !s->chip->sustained_power)
      out.push_back(id);
  return out;
}

std::expected<Validation, Failure> validate_points(const Catalog& cat, const ValidateRequest& rq) {
  auto pf = load_points(cat, rq.points_files);
  if (!pf) return std::unexpected(pf.error());
  Validation v;
  v.points = *pf;
  calib::PredictOptions opt;
  if (rq.seed) opt.seed = *rq.seed;
  rq.sweep.apply(opt);
  v.seed = opt.seed;
  v.sweep = rq.sweep.describe();
  const auto plan = calib::plan_predictions(cat, v.points->points, opt);
  auto results = simulate_in_workers(cat, plan.specs, rq.job);
  if (!results) return std::unexpected(Failure::of(Failure::Kind::runtime, results.error()));
  v.predictions = calib::predictions(v.points->points, plan, *results);
  v.summary = calib::summarise_errors(v.predictions);
  v.power = calib::power_checks(plan, *results);
  for (auto& c : v.power)
    if (auto it = cat.calibrated.find(c.system); it != cat.calibrated.end())
      c.share_fitted = it->second.power && it->second.power->stale.empty();
  for (const auto& q : v.points->points)
    if (auto c = cat.efficiency_for(q.system)) v.origins[q.system] = c->origin;
  std::vector<std::string> ids;
  for (const auto& [id, origin] : v.origins) ids.push_back(id);
  v.power_unmeasured = power_unmeasured(cat, ids);
  return v;
}

Json Validation::to_json() const {
  Json pts = Json::array();
  for (const auto& r : points->rejected) {
    Json msgs = Json::array();
    for (const auto& d : r.problems) msgs.push_back(d.to_string());
    pts.push_back(
        {{"id", r.id}, {"status", "rejected"}, {"line", r.where.line}, {"messages", msgs}});
  }
  for (const auto& p : predictions) {
    const ReferencePoint& q = *p.point;
    Json j{{"id", q.id},
           {"status", p.predicted ? "ok" : "failed"},
           {"line", q.where.line},
           {"system", q.system},
           {"model", q.model},
           {"workload", workload_json(q.workload)},
           {"metric", to_string(q.metric)},
           {"at", q.at ? Json(*q.at) : Json(nullptr)},
           {"published", q.value},
           {"predicted", p.predicted ? Json(*p.predicted) : Json(nullptr)},
           {"error_pct", p.predicted ? Json(p.error_pct) : Json(nullptr)},
           {"decided_by", p.decided_by.empty() ? Json(nullptr) : Json(p.decided_by)}};
    if (!p.predicted) j["messages"] = Json::array({p.error});
    pts.push_back(j);
  }
  Json checks = Json::array();
  for (const auto& c : power)
    checks.push_back({{"system", c.system},
                      {"model", c.model},
                      {"workload", c.workload_id},
                      {"measured_sustained_w", c.measured_w},
                      {"peak_throughput_xpu_w", c.peak_w},
                      {"peak_throughput_tps_per_xpu", c.peak_tps},
                      {"peak_throughput_layout", c.peak_layout},
                      {"highest_xpu_w", c.highest_w},
                      {"xpu_busy_share", c.busy_share},
                      {"xpu_busy_share_fitted", c.share_fitted},
                      {"holds", c.holds()}});
  const int rejected = static_cast<int>(points->rejected.size());
  return Json{{"racktwin", kVersion},
              {"commit", kGitCommit},
              {"file", points->file},
              {"points_hash", points->hash},
              {"seed", seed},
              {"sweep", sweep.empty() ? Json("default") : Json(sweep)},
              {"efficiency", origins},
              {"points", pts},
              {"power", checks},
              {"power_unmeasured", power_unmeasured},
              {"summary",
               {{"points", static_cast<int>(points->points.size()) + rejected},
                {"predicted", summary.predicted},
                {"failed", summary.failed},
                {"rejected", rejected},
                {"median_abs_error_pct", summary.median_abs_pct},
                {"max_abs_error_pct", summary.max_abs_pct}}}};
}

std::expected<Calibration, Failure> calibrate_points(const Catalog& cat,
                                                     const CalibrateRequest& rq) {
  auto pf = load_valid_points(cat, rq.points_files);
  if (!pf) return std::unexpected(pf.error());
  calib::FitOptions opt = fit_options(cat, rq.params, rq.iterations, rq.rounds, rq.job);
  opt.systems = rq.systems;
  rq.sweep.apply(opt.predict);
  opt.progress = rq.progress;
  auto fit = calib::calibrate(cat, (*pf)->points, opt);
  if (!fit) return std::unexpected(Failure::of(Failure::Kind::input, fit.error()));

  Calibration c;
  c.points = *pf;
  c.params = opt.params;
  CalibrationRecord rec;
  rec.points_file = joined(rq.points_files);
  rec.points_hash = (*pf)->hash;
  rec.date = today_utc();
  rec.command = rq.command;
  c.file = calib::assemble(cat, *fit, fit->final, rec);
  c.fit = std::move(*fit);
  std::vector<std::string> fitted;
  for (const auto& s : c.fit.systems) fitted.push_back(s.system);
  c.power_unmeasured = power_unmeasured(cat, fitted);
  for (const auto& f : c.file.families)
    for (const auto& [sid, sys] : cat.systems) {
      const EfficiencyPrior* p = cat.efficiency_prior_for(sid);
      const bool own_fit = std::any_of(c.fit.systems.begin(), c.fit.systems.end(),
                                       [&](const calib::SystemFit& s) { return s.system == sid; });
      if (p != nullptr && p->id == f.id && !own_fit) c.family_users[f.id].push_back(sid);
    }
  c.written = rq.out;
  if (c.written.empty()) {
    if (cat.files.empty())
      return std::unexpected(
          Failure::of(Failure::Kind::input, "no catalog directory; give --out FILE"));
    c.written =
        (std::filesystem::path(cat.files.front()).parent_path() / "calibration.yaml").string();
  }
  if (auto w = write_file_atomically(c.written, calib::calibration_yaml(c.file)); !w)
    return std::unexpected(Failure::of(Failure::Kind::runtime, w.error()));
  return c;
}

std::expected<CrossValidations, Failure> crossval_points(const Catalog& cat,
                                                         const CrossvalRequest& rq) {
  auto pf = load_valid_points(cat, rq.points_files);
  if (!pf) return std::unexpected(pf.error());
  calib::FitOptions opt = fit_options(cat, rq.params, rq.iterations, rq.rounds, rq.job);
  rq.sweep.apply(opt.predict);
  opt.progress = rq.progress;
  CrossValidations out;
  out.points = *pf;
  const std::vector<calib::HoldOut> by =
      rq.by.empty()
          ? std::vector{calib::HoldOut::system, calib::HoldOut::model, calib::HoldOut::shape}
          : rq.by;
  for (calib::HoldOut h : by) {
    if (rq.progress) rq.progress("leave one " + calib::to_string(h) + " out");
    auto cv = calib::cross_validate(cat, (*pf)->points, h, opt);
    if (!cv) return std::unexpected(Failure::of(Failure::Kind::input, cv.error()));
    out.runs.push_back(std::move(*cv));
  }
  return out;
}

}  // namespace racktwin::app
