// The rollout engine on made-up units: the power identity, whole units, the binding constraint, the
// dock-to-rack lag and the cost formulas.

#include "plan/rollout.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "made_up_plan.hpp"

namespace {

using namespace racktwin;
using namespace racktwin::plan;

using test::fig;

Plan small_plan() {
  return test::one_site_plan();
}

UnitModel unit(std::map<Quarter, double> supply, double capex = 1e6) {
  return test::made_up_unit("g", std::move(supply), capex);
}

TEST(Rollout, EveryQuarter_UnitsTimesPowerTimesPue_IsTheFacilityPowerUsed) {
  const Plan p = small_plan();
  const Rollout r = roll_out(p, {unit({{{2026, 3}, 30}})}, "plan");
  ASSERT_EQ(r.quarters.size(), 6u);
  for (const auto& q : r.quarters) {
    EXPECT_EQ(q.total.units, std::floor(q.total.units));
    EXPECT_NEAR(q.total.units * 100e3 * 1.25, q.total.facility_w, 1e-6 * q.total.facility_w + 1e-9);
    EXPECT_LE(q.total.facility_w, q.energised_w + 1e-6);
    EXPECT_DOUBLE_EQ(q.total.tps, q.total.xpus * 1000);
  }
}

TEST(Rollout, Constraints_BindInTurn) {
  Plan p = small_plan();
  // 2026Q3: 10 MW / 1.25 / 100 kW = 80 units of room, 30 ready, 130 racks of crews: supply binds.
  // 2026Q4: 30 more ready, 50 units of room left: supply; 2027Q1: 30 MW room = 300 units, crews
  // 20 x 13 / 2 = 130 units, supply 200: deployment binds; later the room runs out: power.
  const Rollout r = roll_out(p, {unit({{{2026, 3}, 30}, {{2027, 1}, 200}})}, "plan");
  EXPECT_EQ(r.quarters[0].binding, Binding::supply);
  EXPECT_EQ(r.quarters[0].total.units, 30);
  EXPECT_EQ(r.quarters[2].binding, Binding::deployment);
  EXPECT_EQ(r.quarters[2].total.added, 130);
  EXPECT_EQ(r.quarters[4].binding, Binding::power);
  EXPECT_EQ(r.quarters.back().total.units, 320);  // 40 MW / 1.25 / 100 kW
}

TEST(Rollout, DockToRack_DelaysTheShareOfDeliveriesThatArriveLate) {
  Plan p = small_plan();
  p.dock_to_rack = fig(kWeeksPerQuarter * 7 * 86400 / 2);  // half a quarter
  const Rollout r = roll_out(p, {unit({{{2026, 3}, 40}})}, "plan");
  EXPECT_EQ(r.quarters[0].total.units, 20);
  EXPECT_EQ(r.quarters[1].total.units, 60);  // 20 late + 20 of the second quarter's 40
}

TEST(Rollout, Domains_CountWholeAndPartial) {
  const Rollout r = roll_out(small_plan(), {unit({{{2026, 3}, 15}})}, "plan");
  EXPECT_EQ(r.quarters[0].total.xpus, 1500);
  EXPECT_EQ(r.quarters[0].total.domains_whole, 1);
  EXPECT_EQ(r.quarters[0].total.domains_partial, 1);
}

TEST(Rollout, Costs_FollowTheFormulas) {
  Plan p = small_plan();
  p.last = {2030, 4};
  const UnitModel once = unit({{{2026, 3}, 10}, {{2026, 4}, 0}});
  const Rollout r = roll_out(p, {once}, "plan");
  const auto& q = r.quarters[0];
  const double facility_w = 10 * 100e3 * 1.25;
  EXPECT_DOUBLE_EQ(q.total.capex, 10 * 1e6 + facility_w * 10);
  const double electricity = 10 * 60e3 * 1.25 * kHoursPerYear * 3600 * usd_per_kwh(0.1).value();
  const double tco = 10 * 1e6 / 4 + facility_w * 10 / 15 + electricity;
  EXPECT_NEAR(q.total.tco_per_year, tco, 1e-6 * tco);
  const double tokens = 10 * 100 * 1000 * kHoursPerYear * 3600;
  EXPECT_NEAR(q.usd_per_mtok, tco / tokens * 1e6, 1e-9 * q.usd_per_mtok);
  // The ratio 1 prices input and output alike.
  EXPECT_NEAR(q.usd_per_mtok_input, q.usd_per_mtok, 1e-12);
  // Hardware paid off after 4 years: the facility and the power remain.
  const double later = facility_w * 10 / 15 + electricity;
  EXPECT_NEAR(r.quarters.back().total.tco_per_year, later, 1e-6 * later);
  EXPECT_NEAR(r.quarters[15].total.tco_per_year, tco, 1e-6 * tco);  // 2030Q2: 3.75 years old
}

TEST(Rollout, OwnedCostPerXpuHour_ReproducesInferenceXsFormula) {
  Plan p = small_plan();
  UnitModel u = unit({{{2026, 3}, 10}});
  u.capex_per_unit.reset();
  u.cost_per_xpu_s = 2.21 / 3600.0;  // GB200 NVL72, owned at hyperscaler volume
  u.tps_per_xpu = 5000;
  const Rollout r = roll_out(p, {u}, "plan");
  EXPECT_NEAR(r.quarters[0].usd_per_mtok, usd_per_mtok(2.21, 5000), 1e-12);
  EXPECT_NEAR(usd_per_mtok(2.21, 5000), 2.21 / (5000 * 3600.0) * 1e6, 1e-15);
  EXPECT_EQ(r.quarters[0].total.capex, 0);
}

TEST(Annuity, ZeroRateIsStraightLine_AndARateRaisesThePayment) {
  EXPECT_DOUBLE_EQ(annuity(100, 0, 4), 25);
  EXPECT_NEAR(annuity(100, 0.08, 5), 25.0456, 1e-4);
}

TEST(Rollout, NewerGeneration_IsInstalledFirst) {
  Plan p = small_plan();
  UnitModel old_gen = unit({{{2026, 3}, 100}});
  UnitModel new_gen = unit({{{2026, 3}, 50}});
  new_gen.generation.id = "new";
  const Rollout r = roll_out(p, {old_gen, new_gen}, "plan");
  EXPECT_EQ(r.quarters[0].generations[1].installed.units, 50);
  EXPECT_EQ(r.quarters[0].generations[0].installed.units, 30);  // the rest of the 80 units of room
}

}  // namespace
