#pragma once
// The scheduler of one model replica: continuous batching with chunked prefill, KV-cache
// accounting with recompute preemption, and fused decode stretches. Plain C++ with no SimGrid:
// the simulation drives it in simulated time (sim/replica.cpp) and tests drive it directly.
//
// Contract:
// - plan(now) composes the next iterations from the current state and returns their end times
//   (boundaries). A plan holds one iteration when any prefill work is scheduled, else up to the
//   number of pure-decode iterations before the next sequence finishes or the KV cache fills
//   (fusion); with fusion off it always holds one.
// - apply(j) commits the first j iterations of the last plan (1 <= j <= size). Iteration times are
//   computed one by one in both modes, so fused and unfused runs give identical boundaries.
// - KV in use (private tokens plus every cached block) never exceeds the capacity; unpinned cached
//   blocks are evicted, least recently used first, before anything is preempted.
// - When even eviction leaves no room, a decode step preempts the most recently started sequence,
//   which returns to the front of the queue, behind the partly prefilled prompts, to be
//   recomputed. A step that preempted admits no new prompt, so the engine does not thrash.
// - Prefill: the queue's prompts are chunked in order within the iteration's token budget. A
//   replica with DP attention has one scheduling rank per attention (TP) rank, as SGLang runs one
//   scheduler per DP rank: each rank takes max_batched_tokens / tp tokens per iteration (its
//   decode sequences included), each chunk goes to the rank with the most room left, and a chunk
//   that does not finish its prompt fills its rank, so at most one partly prefilled prompt per
//   rank (one per replica without DP attention). The step model is told the busiest rank's share
//   of the prefill tokens and of the key positions they attend to.

#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "core/perf/step.hpp"
#include "sim/prefix_cache.hpp"

namespace racktwin::sim {

struct Request {
  std::int64_t id = 0;
  int isl = 0;
  int osl = 0;
  int client = 0;
  bool warmup = false;  // excluded from the metrics
  double arrival = -1;
  double ready = -1;  // when it reached its current replica (arrival, or the end of a KV transfer)
  double first_token = -1;
  double finish = -1;
  int replica = -1;
  int preemptions = 0;
  // Progress, owned by the replica engine. While the request decodes, generated, kv_tokens,
  // context and grown lag by the tokens the batch gained since it joined (`joined`, on the engine's
  // count of decode tokens); the engine settles them when it leaves the batch.
  int generated = 0;  // output tokens produced so far
  int prefilled = 0;  // prompt tokens (isl + generated at the time of a recompute) in the KV cache
  int target = 0;     // prompt tokens to prefill before decoding (isl, or more after a preemption)
  int kv_tokens = 0;  // tokens this request holds privately in the KV cache (not in shared blocks)
  int context = 0;    // tokens of its context in the cache (shared prefix blocks included)
  // Prefix caching: ids of the prompt's consecutive blocks (each id names the block and all before
  // it); empty when the prompt shares nothing (random InferenceX prompts).
  std::vector<std::uint64_t> blocks;
  int cached_blocks = 0;    // leading blocks it holds (pinned) in the replica's prefix cache
  // KV tokens reserved for it at admission: prompt + ratio x output. Its reservation is this plus
  // (1 - ratio) x each token it has generated since (`grown`), so never below what it holds.
  double reserved = 0;
  int grown = 0;
  bool kv_arrived = false;  // disaggregated serving: its prompt's KV came from a prefill replica
  bool failed = false;      // its replica failed under it: to be restarted on another
  // KV offload: whether the host tier was looked up for it, and the leading prompt blocks it holds
  // once the blocks the host tier had are loaded (an index into `blocks`; 0 = none loaded).
  bool load_checked = false;
  int loaded_blocks = 0;
  // Its place in the decode batch (ReplicaEngine): the engine's decode-token count when it joined
  // and when it reaches its output length, and its order of joining.
  std::int64_t joined = 0, ends = 0, serial = 0;
};

// A request whose replica failed under it (or whose KV was lost with the replica that held it):
// its progress and cache holdings are gone and it is marked failed, to be restarted from its
// prompt on another replica.
void lose_progress(Request& r);

struct EngineParams {
  int max_seqs = 1024;             // sequences decoding or prefilling at once
  int max_batched_tokens = 16384;  // tokens per iteration (decode + prefill chunk tokens); the
                                   // memory planner sizes its workspace for the same number
  bool fuse = true;                // advance pure-decode stretches in one plan
  // Admission: a new prompt starts only if the KV cache can hold the reservations of every admitted
  // sequence plus its own: prompt + reserve_output_ratio x remaining output tokens. 1 never
  // preempts (guaranteed-no-evict); lower values admit more and preempt when the cache fills.
  double reserve_output_ratio = 1.0;
  // Speculative decoding: mean tokens a decode step emits per sequence (1 = none). The engine
  // advances every decoding sequence by the same whole number of tokens per step: the running sum
  // of `tokens_per_step` rounded down, so a mean of 1.7 emits 1, 2, 2, 1, 2, ... tokens.
  double tokens_per_step = 1.0;
  bool prefix_cache = true;  // keep finished prompts' blocks in HBM for reuse (LRU)
  // Disaggregated serving, prefill pool: a request leaves once its prompt is prefilled and its
  // first token sampled (it appears in `finished` with no finish time), for a decode replica.
  bool prefill_only = false;
  int block_tokens = 512;  // tokens per cache block
};

// One second of simulated time (the iterations that end in it).
struct SecondBin {
  double output_tokens = 0;            // decode tokens and first tokens
  double prefill_tokens = 0;           // prompt tokens processed
  // Activity-weighted time of the iterations ending in it (busy: their whole duration).
  double compute_s = 0, memory_s = 0, link_s = 0, busy_s = 0;
};

// What the engine did: iterations, plans (wake-ups), preemptions, KV high-water mark, prefix hits,
// and the one-second bins that power and the time series are computed from.
struct EngineStats {
  std::int64_t iterations = 0;
  std::int64_t plans = 0;
  std::int64_t preemptions = 0;
  double max_kv_used = 0;
  double prompt_tokens = 0;           // prompt tokens admitted (recomputes included)
  double prefix_hit_tokens = 0;       // of which found in the prefix cache (HBM or host tier)
  double offload_hit_tokens = 0;      // of which loaded from the host tier
  std::int64_t offloaded_blocks = 0;  // blocks evicted from HBM and written to the host tier
  std::vector<SecondBin> seconds;     // index = floor(iteration end time in s)
  // Sums over the committed iterations of the step model's breakdown, in seconds: compute,
  // memory, communication, overhead (they add up to the busy time), and the roofline (the same
  // work at peak rates, perf::Breakdown::roofline).
  std::array<double, 5> breakdown_s{};
};

class ReplicaEngine {
 public:
  ReplicaEngine(const perf::StepModel& model, double kv_capacity_tokens, EngineParams params);

