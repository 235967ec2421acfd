#include "calib/predict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/perf/memory.hpp"
#include "core/perf/step.hpp"

namespace racktwin::calib {

std::string workload_id(const InferenceXWorkload& w) {
  char rr[32];
  std::snprintf(rr, sizeof rr, "%g", w.range_ratio);
  std::string id = "isl" + std::to_string(w.isl) + "-osl" + std::to_string(w.osl) + "-rr" + rr;
  if (w.mtp) id += "-mtp";
  if (w.mtp_acceptance) {
    char a[32];
    std::snprintf(a, sizeof a, "%g", *w.mtp_acceptance);
    id += a;
  }
  if (w.precision) id += "-" + *w.precision;
  return id;
}

bool describes(const InferenceXWorkload& point, const InferenceXWorkload& run,
               const std::string& best) {
  return point.isl == run.isl && point.osl == run.osl &&
         std::fabs(point.range_ratio - run.range_ratio) < 1e-9 && point.mtp == run.mtp &&
         point.mtp_acceptance == run.mtp_acceptance &&
         point.precision.value_or(best) == run.precision.value_or(best);
}

namespace {

// A point the published benchmark did not run: an aggregated configuration within one scale-up
// domain at more clients than the system's single-node benchmark sweeps reached
// (ServingStack::benchmark_concurrency). Multi-node configurations (disaggregated pools, replicas
// across domains) ran their own sweeps to thousands of clients and are kept.
bool beyond_benchmark(const sim::PointSpec& s) {
  const auto cap = s.system->serving.benchmark_concurrency_for(s.model->id);
  const auto clients = sim::clients_of(s.arrivals);
  return cap && clients && *clients > *cap && !s.prefill_replicas &&
         static_cast<long>(s.layout.xpus()) * s.replicas <= s.system->domain_xpus;
}

// The sequences a disaggregated point's decode pool holds at once: each decode replica as many as
// its max_seqs allows and its KV cache holds whole (prompt and output: a disaggregated pool
// admits only what fits whole unless the scenario says otherwise).
long decode_pool_sequences(const Catalog& cat, const sim::PointSpec& s) {
  const double longest = static_cast<double>(s.workload.isl + s.workload.osl);
  const perf::MemoryPlan m = perf::plan_memory(*s.model, *s.system, cat, s.layout, s.precision,
                                               s.memory, longest);
  const double held = m.fits ? std::floor(m.kv_tokens / longest) : 0.0;
  return static_cast<long>(std::min<double>(s.engine.max_seqs, held)) * s.replicas;
}

// The clients a disaggregated point runs at beyond the options' list, as the system's multi-node
// benchmarks ran each configuration: as many as its decode pool holds, up to the highest
// concurrency they reached; 0 where that is not beyond `largest` or the system has no bound.
long pool_filling_clients(const Catalog& cat, const sim::PointSpec& s, long largest) {
  const auto bound = s.system->serving.multinode.concurrency;
  if (!s.prefill_replicas || !bound) return 0;
  const long fill = std::min<long>(*bound, decode_pool_sequences(cat, s));
  return fill > largest ? fill : 0;
}

// The sweep of one (system, model, workload) at the options' client counts, and with
// multinode_concurrency each disaggregated configuration also at the clients that fill its decode
// pool (pool_filling_clients).
std::expected<std::vector<sim::PointSpec>, std::string> group_sweep(
    const Catalog& cat, Scenario sc, const sim::SweepOptions& so, const PredictOptions& options) {
  sc.concurrency = options.concurrency;
  auto specs = sim::build_sweep(cat, sc, so);
  if (!specs || !options.multinode_concurrency || options.concurrency.empty()) return specs;
  const long largest =
      *std::max_element(options.concurrency.begin(), options.concurrency.end());
  std::set<int> fills;
  for (const auto& s : *specs)
    if (sim::clients_of(s.arrivals) == largest)
      if (const long f = pool_filling_clients(cat, s, largest)) fills.insert(static_cast<int>(f));
  if (fills.empty()) return specs;
  // Built again with the filling counts, so that each point keeps the seed stream a scenario
  // naming that load gives it; a filling count stays only on the configurations it fills.
  sc.concurrency.insert(sc.concurrency.end(), fills.begin(), fills.end());
  auto wide = sim::build_sweep(cat, sc, so);
  if (!wide) return wide;
  const std::set<int> listed(options.concurrency.begin(), options.concurrency.end());
  std::erase_if(*wide, [&](const sim::PointSpec& s) {
    const int c = sim::clients_of(s.arrivals).value_or(0);
    return !listed.contains(c) && pool_filling_clients(cat, s, largest) != c;
  });
  return wide;
}

// The points of the published multi-node deployments of one (system, model, workload): each
// recipe's decode layout in its serving mode at its client counts, its decode workers batching
// the recipe's sequences per attention rank where it names them.
std::expected<std::vector<sim::PointSpec>, std::string> recipe_sweep(
    const std::vector<const MultiNodeRecipe*>& recipes, const Catalog& cat, const Scenario& sc,
    sim::SweepOptions so) {
  std::vector<sim::PointSpec> out;
  for (const MultiNodeRecipe* r : recipes) {
    Scenario rc = sc;
    rc.layouts.replica_xpus.clear();
    rc.layouts.named = {r->decode};
    rc.concurrency = r->concurrency;
    so.modes = std::vector<ServingMode>{r->serving};
    auto specs = sim::build_sweep(cat, rc, so);
    if (!specs) return specs;
    // A recipe that names its batch is a configuration of its own: two recipes of one serving mode
    // and layout that batch differently get seed streams of their own.
    if (r->max_seqs_per_rank)
      for (auto& s : *specs) {
        s.engine.max_seqs = sim::batch_of_ranks(*r->max_seqs_per_rank, r->decode);
        s.seed = sim::stream_seed(s.seed, "max_seqs/" + std::to_string(s.engine.max_seqs));
      }
    out.insert(out.end(), specs->begin(), specs->end());
  }
  return out;
}

// The multi-node configurations of a group's sweep: where the catalog lists the system's published
// multi-node deployments (any of them), those of the group's model, precision and shape, and none
// beside them, neither generic pools nor aggregated replicas across scale-up domains (a group with
// none listed ran no multi-node benchmark); for a system with none listed, or with the deployments
// turned off, the options' generic modes over the sweep's layouts.
struct GroupPools {
  std::vector<const MultiNodeRecipe*> recipes;
  bool generic = false;    // the options' generic modes
  bool published = false;  // the system's listed deployments alone (possibly none for this group)
};

GroupPools group_pools(const Catalog& cat, const ReferencePoint& p, const PredictOptions& options) {
  const System* sys = cat.find_system(p.system);
  const Model* model = cat.find_model(p.model);
  if (sys == nullptr || model == nullptr || !sys->serving.disaggregation) return {};
  const bool listed = std::any_of(cat.multinode_recipes.begin(), cat.multinode_recipes.end(),
                                  [&](const MultiNodeRecipe& r) { return r.system == p.system; });
  // The listed deployments ran without MTP: an MTP point keeps the generic pools.
  if (!options.recipes || !listed || p.workload.mtp) return {{}, true, false};
  const std::string precision =
      p.workload.precision.value_or(perf::best_precision(*model, *sys, cat));
  return {cat.recipes_for(p.system, p.model, precision, p.workload.isl, p.workload.osl), false,
          true};
}

}  // namespace

PredictionPlan plan_predictions(const Catalog& cat, const std::vector<ReferencePoint>& points,
                                const PredictOptions& options) {
  PredictionPlan plan;
  plan.group_of.assign(points.size(), -1);
  plan.errors.assign(points.size(), "");
  // One sweep per (system, model, workload), in the order the points first name them.
  std::map<std::tuple<std::string, std::string, std::string>, int> index;
  std::vector<std::string> group_error;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ReferencePoint& p = points[i];
    const std::string wid = workload_id(p.workload);
    auto [it, inserted] =
        index.emplace(std::tuple{p.system, p.model, wid}, static_cast<int>(plan.groups.size()));
    if (inserted) {
      PredictionPlan::Group g{p.system, p.model, wid, plan.specs.size(), plan.specs.size()};
      Scenario sc;
      sc.name = "validate";
      sc.systems = {p.system};
      sc.models = {p.model};
      Workload w;
      w.id = wid;
      w.kind = WorkloadKind::inferencex;
      w.inferencex = p.workload;
      sc.workloads = {w};
      sc.layouts.replica_xpus = options.replica_xpus;
      sim::SweepOptions so;
      so.seed = options.seed;
      const GroupPools pools = group_pools(cat, p, options);
      const auto& recipes = pools.recipes;
      std::vector<ServingMode> modes;
      if (options.aggregated) modes.push_back(ServingMode{});
      if (pools.generic)
        modes.insert(modes.end(), options.disaggregated.begin(), options.disaggregated.end());
      so.modes = modes;
      so.efficiency = options.efficiency;
      auto specs = group_sweep(cat, sc, so, options);
      if (specs) std::erase_if(*specs, beyond_benchmark);
      if (specs && pools.published)
        std::erase_if(*specs, [](const sim::PointSpec& s) {
          return static_cast<long>(s.layout.xpus()) > s.system->domain_xpus;
        });
      if (specs && !recipes.empty()) {
        if (auto more = recipe_sweep(recipes, cat, sc, so))
          specs->insert(specs->end(), more->begin(), more->end());
        else
          specs = std::move(more);
      }
      std::string err;
      if (modes.empty() && recipes.empty())
        err = "the sweep's serving modes are all disaggregated, and " + p.system +
              "'s serving stack has no disaggregation (add aggregated to --serving)";
      else if (!specs)
        err = specs.error();
      else if (specs->empty())
        err = "no layout of " + p.model + " fits " + p.system + " for this workload";
      else
        plan.specs.insert(plan.specs.end(), specs->begin(), specs->end());
      g.end = plan.specs.size();
      plan.groups.push_back(g);
      group_error.push_back(err);
    }
    if (group_error[static_cast<std::size_t>(it->second)].empty())
      plan.group_of[i] = it->second;
    else
      plan.errors[i] = group_error[static_cast<std::size_t>(it->second)];
  }
  return plan;
}

