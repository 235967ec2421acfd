// The replica scheduler on its own, driven by a closed loop without SimGrid.

#include "sim/replica_engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "sim/serving.hpp"
#include "test_support.hpp"

namespace racktwin::sim {
namespace {

using test::shipped_catalog;

perf::StepModel model(const char* m, const char* s, const char* layout) {
  const Catalog& c = shipped_catalog();
  const Model& md = *c.find_model(m);
  const System& sys = *c.find_system(s);
  return *perf::StepModel::create(md, sys, c, *parse_layout(layout),
                                  perf::best_precision(md, sys, c),
                                  c.efficiency_prior_for(s)->values);
}

struct Driven {
  std::vector<Request> requests;
  EngineStats stats;
  double max_kv = 0;
  double kv_end = 0;  // KV in use once every request finished
  int apply_calls = 0;
};

// A closed loop of `clients` over the requests: a finished request's client sends the next one at
// once.
Driven drive(const perf::StepModel& m, double capacity, EngineParams p,
             std::vector<Request> requests, int clients) {
  ReplicaEngine e(m, capacity, p);
  Driven d;
  std::size_t next = 0;
  int completed = 0;
  double now = 0;
  auto issue = [&](double at) {
    Request& r = requests[next++];
    r.arrival = at;
    e.admit(&r);
  };
  for (int c = 0; c < clients && next < requests.size(); ++c) issue(0.0);
  std::vector<Request*> finished;
  while (completed < static_cast<int>(requests.size())) {
    const std::vector<double> b = e.plan(now);
    EXPECT_FALSE(b.empty());
    if (b.empty()) break;
    finished.clear();
    e.apply(b.size(), finished);
    d.apply_calls += 1;
    now = b.back();
    EXPECT_LE(e.kv_used(), capacity);
    d.max_kv = std::max(d.max_kv, e.kv_used());
    for (Request* r : finished) {
      ++completed;
      if (next < requests.size()) issue(r->finish);
    }
  }
  d.kv_end = e.kv_used();
  d.requests = std::move(requests);
  d.stats = e.stats();
  return d;
}

InferenceXWorkload wl(int isl, int osl) {
  InferenceXWorkload w;
  w.isl = isl;
  w.osl = osl;
  return w;
}

TEST(ReplicaEngine_ClosedLoop, EveryRequestCompletesOnce_AndOutputTokensEqualOsls) {
  const auto m = model("gpt-oss-120b", "gb200-nvl72", "tp4-ep4");
  auto reqs = inferencex_requests(wl(2048, 512), 16, 42);
  long expected_out = 0;
  for (const auto& r : reqs) expected_out += r.osl;
  const Driven d = drive(m, 1e6, EngineParams{}, reqs, 16);
  long out = 0;
  for (const auto& r : d.requests) {
    EXPECT_GE(r.finish, r.first_token);
    EXPECT_GE(r.first_token, r.arrival);
    EXPECT_EQ(r.generated, r.osl);
    out += r.generated;
  }
  EXPECT_EQ(out, expected_out);
}

TEST(ReplicaEngine_Fusion, FusedAndUnfused_GiveIdenticalTimes) {
  const auto m = model("deepseek-r1", "gb300-nvl72", "tp8-ep8-dpa");
  const auto reqs = inferencex_requests(wl(4096, 1024), 32, 7);
  EngineParams fused, plain;
  plain.fuse = false;
  const Driven a = drive(m, 1e6, fused, reqs, 32);
  const Driven b = drive(m, 1e6, plain, reqs, 32);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].first_token, b.requests[i].first_token) << i;
    EXPECT_EQ(a.requests[i].finish, b.requests[i].finish) << i;
  }
  EXPECT_EQ(a.stats.iterations, b.stats.iterations);
  // Fusion is what keeps events per request low: far fewer plans than iterations.
  EXPECT_LT(a.stats.plans * 10, b.stats.plans);
}

