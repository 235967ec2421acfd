// Sensitivity and Monte Carlo over a plan's uncertain figures.

#include "plan/uncertainty.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace racktwin;
using namespace racktwin::plan;

Plan uncertain_plan() {
  Plan p;
  p.first = {2026, 3};
  p.last = {2027, 2};
  PlanSite s;
  s.id = "a";
  s.pue = Figure{1.2, {}};
  s.ramp = {{{2026, 3}, Watts(20e6)}};
  s.commission_per_week = 100;
  p.sites = {s};
  p.dock_to_rack = Figure{0, {}};
  auto& c = p.costs;
  c.electricity_price = Figure{usd_per_kwh(0.08).value(), {}};
  c.facility_capex = Figure{10, {}};
  c.depreciation_years = Figure{5, {}};
  c.facility_years = Figure{15, {}};
  c.maintenance = Figure{0.03, {}};
  c.financing_rate = Figure{0.08, {}};
  c.utilisation = Figure{1.0, {}};
  c.output_price_ratio = Figure{4, {}};
  Generation g;
  g.id = "g";
  g.supply = {{{2026, 3}, 50}};
  g.capex_per_unit = Figure{3e6, {}};
  p.generations = {g};
  p.uncertainty.draws = 200;
  p.uncertainty.seed = 7;
  p.uncertainty.figures = {{"costs.electricity_price", usd_per_kwh(0.06).value(), usd_per_kwh(0.1).value(), {}},
                           {"g.capex_per_unit", 2e6, 5e6, {}},
                           {"g.throughput", 0.5, 1.2, {}}};
  return p;
}

std::vector<UnitModel> units_of(const Plan& p) {
  UnitModel u;
  u.generation = p.generations[0];
  u.xpus = 128;
  u.racks = 2;
  u.domain_xpus = 2048;
  u.it_power = Watts(160e3);
  u.operating_it_power = Watts(100e3);
  u.tps_per_xpu = 10000;
  u.output_share = 0.1;
  u.capex_per_unit = 3e6;
  return {u};
}

TEST(Triangular, StaysInItsRange_AndPeaksAtTheMode) {
  EXPECT_DOUBLE_EQ(triangular(1, 2, 4, 0.0), 1);
  EXPECT_NEAR(triangular(1, 2, 4, 1.0 - 1e-12), 4, 1e-5);
  EXPECT_NEAR(triangular(1, 2, 4, 1.0 / 3.0), 2, 1e-12);  // P(X < mode) = (mode - low) / (high - low)
}

TEST(Sensitivity, RanksFiguresBySwing_AndMovesTheRightWay) {
  const Plan p = uncertain_plan();
  const Sensitivity s = sensitivity(p, units_of(p));
  ASSERT_EQ(s.by_cost.size(), 3u);
  for (std::size_t i = 1; i < s.by_cost.size(); ++i)
    EXPECT_GE(std::fabs(s.by_cost[i - 1].usd_per_mtok_high - s.by_cost[i - 1].usd_per_mtok_low),
              std::fabs(s.by_cost[i].usd_per_mtok_high - s.by_cost[i].usd_per_mtok_low));
  for (const auto& w : s.by_cost) {
    if (w.figure == "g.throughput") {
      EXPECT_GT(w.usd_per_mtok_low, w.usd_per_mtok_high);  // fewer tokens cost more each
      EXPECT_LT(w.tps_low, w.tps_high);
    } else {
      EXPECT_LT(w.usd_per_mtok_low, w.usd_per_mtok_high);  // a dearer input costs more
      EXPECT_DOUBLE_EQ(w.tps_low, w.tps_high);
    }
  }
  EXPECT_EQ(s.by_tokens.front().figure, "g.throughput");
}

TEST(MonteCarlo, SameSeedSameBand_OtherSeedOtherBand_AndOrdered) {
  const Plan p = uncertain_plan();
  const MonteCarlo a = monte_carlo(p, units_of(p));
  const MonteCarlo b = monte_carlo(p, units_of(p));
  ASSERT_EQ(a.quarters.size(), 4u);
  EXPECT_EQ(a.draws, 200);
  for (std::size_t q = 0; q < a.quarters.size(); ++q) {
    EXPECT_EQ(a.quarters[q].usd_per_mtok.p50, b.quarters[q].usd_per_mtok.p50);
    EXPECT_LE(a.quarters[q].usd_per_mtok.p10, a.quarters[q].usd_per_mtok.p50);
    EXPECT_LE(a.quarters[q].usd_per_mtok.p50, a.quarters[q].usd_per_mtok.p90);
    EXPECT_LT(a.quarters[q].tps.p10, a.quarters[q].tps.p90);
  }
  Plan other = p;
  other.uncertainty.seed = 8;
  EXPECT_NE(monte_carlo(other, units_of(other)).quarters[0].usd_per_mtok.p50,
            a.quarters[0].usd_per_mtok.p50);
  // The order in which the figures are listed does not change a draw.
  Plan swapped = p;
  std::swap(swapped.uncertainty.figures[0], swapped.uncertainty.figures[2]);
  EXPECT_EQ(monte_carlo(swapped, units_of(swapped)).quarters[3].tps.p50, a.quarters[3].tps.p50);
}

}  // namespace
