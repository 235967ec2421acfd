// The plan use case without simulation: throughput given in the plan, InferenceX's constants.

#include "app/plan.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <unistd.h>

#include <algorithm>
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
                             << (o.error().diagnostics.empty()
                                     ? ""
                                     : o.error().diagnostics[0].to_string());
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

// A Jalapeno plan with a given throughput, and `availability` as given (empty: none).
std::string jalapeno_plan(const std::string& system, const std::string& availability) {
  return "name: avail\nquarters: {from: 2026Q3, to: 2026Q4}\npower_basis: production\n"
         "sites:\n  - {id: a, ramp: {2026Q3: 100 MW}, commission_per_week: 1000}\n"
         "generations:\n  - system: " +
         system +
         "\n    supply: {2026Q3: 10}\n"
         "    capex_per_unit: {value: $3.2M, assumption: true, reason: test}\n"
         "    throughput: {tps_per_xpu: {value: 10000 tok/s, source: \"a given figure\"}, "
         "output_share: 0.1}\n" +
         availability + "dock_to_rack: 0 s\n";
}

std::expected<PlanOutcome, Failure> plan_text(const std::string& text) {
  const std::string path = write_plan(text);
  PlanRequest rq;
  rq.plan_file = path;
  auto o = plan_fleet(test::shipped_catalog(), rq);
  ::unlink(path.c_str());
  return o;
}

TEST(PlanAvailability, AGivenShare_ScalesTheThroughputAndIsListedWhenAssumed) {
  auto none = plan_text(jalapeno_plan("jalapeno-a0", ""));
  auto some = plan_text(jalapeno_plan(
      "jalapeno-a0", "    availability: {value: 0.99, assumption: true, reason: \"a test\"}\n"));
  ASSERT_TRUE(none.has_value()) << none.error().message;
  ASSERT_TRUE(some.has_value()) << some.error().message;
  EXPECT_FALSE(none->units[0].availability);
  ASSERT_TRUE(some->units[0].availability);
  EXPECT_DOUBLE_EQ(some->units[0].unit.tps_per_xpu, 0.99 * none->units[0].unit.tps_per_xpu);
  EXPECT_NEAR(some->rollout.quarters.back().total.tps,
              0.99 * none->rollout.quarters.back().total.tps,
              1e-9 * none->rollout.quarters.back().total.tps);
  EXPECT_TRUE(std::any_of(some->assumptions.begin(), some->assumptions.end(),
                          [](const auto& a) { return a.what == "jalapeno-a0.availability"; }));
  // The units table shows the availability column only when a unit counts one.
  const auto with = some->unit_table(), without = none->unit_table();
  EXPECT_EQ(with.front().at(6), "available");
  EXPECT_EQ(with.at(1).at(6), "99.000%");
  EXPECT_EQ(std::find(without.front().begin(), without.front().end(), "available"),
            without.front().end());
  EXPECT_EQ(some->to_json()["units"][0]["availability"], 0.99);
  // A share with neither a source nor the flag of an assumption is an input error.
  auto bare = plan_text(jalapeno_plan("jalapeno-a0", "    availability: 0.99\n"));
  ASSERT_FALSE(bare.has_value());
  EXPECT_NE(bare.error().diagnostics.at(0).to_string().find("availability needs its source"),
            std::string::npos);
}