TEST(ReplicaEngine_Breakdown, PartsAddUpToTheBusyTime) {
  const auto m = model("gpt-oss-120b", "gb200-nvl72", "tp4-ep4");
  const auto reqs = inferencex_requests(wl(2048, 256), 8, 3);
  const Driven d = drive(m, 1e6, EngineParams{}, reqs, 8);
  double busy = 0;
  for (const auto& b : d.stats.seconds) busy += b.compute_s + b.memory_s;  // activity-weighted
  double parts = 0;
  for (std::size_t k = 0; k < 4; ++k) {  // compute, memory, communication, overhead
    EXPECT_GE(d.stats.breakdown_s[k], 0.0);
    parts += d.stats.breakdown_s[k];
  }
  // The fifth is the roofline: positive, and below the busy time it bounds.
  EXPECT_GT(d.stats.breakdown_s[4], 0.0);
  EXPECT_LT(d.stats.breakdown_s[4], parts);
  // One replica runs back to back from 0: its busy time is the last finish.
  double last = 0;
  for (const auto& r : d.requests) last = std::max(last, r.finish);
  EXPECT_NEAR(parts, last, 1e-9 * last);
  EXPECT_GT(d.stats.breakdown_s[1], 0.0);  // decode is memory-bound
  EXPECT_GT(busy, 0.0);
}

TEST(Sim_Stats, Percentiles_MatchTheQuantilesAndRunFromMinToMax) {
  std::vector<double> v;
  for (int i = 0; i < 37; ++i) v.push_back(static_cast<double>((i * 7919) % 37));
  const Stats s = Stats::of(v);
  ASSERT_EQ(s.percentiles.size(), 101u);
  EXPECT_EQ(s.percentiles[0], s.min);
  EXPECT_EQ(s.percentiles[100], s.max);
  EXPECT_EQ(s.percentiles[50], s.median);
  EXPECT_EQ(s.percentiles[90], s.p90);
  EXPECT_EQ(s.percentiles[99], s.p99);
  EXPECT_TRUE(std::is_sorted(s.percentiles.begin(), s.percentiles.end()));
  EXPECT_TRUE(Stats::of({}).percentiles.empty());
}

// Speculative decoding: a step emits 1.7 tokens per sequence on average, as 1, 2, 2, 1, 2, ...
// Every request still ends with exactly its output length, fused and unfused runs agree, and a
// request needs about 1/1.7 of the decode steps.
TEST(ReplicaEngine_Speculation, EmitsTheAcceptanceLength_FusedEqualsUnfused) {
  const Catalog& c = shipped_catalog();
  const Model& md = *c.find_model("deepseek-r1");
  const System& sys = *c.find_system("gb300-nvl72");
  const auto m = *perf::StepModel::create(md, sys, c, *parse_layout("tp8-ep8-dpa"),
                                          perf::best_precision(md, sys, c),
                                          c.efficiency_prior_for("gb300-nvl72")->values, {1, 1.7});
  auto reqs = inferencex_requests(wl(1024, 1000), 1, 5);
  reqs.resize(1);
  reqs[0].osl = 1000;
  EngineParams fused, plain;
  fused.tokens_per_step = plain.tokens_per_step = 1.7;
  plain.fuse = false;
  const Driven a = drive(m, 1e6, fused, reqs, 1);
  const Driven b = drive(m, 1e6, plain, reqs, 1);
  EXPECT_EQ(a.requests[0].generated, 1000);
  EXPECT_EQ(a.requests[0].finish, b.requests[0].finish);
  EXPECT_EQ(a.stats.iterations, b.stats.iterations);
  // One prefill step emits the first token; 999 more take ceil(999 / 1.7) = 588 decode steps.
  EXPECT_EQ(a.stats.iterations, 1 + 588);
  double binned = 0;
  for (const auto& s : a.stats.seconds) binned += s.output_tokens;
  EXPECT_DOUBLE_EQ(binned, 1000);
  // 32 clients: every sequence still ends at its own output length.
  const auto many = inferencex_requests(wl(2048, 512), 32, 9);
  const Driven f = drive(m, 1e6, fused, many, 32);
  const Driven u = drive(m, 1e6, plain, many, 32);
  for (std::size_t i = 0; i < many.size(); ++i) {
    EXPECT_EQ(f.requests[i].generated, many[i].osl);
    EXPECT_EQ(f.requests[i].finish, u.requests[i].finish) << i;
  }
}

