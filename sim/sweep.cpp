#include "sim/sweep.hpp"

#include <algorithm>
#include <cstdio>

#include "core/perf/memory.hpp"

namespace racktwin::sim {

namespace {

// The scenario's key, else the system's catalog default, else `fallback` (origin_of).
template <class T>
T pick(const std::optional<T>& given, const System* s, std::optional<T> EngineLimits::*limit,
       T fallback) {
  switch (origin_of(given, s, limit)) {
    case SettingOrigin::scenario:
      return *given;
    case SettingOrigin::catalog:
      return *(s->serving.engine_limits.*limit);
    case SettingOrigin::simulation:
      break;
  }
  return fallback;
}

// Two layouts with the same parallel degrees (names aside).
bool same_degrees(const Layout& a, const Layout& b) {
  return a.tp == b.tp && a.ep == b.ep && a.pp == b.pp && a.dp_attention == b.dp_attention;
}

}  // namespace

int batched_tokens_default(const Layout* l) {
  const int fallback = perf::MemoryParams{}.max_batched_tokens;
  if (l == nullptr || !l->dp_attention) return fallback;
  return std::max(fallback, kBatchedTokensPerAttentionRank * l->tp);
}

perf::MemoryParams memory_of(const Scenario& sc, const System* s, const Layout* l) {
  perf::MemoryParams m;
  m.memory_utilization = pick(sc.engine.memory_utilization, s, &EngineLimits::memory_utilization,
                              m.memory_utilization);
  m.max_batched_tokens = pick(sc.engine.max_batched_tokens, s, &EngineLimits::max_batched_tokens,
                              batched_tokens_default(l));
  return m;
}

EngineParams engine_of(const Scenario& sc, const Workload& w, const System* s, const Layout* l) {
  EngineParams e;
  e.max_seqs = pick(sc.engine.max_seqs, s, &EngineLimits::max_seqs, e.max_seqs);
  e.max_batched_tokens = pick(sc.engine.max_batched_tokens, s, &EngineLimits::max_batched_tokens,
                              batched_tokens_default(l));
  e.reserve_output_ratio = pick(sc.engine.reserve_output, s, &EngineLimits::reserve_output,
                                e.reserve_output_ratio);
  if (sc.engine.prefix_cache) e.prefix_cache = *sc.engine.prefix_cache;
  if (w.kind == WorkloadKind::trace) e.block_tokens = w.trace.block_tokens;
  if (w.kind == WorkloadKind::agentic) e.block_tokens = w.agentic.block_tokens;
  return e;
}

int batch_of_ranks(long per_rank, const Layout& l) {
  const long ranks = l.dp_attention ? l.tp : 1;
  return static_cast<int>(std::min<long>(per_rank * ranks, 1 << 20));
}

std::optional<int> multinode_max_seqs(const System& s, const Layout& l) {
  const auto per_rank = s.serving.multinode.max_seqs_per_rank;
  if (!per_rank) return std::nullopt;
  return batch_of_ranks(*per_rank, l);
}

PrefillPool prefill_pool_of(const Scenario& sc, const Workload& w, const System& s,
                            const Layout& l) {
  // Multi-node pools: no single-server limits; the system's multi-node batch per rank.
  PrefillPool pool{l, memory_of(sc, nullptr, &l), engine_of(sc, w, nullptr, &l)};
  if (!sc.engine.max_seqs)
    if (auto seqs = multinode_max_seqs(s, l)) pool.engine.max_seqs = *seqs;
  return pool;
}

std::vector<int> wide_ep_sizes(const System& s, const Model& m) {
  std::vector<int> sizes;
  if (!m.is_moe()) return sizes;
  const int widest =
      std::min({s.domain_xpus, kMaxSweepReplicaXpus, std::max(1, m.moe->routed_experts)});
  for (int n = 2 * kServerXpus; n <= widest; n *= 2) sizes.push_back(n);
  return sizes;
}

std::vector<int> sub_server_sizes(const System& s) {
  std::vector<int> sizes;
  const int server = std::min(s.domain_xpus, std::max(s.compute_tray.xpus, kServerXpus));
  for (int n = 1; n < server; n *= 2)
    if (n != s.compute_tray.xpus) sizes.push_back(n);
  return sizes;
}

std::vector<Layout> sweep_layouts(const Catalog& cat, const Scenario& sc, const System& s,
                                  const Model& m, const std::string& precision, double min_tokens) {
  std::vector<Layout> out = sc.layouts.named;
  std::vector<int> sizes = sc.layouts.replica_xpus;
  if (sc.layouts.all_valid())
    for (int n : {s.compute_tray.xpus, kServerXpus})
      if (n >= 1 && n <= s.domain_xpus && std::find(sizes.begin(), sizes.end(), n) == sizes.end())
        sizes.push_back(n);
  perf::LayoutQuery q;
  q.max_pp = 1;
  q.precision = precision;
  q.min_tokens = min_tokens;
  q.memory = memory_of(sc, &s);
  // The valid layouts of q's sizes that `keep` accepts.
  auto add_valid = [&](auto keep) {
    bool any = false;
    for (const auto& o : perf::enumerate_layouts(m, s, cat, q))
      if (o.valid && keep(o.layout)) {
        out.push_back(o.layout);
        any = true;
      }
    return any;
  };
  auto every = [](const Layout&) { return true; };
  bool fits = false;
  if (!sizes.empty()) {
    q.replica_xpus = sizes;
    fits = add_valid(every);
  }
  if (sc.layouts.all_valid()) {
    // Replicas smaller than the tray or server, for a model that fits in fewer XPUs: plain tensor
    // parallelism and wide expert parallelism, as the published single-server sweeps ran them.
    auto plain_tp_or_wide_ep = [](const Layout& l) {
      return l.ep == l.tp ? l.dp_attention || l.tp == 1 : l.ep == 1 && !l.dp_attention;
    };
    q.replica_xpus = sub_server_sizes(s);
    if (!q.replica_xpus.empty()) fits = add_valid(plain_tp_or_wide_ep) || fits;
    // Wide expert parallelism within the domain: every rank its own attention and its share of
    // the experts, as wide-EP deployments serve MoE models. The other layouts of these sizes
    // (wide TP, EP without DP attention) tripled the shipped scenario's points and moved only
    // one figure (docs/scenarios.md "Layouts"); a scenario's replica_xpus still takes them all.
    q.replica_xpus = wide_ep_sizes(s, m);
    if (!q.replica_xpus.empty())
      fits = add_valid([](const Layout& l) { return l.ep == l.tp && l.dp_attention; }) || fits;
    // A model no default size holds: the smallest wider replica within the domain that does.
    for (int n = 2 * kServerXpus; n <= s.domain_xpus && !fits; n *= 2) {
      q.replica_xpus = {n};
      fits = add_valid(every);
    }
  }
  // When no replica within a scale-up domain holds the model, the fewest whole domains that do,
  // joined over the scale-out network: TP within a domain and pipeline stages across them first
  // (multi-node serving), and wider TP groups beside them.
  q.memory = memory_of(sc);  // replicas over several domains: no single-server limits
  if (sc.layouts.all_valid() && !fits)
    for (int k = 2; k <= kMaxSpannedDomains && !fits; k *= 2) {
      q.replica_xpus = {k * s.domain_xpus};
      q.max_pp = k;
      fits = add_valid(every);
    }
  // A named layout may also come out of the enumeration: keep the first of each.
  std::vector<Layout> unique;
  for (const auto& l : out) {
    const bool seen = std::any_of(unique.begin(), unique.end(),
                                  [&](const Layout& u) { return same_degrees(u, l); });
    if (!seen) unique.push_back(l);
  }
  return unique;
}

namespace {

// KV tokens the longest request of a workload needs.
double longest_request(const Workload& w) {
  if (w.kind == WorkloadKind::agentic) return w.agentic.max_context;
  if (w.kind == WorkloadKind::trace) {
    double n = 0;
    for (const auto& q : *w.trace.requests)
      n = std::max<double>(n, q.input_length + q.output_length);
    return n;
  }
  return w.inferencex.isl + w.inferencex.osl;
}

// The arrivals of a workload's points: closed loop and agentic, one per concurrency; open loop, one
// per rate; a trace sets its own arrivals.
std::vector<Arrivals> arrivals_of(const Scenario& sc, const Workload& w) {
  std::vector<Arrivals> loads;
  switch (w.kind) {
    case WorkloadKind::inferencex:
      for (int c : sc.concurrency) loads.emplace_back(ClosedLoop{c});
      break;
    case WorkloadKind::poisson:
      for (double r : w.inferencex.rates) loads.emplace_back(OpenLoop{r});
      break;
    case WorkloadKind::trace:
      loads.emplace_back(TraceReplay{w.trace});
      break;
    case WorkloadKind::agentic:
      for (int c : sc.concurrency) loads.emplace_back(Agentic{w.agentic, c});
      break;
  }
  return loads;
}

// The load's part of a point's seed stream name: "rate<r>" for an open loop, else the clients
// ("0" for a trace).
std::string load_name(const Arrivals& a) {
  if (const auto rate = rate_of(a)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "rate%.17g", *rate);
    return buf;
  }
  return std::to_string(clients_of(a).value_or(0));
}

// The system's published single-server benchmarks ran attention tensor-parallel (catalog
// `engine_limits.dp_attention: false`): its aggregated replicas within one scale-up domain leave
// out the DP-attention layouts the sweep enumerated; a layout the scenario names stays.
bool left_out(const Scenario& sc, const System& s, const Layout& l, const ServingMode& mode) {
  if (!l.dp_attention || mode.disaggregated() || l.xpus() > s.domain_xpus ||
      s.serving.engine_limits.dp_attention.value_or(true))
    return false;
  return std::none_of(sc.layouts.named.begin(), sc.layouts.named.end(),
                      [&](const Layout& n) { return same_degrees(n, l); });
}

}  // namespace

