// The replica scheduler on its own, driven by a closed loop without SimGrid.

#include "sim/replica_engine.hpp"

#include <gtest/gtest.h>

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

TEST(ReplicaEngine_Kv, SmallCache_PreemptsButNeverOverflows) {
  const auto m = model("llama-3.3-70b", "h200-hgx", "tp8");
  const auto reqs = inferencex_requests(wl(1024, 1024), 24, 3);
  EngineParams p;
  p.reserve_output_ratio = 0.0;  // admit on the prompt alone: the cache fills and must preempt
  const double capacity = 12000;
  const Driven d = drive(m, capacity, p, reqs, 24);
  EXPECT_LE(d.max_kv, capacity);
  EXPECT_GT(d.stats.preemptions, 0);
  for (const auto& r : d.requests) EXPECT_EQ(r.generated, r.osl);
  // With full reservation nothing is preempted.
  const Driven safe = drive(m, capacity, EngineParams{}, reqs, 24);
  EXPECT_EQ(safe.stats.preemptions, 0);
  EXPECT_LE(safe.max_kv, capacity);
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