// Disaggregated serving: a prefill replica hands each request on after its first token, with no
// finish time and its KV freed; a decode replica takes handed-on requests without prefilling them,
// only as many as its cache holds, and finishes each at its output length.
TEST(ReplicaEngine_Disaggregated, PrefillHandsOn_DecodeAdmitsWithinTheCache) {
  const auto m = model("llama-3.3-70b", "h200-hgx", "tp8");
  auto reqs = inferencex_requests(wl(1024, 256), 8, 3);
  reqs.resize(8);
  EngineParams pp;
  pp.prefill_only = true;
  ReplicaEngine prefill(m, 1e6, pp);
  for (auto& r : reqs) prefill.admit(&r);
  std::vector<Request*> handed;
  double now = 0;
  while (prefill.busy()) {
    const auto b = prefill.plan(now);
    prefill.apply(b.size(), handed);
    now = b.back();
  }
  ASSERT_EQ(handed.size(), 8u);
  EXPECT_EQ(prefill.kv_used(), 0.0);
  for (const Request* r : handed) {
    EXPECT_EQ(r->finish, -1.0);
    EXPECT_EQ(r->generated, 1);
    EXPECT_GT(r->first_token, 0.0);
  }
  // The decode replica's cache holds about three requests with their reserved output.
  const double capacity = 3.5 * (1024 + 256);
  ReplicaEngine decode(m, capacity, EngineParams{});
  for (Request* r : handed) decode.admit_prefilled(r);
  std::vector<Request*> done;
  std::int64_t iterations = 0;
  while (decode.busy()) {
    const auto b = decode.plan(now);
    decode.apply(b.size(), done);
    now = b.back();
    EXPECT_LE(decode.kv_used(), capacity);
    iterations += static_cast<std::int64_t>(b.size());
  }
  ASSERT_EQ(done.size(), 8u);
  for (const Request* r : done) EXPECT_EQ(r->generated, r->osl);
  EXPECT_EQ(decode.stats().prompt_tokens, 0.0);  // nothing was prefilled again
  EXPECT_EQ(decode.stats().iterations, iterations);
  EXPECT_LE(decode.stats().max_kv_used, capacity);
}

// A prefill replica whose prefilled prompts wait for a decode replica (every one down) holds
// their KV: once the held KV leaves no room for the next prompt it plans nothing, though busy;
// releasing one lets it go on; fail() drops what it holds.
TEST(ReplicaEngine_Disaggregated, HeldKvOfWaitingPrompts_BlocksTheNextPrompt) {
  const auto m = model("llama-3.3-70b", "h200-hgx", "tp8");
  auto reqs = inferencex_requests(wl(1024, 256), 4, 3);
  reqs.resize(4);
  EngineParams pp;
  pp.prefill_only = true;
  const double capacity = 2.5 * 1024;  // two prompts' KV, not three
  ReplicaEngine prefill(m, capacity, pp);
  for (auto& r : reqs) prefill.admit(&r);
  std::vector<Request*> handed;
  double now = 0;
  while (handed.size() < 2) {
    const auto b = prefill.plan(now);
    ASSERT_FALSE(b.empty());
    prefill.apply(b.size(), handed);
    now = b.back();
  }
  ASSERT_EQ(handed.size(), 2u);
  for (Request* r : handed) prefill.hold(r);
  prefill.hold(handed[0]);  // once per request
  EXPECT_NEAR(prefill.kv_used(), 2.0 + handed[0]->isl + handed[1]->isl, 1e-9);
  EXPECT_LE(prefill.stats().max_kv_used, capacity);
  // The third prompt is chunked into what room is left, then nothing runs.
  std::vector<double> b;
  for (int i = 0; i < 10 && !(b = prefill.plan(now)).empty(); ++i) {
    prefill.apply(b.size(), handed);
    now = b.back();
  }
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(prefill.busy());
  EXPECT_EQ(handed.size(), 2u);
  EXPECT_LE(prefill.kv_used(), capacity);
  // A blocked plan runs nothing and is not counted.
  const auto plans = prefill.stats().plans;
  EXPECT_TRUE(prefill.plan(now).empty());
  EXPECT_EQ(prefill.stats().plans, plans);
  EXPECT_TRUE(prefill.release_held(handed[0]));
  EXPECT_FALSE(prefill.release_held(handed[0]));
  EXPECT_FALSE(prefill.plan(now).empty());  // room again
  prefill.apply(1, handed);
  prefill.fail();
  EXPECT_EQ(prefill.kv_used(), 0.0);
  EXPECT_FALSE(prefill.release_held(handed[1]));  // dropped with the rest
}

