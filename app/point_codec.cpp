#include "app/point_codec.hpp"

#include "scenarios/trace_loader.hpp"

namespace nlohmann {

template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v)
      j = *v;
    else
      j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null())
      v.reset();
    else
      v = j.get<T>();
  }
};

template <int T, int E, int D, int F, int K, int M>
struct adl_serializer<racktwin::Quantity<T, E, D, F, K, M>> {
  static void to_json(json& j, const racktwin::Quantity<T, E, D, F, K, M>& q) { j = q.value(); }
  static void from_json(const json& j, racktwin::Quantity<T, E, D, F, K, M>& q) {
    q = racktwin::Quantity<T, E, D, F, K, M>(j.get<double>());
  }
};

}  // namespace nlohmann

namespace racktwin {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Layout, name, tp, ep, pp, dp_attention)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(InferenceXWorkload, isl, osl, range_ratio, mtp, mtp_acceptance,
                                   mtp_draft_tokens, precision, prompts_per_client,
                                   warmup_per_client, rates, requests, warmup_requests)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(AgenticWorkload, sessions_per_client, turns_min, turns_max,
                                   first_context_min, first_context_max, tool_result_min,
                                   tool_result_max, output_min, output_max, tool_pause_min_s,
                                   tool_pause_max_s, max_context, subagent_probability,
                                   subagents_min, subagents_max, subagent_turns_min,
                                   subagent_turns_max, subagent_context_min, subagent_context_max,
                                   block_tokens, warmup_sessions)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FailureSpec, part, index, at_s, repair_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FacilitySpec, pue, electricity_price, power_budget, pue_given,
                                   price_given)

namespace perf {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Efficiency, mfu, mbu, attn_eff, comm_eff, alpha, overlap,
                                   layer_overhead, step_overhead, seq_overhead, moe_imbalance,
                                   dequant_eff, request_latency)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MemoryParams, memory_utilization, runtime_reserve,
                                   workspace_bytes_per_token_hidden, max_batched_tokens,
                                   activation_passes)
}  // namespace perf

namespace sim {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EngineParams, max_seqs, max_batched_tokens, fuse,
                                   reserve_output_ratio, tokens_per_step, prefix_cache,
                                   prefill_only, block_tokens)
}  // namespace sim

