#include "app/rehearse.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "app/locations.hpp"
#include "plan/throughput.hpp"
#include "racktwin/version.hpp"
#include "sim/serving.hpp"
#include "scenarios/rehearsal_loader.hpp"
#include "topology/queries.hpp"
#include "topology/topology.hpp"

namespace racktwin::app {
namespace {

Failure input_failure(const SourceLocation& where, std::string path, std::string message,
                      std::string hint) {
  return Failure::input({Diagnostic{where, std::move(path), std::move(message), std::move(hint)}},
                        where.file);
}

PlanWorkload as_workload(const RehearsalServing& s) {
  PlanWorkload w;
  w.scenario = s.scenario;
  w.workload = s.workload;
  w.model = s.model;
  w.tpot_p50 = s.tpot_p50;
  w.tpot_p99 = s.tpot_p99;
  w.ttft_p99 = s.ttft_p99;
  w.where = s.where;
  return w;
}

// The serving unit of a point: one replica, or with disaggregated serving one group of its
// prefill and decode replicas, each pool of its own replica size.
void unit_of(const sim::PointSpec& p, rehearse::Surrogate& s) {
  s.replica_xpus = p.layout.xpus();
  s.pools.clear();
  if (const int prefill = p.prefill_replicas.value_or(0); prefill > 0) {
    const int prefill_xpus = sim::prefill_replica_xpus(p);
    s.pools = {{prefill_xpus, prefill}, {p.layout.xpus(), p.replicas}};
  }
}

// The figures per unit from the sweep's points of the configuration (layout and serving mode)
// that serves best at the target.
rehearse::Surrogate surrogate_of(const std::vector<sim::PointResult>& results,
                                 const plan::ServicePoint& best, const std::string& system,
                                 const PlanWorkload& w) {
  const auto& chosen = results[best.index];
  rehearse::Surrogate s;
  unit_of(chosen.spec, s);
  const double unit_xpus = s.unit_xpus();
  s.tps_at_target = best.tps_per_xpu * unit_xpus;
  const std::string configuration = sim::configuration_label(chosen.spec);
  for (const auto& r : results) {
    if (!r.error.empty() || r.requests == 0 || r.spec.system == nullptr || r.spec.model == nullptr ||
        r.spec.system->id != system || r.spec.model->id != w.model ||
        r.spec.workload_id != w.workload || sim::configuration_label(r.spec) != configuration)
      continue;
    const double tps = r.total_tps_per_xpu * unit_xpus;
    s.tps_saturated = std::max(s.tps_saturated, tps);
    s.curve.push_back({tps, r.ttft.p99, r.tpot.p99});
  }
  std::sort(s.curve.begin(), s.curve.end(), [](auto& a, auto& b) { return a.tps < b.tps; });
  // Keep the rising envelope: past saturation a point with less throughput adds only queueing.
  std::vector<rehearse::Surrogate::Point> rising;
  for (const auto& p : s.curve)
    if (rising.empty() || p.tps > rising.back().tps) rising.push_back(p);
  s.curve = std::move(rising);
  s.tps_saturated = std::max(s.tps_saturated, s.tps_at_target);
  return s;
}

std::expected<void, Failure> serving_figures(const Catalog& cat, const RehearseRequest& rq,
                                             const RehearseHooks& hooks, RehearsalOutcome& o) {
  const auto& sv = *o.rehearsal.serving;
  if (sv.tps_per_replica) {
    o.surrogate.replica_xpus = sv.replica_xpus;
    o.surrogate.tps_at_target = o.surrogate.tps_saturated = sv.tps_per_replica->value;
    o.surrogate_note = "given in the file";
    o.layout = std::to_string(sv.replica_xpus) + " XPUs";
    return {};
  }
  RunRequest r;
  r.scenario_file = sv.scenario;
  r.db = rq.db;
  r.reuse_finished = !rq.fresh;
  r.job = rq.job;
  RunHooks h;
  h.note = hooks.note;
  h.cancel = hooks.cancel;
  h.progress = hooks.progress;
  auto run = run_scenario(cat, r, h);
  if (!run) return std::unexpected(run.error());
  const PlanWorkload w = as_workload(sv);
  auto best = plan::best_at_target(run->results, o.rehearsal.system, w);
  if (!best)
    return std::unexpected(input_failure(sv.where, "serving", best.error(),
                                         "relax the target, or widen the scenario's sweep"));
  o.db_path = run->db_path;
  o.run_id = run->run_id;
  o.layout = best->layout;
  o.serving_point = run->results[best->index].spec;
  o.surrogate = surrogate_of(run->results, *best, o.rehearsal.system, w);
  o.surrogate_note = (run->reused ? "taken from run " : "simulated as run ") +
                     std::to_string(run->run_id) + " of " + sv.scenario;
  return {};
}

rehearse::EngineInput engine_input(const Rehearsal& r, const topology::Topology& t,
                                   std::uint64_t seed) {
  rehearse::EngineInput in;
  in.domain = &t;
  in.domains = r.domains;
  in.horizon = r.horizon;
  in.sample_every = r.sample_every;
  in.seed = seed;
  in.classes = r.classes;
  in.repair = r.repair;
  return in;
}

// The load, in replicas at the target, that leaves `spare` racks' replicas of the site spare.
double offered_replicas(const RehearsalOutcome& o, int spare) {
  return std::max(0.0, o.outcome.replicas_total - spare * o.replicas_per_rack);
}

void search_spares(RehearsalOutcome& o) {
  const int racks = o.racks;
  for (int s = 0; s < racks; ++s) {
    const double offered = offered_replicas(o, s);
    const auto a = rehearse::at_load(o.outcome, o.surrogate, offered);
    o.search_curve.push_back({s, offered, a.attainment, a.tokens_lost_share});
    if (a.attainment >= o.rehearsal.attainment_goal) {
      o.spare_needed = s;
      break;
    }
  }
  // The table: no spare, powers of two below the answer, and the answer with the load before it.
  const int n = static_cast<int>(o.search_curve.size());
  for (int i = 0; i < n; ++i)
    if (i == 0 || (i & (i - 1)) == 0 || i >= n - 2) o.search.push_back(o.search_curve[static_cast<std::size_t>(i)]);
}

std::expected<void, Failure> rehearse_serving(const Catalog& cat, const RehearseRequest& rq,
                                              const RehearseHooks& hooks, const topology::Topology& t,
                                              RehearsalOutcome& o) {
  if (auto s = serving_figures(cat, rq, hooks, o); !s) return s;
  const System& sys = *cat.find_system(o.rehearsal.system);
  const int total = rehearse::units_placed(t, o.surrogate, o.rehearsal.domains);
  o.racks = static_cast<int>(std::ceil(static_cast<double>(t.xpus().size()) * o.rehearsal.domains /
                                       sys.xpus_per_rack()));
  o.replicas_per_rack = static_cast<double>(total) / o.racks;
  if (o.rehearsal.spare_racks >= o.racks)
    return std::unexpected(input_failure(
        SourceLocation{o.rehearsal.file, 1, 1}, "spare_capacity.racks",
        "the site has " + std::to_string(o.racks) + " racks: no rack is left to serve",
        "hold fewer racks spare"));
  auto in = engine_input(o.rehearsal, t, o.seed);
  in.surrogate = o.surrogate;
  in.offered_replicas = std::max(0.0, total - o.rehearsal.spare_racks * o.replicas_per_rack);
  o.outcome = rehearse::run_engine(in);
  search_spares(o);
  return {};
}

JobCurvePoint rehearse_job_size(const topology::Topology& t, RehearsalOutcome& o, int size,
                                bool keep_first) {
  const int reps = o.rehearsal.jobs->replications;
  JobCurvePoint p{size, 0, reps, 0, INFINITY, 0, 0, {}};
  std::vector<double> by(kAllPartClasses.size(), 0.0);
  double running = 0, total = 0;
  for (int i = 0; i < reps; ++i) {
    auto in = engine_input(o.rehearsal, t, i == 0 ? o.seed : sim::stream_seed(o.seed, "replication/" + std::to_string(i)));
    in.serving = false;
    in.job_xpus = size;
    auto e = rehearse::run_engine(in);
    p.jobs = e.jobs.jobs;
    const double n = static_cast<double>(e.jobs.interruptions);
    total += n;
    running += e.jobs.running_s;
    p.interruptions_lo = std::min(p.interruptions_lo, n);
    p.interruptions_hi = std::max(p.interruptions_hi, n);
    for (std::size_t c = 0; c < by.size(); ++c) by[c] += e.classes[c].interruptions;
    if (keep_first && i == 0) o.outcome = std::move(e);
  }
  p.interruptions = total / reps;
  p.mttf_h = total > 0 ? running / total / 3600.0 : 0;
  for (std::size_t c = 0; c < by.size(); ++c)
    p.by_class.emplace_back(to_string(kAllPartClasses[c]), by[c] / reps);
  return p;
}

void rehearse_jobs(const topology::Topology& t, const RehearseHooks& hooks, RehearsalOutcome& o) {
  const auto& sizes = o.rehearsal.jobs->sizes;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (hooks.cancel != nullptr && hooks.cancel->load()) break;
    o.jobs.push_back(rehearse_job_size(t, o, sizes[i], i == 0));
    if (hooks.progress) hooks.progress(static_cast<double>(i + 1) / static_cast<double>(sizes.size()));
  }
}

std::string where_of(const FigureOrigin& f) {
  return f.kind == FigureOrigin::Kind::plan ? f.where.file + ":" + std::to_string(f.where.line)
                                            : "default";
}

// Times as people say them (3 h, 7 days), other figures with their unit.
std::string figure_text(double v, const Dimension& d) {
  if (d != Seconds::kDimension || v < 60) return format_quantity(v, d);
  char buf[64];
  const double days = v / 86400, hours = v / 3600;
  if (days >= 1 && std::abs(days - std::round(days)) < 1e-9)
    std::snprintf(buf, sizeof buf, "%g days", days);
  else if (hours >= 1)
    std::snprintf(buf, sizeof buf, "%g h", hours);
  else
    std::snprintf(buf, sizeof buf, "%g min", v / 60);
  return buf;
}

void add_figure(RehearsalOutcome& o, std::string what, const Figure& f, const Dimension& d) {
  o.figures.push_back({std::move(what), figure_text(f.value, d), where_of(f.origin),
                       f.origin.assumption, f.origin.reason, f.origin.source});
}

void collect_figures(RehearsalOutcome& o) {
  const auto& r = o.rehearsal;
  for (const auto& c : r.classes) {
    add_figure(o, "failures." + to_string(c.part) + ".rate (per part-hour)", c.rate, Dimension{});
    add_figure(o, "failures." + to_string(c.part) + ".shape", c.shape, Dimension{});
  }
  if (r.rate_scale) add_figure(o, "failures.scale (rates below include it)", *r.rate_scale, Dimension{});
  if (r.serving && r.serving->tps_per_replica)
    add_figure(o, "serving.tps_per_replica", *r.serving->tps_per_replica, TokensPerSecond::kDimension);
  const auto& p = r.repair;
  add_figure(o, "repair.restart", p.restart, Seconds::kDimension);
  if (r.jobs) return;  // a job restarts on hot spares: no swap, spare or technician delays it
  add_figure(o, "repair.reschedule", p.reschedule, Seconds::kDimension);
  add_figure(o, "repair.swap", p.swap, Seconds::kDimension);
  add_figure(o, "repair.vendor_return", p.vendor_return, Seconds::kDimension);
  add_figure(o, "repair.feed_repair", p.feed_repair, Seconds::kDimension);
  add_figure(o, "repair.technicians", Figure{static_cast<double>(p.technicians), p.technicians_origin},
             Dimension{});
  for (std::size_t c = 0; c < kAllPartClasses.size(); ++c) {
    if (r.classes[c].tier != RepairTier::swap || r.jobs) continue;
    const auto& s = p.spares[c];
    o.figures.push_back({"repair.spares." + to_string(kAllPartClasses[c]),
                         s.share ? format_quantity(s.value * 100, Dimension{}) + "% of the units"
                                 : std::to_string(static_cast<long long>(s.value)),
                         where_of(s.origin), s.origin.assumption, s.origin.reason, s.origin.source});
  }
}

}  // namespace

std::expected<RehearsalOutcome, Failure> rehearse_file(const Catalog& cat,
                                                       const RehearseRequest& rq,
                                                       const RehearseHooks& hooks) {
  auto loaded = load_rehearsal_file(rq.file, cat);
  if (!loaded) return std::unexpected(Failure::input(loaded.error(), rq.file));
  RehearsalOutcome o;
  o.rehearsal = std::move(*loaded);
  o.seed = rq.seed.value_or(o.rehearsal.seed);
  collect_figures(o);
  const System& sys = *cat.find_system(o.rehearsal.system);
  try {
    const auto t = topology::build(sys, 1);
    if (o.rehearsal.serving) {
      if (auto s = rehearse_serving(cat, rq, hooks, t, o); !s) return std::unexpected(s.error());
    } else {
      rehearse_jobs(t, hooks, o);
    }
  } catch (const InputError& e) {
    Diagnostics d = e.diagnostics();
    for (auto& x : d)
      if (x.where.file.empty()) x.where = SourceLocation{rq.file, 1, 1};
    return std::unexpected(Failure::input(std::move(d), rq.file));
  }
  return o;
}

}  // namespace racktwin::app