// KV offload: blocks evicted from HBM go to the host tier; a later request whose prefix HBM lost
// finds it there (plan_load), and once loaded it is admitted with those blocks as a prefix hit.
TEST(ReplicaEngine_Offload, EvictedBlocksGoToHost_AndComeBackAsHits) {
  const auto m = model("llama-3.3-70b", "h200-hgx", "tp8");
  PrefixCache host(512);
  const double capacity = 6 * 512;  // HBM holds six blocks
  ReplicaEngine e(m, capacity, EngineParams{});
  e.set_host_tier(&host, 100);
  double now = 0;
  auto finish = [&] {  // runs the engine until it is idle
    std::vector<Request*> done;
    while (e.busy()) {
      const auto b = e.plan(now);
      e.apply(b.size(), done);
      now = b.back();
      EXPECT_LE(e.kv_used(), capacity);
    }
  };
  auto run_one = [&](Request& r) {
    EXPECT_EQ(e.plan_load(&r), 0);  // nothing to load
    e.admit(&r);
    finish();
  };
  Request a, b, again;
  a.isl = b.isl = 4 * 512;
  a.osl = b.osl = 8;
  a.blocks = {1, 2, 3, 4};
  b.blocks = {5, 6, 7, 8};
  run_one(a);  // caches 1-4
  run_one(b);  // needs room: evicts 1-4 (least recently used) to the host tier
  EXPECT_GE(e.stats().offloaded_blocks, 2);
  EXPECT_EQ(e.take_offloaded(), e.stats().offloaded_blocks);
  EXPECT_EQ(e.take_offloaded(), 0);
  // A follow-up of `a`: its first blocks are on the host, not in HBM.
  again.isl = 5 * 512;
  again.osl = 8;
  again.blocks = {1, 2, 3, 4, 9};
  const int evicted = static_cast<int>(e.stats().offloaded_blocks);
  const int to_load = e.plan_load(&again);
  // The host tier holds the evicted leading blocks (the least recently used went first: 1, 2, ...).
  EXPECT_EQ(to_load, std::min(4, evicted));
  EXPECT_GE(to_load, 1);
  EXPECT_EQ(again.loaded_blocks, to_load);
  e.admit(&again);
  finish();
  EXPECT_DOUBLE_EQ(e.stats().offload_hit_tokens, to_load * 512.0);
  EXPECT_EQ(again.generated, again.osl);
}

TEST(ReplicaEngine_Kv, SmallCache_PreemptsButNeverOverflows) {
  const auto m = model("llama-3.3-70b", "h200-hgx", "tp8");
  const auto reqs = inferencex_requests(wl(1024, 1024), 24, 3);
  EngineParams p;
  p.reserve_output_ratio = 0.0;  // admit on the prompt alone: the cache fills and must preempt
  const double capacity = 12000;
  const Driven d = drive(m, capacity, p, reqs, 24);
  EXPECT_LE(d.max_kv, capacity);
  EXPECT_GT(d.stats.preemptions, 0);
  // Admission counts what the running sequences hold, generated tokens included: a preempted
  // sequence is not taken back while the cache still cannot hold it, so the engine does not
  // thrash (preempting and recomputing the same sequence step after step: 10,500 preemptions of
  // 240 requests when admission counted the prompts alone).
  EXPECT_LE(d.stats.preemptions, static_cast<int>(reqs.size())) << d.stats.preemptions;
  for (const auto& r : d.requests) EXPECT_EQ(r.generated, r.osl);
  // A preempted sequence gives back all it held, the tokens it decoded in the batch included
  // (counted for the batch as a whole until it leaves): nothing is left once all have finished.
  EXPECT_EQ(d.kv_end, 0.0);
  // With full reservation nothing is preempted.
  const Driven safe = drive(m, capacity, EngineParams{}, reqs, 24);
  EXPECT_EQ(safe.stats.preemptions, 0);
  EXPECT_LE(safe.max_kv, capacity);
}

