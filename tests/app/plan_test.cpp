// The plan use case without simulation: throughput given in the plan, InferenceX's constants.

#include "app/plan.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "test_support.hpp"

namespace racktwin::app {
namespace {

std::string write_plan(const std::string& text) {
  const std::string path =
      ::testing::TempDir() + "racktwin-plan-test-" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

// GB200 NVL72 at InferenceX's owned $/GPU-hour (catalog: $2.21/h) and all-in 2.10 kW per GPU.
const std::string kGb200 = R"(name: gb200-inferencex
quarters: {from: 2026Q3, to: 2026Q4}
power_basis: all_in
sites:
  - {id: a, ramp: {2026Q3: 100 MW}, commission_per_week: 1000}
generations:
  - system: gb200-nvl72
    supply: {2026Q3: 100}
    cost_per_xpu_hour: catalog
    throughput: {tps_per_xpu: {value: 5000 tok/s, source: "a given figure"}, output_share: 0.1}
dock_to_rack: 0 s
)";

TEST(PlanFleet, InferenceXConstants_ReproduceItsCostPerMillionTokensAndTokensPerAllInMw) {
  const std::string path = write_plan(kGb200);
  PlanRequest rq;
  rq.plan_file = path;
  auto o = plan_fleet(test::shipped_catalog(), rq);
  ::unlink(path.c_str());
  ASSERT_TRUE(o.has_value()) << o.error().message
                             << (o.error().diagnostics.empty() ? "" : o.error().diagnostics[0].to_string());
  const auto& q = o->rollout.quarters.front();
  ASSERT_EQ(q.total.units, 100);
  const double inferencex = 2.21 / (5000 * 3600.0) * 1e6;  // $/GPU-hour / (tok/s/GPU x 3600) x 1e6
  EXPECT_NEAR(q.usd_per_mtok, inferencex, 1e-12 * inferencex);
  EXPECT_NEAR(q.tps_per_facility_mw, 5000 * 1000 / 2.10, 1e-9 * 5000 * 1000 / 2.10);
  EXPECT_NEAR(q.total.facility_w, 100 * 72 * 2100.0, 1e-6);
}

TEST(PlanFleet, ABadPlan_FailsWithItsDiagnostics) {
  const std::string path = write_plan("name: x\nquarters: {from: 2026Q3}\n");
  PlanRequest rq;
  rq.plan_file = path;
  auto o = plan_fleet(test::shipped_catalog(), rq);
  ::unlink(path.c_str());
  ASSERT_FALSE(o.has_value());
  EXPECT_EQ(o.error().kind, Failure::Kind::input);
  EXPECT_GE(o.error().diagnostics.size(), 4u);  // to, power_basis, workloads, sites, generations
}

}  // namespace
}  // namespace racktwin::app