namespace app {
namespace {

// The arrivals as an object tagged by "kind": "closed_loop" {clients}, "open_loop" {rate_req_s},
// "trace" {file, block_tokens, time_scale, warmup_requests, requests: the count, reread from the
// file}, "agentic" {clients, workload}.
nlohmann::json arrivals_to_json(const sim::Arrivals& a) {
  struct Visitor {
    nlohmann::json operator()(const sim::ClosedLoop& c) const {
      return {{"kind", "closed_loop"}, {"clients", c.clients}};
    }
    nlohmann::json operator()(const sim::OpenLoop& o) const {
      return {{"kind", "open_loop"}, {"rate_req_s", o.rate_req_s}};
    }
    nlohmann::json operator()(const sim::TraceReplay& t) const {
      return {{"kind", "trace"},
              {"file", t.trace.file},
              {"block_tokens", t.trace.block_tokens},
              {"time_scale", t.trace.time_scale},
              {"warmup_requests", t.trace.warmup_requests},
              {"requests", t.trace.requests ? t.trace.requests->size() : 0}};
    }
    nlohmann::json operator()(const sim::Agentic& g) const {
      return {{"kind", "agentic"}, {"clients", g.clients}, {"workload", g.workload}};
    }
  };
  return std::visit(Visitor{}, a);
}

}  // namespace

nlohmann::json spec_to_json(const sim::PointSpec& s) {
  nlohmann::json j;
  j["system"] = s.system->id;
  j["model"] = s.model->id;
  j["layout"] = s.layout;
  j["precision"] = s.precision;
  j["workload"] = s.workload;
  j["workload_id"] = s.workload_id;
  j["arrivals"] = arrivals_to_json(s.arrivals);
  j["router"] = static_cast<int>(s.router);
  j["replicas"] = s.replicas;
  j["prefill_replicas"] = s.prefill_replicas;
  if (!s.placement.empty()) j["placement"] = s.placement;
  if (s.prefill_pool)
    j["prefill_pool"] = {{"layout", s.prefill_pool->layout},
                         {"memory", s.prefill_pool->memory},
                         {"engine", s.prefill_pool->engine}};
  j["host_offload"] = s.host_offload;
  j["failures"] = s.failures;
  j["seed"] = s.seed;
  j["efficiency"] = s.efficiency;
  j["memory"] = s.memory;
  j["engine"] = s.engine;
  j["facility"] = s.facility;
  return j;
}

namespace {

std::expected<std::shared_ptr<const std::vector<TraceRequest>>, std::string> trace_of(
    const nlohmann::json& t, TraceCache& traces) {
  const auto file = t.at("file").get<std::string>();
  const auto count = t.at("requests").get<std::size_t>();
  if (count == 0) return nullptr;
  auto it = traces.find(file);
  if (it == traces.end()) {
    auto reqs = load_mooncake_trace(file, static_cast<int>(count));
    if (!reqs)
      return std::unexpected("cannot read the trace " + file + ": " +
                             (reqs.error().empty() ? "" : reqs.error().front().to_string()));
    it = traces.emplace(file, std::make_shared<const std::vector<TraceRequest>>(std::move(*reqs)))
             .first;
  }
  if (it->second->size() != count)
    return std::unexpected("the trace " + file + " changed since the sweep was built");
  return it->second;
}

std::expected<sim::Arrivals, std::string> arrivals_from_json(const nlohmann::json& j,
                                                             TraceCache& traces) {
  const auto kind = j.at("kind").get<std::string>();
  if (kind == "closed_loop") return sim::ClosedLoop{j.at("clients").get<int>()};
  if (kind == "open_loop") return sim::OpenLoop{j.at("rate_req_s").get<double>()};
  if (kind == "agentic")
    return sim::Agentic{j.at("workload").get<AgenticWorkload>(), j.at("clients").get<int>()};
  if (kind == "trace") {
    sim::TraceReplay t;
    j.at("file").get_to(t.trace.file);
    j.at("block_tokens").get_to(t.trace.block_tokens);
    j.at("time_scale").get_to(t.trace.time_scale);
    j.at("warmup_requests").get_to(t.trace.warmup_requests);
    auto reqs = trace_of(j, traces);
    if (!reqs) return std::unexpected(reqs.error());
    t.trace.requests = *reqs;
    return t;
  }
  return std::unexpected("unknown arrivals kind '" + kind + "'");
}

}  // namespace

std::expected<sim::PointSpec, std::string> spec_from_json(const nlohmann::json& j,
                                                          const Catalog& cat, TraceCache& traces) {
  try {
    sim::PointSpec s;
    const auto sid = j.at("system").get<std::string>();
    const auto mid = j.at("model").get<std::string>();
    s.system = cat.find_system(sid);
    s.model = cat.find_model(mid);
    if (s.system == nullptr || s.model == nullptr)
      return std::unexpected("the catalog has no " + (s.system == nullptr ? sid : mid));
    j.at("layout").get_to(s.layout);
    j.at("precision").get_to(s.precision);
    j.at("workload").get_to(s.workload);
    j.at("workload_id").get_to(s.workload_id);
    auto arrivals = arrivals_from_json(j.at("arrivals"), traces);
    if (!arrivals) return std::unexpected(arrivals.error());
    s.arrivals = std::move(*arrivals);
    s.router = static_cast<RouterPolicy>(j.at("router").get<int>());
    j.at("replicas").get_to(s.replicas);
    j.at("prefill_replicas").get_to(s.prefill_replicas);
    if (j.contains("placement")) j.at("placement").get_to(s.placement);
    if (j.contains("prefill_pool")) {
      const auto& pool = j.at("prefill_pool");
      s.prefill_pool.emplace();
      pool.at("layout").get_to(s.prefill_pool->layout);
      pool.at("memory").get_to(s.prefill_pool->memory);
      pool.at("engine").get_to(s.prefill_pool->engine);
    }
    j.at("host_offload").get_to(s.host_offload);
    j.at("failures").get_to(s.failures);
    j.at("seed").get_to(s.seed);
    j.at("efficiency").get_to(s.efficiency);
    j.at("memory").get_to(s.memory);
    j.at("engine").get_to(s.engine);
    j.at("facility").get_to(s.facility);
    return s;
  } catch (const nlohmann::json::exception& e) {
    return std::unexpected(std::string("malformed point spec: ") + e.what());
  }
}

}  // namespace app
}  // namespace racktwin
