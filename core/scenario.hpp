#pragma once
// What a user asks the twin: which systems and models, under which workloads, layouts and
// concurrencies, with which seed and where the results go. Parsed once from YAML by scenarios/ and
// validated there; every value below is already checked. The format is documented in
// docs/scenarios.md.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace racktwin {

// InferenceX fixed-length closed-loop workload: C clients, prompts_per_client x C prompts, the
// first warmup_per_client x C requests excluded from the metrics; ISL and OSL each uniform in
// [range_ratio x L, L]; generation ignores EOS; random prompts, so no prefix-cache hits.
// Default acceptance of speculative decoding when a workload does not give one: each drafted token
// is accepted with probability kMtpTokenAcceptance, given that the ones before it were, so a step
// emits 1 + p + p^2 + ... + p^d tokens (d drafted). DeepSeek-V3's report measures 85-90% acceptance
// of its MTP module's token; 0.85 takes the low end (docs/scenarios.md).
inline constexpr double kMtpTokenAcceptance = 0.85;
double default_mtp_acceptance(int draft_tokens);

struct InferenceXWorkload {
  int isl = 0;
  int osl = 0;
  double range_ratio = 0.8;
  bool mtp = false;                      // multi-token prediction / speculative decoding
  std::optional<double> mtp_acceptance;  // mean tokens emitted per decode step when mtp is on
  int mtp_draft_tokens = 1;              // tokens drafted per decode step when mtp is on
  std::optional<std::string> precision;  // weight variant; unset = the system's best
  int prompts_per_client = 10;
  int warmup_per_client = 2;
  // Open-loop Poisson arrivals (kind: poisson): request rates swept (req/s), requests per point and
  // how many of the first are warm-up.
  std::vector<double> rates;
  int requests = 1000;
  int warmup_requests = 100;
};

// The shortest length drawn for a nominal length L: max(1, ceil(range_ratio x L)).
inline int shortest_length(const InferenceXWorkload& w, int length) {
  return std::max(1, static_cast<int>(std::ceil(w.range_ratio * length)));
}
// Prompt plus output tokens of a request, on average over the uniform draws.
inline double mean_request_tokens(const InferenceXWorkload& w) {
  return (shortest_length(w, w.isl) + w.isl + shortest_length(w, w.osl) + w.osl) / 2.0;
}

// One request of a Mooncake-format trace (JSONL; AIPerf mooncake_trace, Dynamo's generator).
struct TraceRequest {
  double timestamp_s = 0;  // arrival, from the trace's "timestamp" (ms since the first)
  int input_length = 0;
  int output_length = 0;
  std::vector<std::uint64_t>
      hash_ids;                   // ids of consecutive prompt blocks; equal ids = shared prefix
  std::string session_id;         // empty: not part of a multi-turn session
  std::optional<double> delay_s;  // pause after the session's previous turn, from "delay" (ms)
  int line = 0;                   // line in the trace file
};

// inferencex: closed loop of C clients; poisson: open loop at a request rate; trace: replay of a
// Mooncake-format JSONL file.
enum class WorkloadKind { inferencex, poisson, trace, agentic };

// A synthetic agentic multi-turn workload with the characteristics of AgentX (docs/scenarios.md
// gives each default's rationale). Lengths are tokens; ranges are uniform [lo, hi].
struct AgenticWorkload {
  int sessions_per_client = 4;
  int turns_min = 4, turns_max = 12;                        // turns per session
  int first_context_min = 8000, first_context_max = 32000;  // system prompt, task and files
  int tool_result_min = 1000, tool_result_max = 12000;      // context added by each tool call
  int output_min = 100, output_max = 800;                   // tokens generated per turn
  double tool_pause_min_s = 0.5, tool_pause_max_s = 5.0;    // tool runs between turns
  int max_context = 200000;            // a session ends before its context passes this
  double subagent_probability = 0.07;  // per turn: fan out to sub-agents
  int subagents_min = 2, subagents_max = 4;
  int subagent_turns_min = 2, subagent_turns_max = 5;
  int subagent_context_min = 4000, subagent_context_max = 16000;
  int block_tokens = 512;   // prefix-cache block size
  int warmup_sessions = 0;  // per client, left out of the metrics
};

struct TraceWorkload {
  std::string file;         // as resolved (relative paths are relative to the scenario file)
  int block_tokens = 512;   // tokens per hash_ids block
  double time_scale = 1.0;  // multiplies timestamps and delays (0.5 replays twice as fast)
  int warmup_requests = 0;  // the first requests, in file order, left out of the metrics
  std::shared_ptr<const std::vector<TraceRequest>> requests;
};

// session_affinity: every turn of a session goes to the replica that served its first turn (where
// its prefix is cached); requests without a session go to the least outstanding replica.
// prefix_aware: the replica whose prefix cache holds the longest run of the request's leading
// blocks (ties, and requests without blocks, to the least outstanding), unless that replica has
// far more requests in flight than the least busy one (docs/scenarios.md gives the rule).
enum class RouterPolicy { least_outstanding, round_robin, session_affinity, prefix_aware };
// The scenario word of a policy: "least_outstanding", "round_robin", ...
std::string router_name(RouterPolicy p);
std::optional<RouterPolicy> router_from_name(std::string_view s);
std::vector<std::string> router_names();  // every policy's word, in declaration order

struct Workload {
  std::string id;
  WorkloadKind kind = WorkloadKind::inferencex;
  InferenceXWorkload
      inferencex;           // lengths and arrivals of inferencex and poisson; precision of all
  TraceWorkload trace;      // kind: trace
  AgenticWorkload agentic;  // kind: agentic
};