// Admits `count` prompts of `isl` tokens at once and drives the engine until each has its first
// token; returns the first-token times, and after every iteration checks that no more prompts
// than `ranks` are partly prefilled.
std::vector<double> first_tokens(const perf::StepModel& m, int count, int isl, int ranks) {
  std::vector<Request> reqs(static_cast<std::size_t>(count));
  ReplicaEngine e(m, 1e7, EngineParams{});
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    reqs[i].id = static_cast<std::int64_t>(i);
    reqs[i].isl = isl;
    reqs[i].osl = 1;  // done at the first token: no decode takes a rank's budget
    reqs[i].arrival = 0;
    e.admit(&reqs[i]);
  }
  std::vector<Request*> finished;
  double now = 0;
  auto waiting = [&] {
    return std::any_of(reqs.begin(), reqs.end(), [](const Request& r) { return r.first_token < 0; });
  };
  while (waiting()) {
    const std::vector<double>& b = e.plan(now);
    if (b.empty()) break;
    now = b.back();
    e.apply(b.size(), finished);
    const auto partial = std::count_if(reqs.begin(), reqs.end(), [](const Request& r) {
      return r.prefilled > 0 && r.prefilled < r.target;
    });
    EXPECT_LE(partial, ranks);
  }
  std::vector<double> t;
  for (const auto& r : reqs) t.push_back(r.first_token);
  return t;
}

std::map<double, int> groups(const std::vector<double>& times) {
  std::map<double, int> g;
  for (double t : times) g[t] += 1;
  return g;
}

TEST(ReplicaEngine_DpAttention, EveryRankPrefillsItsOwnPrompt_ASliceOfTheBudgetEach) {
  // 16 prompts of 8,192 tokens, 16,384 tokens per iteration. Under DP attention each of the 8
  // ranks takes 2,048 of them: 8 prompts prefill side by side and the 16 first tokens come in 2
  // groups of 8. Without it the replica takes 2 whole prompts per iteration: 8 groups of 2.
  const auto dpa = groups(first_tokens(model("deepseek-r1", "gb300-nvl72", "tp8-ep8-dpa"), 16,
                                       8192, 8));
  ASSERT_EQ(dpa.size(), 2u);
  for (const auto& [t, n] : dpa) EXPECT_EQ(n, 8) << t;
  const auto plain =
      groups(first_tokens(model("deepseek-r1", "gb300-nvl72", "tp8-ep8"), 16, 8192, 1));
  ASSERT_EQ(plain.size(), 8u);
  for (const auto& [t, n] : plain) EXPECT_EQ(n, 2) << t;
  // Side by side, the first group's prompts are done sooner than the last plain pair, and the
  // whole batch sooner than without DP attention's per-rank prefill.
  EXPECT_LT(dpa.rbegin()->first, plain.rbegin()->first);
}

TEST(ReplicaEngine_DpAttention, PartlyPrefilledPrompts_AtMostOnePerRank) {
  // Prompts of 3,000 tokens do not divide a rank's 2,048: ranks hold partial prompts from one
  // iteration to the next, never more than one each (first_tokens checks it every iteration).
  const auto m = model("deepseek-r1", "gb300-nvl72", "tp8-ep8-dpa");
  const auto t = first_tokens(m, 40, 3000, 8);
  for (double x : t) EXPECT_GT(x, 0.0);
  // With 4 ranks the limit is 4.
  const auto m4 = model("deepseek-r1", "gb300-nvl72", "tp4-ep4-dpa");
  for (double x : first_tokens(m4, 40, 3000, 4)) EXPECT_GT(x, 0.0);
}

TEST(ReplicaEngine_DpAttention, SmallCache_PreemptsBehindThePartialPrompts_AndNeverOverflows) {
  const auto m = model("deepseek-r1", "gb300-nvl72", "tp8-ep8-dpa");
  const auto reqs = inferencex_requests(wl(3000, 512), 48, 5);
  EngineParams p;
  p.reserve_output_ratio = 0.0;  // admit on the prompt alone: the cache fills and must preempt
  const double capacity = 60000;
  const Driven d = drive(m, capacity, p, reqs, 48);
  EXPECT_LE(d.max_kv, capacity);
  EXPECT_GT(d.stats.preemptions, 0);
  for (const auto& r : d.requests) EXPECT_EQ(r.generated, r.osl);
}

TEST(ReplicaEngine_Kv, PromptLargerThanTheCache_IsAnErrorNotAHang) {
  const auto m = model("llama-3.3-70b", "h200-hgx", "tp8");
  ReplicaEngine e(m, 100, EngineParams{});
  Request r;
  r.isl = 500;
  r.osl = 10;
  e.admit(&r);
  EXPECT_THROW(e.plan(0.0), std::runtime_error);
}

