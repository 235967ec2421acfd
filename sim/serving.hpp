#pragma once
// Serving simulation: token workloads through replicas of a model on a system, request by request,
// in one SimGrid discrete-event simulation per call. SimGrid stays inside sim/: this header shows
// none of it.
//
// Contract:
// - simulate() runs every point of the batch in one simulation (points share no resources, so each
//   point's results are the same as if it ran alone) and returns one PointResult per point, in
//   order.
// - Randomness comes from the point's seed split into named streams; the same inputs give
//   byte-identical results.
// - One process runs one simulation: SimGrid keeps one engine per process. A second call in the
// same
//   process fails with an error saying so.

#include <cstdint>
#include <expected>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/catalog.hpp"
#include "core/perf/efficiency.hpp"
#include "core/perf/step.hpp"
#include "core/scenario.hpp"
#include "sim/replica_engine.hpp"

namespace racktwin::sim {

// How a point's requests arrive, and the load they put on it: one alternative per WorkloadKind.
//
// InferenceX fixed-length requests (lengths from PointSpec::workload) from `clients` closed-loop
// clients: each client sends its next prompt as soon as its previous one finished.
struct ClosedLoop {
  int clients = 1;  // >= 1
};
// InferenceX fixed-length requests arriving as a Poisson process.
struct OpenLoop {
  double rate_req_s = 0;  // mean arrival rate, requests per second; > 0
};
// A Mooncake trace replayed at its own timestamps (scaled by the trace's time_scale).
struct TraceReplay {
  TraceWorkload trace;
};
// Synthetic agentic sessions from `clients` concurrent users, each starting its next session when
// the previous one finished.
struct Agentic {
  AgenticWorkload workload;
  int clients = 1;  // >= 1
};
using Arrivals = std::variant<ClosedLoop, OpenLoop, TraceReplay, Agentic>;

// The workload kind an arrival process belongs to.
inline WorkloadKind kind_of(const Arrivals& a) {
  constexpr WorkloadKind kinds[] = {WorkloadKind::inferencex, WorkloadKind::poisson,
                                    WorkloadKind::trace, WorkloadKind::agentic};
  static_assert(std::size(kinds) == std::variant_size_v<Arrivals>);
  return kinds[a.index()];
}
// Concurrent clients of a closed loop (ClosedLoop, Agentic); none for open loop and trace replay.
inline std::optional<int> clients_of(const Arrivals& a) {
  if (const auto* c = std::get_if<ClosedLoop>(&a)) return c->clients;
  if (const auto* g = std::get_if<Agentic>(&a)) return g->clients;
  return std::nullopt;
}
// Arrival rate of an open loop, requests per second; none for the others.
inline std::optional<double> rate_of(const Arrivals& a) {
  if (const auto* o = std::get_if<OpenLoop>(&a)) return o->rate_req_s;
  return std::nullopt;
}

// Disaggregated serving whose prefill replicas run a layout of their own, with that layout's
// memory plan and engine limits.
struct PrefillPool {
  Layout layout;
  perf::MemoryParams memory;
  EngineParams engine;
};

struct PointSpec {
  const System* system = nullptr;
  const Model* model = nullptr;
  Layout layout;
  std::string precision;
  InferenceXWorkload workload;  // lengths, MTP and precision of every kind; arrivals in `arrivals`
  std::string workload_id;
  Arrivals arrivals = ClosedLoop{};
  RouterPolicy router = RouterPolicy::least_outstanding;
  int replicas = 1;  // aggregated: replicas; disaggregated: replicas of the decode pool
  // Disaggregated serving: replicas of the prefill pool (>= 1); none = aggregated.
  std::optional<int> prefill_replicas;
  // With prefill_replicas: the prefill replicas' own layout; none: they run `layout`.
  std::optional<PrefillPool> prefill_pool;
  double host_offload = 0;  // share of each host DRAM pool holding KV evicted from HBM; 0 = none
  std::vector<FailureSpec> failures;  // parts that fail during the run
  // Where the replicas run, domain by domain: placement[d][p] replicas of pool p (prefill then
  // decode; one pool when aggregated) in domain d (sim::deploy_in_domains), as a site rehearsal
  // packs them; empty: on as few domains as hold them (sim::deploy).
  std::vector<std::vector<int>> placement;
  std::uint64_t seed = 1;
  perf::Efficiency efficiency;
  perf::MemoryParams memory;
  EngineParams engine;
  FacilitySpec facility;
};

// The point's serving mode: aggregated, or its prefill and decode pools.
inline ServingMode serving_mode(const PointSpec& s) {
  if (!s.prefill_replicas) return ServingMode{};
  ServingMode m{*s.prefill_replicas, s.replicas, std::nullopt};
  if (s.prefill_pool) m.prefill_layout = s.prefill_pool->layout;
  return m;
}

// The point's layout, with its serving mode when disaggregated: "tp8-ep8-dpa 3p1d/tp2".
inline std::string configuration_label(const PointSpec& s) {
  return s.layout.label() + (s.prefill_replicas ? " " + serving_mode(s).label() : "");
}

// XPUs of the point's replicas, both pools.
// XPUs of one prefill replica: its own layout's, else the point's.
inline int prefill_replica_xpus(const PointSpec& s) {
  return s.prefill_pool ? s.prefill_pool->layout.xpus() : s.layout.xpus();
}

inline int point_xpus(const PointSpec& s) {
  const int prefill = s.prefill_replicas.value_or(0);
  return s.layout.xpus() * s.replicas +
         prefill_replica_xpus(s) * prefill;
}

// Summary statistics of one latency distribution, in seconds.
struct Stats {
  double mean = 0, median = 0, p90 = 0, p99 = 0, min = 0, max = 0;
  // The distribution itself: percentiles[k] is the k-th percentile, k = 0..100 (empty when there
  // were no samples). Interpolated as the quantiles above.
  std::vector<double> percentiles;
  static Stats of(std::vector<double> v);
};

struct PointResult {
  PointSpec spec;
  int xpus = 0;                   // XPUs serving (replicas of both pools x layout)
  int domains = 0;                // scale-up domains the replicas are placed on
  double kv_capacity_tokens = 0;  // per replica
  std::int64_t requests = 0;      // measured (warm-up excluded)
  std::int64_t completed = 0;     // all, warm-up included
  double duration_s = 0;          // measured window: first measured arrival to last measured finish
  double input_tokens = 0, output_tokens = 0;  // measured
  double total_tps_per_xpu = 0, output_tps_per_xpu = 0, input_tps_per_xpu = 0;
  Stats ttft, tpot, e2e;              // seconds
  double interactivity = 0;           // tok/s/user = 1 / median TPOT
  double e2e_norm_interactivity = 0;  // 1 / P90(E2E / OSL)
  double prefix_hit_rate = 0;  // prompt tokens found in the prefix cache / prompt tokens admitted
  // Failures: requests restarted because their replica went down, the replicas' time out of
  // service (down, repairing, reloading weights), and the mean time from a failure to the replica
  // serving again (repair plus weight reload).
  std::int64_t retried_requests = 0;
  double replica_down_s = 0;
  double recovery_s = 0;
  double offload_hit_rate = 0;  // prompt tokens loaded from host DRAM / prompt tokens admitted
  double offloaded_bytes = 0;   // KV written from HBM to host DRAM over the run
  double host_tier_blocks = 0;  // capacity of a replica's host DRAM tier, in cache blocks
  // Disaggregated serving: prompt KV moved from prefill to decode replicas (measured requests).
  double kv_transfer_bytes = 0;  // per request, mean
  double kv_transfer_s = 0;      // per request, mean time from sent to received
  // Prompts per transfer over the whole run: the prompts one prefill replica hands to one decode
  // replica at one instant go as one SimGrid communication (sim/point_state.hpp).
  double kv_prompts_per_transfer = 0;
  double mean_concurrency = 0;   // time-average of requests in flight over the window
  // Open loop and trace replay: the requests in flight over the arrivals, their growth as a share
  // of the arrival rate (0 when the replicas keep up), their rise over the arrivals and the scatter
  // about that trend (requests); overloaded when arrivals outrun the replicas and the queue grows
  // without bound (sim/collect.cpp).
  double queue_growth = 0, queue_rise = 0, queue_scatter = 0;
  bool overloaded = false;
  // Activity of the XPUs over the window, busy-time-weighted, including idle time: compute, memory
  // and scale-up links (power/xpu_power.hpp), and the fraction of it the XPUs ran steps.
  double compute_activity = 0, memory_activity = 0, link_activity = 0, busy_activity = 0;
  // Set by evaluate() (sim/evaluate.hpp) from the activity and the power model: power and energy
  // per XPU over the window, and the throughput under each power normalisation.
  double xpu_power_w = 0;
  double energy_per_token_j = 0;
  double tps_per_rated_kw = 0, tps_per_measured_kw = 0, tps_per_it_kw = 0;
  // All-in utility power two ways: provisioned (the published InferenceX constant per XPU where
  // there is one, else rated parts x PUE) and drawn at the point's operating activity.
  double tps_per_allin_provisioned_mw = 0, tps_per_allin_operating_mw = 0;
  bool all_in_computed = false;  // the provisioned figure is computed, not published
  // Where each XPU's all-in power goes at the operating activity (W per XPU; docs/power.md).
  double power_xpu_w = 0, power_tray_overhead_w = 0, power_switches_w = 0, power_hosts_w = 0,
         power_conversion_loss_w = 0, power_facility_overhead_w = 0, power_all_in_operating_w = 0;
  // Electricity cost of a million tokens at the point: all-in W drawn per XPU / tok/s per XPU x
  // the facility's electricity price x 1e6 ($ per million tokens, energy only).
  double energy_usd_per_mtok = 0;
  // Work done by the simulator.
  std::int64_t iterations = 0, plans = 0, preemptions = 0;
  double max_kv_used = 0;
  // Mean iteration time over every iteration of the run (warm-up included), split as the step
  // model splits it: compute-bound, memory-bound, exposed communication, fixed overheads (s).
  double iteration_compute_s = 0, iteration_memory_s = 0, iteration_communication_s = 0,
         iteration_overhead_s = 0;
  // The mean iteration's roofline: its operations at the chip's peak FLOP/s and HBM bandwidth with
  // no communication or overhead (perf::Breakdown::roofline); roofline_ratio() = mean iteration
  // time / it, at least 1.
  double iteration_roofline_s = 0;
  double roofline_ratio() const {
    const double t = iteration_compute_s + iteration_memory_s + iteration_communication_s +
                     iteration_overhead_s;
    return iteration_roofline_s > 0 ? t / iteration_roofline_s : 0.0;
  }
  // One-second time series over the whole run (warm-up included): index = second of simulated time.
  struct Second {
    double output_tokens = 0, prefill_tokens = 0, completed = 0;
    double xpu_power_w = 0;  // mean over the point's XPUs, at their activity (evaluate())
    // Mean over the point's replicas; evaluate()'s input, not kept with the results.
    double compute_activity = 0, memory_activity = 0, link_activity = 0, busy_activity = 0;
  };
  std::vector<Second> timeseries;
  std::string error;  // non-empty when the point could not run (layout does not fit, ...)
};

struct SimOptions {
  bool fuse = true;  // advance pure-decode stretches in one step
  // Called as requests complete with the share of all the batch's requests done (0 to 1, about a
  // thousand times per run at most, and once with 1 at the end). Front ends draw progress with it.
  std::function<void(double fraction_done)> progress;
};

std::expected<std::vector<PointResult>, std::string> simulate(const Catalog& catalog,
                                                              const std::vector<PointSpec>& points,
                                                              const SimOptions& options = {});

// One point of a throughput-against-interactivity curve.
struct CurvePoint {
  double interactivity = 0;  // tok/s/user (x)
  double value = 0;          // e.g. total tok/s per XPU (y)
  std::size_t index = 0;     // where it came from (a PointResult index)
};

// The Pareto envelope over layouts and concurrencies, as InferenceX draws it: the points that no
// other point beats on both interactivity and value, by increasing interactivity (so by decreasing
// value).
std::vector<CurvePoint> pareto_envelope(std::vector<CurvePoint> points);

// The envelope's value at an interactivity, interpolated linearly between its points; nullopt
// outside the envelope's interactivity range.
std::optional<double> value_at(const std::vector<CurvePoint>& envelope, double interactivity);

// Open-loop Poisson requests: `requests` requests whose arrival times are a Poisson process at
// `rate` per second (from the seed's "arrivals" stream), lengths as inferencex_requests; the first
// `warmup_requests` are warm-up.
std::vector<Request> poisson_requests(const InferenceXWorkload& w, double rate, std::uint64_t seed);

// Requests with dependencies: a request arrives once every request it depends on has finished
// (the latest finish, plus its delay when given, else no earlier than its release time); one with
// no dependency arrives at its release time. Multi-turn sessions, sub-agents and clients that run
// sessions one after another are all such graphs.
struct RequestGraph {
  std::vector<Request> requests;
  std::vector<std::vector<int>> dependents;  // requests waiting for this one
  std::vector<int> pending;                  // how many requests this one waits for
  std::vector<double> delay;                 // pause after the last of them; negative: none
  std::vector<double> release;               // earliest arrival, s
  std::vector<int> session;                  // session index (session affinity), -1: none
  int sessions = 0;
};

// A Mooncake trace as a graph: each turn of a session waits for the session's previous turn.
RequestGraph trace_graph(const TraceWorkload& trace);

// A synthetic agentic workload for `clients` concurrent users (closed loop over sessions): each
// client runs sessions_per_client sessions one after another; a session's turns grow its context by
// each turn's output and tool result, pause for the tool, and sometimes fan out to sub-agents that
// the next turn waits for. Seeded: the same seed gives the same graph.
RequestGraph agentic_graph(const AgenticWorkload& w, int clients, std::uint64_t seed);

// A 64-bit seed for the named random stream `name` of a master seed (SplitMix64 over an FNV-1a
// hash).
std::uint64_t stream_seed(std::uint64_t master, const std::string& name);

// The InferenceX request list of a point: prompts_per_client x C requests with ISL and OSL drawn
// uniformly from [range_ratio x L, L]; the first warmup_per_client x C are warm-up.
std::vector<Request> inferencex_requests(const InferenceXWorkload& w, int concurrency,
                                         std::uint64_t seed);

}  // namespace racktwin::sim