  void admit(Request* r);
  // Disaggregated serving, decode pool: a request whose prompt KV (isl + generated tokens) arrived
  // from a prefill replica. It joins the decode batch once the cache can hold it, with no prefill.
  void admit_prefilled(Request* r);
  bool busy() const { return !running_.empty() || !waiting_.empty(); }
  std::size_t outstanding() const { return running_.size() + waiting_.size(); }

  // Composes the next iteration(s) starting at `now`; returns their end times (empty when idle, or
  // when KV held for a decode replica leaves no room: see hold()).
  const std::vector<double>& plan(double now);
  // Commits the first j iterations of the last plan; requests that finished are appended to
  // `finished` (their finish time set), and requests whose first token came are stamped.
  void apply(std::size_t j, std::vector<Request*>& finished);

  // KV offload: blocks evicted from HBM go to `tier`, a host DRAM tier of `capacity_blocks` blocks
  // that other replicas of the same host pool may share (null: no offload).
  void set_host_tier(PrefixCache* tier, int capacity_blocks) {
    host_ = tier;
    host_capacity_ = capacity_blocks;
  }
  // For a request about to be admitted: the prompt blocks after those in HBM that the host tier
  // holds, to be loaded before it is admitted (0: admit it now). Sets r->loaded_blocks.
  int plan_load(Request* r);
  // Blocks written to the host tier since the last call.
  int take_offloaded() {
    const int n = offloaded_;
    offloaded_ = 0;
    return n;
  }

  // Disaggregated serving, prefill pool: the KV of a prompt this replica prefilled that waits for
  // a decode replica (every one is down) stays in its cache until the prompt leaves: hold() takes
  // it back (isl + generated tokens; once per request), release_held() frees it, and fail() drops
  // it with the rest. While held KV leaves no room for the next prompt, plan() returns no
  // iteration although busy(): the replica waits for a release.
  void hold(Request* r);
  bool release_held(Request* r);  // false when it held nothing for r