TEST(ReplicaEngine_Workload, InferenceXLengths_WithinRangeAndSeeded) {
  const auto a = inferencex_requests(wl(8192, 1024), 8, 1);
  const auto b = inferencex_requests(wl(8192, 1024), 8, 1);
  const auto c = inferencex_requests(wl(8192, 1024), 8, 2);
  ASSERT_EQ(a.size(), 80u);
  int warm = 0;
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_GE(a[i].isl, 6554);  // ceil(0.8 x 8192)
    EXPECT_LE(a[i].isl, 8192);
    EXPECT_GE(a[i].osl, 820);
    EXPECT_LE(a[i].osl, 1024);
    EXPECT_EQ(a[i].isl, b[i].isl);
    differs = differs || a[i].isl != c[i].isl;
    warm += a[i].warmup ? 1 : 0;
  }
  EXPECT_EQ(warm, 16);  // 2 x C
  EXPECT_TRUE(differs);
  EXPECT_NE(stream_seed(1, "a"), stream_seed(1, "b"));
  EXPECT_NE(stream_seed(1, "a"), stream_seed(2, "a"));
}

}  // namespace
}  // namespace racktwin::sim

namespace racktwin::sim {
namespace {

TEST(Pareto_Envelope, KeepsUndominatedPoints_AndInterpolates) {
  // (interactivity, tok/s): (10, 100) and (50, 40) are on the envelope; (20, 60) too; (15, 50) and
  // (30, 30) are beaten.
  const std::vector<CurvePoint> pts{
      {10, 100, 0}, {15, 50, 1}, {20, 60, 2}, {30, 30, 3}, {50, 40, 4}};
  const auto env = pareto_envelope(pts);
  ASSERT_EQ(env.size(), 3u);
  EXPECT_EQ(env[0].index, 0u);
  EXPECT_EQ(env[1].index, 2u);
  EXPECT_EQ(env[2].index, 4u);
  for (std::size_t i = 1; i < env.size(); ++i) {
    EXPECT_GT(env[i].interactivity, env[i - 1].interactivity);
    EXPECT_LT(env[i].value, env[i - 1].value);
  }
  EXPECT_DOUBLE_EQ(*value_at(env, 15), 80.0);  // halfway between (10, 100) and (20, 60)
  EXPECT_DOUBLE_EQ(*value_at(env, 50), 40.0);
  EXPECT_FALSE(value_at(env, 5).has_value());
  EXPECT_FALSE(value_at(env, 60).has_value());
}

}  // namespace
}  // namespace racktwin::sim

namespace racktwin::sim {
namespace {

TEST(PrefixCache_Blocks, MatchPinUnpinAndLruEviction) {
  PrefixCache c(512);
  const std::vector<std::uint64_t> a{1, 2, 3, 4}, b{1, 2, 9}, d{7, 8};
  EXPECT_EQ(c.match(a), 0);
  EXPECT_EQ(c.insert_pinned(a, 0, 4), 4);
  EXPECT_EQ(c.match(b), 2);   // shares blocks 1 and 2
  EXPECT_EQ(c.evict(10), 0);  // everything pinned
  c.unpin(a, 4);
  EXPECT_EQ(c.evictable(), 4);
  EXPECT_EQ(c.insert_pinned(d, 0, 2), 2);
  c.unpin(d, 2);
  c.pin(a, 2);  // blocks 1 and 2 in use again
  // LRU among unpinned: 3, 4 (unpinned first), then 7, 8.
  EXPECT_EQ(c.evict(2), 2);
  EXPECT_EQ(c.match(a), 2);
  EXPECT_EQ(c.match(d), 2);
  EXPECT_EQ(c.evict(5), 2);
  EXPECT_EQ(c.match(d), 0);
  EXPECT_EQ(c.size(), 2);
  EXPECT_THROW(c.unpin(d, 1), std::logic_error);
}

TEST(ReplicaEngine_PrefixCache, FollowUpTurn_ReusesThePreviousTurnsBlocks) {
  const auto m = model("llama-3.3-70b", "h200-hgx", "tp8");
  // Turn 1: 4 blocks of prompt. Turn 2 starts with the same 4 blocks and adds 2.
  std::vector<Request> reqs(2);
  reqs[0].isl = 4 * 512;
  reqs[0].osl = 16;
  reqs[0].blocks = {11, 12, 13, 14};
  reqs[1].isl = 6 * 512;
  reqs[1].osl = 16;
  reqs[1].blocks = {11, 12, 13, 14, 15, 16};
  EngineParams on, off;
  off.prefix_cache = false;
  const Driven hit = drive(m, 1e6, on, reqs, 1);
  const Driven miss = drive(m, 1e6, off, reqs, 1);
  EXPECT_DOUBLE_EQ(hit.stats.prefix_hit_tokens, 4 * 512.0);
  EXPECT_DOUBLE_EQ(miss.stats.prefix_hit_tokens, 0.0);
  const double ttft_hit = hit.requests[1].first_token - hit.requests[1].arrival;
  const double ttft_miss = miss.requests[1].first_token - miss.requests[1].arrival;
  EXPECT_LT(ttft_hit, ttft_miss);  // 1,024 tokens to prefill instead of 3,072
  for (const auto& r : hit.requests) EXPECT_EQ(r.generated, r.osl);
}

TEST(ReplicaEngine_PrefixCache, SmallCache_EvictsAndNeverOverflows) {
  const auto m = model("llama-3.3-70b", "h200-hgx", "tp8");
  std::vector<Request> reqs(40);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    reqs[i].isl = 3 * 512;
    reqs[i].osl = 1;  // done at the first token: no decode takes a rank's budget
    // Ten conversations, each with a growing prefix: blocks named (conversation, index).
    const std::uint64_t conv = i % 10;
    for (std::uint64_t b = 0; b < 3; ++b) reqs[i].blocks.push_back(conv * 100 + b);
  }
  const double capacity = 8 * 1700;  // room for a few prompts and their cached blocks
  const Driven d = drive(m, capacity, EngineParams{}, reqs, 8);
  EXPECT_LE(d.max_kv, capacity);
  EXPECT_GT(d.stats.prefix_hit_tokens, 0.0);
  for (const auto& r : d.requests) EXPECT_EQ(r.generated, r.osl);
}

}  // namespace
}  // namespace racktwin::sim