std::expected<std::vector<PointSpec>, std::string> build_sweep(const Catalog& cat,
                                                               const Scenario& sc,
                                                               const SweepOptions& options) {
  const std::vector<ServingMode>& modes = options.modes ? *options.modes : sc.serving;
  std::vector<PointSpec> specs;
  for (const auto& sid : sc.systems) {
    const System* s = cat.find_system(sid);
    if (s == nullptr) return std::unexpected("unknown system '" + sid + "'");
    std::optional<perf::Efficiency> eff;
    if (options.efficiency) eff = options.efficiency(*s);
    if (!eff) {
      auto choice = cat.efficiency_for(sid);
      if (!choice)
        return std::unexpected("no efficiency prior for " + sid +
                               " and no 'default' prior in the catalog");
      eff = choice->values;
    }
    for (const auto& mid : sc.models) {
      const Model* m = cat.find_model(mid);
      if (m == nullptr) return std::unexpected("unknown model '" + mid + "'");
      for (const auto& w : sc.workloads) {
        const std::string precision =
            w.inferencex.precision.value_or(perf::best_precision(*m, *s, cat));
        const auto loads = arrivals_of(sc, w);
        const auto layouts = sweep_layouts(cat, sc, *s, *m, precision, longest_request(w));
        for (const Layout& l : layouts) {
          for (const ServingMode& mode : modes) {
            if (left_out(sc, *s, l, mode)) continue;
            for (const Arrivals& arrivals : loads) {
              PointSpec p;
              p.system = s;
              p.model = m;
              p.layout = l;
              p.precision = precision;
              p.workload = w.inferencex;
              p.workload_id = w.id;
              p.arrivals = arrivals;
              // The catalog's engine limits are those of the system's single-server benchmarks:
              // aggregated replicas within one scale-up domain.
              const System* limits =
                  !mode.disaggregated() && l.xpus() <= s->domain_xpus ? s : nullptr;
              p.engine = engine_of(sc, w, limits, &l);
              // Disaggregated pools batch as the system's multi-node benchmarks did.
              if (mode.disaggregated() && !sc.engine.max_seqs)
                if (auto seqs = multinode_max_seqs(*s, l)) p.engine.max_seqs = *seqs;
              p.memory = memory_of(sc, limits, &l);
              p.replicas = mode.disaggregated() ? mode.decode : sc.replicas;
              if (mode.disaggregated()) p.prefill_replicas = mode.prefill;
              if (mode.prefill_layout)
                p.prefill_pool = prefill_pool_of(sc, w, *s, *mode.prefill_layout);
              p.host_offload = sc.host_offload;
              p.failures = sc.failures;
              p.router = sc.router;
              // Aggregated points keep the stream names they had before serving modes existed.
              const std::string served = mode.disaggregated() ? "/" + mode.label() : "";
              p.seed = stream_seed(options.seed, sid + "/" + mid + "/" + w.id + "/" + l.label() +
                                                     served + "/" + load_name(arrivals));
              p.efficiency = *eff;
              p.facility = sc.facility;
              specs.push_back(p);
            }
          }
        }
      }
    }
  }
  return specs;
}

