// Prepare, the first stage of simulate(): validates each point, plans its memory, builds its step
// models, requests, deployment, failures, replica engines and router. No SimGrid call happens
// here: the engine starts after every point is prepared.

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/perf/memory.hpp"
#include "sim/point_state.hpp"

namespace racktwin::sim::detail {
namespace {

// The longest request of the point's workload, in tokens: the replica must hold it.
double min_context_tokens(const PointSpec& s) {
  double min_tokens = static_cast<double>(s.workload.isl + s.workload.osl);
  if (const auto* g = std::get_if<Agentic>(&s.arrivals)) min_tokens = g->workload.max_context;
  const auto* t = std::get_if<TraceReplay>(&s.arrivals);
  if (t != nullptr && t->trace.requests) {
    min_tokens = 0;
    for (const auto& q : *t->trace.requests)
      min_tokens = std::max<double>(min_tokens, q.input_length + q.output_length);
  }
  return min_tokens;
}

// What the point asks of the system's serving stack (disaggregation, speculative decoding), and
// the speculation it decodes with: drafted tokens per step and the mean tokens a step emits.
std::expected<perf::Speculation, std::string> serving_features(const PointSpec& s) {
  if (s.prefill_replicas && !s.system->serving.disaggregation)
    return std::unexpected(s.system->id + "'s serving stack (" + s.system->serving.engine +
                           ") has no prefill/decode disaggregation");
  perf::Speculation spec;
  if (s.workload.mtp) {
    if (!s.system->serving.mtp)
      return std::unexpected(s.system->id + "'s serving stack (" + s.system->serving.engine +
                             ") has no speculative decoding; set mtp: false");
    spec.draft_tokens = s.workload.mtp_draft_tokens;
    spec.acceptance = s.workload.mtp_acceptance.value_or(default_mtp_acceptance(spec.draft_tokens));
  }
  return spec;
}

// The point's requests: a list drawn from its seed (InferenceX, Poisson), or a dependency graph
// (trace replay, agentic sessions) whose requests move into `requests`.
void make_requests(Point& p) {
  const PointSpec& s = p.spec;
  const auto* t = std::get_if<TraceReplay>(&s.arrivals);
  const auto* g = std::get_if<Agentic>(&s.arrivals);
  if (t != nullptr || g != nullptr) {
    p.graph = t != nullptr
                  ? trace_graph(t->trace)
                  : agentic_graph(g->workload, g->clients, stream_seed(s.seed, "workload"));
    p.has_graph = true;
    p.requests = std::move(p.graph.requests);
    // A waiting request's arrival comes from its predecessors (its own release time counts only
    // when it has no delay: see FrontEnd::release_dependents()).
    p.ready.assign(p.graph.release.size(), 0.0);
    for (std::size_t k = 0; k < p.ready.size(); ++k)
      p.ready[k] = p.graph.pending[k] > 0 ? 0.0 : p.graph.release[k];
  } else {
    const auto* o = std::get_if<OpenLoop>(&s.arrivals);
    p.requests = o != nullptr
                     ? poisson_requests(s.workload, o->rate_req_s, stream_seed(s.seed, "workload"))
                     : inferencex_requests(s.workload, std::get<ClosedLoop>(s.arrivals).clients,
                                           stream_seed(s.seed, "workload"));
  }
}

// A point's replicas domain by domain as its `placement` says; its counts must make the point's
// replicas of each pool.
std::expected<Deployment, std::string> placed_in_domains(const PointSpec& s, TopologyCache& cache) {
  const int prefill = s.prefill_replicas.value_or(0);
  std::vector<int> pool_xpus{s.layout.xpus()}, want{s.replicas + prefill};
  if (prefill > 0) {
    pool_xpus = {prefill_replica_xpus(s), s.layout.xpus()};
    want = {prefill, s.replicas};
  }
  std::vector<int> sum(pool_xpus.size(), 0);
  for (const auto& d : s.placement) {
    if (d.size() != pool_xpus.size())
      return std::unexpected("the placement gives " + std::to_string(d.size()) +
                             " pools per domain, the point has " + std::to_string(pool_xpus.size()));
    for (std::size_t p = 0; p < d.size(); ++p) sum[p] += d[p];
  }
  if (sum != want)
    return std::unexpected("the placement's replicas per pool do not make the point's replicas");
  return deploy_in_domains(cache.get(*s.system, static_cast<int>(s.placement.size())), pool_xpus,
                           s.placement);
}

// Where the replicas run: placed on the system's topology (one deployment per shape, shared by
// the points of that shape), and the sizes that follow from it. Fails when they cannot be placed.
std::expected<void, std::string> place(Point& p, Deployments& deployments, PointResult& result) {
  const PointSpec& s = p.spec;
  const int total = s.replicas + s.prefill_replicas.value_or(0);
  // A prefill pool of its own layout is placed first, then the decode pool.
  std::vector<ReplicaGroup> groups{{s.layout.xpus(), total}};
  if (s.prefill_pool)
    groups = {{s.prefill_pool->layout.xpus(), *s.prefill_replicas}, {s.layout.xpus(), s.replicas}};
  const int own = s.prefill_pool ? s.prefill_pool->layout.xpus() : 0;
  std::shared_ptr<const Deployment> given;
  auto& placed = s.placement.empty()
                     ? deployments.placed[{s.system->id, s.layout.xpus(), total, own,
                                           s.prefill_pool ? *s.prefill_replicas : 0}]
                     : given;
  if (!placed) {
    auto d = s.placement.empty() ? deploy(*s.system, groups, deployments.topologies)
                                 : placed_in_domains(s, deployments.topologies);
    if (!d) return std::unexpected(d.error());
    placed = std::make_shared<const Deployment>(std::move(*d));
  }
  p.deployment = placed;
  p.prefill = s.prefill_replicas.value_or(0);
  p.total = total;
  // One copy of a sequence's KV: GQA shards its KV heads over the TP ranks (replicating them
  // when there are fewer heads than ranks); an MLA latent is whole on a rank; stages split
  // layers.
  const auto& att = s.model->attention;
  const double shards = att.kind == AttentionKind::gqa && !s.layout.dp_attention
                            ? std::min(s.layout.tp, att.kv_heads)
                            : 1;
  p.kv_bytes_per_token = p.model->kv_bytes_per_token_per_xpu().value() * shards * s.layout.pp;
  result.domains = placed->domains;
  p.weight_bytes = p.model->weights_per_xpu().value() * s.layout.xpus();
  if (p.prefill_model)
    p.prefill_weight_bytes =
        p.prefill_model->weights_per_xpu().value() * s.prefill_pool->layout.xpus();
  p.outages.assign(static_cast<std::size_t>(total), {});
  p.up.assign(static_cast<std::size_t>(total), 1);
  p.slowdowns.assign(static_cast<std::size_t>(total), {});
  return {};
}

// Merges the overlapping outage spans of each replica into one.
void merge_outages(Point& p) {
  for (auto& spans : p.outages) {
    std::sort(spans.begin(), spans.end(),
              [](const Point::Outage& a, const Point::Outage& b) { return a.from < b.from; });
    std::vector<Point::Outage> merged;
    for (const auto& o : spans) {
      if (!merged.empty() && o.from <= merged.back().to)
        merged.back().to = std::max(merged.back().to, o.to);
      else
        merged.push_back(o);
    }
    spans = merged;
  }
}

// The spec's failures, as what each does to each replica from its time to its repair (infinite
// when never repaired): an outage for a replica it takes down, a slowdown with a step model of the
// slowed system (one per scale-up fraction) for one it leaves with part of its scale-up bandwidth.
std::expected<void, std::string> plan_failures(const Catalog& catalog, Point& p,
                                               const perf::Speculation& spec) {
  const PointSpec& s = p.spec;
  // Step models by scale-up fraction and pool (a prefill layout of its own, or the point's).
  std::map<std::pair<double, bool>, const perf::StepModel*> slowed;
  for (const FailureSpec& f : s.failures) {
    topology::PartKind kind = topology::PartKind::xpu;
    for (topology::PartKind q : topology::kAllPartKinds)
      if (topology::to_string(q) == f.part) kind = q;
    auto impact = failure_impact(*p.deployment, kind, f.index);
    if (!impact) return std::unexpected(impact.error());
    const double to = f.repair_s ? f.at_s + *f.repair_s : std::numeric_limits<double>::infinity();
    for (int k = 0; k < p.total; ++k) {
      const ReplicaImpact& ri = (*impact)[static_cast<std::size_t>(k)];
      if (ri.down) {
        p.outages[static_cast<std::size_t>(k)].push_back({f.at_s, to});
      } else if (ri.scale_up_fraction < 1.0) {
        const bool own = p.own_prefill_layout(static_cast<std::size_t>(k));
        auto& m = slowed[{ri.scale_up_fraction, own}];
        if (m == nullptr) {
          System slow = *s.system;
          for (auto& tier : slow.scale_up)
            tier.bandwidth_per_xpu =
                BytesPerSecond(tier.bandwidth_per_xpu.value() * ri.scale_up_fraction);
          auto sm_slow = perf::StepModel::create(
              *s.model, slow, catalog, own ? s.prefill_pool->layout : s.layout, s.precision,
              s.efficiency, spec, own ? s.prefill_pool->memory : s.memory);
          if (!sm_slow) return std::unexpected(sm_slow.error());
          p.slow_models.push_back(std::make_unique<perf::StepModel>(*sm_slow));
          m = p.slow_models.back().get();
        }
        p.slowdowns[static_cast<std::size_t>(k)].push_back({f.at_s, to, m});
      }
    }
  }
  merge_outages(p);
  return {};
}

// One replica engine per replica (the first `prefill` prefill-only), and with KV offload a host
// DRAM tier per host pool, in blocks of one sequence's KV.
void build_engines(Point& p, const SimOptions& options, const perf::Speculation& spec,
                   PointResult& result) {
  const PointSpec& s = p.spec;
  auto params = [&](EngineParams e, const perf::MemoryParams& memory) {
    e.fuse = options.fuse;
    e.max_batched_tokens = memory.max_batched_tokens;  // the planner sized the workspace for it
    e.tokens_per_step = spec.acceptance;
    return e;
  };
  const EngineParams ep = params(s.engine, s.memory);
  for (int k = 0; k < p.total; ++k) {
    const bool own = p.own_prefill_layout(static_cast<std::size_t>(k));
    EngineParams role = own ? params(s.prefill_pool->engine, s.prefill_pool->memory) : ep;
    role.prefill_only = k < s.prefill_replicas.value_or(0);
    p.engines.push_back(std::make_unique<ReplicaEngine>(
        p.model_of(static_cast<std::size_t>(k)), own ? p.prefill_kv_capacity : p.kv_capacity,
        role));
  }
  p.block_bytes = p.kv_bytes_per_token * ep.block_tokens;
  if (s.host_offload > 0 && ep.prefix_cache) {
    int capacity = 0;
    for (const HostPool& pool : p.deployment->pools) {
      p.host_tiers.push_back(std::make_unique<PrefixCache>(ep.block_tokens));
      capacity = static_cast<int>(
          std::min(2e9, std::floor(pool.dram_bytes * s.host_offload / p.block_bytes)));
      for (int k : pool.replicas)
        p.engines[static_cast<std::size_t>(k)]->set_host_tier(p.host_tiers.back().get(), capacity);
    }
    result.host_tier_blocks = capacity;
  }
}

// A prefill pool of its own layout (disaggregated serving): its memory plan and step model.
std::expected<void, std::string> prefill_pool(const Catalog& catalog, const PointSpec& s,
                                              const perf::Speculation& spec, Point& p) {
  if (!s.prefill_pool) return {};
  if (!s.prefill_replicas)
    return std::unexpected("a prefill layout is given but the point is not disaggregated");
  const PrefillPool& pool = *s.prefill_pool;
  const std::string which = "prefill layout " + pool.layout.label() + ": ";
  if (s.host_offload > 0)
    return std::unexpected(which +
                           "KV offload to host DRAM with pools of different layouts is not "
                           "simulated; use one layout for both pools, or host_offload: 0");
  const perf::MemoryPlan plan =
      perf::plan_memory(*s.model, *s.system, catalog, pool.layout, s.precision, pool.memory,
                        min_context_tokens(s), spec.draft_tokens);
  if (!plan.fits) return std::unexpected(which + plan.reason);
  auto sm = perf::StepModel::create(*s.model, *s.system, catalog, pool.layout, s.precision,
                                    s.efficiency, spec, pool.memory);
  if (!sm) return std::unexpected(which + sm.error());
  p.prefill_model = std::make_unique<perf::StepModel>(*sm);
  p.prefill_kv_capacity = plan.kv_tokens;
  return {};
}

// The point of spec `s`, or why it cannot run. Sets the result's sizes as they become known.
std::expected<std::unique_ptr<Point>, std::string> prepare_point(const Catalog& catalog,
                                                                 const PointSpec& s,
                                                                 const SimOptions& options,
                                                                 Deployments& deployments,
                                                                 PointResult& result) {
  const auto spec = serving_features(s);
  if (!spec) return std::unexpected(spec.error());
  const perf::MemoryPlan plan =
      perf::plan_memory(*s.model, *s.system, catalog, s.layout, s.precision, s.memory,
                        min_context_tokens(s), spec->draft_tokens);
  if (!plan.fits) return std::unexpected(plan.reason);
  auto sm = perf::StepModel::create(*s.model, *s.system, catalog, s.layout, s.precision,
                                    s.efficiency, *spec, s.memory);
  if (!sm) return std::unexpected(sm.error());
  auto p = std::make_unique<Point>();
  p->spec = s;
  p->model = std::make_unique<perf::StepModel>(*sm);
  p->kv_capacity = plan.kv_tokens;
  if (auto own = prefill_pool(catalog, s, *spec, *p); !own) return std::unexpected(own.error());
  make_requests(*p);
  if (auto placed = place(*p, deployments, result); !placed) return std::unexpected(placed.error());
  if (auto failures = plan_failures(catalog, *p, *spec); !failures)
    return std::unexpected("failure: " + failures.error());
  build_engines(*p, options, *spec, result);
  result.kv_capacity_tokens = plan.kv_tokens;
  // Requests enter the prefill pool when serving is disaggregated, else any replica.
  p->router =
      make_router(s.router, {p->up, p->in_flight, p->engines},
                  p->prefill > 0 ? p->prefill : p->total, p->graph.session, p->graph.sessions);
  return p;
}

}  // namespace

Points prepare(const Catalog& catalog, const std::vector<PointSpec>& specs,
               const SimOptions& options, Progress& progress, std::vector<PointResult>& results) {
  Points points;
  Deployments deployments;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const PointSpec& s = specs[i];
    results[i].spec = s;
    results[i].xpus = point_xpus(s);
    auto p = prepare_point(catalog, s, options, deployments, results[i]);
    if (!p) {
      results[i].error = p.error();
      points.push_back(nullptr);
      continue;
    }
    (*p)->progress = &progress;
    progress.total += static_cast<std::int64_t>((*p)->requests.size());
    points.push_back(std::move(*p));
  }
  return points;
}

}  // namespace racktwin::sim::detail
