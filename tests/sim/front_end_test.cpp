// The serving front end's latency (Efficiency::request_latency): every request reaches its replica
// that long after its client sent it. It adds to TTFT and E2E, not to the time between tokens, and
// in the closed loop it lengthens each client's cycle. The points run in forked children
// (worker processes, app/sim_job.hpp), so this file may hold several tests.

#include <gtest/gtest.h>

#include "app/sim_job.hpp"
#include "sim/sweep.hpp"
#include "test_support.hpp"

namespace racktwin::sim {
namespace {

const app::JobOptions kJobs = [] {
  app::JobOptions j;
  j.jobs = 2;
  return j;
}();

using test::shipped_catalog;

PointSpec point(int concurrency, double latency_s, std::optional<int> prefill_replicas = {}) {
  const Catalog& c = shipped_catalog();
  PointSpec p;
  p.system = c.find_system("gb200-nvl72");
  p.model = c.find_model("gpt-oss-120b");
  p.layout = *parse_layout("tp4-ep4");
  p.precision = "fp4";
  p.workload.isl = 1024;
  p.workload.osl = 256;
  p.arrivals = ClosedLoop{concurrency};
  p.prefill_replicas = prefill_replicas;
  p.seed = stream_seed(5, std::to_string(concurrency));
  p.efficiency = c.efficiency_prior_for(p.system->id)->values;
  p.efficiency.request_latency = Seconds(latency_s);
  return p;
}

TEST(FrontEnd_Latency, AddsToTtftAndE2e_NotToTpot_AndLengthensTheClosedLoop) {
  const double latency = 0.2;
  auto r = app::simulate_in_workers(
      shipped_catalog(), {point(1, 0), point(1, latency), point(16, 0), point(16, latency)}, kJobs);
  ASSERT_TRUE(r.has_value()) << r.error();
  for (const auto& x : *r) {
    ASSERT_TRUE(x.error.empty()) << x.error;
    EXPECT_EQ(x.completed, 10 * std::get<ClosedLoop>(x.spec.arrivals).clients);
  }
  const PointResult &base = (*r)[0], &slow = (*r)[1];
  // One client: the request is alone in the engine either way, so only the front end differs.
  EXPECT_NEAR(slow.ttft.median - base.ttft.median, latency, 1e-6);
  EXPECT_NEAR(slow.e2e.median - base.e2e.median, latency, 1e-6);
  EXPECT_NEAR(slow.tpot.median, base.tpot.median, 1e-9);
  // The client's cycle grows from E2E to E2E + latency, and its throughput falls by as much.
  EXPECT_NEAR(slow.total_tps_per_xpu / base.total_tps_per_xpu,
              base.e2e.mean / (base.e2e.mean + latency), 0.01);
  // Sixteen clients: no request reaches its first token sooner than the front end allows.
  EXPECT_GE((*r)[3].ttft.min, latency);
  EXPECT_LT((*r)[2].ttft.min, latency);
  EXPECT_LT((*r)[3].total_tps_per_xpu, (*r)[2].total_tps_per_xpu);
}

TEST(FrontEnd_Latency, DelaysDisaggregatedRequestsOnce) {
  const double latency = 0.15;
  auto r =
      app::simulate_in_workers(shipped_catalog(), {point(1, 0, 1), point(1, latency, 1)}, kJobs);
  ASSERT_TRUE(r.has_value()) << r.error();
  for (const auto& x : *r) ASSERT_TRUE(x.error.empty()) << x.error;
  // The front end sits before the prefill pool; the KV hand-off to the decode pool adds nothing.
  EXPECT_NEAR((*r)[1].ttft.median - (*r)[0].ttft.median, latency, 1e-6);
  EXPECT_NEAR((*r)[1].e2e.median - (*r)[0].e2e.median, latency, 1e-6);
}

}  // namespace
}  // namespace racktwin::sim