namespace racktwin::sim {
namespace {

TEST(AgenticGraph_Generator, SessionsGrowShareTheirPrefixAndChainPerClient) {
  AgenticWorkload w;
  w.sessions_per_client = 3;
  w.subagent_probability = 0.3;
  const RequestGraph g = agentic_graph(w, 4, 99);
  const RequestGraph again = agentic_graph(w, 4, 99);
  ASSERT_EQ(g.requests.size(), again.requests.size());
  for (std::size_t i = 0; i < g.requests.size(); ++i)
    EXPECT_EQ(g.requests[i].isl, again.requests[i].isl);
  EXPECT_NE(
      agentic_graph(w, 4, 100).requests.size() * 1000 + agentic_graph(w, 4, 100).requests[0].isl,
      g.requests.size() * 1000 + g.requests[0].isl);

  // Dependencies point backwards (a DAG in creation order) and the pending counts match them.
  std::vector<int> incoming(g.requests.size(), 0);
  for (std::size_t i = 0; i < g.requests.size(); ++i)
    for (int d : g.dependents[i]) {
      EXPECT_GT(static_cast<std::size_t>(d), i);
      incoming[static_cast<std::size_t>(d)] += 1;
    }
  for (std::size_t i = 0; i < g.requests.size(); ++i) EXPECT_EQ(incoming[i], g.pending[i]);

  // Within a session, each turn's prompt starts with the previous turn's blocks and is longer.
  std::map<int, const Request*> last;
  int roots = 0, subagent_sessions = 0;
  std::set<int> sessions;
  for (std::size_t i = 0; i < g.requests.size(); ++i) {
    const Request& r = g.requests[i];
    EXPECT_LE(r.isl + r.osl, w.max_context);
    sessions.insert(g.session[i]);
    roots += g.pending[i] == 0 ? 1 : 0;
    auto it = last.find(g.session[i]);
    if (it != last.end()) {
      EXPECT_GT(r.isl, it->second->isl);
      ASSERT_GE(r.blocks.size(), it->second->blocks.size());
      EXPECT_TRUE(
          std::equal(it->second->blocks.begin(), it->second->blocks.end(), r.blocks.begin()));
    }
    last[g.session[i]] = &r;
  }
  EXPECT_EQ(roots, 4);  // one per client: later sessions wait for the client's previous one
  subagent_sessions = g.sessions - 4 * w.sessions_per_client;
  EXPECT_GT(subagent_sessions, 0);
  EXPECT_EQ(static_cast<int>(sessions.size()), g.sessions);
}

}  // namespace
}  // namespace racktwin::sim
