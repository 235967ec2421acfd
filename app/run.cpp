#include "app/run.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "app/locations.hpp"
#include "calib/predict.hpp"
#include "core/atomic_file.hpp"
#include "core/perf/memory.hpp"
#include "db/codec.hpp"
#include "db/provenance.hpp"
#include "db/store.hpp"
#include "power/power_model.hpp"
#include "racktwin/version.hpp"
#include "scenarios/points_loader.hpp"
#include "scenarios/scenario_loader.hpp"

namespace racktwin::app {
namespace {

RunError runtime_error(std::string message, std::optional<std::int64_t> run = std::nullopt) {
  RunError e = RunError::of(RunError::Kind::runtime, std::move(message));
  e.run_id = run;
  return e;
}

// Where the systems' efficiency parameters come from.
std::string efficiency_note(const Catalog& cat, const std::vector<std::string>& systems) {
  std::string origins;
  bool calibrated = false;
  for (const auto& sid : systems) {
    auto c = cat.efficiency_for(sid);
    if (!c) continue;
    calibrated = calibrated || c->origin.rfind("prior", 0) != 0;
    origins += (origins.empty() ? "" : ", ") + sid + " " + c->origin;
  }
  if (!calibrated || !cat.calibration)
    return "Efficiencies are uncalibrated priors; the numbers show the model's shape, not yet "
           "published values.";
  return "Efficiencies: " + origins + " (fitted to " + cat.calibration->points_file + ", " +
         cat.calibration->points_hash + ", on " + cat.calibration->date + "; docs/validation.md)";
}

// The reference points of one model and workload beside the twin's figures for them, with both
// sides' ratios to the scenario's first system.
std::vector<PublishedRow> published_rows(const Catalog& cat, const Scenario& sc, const Workload& w,
                                         const std::string& mid, const PointsFile& ref,
                                         const calib::SweepTables& tables) {
  std::vector<PublishedRow> rows;
  if (w.kind != WorkloadKind::inferencex) return rows;
  const Model& m = *cat.find_model(mid);
  const std::string baseline = sc.systems.front();
  for (Metric metric : {Metric::peak_mixed_tps_per_kw_rated, Metric::peak_total_tps_per_xpu,
                        Metric::min_tbt_ms, Metric::min_e2e_latency_s}) {
    std::map<std::string, const ReferencePoint*> pts;
    for (const auto& p : ref.points) {
      const System* s = cat.find_system(p.system);
      if (p.metric != metric || p.model != mid || s == nullptr ||
          std::find(sc.systems.begin(), sc.systems.end(), p.system) == sc.systems.end())
        continue;
      if (calib::describes(p.workload, w.inferencex, perf::best_precision(m, *s, cat)))
        pts.emplace(p.system, &p);
    }
    if (pts.empty()) continue;
    auto twin = [&](const ReferencePoint& p) -> std::optional<double> {
      auto v = calib::metric_value(p, w.id, tables);
      return v ? std::optional<double>(*v) : std::nullopt;
    };
    const ReferencePoint* base = pts.contains(baseline) ? pts.at(baseline) : nullptr;
    const double base_twin = base ? twin(*base).value_or(0.0) : 0.0;
    for (const auto& sid : sc.systems) {
      if (!pts.contains(sid)) continue;
      const ReferencePoint& p = *pts.at(sid);
      PublishedRow r{to_string(metric), sid, p.id, twin(p), p.value, {}, {}};
      if (r.twin && base_twin > 0) r.twin_ratio = *r.twin / base_twin;
      if (base) r.published_ratio = p.value / base->value;
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

db::RunInfo run_info(const Catalog& cat, const Scenario& sc, const RunRequest& rq,
                     std::uint64_t seed, const std::vector<sim::PointSpec>& specs) {
  db::RunInfo info;
  info.scenario_name = sc.name;
  info.scenario_file = rq.scenario_file;
  info.scenario_text = sc.text;
  info.scenario_hash = db::content_hash(info.scenario_text);
  info.seed = seed;
  info.version = kVersion;
  info.commit = kGitCommit;
  info.catalog_hash = db::catalog_hash(cat);
  info.calibration_hash = db::calibration_hash(specs);
  info.options = Json{{"fuse", rq.fuse}}.dump();
  return info;
}

std::optional<double> ratio(double x, double y) {
  return y > 0 ? std::optional<double>(x / y) : std::nullopt;
}

// Whole units of the system within the IT budget, at their provisioned power.
std::optional<BudgetFit> budget_fit(const Catalog& cat, const std::string& system, Watts budget,
                                    const sim::SweepSummary& best) {
  const System* s = cat.find_system(system);
  if (s == nullptr) return std::nullopt;
  auto pm = power::PowerModel::of(*s);
  if (!pm) return std::nullopt;
  BudgetFit f;
  f.unit = pm->separate_host_rack() ? "rack pair" : "rack";
  const double unit_w = pm->provisioned_per_xpu().value() * s->xpus_per_rack();
  f.units = std::floor(budget.value() / unit_w);
  f.xpus = f.units * s->xpus_per_rack();
  f.it_w = f.units * unit_w;
  f.tps = f.xpus * best.peak_tps;
  return f;
}

// An overloaded point: its layout, its load and how fast its queue grows.
std::string overload_text(const sim::PointResult& p) {
  const auto rate = sim::rate_of(p.spec.arrivals);
  return fmt::format("{} at {} ({:.0f}% of arrivals left in flight)", p.spec.layout.label(),
                     rate ? fmt::format("{:g} req/s", *rate) : std::string("the trace's arrivals"),
                     100 * p.queue_growth);
}

// The group's failures and overloaded points.
void add_failures(const std::vector<sim::PointResult>& results, SummaryRow& row) {
  double recovery = 0;
  int with = 0;
  for (const auto& p : results) {
    if (p.spec.system == nullptr || p.spec.model == nullptr || p.spec.system->id != row.system ||
        p.spec.model->id != row.model || p.spec.workload_id != row.workload)
      continue;
    row.retried_requests += p.retried_requests;
    row.replica_down_s += p.replica_down_s;
    if (p.overloaded) row.overloaded.push_back(overload_text(p));
    if (p.recovery_s > 0) {
      recovery += p.recovery_s;
      ++with;
    }
  }
  if (with > 0) row.recovery_s = recovery / with;
}

std::vector<SummaryRow> summary_rows(const RunOutcome& o) {
  std::vector<SummaryRow> rows;
  for (const auto& wid : o.workload_ids)
    for (const auto& mid : o.models) {
      const auto base = o.summary.find({wid, mid, o.systems.front()});
      for (const auto& sid : o.systems) {
        SummaryRow r;
        r.workload = wid;
        r.model = mid;
        r.system = sid;
        const auto it = o.summary.find({wid, mid, sid});
        if (it != o.summary.end() && it->second.points > 0) r.best = it->second;
        if (it != o.summary.end()) r.failed = it->second.failed;
        add_failures(o.results, r);
        if (r.best && base != o.summary.end()) {
          r.rated_kw_ratio = ratio(r.best->peak_rated_kw, base->second.peak_rated_kw);
          r.min_e2e_ratio = ratio(r.best->min_e2e, base->second.min_e2e);
        }
        rows.push_back(std::move(r));
      }
    }
  return rows;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

namespace {

// A run recorded in the database, so that an exception after it began can mark it failed.
struct BegunRun {
  std::string db_path;
  std::int64_t id = 0;
  std::chrono::steady_clock::time_point start;
};

// Marks a begun run failed with `why`; best effort, the database may be what failed.
void mark_failed(const BegunRun& run, const std::string& why) {
  try {
    if (auto store = db::Store::open(run.db_path, db::Store::Mode::create))
      store->finish_run(run.id, seconds_since(run.start), why);
  } catch (const std::exception&) {
  }
}

// Points the results database could not store (the disk full, an I/O error, a lock held too long)
// are kept in a file of JSON lines (db/codec.hpp) so that no simulation is lost: beside the
// database, or in the temporary directory when that cannot be written either (it may be the same
// full disk). The same command resumes the run and stores them without simulating them again.
std::vector<std::string> kept_points_files(const std::string& db_path, std::int64_t run) {
  namespace fs = std::filesystem;
  const std::string name = "run" + std::to_string(run) + ".unstored.jsonl";
  std::error_code ec;
  const fs::path absolute = fs::absolute(db_path, ec);
  const std::string hash = db::content_hash(ec ? db_path : absolute.string());
  const fs::path tmp = fs::temp_directory_path(ec);
  return {db_path + "." + name,
          (tmp / ("racktwin-" + hash.substr(hash.find(':') + 1) + "-" + name)).string()};
}

// The first line of a kept file: the run its points belong to.
Json kept_header(const db::RunInfo& run) {
  return {{"unstored_points_of_run",
           {{"id", run.id}, {"scenario_hash", run.scenario_hash}, {"started_at", run.started_at}}}};
}

// Writes the points to the first of kept_points_files() that takes them whole: that file, or why
// none did.
std::expected<std::string, std::string> keep_points(const db::RunInfo& run,
                                                    const std::string& db_path,
                                                    const std::vector<db::StoredPoint>& points) {
  const auto line = [](const Json& j) {
    return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  };
  std::string text = line(kept_header(run));
  for (const auto& p : points) text += line(db::point_json(p));
  std::string why;
  for (const auto& f : kept_points_files(db_path, run.id)) {
    auto written = write_file_atomically(f, text);
    if (written) return f;
    why += (why.empty() ? "" : "; ") + written.error();
  }
  return std::unexpected(why);
}

// Stores the points an earlier attempt of `run` kept in a file (those of the sweep's `points` not
// in `done`, which gains them) and removes the file; a file of another run is left alone. Returns
// the files read, for the note.
std::vector<std::string> store_kept_points(db::Store& store, const db::RunInfo& run,
                                           const std::string& db_path, std::size_t points,
                                           std::set<std::int64_t>& done) {
  std::vector<std::string> read;
  for (const auto& f : kept_points_files(db_path, run.id)) {
    std::ifstream in(f, std::ios::binary);
    std::string line;
    if (!in || !std::getline(in, line)) continue;
    const auto header = Json::parse(line, nullptr, false);
    if (header.is_discarded() || header != kept_header(run)) continue;
    std::vector<db::StoredPoint> kept;
    while (std::getline(in, line)) {
      const auto j = Json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;
      auto p = db::point_from_json(j);
      if (!p || p->index < 0 || static_cast<std::size_t>(p->index) >= points ||
          !done.insert(p->index).second)
        continue;
      kept.push_back(std::move(*p));
    }
    if (!kept.empty()) store.add_stored(run.id, kept);
    std::error_code ec;
    std::filesystem::remove(f, ec);
    read.push_back(f);
  }
  return read;
}

// The error of a run whose database failed (`why`) with `unstored` points not stored: they are
// kept in a file when one can be written, and the run is marked failed when the database still
// takes that.
RunError not_stored(const BegunRun& begun, const db::RunInfo& run, std::size_t points,
                    const std::string& why, const std::vector<db::StoredPoint>& unstored,
                    const std::optional<std::string>& job_error) {
  std::string message = "the results database " + begun.db_path + " could not store " +
                        std::to_string(unstored.size()) + " of the " + std::to_string(points) +
                        " points of run " + std::to_string(begun.id) + " (" + why + ")";
  if (auto kept = keep_points(run, begun.db_path, unstored))
    message += "; they are kept in " + *kept + ": make room and run the same command, which " +
               "stores them in run " + std::to_string(begun.id) + " without simulating them again";
  else
    message += ", and no file could keep them (" + kept.error() +
               "): make room and run the same command to simulate them again";
  if (job_error) message += "; the simulation failed too: " + *job_error;
  mark_failed(begun, message);
  return runtime_error(message, begun.id);
}

std::expected<RunOutcome, RunError> run_stages(const Catalog& cat, const RunRequest& rq,
                                               const RunHooks& hooks,
                                               std::optional<BegunRun>& begun) {
  const auto start = std::chrono::steady_clock::now();
  auto sc = load_scenario_file(rq.scenario_file, cat);
  if (!sc) return std::unexpected(RunError::input(sc.error(), rq.scenario_file));
  std::optional<PointsFile> reference;
  if (sc->reference) {
    auto pf = load_points_file(*sc->reference, cat);
    if (!pf) return std::unexpected(RunError::input(pf.error(), *sc->reference));
    reference = std::move(*pf);
  }
  RunOutcome out;
  out.seed = rq.seed.value_or(sc->seed);
  sim::SweepOptions so;
  so.seed = out.seed;
  auto specs = sim::build_sweep(cat, *sc, so);
  if (!specs) {
    return std::unexpected(RunError::of(RunError::Kind::input, specs.error()));
  }
  if (auto too_many = sweep_limit_problem(*sc, specs->size()))
    return std::unexpected(RunError::input({*too_many}, rq.scenario_file));
  out.db_path = db_path(rq.db, sc->output.db);
  auto store = db::Store::open(out.db_path, db::Store::Mode::create);
  if (!store) {
    return std::unexpected(RunError::of(RunError::Kind::input, store.error()));
  }
  const db::RunInfo info = run_info(cat, *sc, rq, out.seed, *specs);
  std::set<std::int64_t> done;
  std::optional<std::int64_t> finished =
      rq.reuse_finished ? store->find_finished(info) : std::nullopt;
  std::optional<std::int64_t> old =
      rq.resume && !finished ? store->find_resumable(info) : std::nullopt;
  if (finished) {
    out.run_id = *finished;
    out.reused = true;
    for (auto i : store->point_indices(out.run_id)) done.insert(i);
  } else if (old) {
    out.run_id = *old;
    store->reopen_run(out.run_id);
    for (auto i : store->point_indices(out.run_id)) done.insert(i);
    if (auto run = store->info(out.run_id))
      for (const auto& f : store_kept_points(*store, *run, out.db_path, specs->size(), done))
        if (hooks.note)
          hooks.note("run " + std::to_string(out.run_id) +
                     ": stored the points the database could not take before, from " + f);
  } else {
    out.run_id = store->begin_run(info, db::assumptions_of(cat, *specs));
  }
  begun = BegunRun{out.db_path, out.run_id, start};
  const db::RunInfo record = store->info(out.run_id).value_or(info);

  JobOptions jo = rq.job;
  jo.fuse = rq.fuse;
  if (jo.cancel == nullptr) jo.cancel = hooks.cancel;
  SimJob job(cat, *specs, jo);
  job.skip(done);
  out.simulated = job.points_to_simulate();
  out.resumed = specs->size() - out.simulated;
  if (old && hooks.note)
    hooks.note("resuming run " + std::to_string(out.run_id) + ": " + std::to_string(out.resumed) +
               " of " + std::to_string(specs->size()) + " points already stored, simulating " +
               std::to_string(out.simulated));
  // Each group's points as it finishes. Once the database fails, the points are kept in memory
  // and the simulation goes on, so that every simulated point reaches a file (not_stored()).
  std::vector<db::StoredPoint> unstored;
  std::string store_failure;
  auto store_group = [&](std::vector<db::StoredPoint> pts) {
    if (store_failure.empty()) {
      try {
        store->add_stored(out.run_id, pts);
        return;
      } catch (const std::exception& e) {
        store_failure = e.what();
      }
    }
    std::move(pts.begin(), pts.end(), std::back_inserter(unstored));
  };
  auto ran = job.run({store_group, hooks.progress});
  if (!store_failure.empty())
    return std::unexpected(not_stored(*begun, record, specs->size(), store_failure, unstored,
                                      ran ? std::nullopt : std::optional(ran.error())));
  if (!ran) {
    if (!finished) store->finish_run(out.run_id, seconds_since(start), ran.error());
    return std::unexpected(runtime_error(ran.error(), out.run_id));
  }
  // Every point, from the database.
  const auto stored = store->load(out.run_id, {.percentiles = true, .timeseries = true});
  if (!stored || stored->points.size() != specs->size()) {
    const std::string why =
        "the database holds " + std::to_string(stored ? stored->points.size() : 0) + " of the " +
        std::to_string(specs->size()) + " points of run " + std::to_string(out.run_id);
    if (!finished) store->finish_run(out.run_id, seconds_since(start), why);
    return std::unexpected(runtime_error(why, out.run_id));
  }
  for (const auto& p : stored->points)
    out.results.push_back(db::to_result(p, (*specs)[static_cast<std::size_t>(p.index)]));
  if (!finished) store->finish_run(out.run_id, seconds_since(start));

  out.scenario_name = sc->name;
  out.scenario_file = rq.scenario_file;
  out.systems = sc->systems;
  out.models = sc->models;
  for (const auto& w : sc->workloads) out.workload_ids.push_back(w.id);
  out.plots_dir = sc->output.plots;
  out.summary = sim::summarise(out.results);
  out.rows = summary_rows(out);
  if (sc->facility.power_budget) {
    out.power_budget_w = sc->facility.power_budget->value();
    for (auto& r : out.rows)
      if (r.best) r.budget = budget_fit(cat, r.system, *sc->facility.power_budget, *r.best);
  }
  out.efficiency_note = efficiency_note(cat, sc->systems);
  for (const auto& r : out.results) out.failed_points += r.error.empty() ? 0 : 1;
  if (reference) {
    out.reference_file = reference->file;
    const calib::SweepTables tables(out.results);
    for (const auto& w : sc->workloads)
      for (const auto& mid : sc->models)
        out.published[{w.id, mid}] = published_rows(cat, *sc, w, mid, *reference, tables);
  }
  return out;
}

}  // namespace

std::expected<RunOutcome, RunError> run_scenario(const Catalog& cat, const RunRequest& rq,
                                                 const RunHooks& hooks) {
  std::optional<BegunRun> begun;
  try {
    return run_stages(cat, rq, hooks, begun);
  } catch (const std::exception& e) {  // out of memory, the database failed (locked, disk full)
    // A begun run is marked failed with the reason; left running, it would list as "incomplete".
    if (begun) mark_failed(*begun, e.what());
    return std::unexpected(
        runtime_error(e.what(), begun ? std::optional<std::int64_t>(begun->id) : std::nullopt));
  }
}

Json RunOutcome::to_json(bool timeseries) const {
  Json pts = Json::array();
  for (std::size_t i = 0; i < results.size(); ++i)
    pts.push_back(db::point_json(db::stored_point(results[i], static_cast<std::int64_t>(i)),
                                 {.percentiles = false, .timeseries = timeseries}));
  // The Pareto envelope of total tokens/s per XPU against interactivity, per system, model and
  // workload, over layouts and loads.
  Json envs = Json::array();
  for (const auto& [key, curve] : sim::envelopes(results, sim::CurveValue::total_tps_per_xpu)) {
    Json e = Json::array();
    for (const auto& c : curve)
      e.push_back({{"interactivity_tok_s_user", c.interactivity},
                   {"total_tps_per_xpu", c.value},
                   {"layout", results[c.index].spec.layout.label()},
                   {"concurrency", sim::clients_of(results[c.index].spec.arrivals).value_or(0)},
                   {"rate_req_s", sim::rate_of(results[c.index].spec.arrivals).value_or(0.0)}});
    envs.push_back({{"system", std::get<0>(key)},
                    {"model", std::get<1>(key)},
                    {"workload", std::get<2>(key)},
                    {"envelope", e}});
  }
  return Json{{"racktwin", kVersion},  {"commit", kGitCommit}, {"scenario", scenario_name},
              {"file", scenario_file}, {"seed", seed},         {"points", pts},
              {"pareto", envs}};
}

}  // namespace racktwin::app