SweepTables::SweepTables(const std::vector<sim::PointResult>& results)
    : summary(sim::summarise(results)),
      total(sim::envelopes(results, sim::CurveValue::total_tps_per_xpu)),
      output(sim::envelopes(results, sim::CurveValue::output_tps_per_xpu)),
      allin(sim::envelopes(results, sim::CurveValue::total_tps_per_allin_mw)) {}

std::expected<double, std::string> metric_value(const ReferencePoint& point, const std::string& wid,
                                                const SweepTables& t) {
  auto row = t.summary.find({wid, point.model, point.system});
  if (row == t.summary.end() || row->second.points == 0)
    return std::unexpected(
        "no point of the sweep ran" +
        (row == t.summary.end() || row->second.first_failure.empty()
             ? std::string(" (see racktwin run --json)")
             : " (the first to fail: " + row->second.first_failure + ")"));
  const sim::SweepSummary& s = row->second;
  auto curve = [&](const auto& table) -> std::expected<double, std::string> {
    auto c = table.find({point.system, point.model, wid});
    if (c == table.end() || c->second.empty())
      return std::unexpected(std::string("the sweep has no throughput-interactivity curve"));
    const auto& env = c->second;  // by increasing interactivity, decreasing value
    const double at = point.at.value_or(0);
    // Below the curve's lowest interactivity the best throughput is its highest-throughput point
    // (InferenceX reads a flat envelope there); above its highest the twin cannot serve `at`.
    if (at <= env.front().interactivity) return env.front().value;
    if (auto v = sim::value_at(env, at)) return *v;
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "interactivity %.4g tok/s/user is beyond the twin's curve (its highest is %.4g)",
                  at, env.back().interactivity);
    return std::unexpected(std::string(buf));
  };
  switch (point.metric) {
    case Metric::peak_mixed_tps_per_kw_rated:
      return s.peak_rated_kw;
    case Metric::min_e2e_latency_s:
      return s.min_e2e;
    case Metric::min_tbt_ms:
      if (!s.min_tbt) return std::unexpected(std::string("no request produced a TPOT"));
      return *s.min_tbt * 1e3;
    case Metric::max_interactivity_tok_s_user:
      if (!s.min_tbt) return std::unexpected(std::string("no request produced a TPOT"));
      return 1.0 / *s.min_tbt;
    case Metric::total_tps_per_allin_mw_at:
      return curve(t.allin);
    case Metric::total_tps_per_xpu_at:
      return curve(t.total);
    case Metric::output_tps_per_xpu_at:
      return curve(t.output);
    case Metric::peak_total_tps_per_xpu:
      return s.peak_tps;
  }
  return std::unexpected(std::string("unknown metric"));
}

