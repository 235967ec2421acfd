#pragma once
// A scenario's sweep: the points `racktwin run` simulates (systems x models x workloads x layouts
// x serving modes x loads) and the per-(workload, model, system) summary it reports. `racktwin
// validate` and `racktwin calibrate` predict published figures through the same code.
//
// Contract:
// - build_sweep() is deterministic: the same scenario, seed and options give the same points in
//   the same order; each point's seed is sim::stream_seed(seed, "system/model/workload/layout/
//   load"), so a point's results do not depend on which other points are in the batch.
// - summarise() and the curve helpers read results only; they never simulate. A process that
//   simulates more than one batch runs each in worker processes (app/sim_job.hpp).

#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/catalog.hpp"
#include "core/scenario.hpp"
#include "sim/serving.hpp"

namespace racktwin::sim {

struct SweepOptions {
  std::uint64_t seed = 1;
  // Serving modes every point runs in; unset: the scenario's (`serving`, aggregated by default).
  std::optional<std::vector<ServingMode>> modes;
  // Efficiency of a system; unset: the catalog's (Catalog::efficiency_for).
  std::function<std::optional<perf::Efficiency>(const System&)> efficiency;
};

// The engine settings of a system's points: each of the scenario's `engine` keys where given, else
// the system's catalog default (serving.engine_limits: what its published single-server
// benchmarks ran; build_sweep passes the system for aggregated replicas within one scale-up domain
// only), else the simulation's default. The memory planner's parameters, and the replica engine's for a
// workload (whose cache block size a trace or agentic workload sets). Without a system: the
// scenario's keys over the simulation's defaults.
// `l`: the replica's layout; a DP-attention layout's default token budget gives each attention
// rank its slice (batched_tokens_default).
perf::MemoryParams memory_of(const Scenario& sc, const System* s = nullptr,
                             const Layout* l = nullptr);
EngineParams engine_of(const Scenario& sc, const Workload& w, const System* s = nullptr,
                       const Layout* l = nullptr);

// The sequences a replica of a disaggregated pool holds at once where the scenario does not set
// max_seqs: the system's multi-node benchmarks' batch per attention rank (catalog
// serving.multinode.max_seqs_per_rank) times the replica's attention ranks (its TP degree under DP
// attention, else one); unset in the catalog: none (the simulation's default applies).
std::optional<int> multinode_max_seqs(const System& s, const Layout& l);
// The sequences a replica of layout `l` batches when each attention rank batches `per_rank`: times
// its TP ranks under DP attention, else `per_rank`; at most 2^20 (the engine's bound).
int batch_of_ranks(long per_rank, const Layout& l);

// A prefill pool of its own layout `l` (a serving mode such as 3p1d/tp2): the scenario's engine
// keys over the simulation's defaults for that layout (no single-server limits: the pools are a
// multi-node deployment), and multinode_max_seqs where the scenario does not set max_seqs.
PrefillPool prefill_pool_of(const Scenario& sc, const Workload& w, const System& s,
                            const Layout& l);

// Tokens per iteration each attention rank of a DP-attention replica takes by default, where
// neither the scenario nor the catalog sets the budget (an assumption: SGLang gives each DP rank
// chunked_prefill_size / dp_size, and wide-EP deployments raise the budget with the ranks).
inline constexpr int kBatchedTokensPerAttentionRank = 2048;
// The simulation's default tokens per iteration for a layout: 16,384, or under DP attention
// kBatchedTokensPerAttentionRank per rank when that is more. `l` null: 16,384.
int batched_tokens_default(const Layout* l);

// Where one engine setting of a system's points comes from, in the order memory_of and engine_of
// take them: the scenario's key, the system's catalog default (its published benchmarks' engine),
// or the simulation's default. `s` null: no catalog default.
enum class SettingOrigin { scenario, catalog, simulation };
template <class T>
SettingOrigin origin_of(const std::optional<T>& given, const System* s,
                        std::optional<T> EngineLimits::*limit) {
  if (given) return SettingOrigin::scenario;
  if (s != nullptr && s->serving.engine_limits.*limit) return SettingOrigin::catalog;
  return SettingOrigin::simulation;
}

// The most scale-up domains one replica of a sweep may span over the scale-out network.
inline constexpr int kMaxSpannedDomains = 4;

// The XPUs of one server, a replica size every default sweep tries (the published single-node
// benchmarks ran up to 8 GPUs).
inline constexpr int kServerXpus = 8;
// The widest replica a default sweep tries within a scale-up domain for an MoE model.
inline constexpr int kMaxSweepReplicaXpus = 256;

// The wide expert-parallel replica sizes a default sweep adds for an MoE model: 16, 32, ... XPUs up
// to the scale-up domain, one rank per routed expert and kMaxSweepReplicaXpus; none for a dense
// model or a domain of one server.
std::vector<int> wide_ep_sizes(const System& s, const Model& m);

// The replica sizes below one tray or server a default sweep adds: 1, 2, 4, ... XPUs short of the
// larger of the compute tray and kServerXpus (within the domain), the tray's own size aside. The
// published sweeps served a model that fits in fewer XPUs on smaller replicas: gpt-oss-120b ran on
// one GPU (TP1) in most single-server runs.
std::vector<int> sub_server_sizes(const System& s);

// The layouts a sweep tries for one system and model: the scenario's named layouts, plus every
// valid layout (pipeline depth 1) of the scenario's replica sizes. Without layouts in the
// scenario: every valid layout of one compute tray and of kServerXpus XPUs, the valid plain-TP and
// wide expert-parallel layouts (tp = ep, DP attention) of sub_server_sizes, plus the valid wide
// expert-parallel layouts of wide_ep_sizes. When none of those holds the
// model (its memory need), every valid layout of the smallest wider power of two within the
// domain that does, else of the fewest whole domains that do (2 or 4, as multi-node serving
// deploys), with pipeline depths up to the number of domains.
// `min_tokens`: KV tokens a layout must hold (the longest request).
std::vector<Layout> sweep_layouts(const Catalog& cat, const Scenario& sc, const System& s,
                                  const Model& m, const std::string& precision, double min_tokens);

// Every point of the scenario's sweep, in the order racktwin run simulates them. Fails with a
// message when a system has no efficiency parameters.
std::expected<std::vector<PointSpec>, std::string> build_sweep(const Catalog& cat,
                                                               const Scenario& sc,
                                                               const SweepOptions& options);

// The best over layouts and loads of one (workload, model, system), as the published comparisons
// report it.
struct SweepSummary {
  double peak_tps = 0;       // max total (input + output) tok/s per XPU
  double peak_rated_kw = 0;  // max total tok/s per rated-TDP kW
  double peak_allin_mw = 0;  // max total tok/s per all-in MW
  std::optional<double> min_tbt;  // min median TPOT, s; none when no request decoded a 2nd token
  double min_e2e = 1e30;     // min median E2E latency, s
  double ttft_at_min_e2e = 0;
  std::string best_layout;  // layout of peak_tps, with its serving mode when disaggregated
  bool allin_computed = false;
  int points = 0, failed = 0;
  // The first failed point's layout (with its serving mode when disaggregated) and error.
  std::string first_failure;
};
using SummaryKey = std::tuple<std::string, std::string, std::string>;  // workload, model, system
using CurveKey = std::tuple<std::string, std::string, std::string>;    // system, model, workload
std::map<SummaryKey, SweepSummary> summarise(const std::vector<PointResult>& results);

// What a throughput-against-interactivity curve plots on its y axis.
enum class CurveValue { total_tps_per_xpu, output_tps_per_xpu, total_tps_per_allin_mw };

// The Pareto envelopes over layouts and loads of every (system, model, workload) of the results
// (CurvePoint::index points into `results`); failed points are left out.
std::map<CurveKey, std::vector<CurvePoint>> envelopes(const std::vector<PointResult>& results,
                                                      CurveValue value);

}  // namespace racktwin::sim