// A parallel layout of one model replica.
struct Layout {
  std::string name;           // optional label
  int tp = 1;                 // tensor parallel degree
  int ep = 1;                 // expert parallel degree (MoE), within the replica
  int pp = 1;                 // pipeline stages
  bool dp_attention = false;  // attention data-parallel across the TP ranks (MLA models)
  int xpus() const { return tp * pp; }
  // "tp8", "tp8-ep8-dpa", "tp4-pp2": the name used when none is given.
  std::string label() const {
    std::string s = "tp" + std::to_string(tp);
    if (ep > 1) s += "-ep" + std::to_string(ep);
    if (pp > 1) s += "-pp" + std::to_string(pp);
    if (dp_attention) s += "-dpa";
    return s;
  }
};

// Parses a label such as "tp8", "tp8-ep8-dpa" or "tp4-pp2" (parts in any order; tp defaults to 1).
std::expected<Layout, std::string> parse_layout(std::string_view label);

struct LayoutSelection {
  std::vector<int> replica_xpus;  // every valid layout of these replica sizes
  std::vector<Layout> named;      // plus these explicit layouts
  bool all_valid() const { return replica_xpus.empty() && named.empty(); }
};

// How a point serves: aggregated (every replica prefills and decodes) or disaggregated, with a
// pool of prefill replicas handing each prompt's KV to a pool of decode replicas.
struct ServingMode {
  int prefill = 0;  // replicas of the prefill pool; 0 = aggregated
  int decode = 0;   // replicas of the decode pool (disaggregated)
  // The prefill replicas' own layout (disaggregated); none: both pools run the point's layout.
  std::optional<Layout> prefill_layout;
  bool disaggregated() const { return prefill > 0; }
  // "aggregated", "1p3d" for one prefill and three decode replicas, or "3p1d/tp2" when the
  // prefill replicas run tp2 whatever the decode replicas run.
  std::string label() const {
    if (!disaggregated()) return "aggregated";
    std::string s = std::to_string(prefill) + "p" + std::to_string(decode) + "d";
    if (prefill_layout) s += "/" + prefill_layout->label();
    return s;
  }
};

// Parses "aggregated", "<P>p<D>d" (P, D >= 1) or "<P>p<D>d/<layout>" (a layout label).
std::expected<ServingMode, std::string> parse_serving_mode(std::string_view label);

// A part that fails during each point's run: the `index`-th part of kind `part` (in the
// topology's build order) of the point's deployment, at `at_s` seconds of simulated time, back in
// service `repair_s` later (never, when unset). docs/scenarios.md lists the kinds.
struct FailureSpec {
  std::string part;  // a topology part kind: xpu, compute_tray, switch_tray, host, ...
  int index = 0;
  double at_s = 0;
  std::optional<double> repair_s;
};
// The part kinds a failure may name.
inline const std::vector<std::string> kFailureParts{
    "xpu", "compute_tray", "switch_tray", "host", "compute_rack", "host_rack", "power_feed"};

struct OutputSpec {
  std::optional<std::string> db;     // SQLite results database
  std::optional<std::string> json;   // machine-readable results file
  std::optional<std::string> plots;  // directory for PNG/SVG charts
};

// The facility the systems are deployed in. Defaults are documented in docs/scenarios.md.
struct FacilitySpec {
  double pue = 1.10;                                  // power usage effectiveness
  UsdPerJoule electricity_price = usd_per_kwh(0.08);  // blended all-in price of energy
  std::optional<Watts> power_budget;                  // IT power available, e.g. 100 MW
  bool pue_given = false;                             // false = the documented default is used
  bool price_given = false;
};

// The serving engine's limits and admission policy for every point (docs/scenarios.md, "Engine");
// unset: the simulation's defaults (sim::EngineParams, perf::MemoryParams).
struct EngineSpec {
  std::optional<int> max_seqs;                // sequences running at once, per replica
  std::optional<int> max_batched_tokens;      // tokens per iteration; sizes the workspace too
  std::optional<double> memory_utilization;   // share of HBM for weights, KV and workspace
  std::optional<double> reserve_output;       // share of the remaining output reserved in KV at
                                              // admission: 1 never preempts, 0 admits on the
                                              // current context and preempts when the cache fills
  std::optional<bool> prefix_cache;           // keep finished prompts' blocks for reuse
};

// Bounds on the work one run may ask for, checked before any simulation (docs/scenarios.md,
// "Limits"); a scenario raises them with its `limits:` key.
struct RunLimits {
  std::int64_t points = 10'000;       // points per run, over every layout and serving mode
  std::int64_t requests = 1'000'000;  // requests per point
  double span_s = 86'400;             // simulated seconds of arrivals, pauses and failures per point
};

struct Scenario {
  std::string file;  // where it was read from
  std::string text;  // the YAML as given (stored with results)
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  std::vector<std::string> systems;
  std::vector<std::string> models;
  std::vector<Workload> workloads;
  LayoutSelection layouts;
  std::vector<int> concurrency;
  int replicas = 1;  // model replicas per point, behind one router (aggregated serving)
  std::vector<ServingMode> serving{ServingMode{}};  // each point runs in every mode listed
  // KV offload: share of each host DRAM pool (a Katsu tray's, a Grace's, a server's) that holds
  // KV blocks evicted from HBM, for any replica of the pool to load back; 0 = no offload.
  double host_offload = 0;
  std::vector<FailureSpec> failures;  // parts that fail during every point's run
  EngineSpec engine;
  RouterPolicy router = RouterPolicy::least_outstanding;
  FacilitySpec facility;
  OutputSpec output;
  // A file of published reference points (docs/validation.md) whose figures racktwin run shows
  // beside the twin's, resolved relative to the scenario file; not set: none.
  std::optional<std::string> reference;
  RunLimits limits;
};

}  // namespace racktwin