std::expected<double, std::string> metric_value(const ReferencePoint& point, const std::string& wid,
                                                const std::vector<sim::PointResult>& results) {
  return metric_value(point, wid, SweepTables(results));
}

std::optional<double> score(Metric m, const sim::PointResult& r) {
  if (!r.error.empty()) return std::nullopt;
  switch (m) {
    case Metric::peak_total_tps_per_xpu:
      return r.total_tps_per_xpu;
    case Metric::peak_mixed_tps_per_kw_rated:
      return r.tps_per_rated_kw;
    case Metric::min_tbt_ms:
    case Metric::max_interactivity_tok_s_user:
      return r.tpot.median > 0 ? std::optional(-r.tpot.median) : std::nullopt;
    case Metric::min_e2e_latency_s:
      return -r.e2e.median;
    default:
      return std::nullopt;
  }
}

std::string layout_mode(const sim::PointSpec& s) {
  return s.layout.label() + " " + sim::serving_mode(s).label();
}

namespace {

// The configuration and load of a sweep point, as validate names it; a disaggregated one with its
// decode replicas' batch limit (a published deployment's, or the system's multi-node default),
// which tells apart deployments of one serving mode and layout.
std::string configuration(const sim::PointResult& r) {
  std::string text = layout_mode(r.spec);
  if (const auto c = sim::clients_of(r.spec.arrivals))
    text += " at " + std::to_string(*c) + (*c == 1 ? " client" : " clients");
  if (r.spec.prefill_replicas)
    text += ", decode batch at most " + std::to_string(r.spec.engine.max_seqs);
  return text;
}

// The point of the group's sweep that a peak or minimum metric is read from (the first of equals,
// as the summary takes it); none for the metrics interpolated on an envelope.
const sim::PointResult* deciding_point(Metric metric, const PredictionPlan::Group& g,
                                       const std::vector<sim::PointResult>& results) {
  const sim::PointResult* best = nullptr;
  double best_rank = 0;
  for (std::size_t i = g.begin; i < g.end && i < results.size(); ++i) {
    const auto rank = score(metric, results[i]);
    if (rank && (best == nullptr || *rank > best_rank)) best = &results[i], best_rank = *rank;
  }
  return best;
}

}  // namespace