TEST(PlanAvailability, FromARehearsal_TakesItsAvailability_OfASystemBuiltTheSameWay) {
  const std::string rehearsal =
      ::testing::TempDir() + "racktwin-plan-rehearsal-" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(rehearsal)
      << "name: small-site\nsystem: jalapeno-a0\ndomains: 2\n"
         "horizon: 20 days\nsample_every: 6 h\nseed: 11\nserving:\n"
         "  tps_per_replica: {value: 20000 tok/s, assumption: true, reason: t}\n"
         "  replica_xpus: 8\nspare_capacity: {racks: 0, attainment_goal: 99%}\n";
  const std::string line = "    availability: {rehearsal: " + rehearsal + "}\n";
  auto none = plan_text(jalapeno_plan("jalapeno-b0", ""));
  auto b0 = plan_text(jalapeno_plan("jalapeno-b0", line));
  auto gb = plan_text(jalapeno_plan("gb300-nvl72", line));
  ::unlink(rehearsal.c_str());
  ASSERT_TRUE(none.has_value()) << none.error().message;
  ASSERT_TRUE(b0.has_value()) << b0.error().message;
  // B0's domains are built as A0's: the A0 rehearsal's availability holds, and it says where from.
  ASSERT_TRUE(b0->units[0].availability);
  const double a = *b0->units[0].availability;
  EXPECT_GT(a, 0.9);
  EXPECT_LT(a, 1.0);  // 20 days of two domains see failures
  EXPECT_DOUBLE_EQ(b0->units[0].unit.tps_per_xpu, a * none->units[0].unit.tps_per_xpu);
  EXPECT_NE(b0->units[0].availability_note.find("racktwin rehearse"), std::string::npos);
  EXPECT_NE(b0->units[0].availability_note.find("jalapeno-a0"), std::string::npos);
  // A file named by a generation and a comparator is rehearsed once but checked for each: the
  // NVL72 comparator is refused at its own line, the Jalapeno generation is not.
  const std::string both =
      jalapeno_plan("jalapeno-b0", line) +
      "comparators:\n  - system: gb300-nvl72\n"
      "    capex_per_unit: {value: $3.5M, assumption: true, reason: test}\n"
      "    throughput: {tps_per_xpu: {value: 3000 tok/s, source: \"a given figure\"}, "
      "output_share: 0.1}\n" +
      line;
  std::ofstream(rehearsal)
      << "name: small-site\nsystem: jalapeno-a0\ndomains: 2\n"
         "horizon: 20 days\nsample_every: 6 h\nseed: 11\nserving:\n"
         "  tps_per_replica: {value: 20000 tok/s, assumption: true, reason: t}\n"
         "  replica_xpus: 8\nspare_capacity: {racks: 0, attainment_goal: 99%}\n";
  auto shared = plan_text(both);
  ::unlink(rehearsal.c_str());
  ASSERT_FALSE(shared.has_value());
  ASSERT_EQ(shared.error().diagnostics.size(), 1u);
  EXPECT_EQ(shared.error().diagnostics[0].where.line, 17);
  EXPECT_NE(shared.error().diagnostics[0].message.find("not built as gb300-nvl72"),
            std::string::npos);
  // An NVL72 rack is not built as a Jalapeno domain: an error at the availability's line.
  ASSERT_FALSE(gb.has_value());
  ASSERT_FALSE(gb.error().diagnostics.empty());
  EXPECT_NE(gb.error().diagnostics[0].message.find("not built as gb300-nvl72"), std::string::npos)
      << gb.error().diagnostics[0].to_string();
  EXPECT_EQ(gb.error().diagnostics[0].where.line, 11);
}

TEST(PlanAvailability, WithSpares_CountsOnlyTheReplicasOfferedAtTheTarget) {
  const std::string rehearsal =
      ::testing::TempDir() + "racktwin-plan-spares-" + std::to_string(::getpid()) + ".yaml";
  auto write = [&](const std::string& goal, const std::string& more) {
    std::ofstream(rehearsal)
        << "name: small-site\nsystem: jalapeno-a0\ndomains: 2\n"
           "horizon: 20 days\nsample_every: 6 h\nseed: 11\nserving:\n"
           "  tps_per_replica: {value: 20000 tok/s, assumption: true, reason: t}\n"
           "  replica_xpus: 8\nspare_capacity: {racks: 0, attainment_goal: "
        << goal << "}\n" << more;
  };
  write("99%", "");
  auto up = plan_text(jalapeno_plan("jalapeno-a0", "    availability: {rehearsal: " + rehearsal + "}\n"));
  auto held = plan_text(
      jalapeno_plan("jalapeno-a0", "    availability: {rehearsal: " + rehearsal + ", spares: true}\n"));
  // Parts failing a thousand times as often as the field's, six technicians: no spare capacity
  // holds the goal.
  write("99%", "failures: {scale: {value: 1000, assumption: true, reason: t}}\n");
  auto never = plan_text(
      jalapeno_plan("jalapeno-a0", "    availability: {rehearsal: " + rehearsal + ", spares: true}\n"));
  ::unlink(rehearsal.c_str());
  ASSERT_TRUE(up.has_value()) << up.error().message;
  ASSERT_TRUE(held.has_value()) << held.error().message;
  ASSERT_TRUE(up->units[0].availability && held->units[0].availability);
  // Two domains of 16 racks with 8-XPU replicas: 16 per rack. The spare racks that hold 99% leave
  // a whole number of racks' replicas offered, fewer than the replicas up on average.
  const double share = *held->units[0].availability;
  const double spare_racks = (1.0 - share) * 32;
  EXPECT_NEAR(spare_racks, std::round(spare_racks), 1e-9) << share;
  EXPECT_GE(spare_racks, 1.0);
  EXPECT_LT(share, *up->units[0].availability);
  EXPECT_NE(held->units[0].availability_note.find("with 1 of the site's 32 racks spare, 99% attainment holds"),
            std::string::npos)
      << held->units[0].availability_note;
  // An error at the availability's line.
  ASSERT_FALSE(never.has_value());
  ASSERT_EQ(never.error().diagnostics.size(), 1u);
  EXPECT_NE(never.error().diagnostics[0].message.find("holds its attainment goal"),
            std::string::npos);
}

}  // namespace
}  // namespace racktwin::app
