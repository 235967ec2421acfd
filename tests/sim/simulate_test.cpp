// The serving simulation through SimGrid. SimGrid keeps one engine per process, so this file holds
// a single test that simulates one batch of points and checks every invariant on it (CTest runs
// each test in its own process). Determinism, fusion and the golden run are checked end to end in
// tests/cli/run_e2e_test.cpp, one process per run.

#include <gtest/gtest.h>

#include <map>

#include "sim/serving.hpp"
#include "test_support.hpp"

namespace racktwin::sim {
namespace {

using test::shipped_catalog;

TEST(Simulate_Batch, ConservationLittlesLawKvBoundAndReplicaScaling) {
  const Catalog& c = shipped_catalog();
  const System& s = *c.find_system("gb200-nvl72");
  const Model& m = *c.find_model("gpt-oss-120b");
  std::vector<PointSpec> specs;
  for (int replicas : {1, 2}) {
    for (int conc : {1, 8, 32, 64}) {
      PointSpec p;
      p.system = &s;
      p.model = &m;
      p.layout = *parse_layout("tp4-ep4");
      p.precision = "fp4";
      p.workload.isl = 1024;
      p.workload.osl = 256;
      p.arrivals = ClosedLoop{conc};
      p.replicas = replicas;
      p.seed = stream_seed(11, std::to_string(replicas) + "/" + std::to_string(conc));
      p.efficiency = c.efficiency_prior_for(s.id)->values;
      specs.push_back(p);
    }
  }
  // Open loops far below and far above what one replica serves (about 30 requests/s here).
  const std::size_t closed = specs.size();
  for (double rate : {1.0, 2000.0}) {
    PointSpec p = specs.front();
    p.arrivals = OpenLoop{rate};
    p.workload.requests = 300;
    p.workload.warmup_requests = 30;
    p.seed = stream_seed(11, "open/" + std::to_string(rate));
    specs.push_back(p);
  }
  auto results = simulate(c, specs);
  ASSERT_TRUE(results.has_value()) << results.error();
  ASSERT_EQ(results->size(), specs.size());

  // Overload: the queue of the open loop above capacity grows with every arrival; below capacity,
  // and in a closed loop, it does not.
  const PointResult& below = (*results)[closed];
  const PointResult& above = (*results)[closed + 1];
  EXPECT_FALSE(below.overloaded) << below.queue_growth;
  EXPECT_NEAR(below.queue_growth, 0.0, 0.01);
  EXPECT_TRUE(above.overloaded) << above.queue_growth;
  // At 2000 requests/s against about 30, nearly every arrival stays in flight.
  EXPECT_GT(above.queue_growth, 0.9);
  EXPECT_LE(above.queue_growth, 1.0);
  EXPECT_GT(above.queue_rise, 3 * above.queue_scatter);
  results->resize(closed);

  std::map<int, double> peak_total;  // replicas -> peak total tokens/s
  for (const auto& r : *results) {
    EXPECT_FALSE(r.overloaded);
    EXPECT_EQ(r.queue_growth, 0.0);
    const int conc = std::get<ClosedLoop>(r.spec.arrivals).clients;
    SCOPED_TRACE("replicas " + std::to_string(r.spec.replicas) + " C " + std::to_string(conc));
    ASSERT_TRUE(r.error.empty()) << r.error;
    // Every request completes exactly once; the warm-up (2 x C) is excluded from the metrics.
    EXPECT_EQ(r.completed, 10 * conc);
    EXPECT_EQ(r.requests, 8 * conc);
    // Output tokens generated equal the sum of the measured requests' output lengths.
    const auto reqs =
        inferencex_requests(r.spec.workload, conc, stream_seed(r.spec.seed, "workload"));
    double osl = 0, isl = 0;
    for (const auto& q : reqs)
      if (!q.warmup) {
        osl += q.osl;
        isl += q.isl;
      }
    EXPECT_DOUBLE_EQ(r.output_tokens, osl);
    EXPECT_DOUBLE_EQ(r.input_tokens, isl);
    // The one-second series conserves tokens and completions over the whole run (warm-up included).
    double all_osl = 0, all_isl = 0, series_out = 0, series_pre = 0, series_done = 0;
    for (const auto& q : reqs) {
      all_osl += q.osl;
      all_isl += q.isl;
    }
    for (const auto& sec : r.timeseries) {
      series_out += sec.output_tokens;
      series_pre += sec.prefill_tokens;
      series_done += sec.completed;
      EXPECT_LE(sec.xpu_power_w, s.chip->tdp.value());
    }
    EXPECT_DOUBLE_EQ(series_out, all_osl);
    EXPECT_DOUBLE_EQ(series_pre, all_isl);  // no preemption here, so every prompt is prefilled once
    EXPECT_DOUBLE_EQ(series_done, static_cast<double>(r.completed));
    EXPECT_EQ(r.preemptions, 0);
    // Little's law in the closed loop: requests in flight = throughput x mean latency = C, up to
    // the drain at the end of the run, when clients have no prompts left (tolerance 10%).
    EXPECT_NEAR(r.mean_concurrency / conc, 1.0, 0.10);
    EXPECT_LE(r.max_kv_used, r.kv_capacity_tokens);
    EXPECT_GT(r.total_tps_per_xpu, 0);
    EXPECT_GT(r.xpu_power_w, 0);
    EXPECT_LE(r.xpu_power_w, s.chip->tdp.value());
    EXPECT_GE(r.tpot.p90, r.tpot.median);
    peak_total[r.spec.replicas] =
        std::max(peak_total[r.spec.replicas], r.total_tps_per_xpu * r.xpus);
  }
  // More replicas never lower the peak throughput.
  EXPECT_GE(peak_total[2], peak_total[1]);
}

}  // namespace
}  // namespace racktwin::sim
