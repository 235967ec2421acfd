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

const std::string kGb200 =
    std::string(RACKTWIN_SOURCE_DIR) + "/tests/plan/data/gb200-inferencex.yaml";

TEST(PlanFleet, InferenceXConstants_ReproduceItsCostPerMillionTokensAndTokensPerAllInMw) {
  PlanRequest rq;
  rq.plan_file = kGb200;
  auto o = plan_fleet(test::shipped_catalog(), rq);
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