std::vector<Prediction> predictions(const std::vector<ReferencePoint>& points,
                                    const PredictionPlan& plan,
                                    const std::vector<sim::PointResult>& results) {
  const SweepTables tables(results);
  std::vector<Prediction> out;
  for (std::size_t i = 0; i < points.size(); ++i) {
    Prediction p;
    p.point = &points[i];
    if (plan.group_of[i] < 0) {
      p.error = plan.errors[i];
    } else {
      const auto& g = plan.groups[static_cast<std::size_t>(plan.group_of[i])];
      auto v = metric_value(points[i], g.workload_id, tables);
      if (v) {
        p.predicted = *v;
        p.error_pct = 100.0 * (*v - points[i].value) / points[i].value;
        if (const auto* d = deciding_point(points[i].metric, g, results))
          p.decided_by = configuration(*d);
      } else {
        p.error = v.error();
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<PowerCheck> power_checks(const PredictionPlan& plan,
                                     const std::vector<sim::PointResult>& results) {
  std::vector<PowerCheck> out;
  for (const auto& g : plan.groups) {
    PowerCheck c;
    const sim::PointResult* peak = nullptr;
    for (std::size_t i = g.begin; i < g.end && i < results.size(); ++i) {
      const sim::PointResult& r = results[i];
      const Chip* chip = r.spec.system != nullptr ? r.spec.system->chip.get() : nullptr;
      if (!r.error.empty() || chip == nullptr || !chip->sustained_power) continue;
      c.measured_w = chip->sustained_power->value();
      c.busy_share = r.spec.system->power.xpu_busy_share.value_or(0.0);
      c.highest_w = std::max(c.highest_w, r.xpu_power_w);
      if (peak == nullptr || r.total_tps_per_xpu > peak->total_tps_per_xpu) peak = &r;
    }
    if (peak == nullptr) continue;
    c.system = g.system;
    c.model = g.model;
    c.workload_id = g.workload_id;
    c.peak_w = peak->xpu_power_w;
    c.peak_tps = peak->total_tps_per_xpu;
    c.peak_layout = peak->spec.layout.label();
    out.push_back(std::move(c));
  }
  return out;
}

ErrorSummary summarise_errors(const std::vector<Prediction>& p) {
  ErrorSummary s;
  std::vector<double> abs;
  for (const auto& x : p) {
    if (!x.predicted) {
      s.failed += 1;
      continue;
    }
    abs.push_back(std::fabs(x.error_pct));
  }
  s.predicted = static_cast<int>(abs.size());
  if (abs.empty()) return s;
  std::sort(abs.begin(), abs.end());
  const std::size_t n = abs.size();
  s.median_abs_pct = n % 2 == 1 ? abs[n / 2] : 0.5 * (abs[n / 2 - 1] + abs[n / 2]);
  s.max_abs_pct = abs.back();
  return s;
}

}  // namespace racktwin::calib