  // Times later iterations with another step model of the same replica (a slowed fabric).
  void set_model(const perf::StepModel& model) { model_ = &model; }

  // The replica failed: it drops every request it holds (returned, to be restarted elsewhere) and
  // its whole KV cache, prefix blocks included. The statistics are kept.
  std::vector<Request*> fail();

  // Leading blocks of the request's prompt in this replica's HBM prefix cache (prefix-aware
  // routing).
  int cached_prefix(const Request& r) const {
    return r.blocks.empty() ? 0 : cache_.match(r.blocks);
  }

  double kv_used() const { return kv_used_; }
  double kv_capacity() const { return kv_capacity_; }
  const EngineStats& stats() const { return stats_; }

 private:
  struct Chunk {
    Request* r;
    int tokens;
  };
  void add_iteration(double& clock, const perf::IterationShape& s);
  // Tokens every decoding sequence has gained `steps` decode steps from now (speculation credit).
  int gained(std::size_t steps) const {
    return static_cast<int>(
        std::floor(credit_ + static_cast<double>(steps) * params_.tokens_per_step + 1e-9));
  }
  void preempt_newest();
  // A sequence joins the decode batch (its counters current), or leaves it at the engine's
  // decode-token count `at` (its counters brought up to date).
  void join(Request* r);
  void settle(Request* r, std::int64_t at);
  // The reservations of every admitted sequence.
  double reservations() const {
    return reserved_ + (1.0 - params_.reserve_output_ratio) * static_cast<double>(grown_);
  }
  // Chunks the queue's prompts into the ranks' token budgets; returns the iteration's shape.
  perf::IterationShape plan_prefill(bool preempted);
  // A new prompt's admission: reuses its cached prefix and reserves the rest of its KV; false when
  // the cache cannot hold the reservation (`reserved`: the plan's running total).
  bool admit_prompt(Request* r, double& reserved);
  void release(Request* r);  // frees its private KV and unpins its cached blocks
  double block() const { return static_cast<double>(params_.block_tokens); }
  double evictable_kv() const { return block() * cache_.evictable(); }
  double pinned_kv() const { return block() * (cache_.size() - cache_.evictable()); }
  // Evicts cached blocks until `tokens` more fit, if they can.
  void make_room(double tokens);

  const perf::StepModel* model_;
  double kv_capacity_;
  EngineParams params_;
  int window_ = 0;
  std::map<const Request*, double> held_;  // prompts' KV held for a decode replica (tokens)
  struct Running {
    std::int64_t serial;  // the request's, kept here so that the batch is walked without reading it
    Request* r;
  };
  std::vector<Running> running_;  // decoding, in start order
  // The decoding sequences by the decode-token count at which each reaches its output length,
  // then by start order: the first ones are those the next steps finish.
  std::set<std::tuple<std::int64_t, std::int64_t, Request*>> ends_;
  std::int64_t decoded_ = 0;  // decode tokens each sequence in the batch gained so far (all alike)
  std::int64_t serial_ = 0;   // sequences that joined the batch so far
  std::vector<Request*> ending_;   // apply(): the sequences that reached their end (reused)
  std::deque<Request*> waiting_;   // to prefill, FIFO; the front may be partly prefilled
  double kv_used_ = 0;
  double context_sum_ = 0;  // sum of the running sequences' KV tokens
  double reserved_ = 0;     // sum of the admitted sequences' reservations at admission
  std::int64_t grown_ = 0;  // and of the tokens they generated since (see reserved())
  double credit_ = 0;       // fractional tokens carried over between speculative decode steps
  PrefixCache cache_;
  PrefixCache* host_ = nullptr;
  int host_capacity_ = 0;
  int offloaded_ = 0;
  std::vector<std::uint64_t> evicted_;
  EngineStats stats_;
  // The last plan.
  std::vector<double> boundaries_;
  std::vector<double> durations_;
  std::vector<Chunk> chunks_;  // prefill chunks of a one-iteration plan, the queue's first ones
  int ranks_ = 1;              // scheduling ranks: tp with DP attention, else 1
  // Per rank, while a prefill is planned: tokens left, prefill tokens and attended key positions.
  std::vector<int> rank_left_;
  std::vector<double> rank_tokens_, rank_attended_;
  std::vector<double> compute_activity_, memory_activity_, link_activity_;
  std::vector<std::array<double, 5>> breakdown_;  // per planned iteration, as in EngineStats
};

}  // namespace racktwin::sim