std::map<SummaryKey, SweepSummary> summarise(const std::vector<PointResult>& results) {
  std::map<SummaryKey, SweepSummary> rows;
  for (const auto& r : results) {
    SweepSummary& row = rows[{r.spec.workload_id, r.spec.model->id, r.spec.system->id}];
    if (!r.error.empty()) {
      row.failed += 1;
      if (row.first_failure.empty())
        row.first_failure = configuration_label(r.spec) + ": " + r.error;
      continue;
    }
    row.points += 1;
    if (r.total_tps_per_xpu > row.peak_tps) {
      row.peak_tps = r.total_tps_per_xpu;
      row.best_layout = configuration_label(r.spec);
    }
    row.peak_rated_kw = std::max(row.peak_rated_kw, r.tps_per_rated_kw);
    row.peak_allin_mw = std::max(row.peak_allin_mw, r.tps_per_allin_provisioned_mw);
    row.allin_computed = row.allin_computed || r.all_in_computed;
    if (r.tpot.median > 0) row.min_tbt = std::min(row.min_tbt.value_or(r.tpot.median), r.tpot.median);
    if (r.e2e.median < row.min_e2e) {
      row.min_e2e = r.e2e.median;
      row.ttft_at_min_e2e = r.ttft.median;
    }
  }
  return rows;
}

std::map<CurveKey, std::vector<CurvePoint>> envelopes(const std::vector<PointResult>& results,
                                                      CurveValue value) {
  std::map<CurveKey, std::vector<CurvePoint>> curves;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (!r.error.empty()) continue;
    const double y = value == CurveValue::total_tps_per_xpu    ? r.total_tps_per_xpu
                     : value == CurveValue::output_tps_per_xpu ? r.output_tps_per_xpu
                                                               : r.tps_per_allin_provisioned_mw;
    curves[{r.spec.system->id, r.spec.model->id, r.spec.workload_id}].push_back(
        {r.interactivity, y, i});
  }
  for (auto& [key, pts] : curves) pts = pareto_envelope(std::move(pts));
  return curves;
}

}  // namespace racktwin::sim
