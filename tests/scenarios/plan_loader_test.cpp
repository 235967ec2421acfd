// Reading plan files: the shipped plans, defaults with their origins, and every error at once.

#include "scenarios/plan_loader.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

using namespace racktwin;
using racktwin::test::shipped_catalog;

const std::string kPlans = std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/plans/";

std::expected<Plan, Diagnostics> load(const std::string& text) {
  return load_plan_string(text, "plan.yaml", kPlans, shipped_catalog());
}

const std::string kSmall = R"(name: small
quarters: {from: 2026Q3, to: 2027Q2}
power_basis: production
workloads:
  - {scenario: fleet-8k1k.yaml, workload: 8k1k, model: gpt-oss-120b, target: {tpot_p50: 20 ms}}
sites:
  - {id: a, ramp: {2026Q3: 100 MW}, commission_per_week: 40}
generations:
  - system: jalapeno-a0
    supply: {2026Q3: 10}
    capex_per_unit: {value: $3M, assumption: true, reason: "a test"}
)";

TEST(PlanFile, ShippedPlan_Loads) {
  auto p = load_plan_file(kPlans + "openai-10gw.yaml", shipped_catalog());
  ASSERT_TRUE(p.has_value()) << racktwin::test::dump(p.error());
  EXPECT_EQ(to_string(p->first), "2026Q3");
  EXPECT_EQ(to_string(p->last), "2029Q4");
  EXPECT_EQ(p->generations.size(), 3u);
  EXPECT_EQ(p->comparators.size(), 2u);
  EXPECT_TRUE(p->comparators[0].unlimited_supply);
}

TEST(PlanFile, ShippedSamePowerComparison_Loads) {
  auto p = load_plan_file(kPlans + "nvidia-same-power.yaml", shipped_catalog());
  ASSERT_TRUE(p.has_value()) << racktwin::test::dump(p.error());
  EXPECT_EQ(p->generations.back().system, "vr200-nvl72");
  EXPECT_EQ(p->uncertainty.figures.size(), 6u);
}

TEST(PlanFile, OmittedFigures_TakeDefaultsWithTheirOrigin) {
  auto p = load(kSmall);
  ASSERT_TRUE(p.has_value()) << racktwin::test::dump(p.error());
  EXPECT_EQ(p->generations[0].id, "jalapeno-a0");
  EXPECT_DOUBLE_EQ(p->sites[0].pue.value, 1.10);
  EXPECT_EQ(p->sites[0].pue.origin.kind, FigureOrigin::Kind::default_value);
  EXPECT_FALSE(p->sites[0].pue.origin.source.empty());
  EXPECT_TRUE(p->costs.maintenance.origin.assumption);
  EXPECT_FALSE(p->costs.maintenance.origin.reason.empty());
  EXPECT_EQ(p->generations[0].capex_per_unit->origin.kind, FigureOrigin::Kind::plan);
  EXPECT_EQ(p->generations[0].capex_per_unit->origin.where.line, 11);
  EXPECT_DOUBLE_EQ(p->generations[0].capex_per_unit->value, 3e6);
  EXPECT_DOUBLE_EQ(p->dock_to_rack.value, 4 * 7 * 86400.0);
}

TEST(PlanFile, EveryError_ReportedAtOnceWithItsLine) {
  const std::string text = R"(name: bad
quarters: {from: 2026Q3, to: 2026Q1}
power_basis: metered
workloads:
  - {scenario: fleet-8k1k.yaml, workload: 8k1k, model: gpt-oss-12b, share: 60%, target: {tpot_p50: 20 ms}}
sites:
  - {id: a, ramp: {2026Q3: 100 MW, 2027Q1: 50 MW, 2026Q5: 1 GW}, commission_per_week: 40}
generations:
  - system: jalapeno-a1
    supply: {2026Q3: 10}
costs: {electricity_price: '$1e308M/kWh'}
)";
  auto p = load(text);
  ASSERT_FALSE(p.has_value());
  const std::string all = racktwin::test::dump(p.error());
  EXPECT_NE(all.find("plan.yaml:2:"), std::string::npos) << all;  // the last quarter is first
  EXPECT_NE(all.find("plan.yaml:3:"), std::string::npos) << all;  // power_basis
  EXPECT_NE(all.find("gpt-oss-120b"), std::string::npos) << all;  // did you mean
  EXPECT_NE(all.find("add up to"), std::string::npos) << all;     // shares
  EXPECT_NE(all.find("falls in 2027Q1"), std::string::npos) << all;
  EXPECT_NE(all.find("2026Q5"), std::string::npos) << all;
  EXPECT_NE(all.find("jalapeno-a0"), std::string::npos) << all;     // did you mean
  EXPECT_NE(all.find("capex_per_unit"), std::string::npos) << all;  // missing cost
  EXPECT_NE(all.find("electricity_price"), std::string::npos) << all;
  EXPECT_GE(p.error().size(), 9u) << all;
}

TEST(PlanFile, AGivenThroughput_NeedsItsOrigin) {
  std::string text = kSmall + "    throughput: {tps_per_xpu: 5000 tok/s}\n";
  auto p = load(text);
  ASSERT_FALSE(p.has_value());
  const std::string all = racktwin::test::dump(p.error());
  EXPECT_NE(all.find("needs its source"), std::string::npos) << all;
  EXPECT_NE(all.find("output_share"), std::string::npos) << all;  // no silent default split
}

TEST(Quarter, Strings_RoundTripAndBadOnesAreRefused) {
  EXPECT_EQ(to_string(*quarter_from_string("2026Q3")), "2026Q3");
  EXPECT_EQ(to_string(*quarter_from_string("2026-Q4")), "2026Q4");
  EXPECT_FALSE(quarter_from_string("2026Q5"));
  EXPECT_FALSE(quarter_from_string("26Q1"));
  EXPECT_EQ(quarter_from_string("2026Q4")->next(), *quarter_from_string("2027Q1"));
}

}  // namespace

namespace {

TEST(PlanFile, UncertainFigures_MustExistAndHoldThePlansValue) {
  using namespace racktwin;
  const std::string text = kSmall + R"(uncertainty:
  draws: 10
  figures:
    costs.maintenence: {low: 1%, high: 5%}
    jalapeno-a0.capex_per_unit: {low: $3.5M, high: $4M}
    costs.electricity_price: {low: 1 W, high: 2 W}
    jalapeno-a0.throughput: {low: 0.8, high: 1.1}
)";
  auto p = load(text);
  ASSERT_FALSE(p.has_value());
  const std::string all = racktwin::test::dump(p.error());
  EXPECT_NE(all.find("did you mean 'costs.maintenance'"), std::string::npos) << all;
  EXPECT_NE(all.find("must hold the plan's value $3M"), std::string::npos) << all;
  EXPECT_NE(all.find("energy price"), std::string::npos) << all;
  EXPECT_EQ(p.error().size(), 4u) << all;  // the throughput scale is fine; low and high of the price
}

}  // namespace
