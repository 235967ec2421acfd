// The derived site layout and the what-if edits on made-up units: positions match the rollout's
// units quarter by quarter and never move; edits scale what they name and report bad values.

#include "plan/site_layout.hpp"

#include <gtest/gtest.h>

#include "made_up_plan.hpp"
#include "plan/what_if.hpp"

namespace {

using namespace racktwin;
using namespace racktwin::plan;

// Two sites: the made-up plan's, and one energising 20 MW from 2026Q4.
Plan two_sites() {
  Plan p = test::one_site_plan();
  PlanSite b = p.sites.front();
  b.id = "b";
  b.ramp = {{{2026, 4}, Watts(20e6)}};
  p.sites.push_back(b);
  return p;
}

UnitModel unit(std::string id, std::map<Quarter, double> supply) {
  return test::made_up_unit(std::move(id), std::move(supply));
}

std::vector<UnitModel> fleet() {
  return {unit("old", {{{2026, 3}, 40}}), unit("new", {{{2027, 1}, 60}})};
}

TEST(SiteLayout, EachQuarter_TheInstalledPositionsAreTheRolloutsUnits) {
  const Plan p = two_sites();
  const auto units = fleet();
  const Rollout r = roll_out(p, units, "plan");
  const FleetLayout l = lay_out(p, r, units);
  ASSERT_EQ(l.sites.size(), 2u);
  for (int q = 0; q < static_cast<int>(r.quarters.size()); ++q) {
    const auto at = positions_at(l, p, r, units, q);
    for (std::size_t s = 0; s < 2; ++s) {
      const auto& site = r.quarters[static_cast<std::size_t>(q)].sites[s];
      EXPECT_EQ(at[s].serving + at[s].installed, static_cast<std::size_t>(site.installed.units)) << q << s;
      EXPECT_EQ(at[s].installed, static_cast<std::size_t>(site.installed.added)) << q << s;
      EXPECT_EQ(at[s].positions.size(), l.sites[s].positions);
      EXPECT_EQ(l.sites[s].positions % kPositionsPerRow, 0u);
    }
  }
  // Site a ends with 40 MW / 1.25 / 100 kW = 320 positions, all energised.
  EXPECT_EQ(l.sites[0].positions, 320u);
  const auto end = positions_at(l, p, r, units, static_cast<int>(r.quarters.size()) - 1);
  EXPECT_EQ(end[0].dark, 0u);
  // In 2026Q3 site a has 80 units of room, 40 of them filled; the rest of its positions are dark.
  const auto first = positions_at(l, p, r, units, 0);
  EXPECT_EQ(first[0].installed, 40u);
  EXPECT_EQ(first[0].energised, 40u);
  EXPECT_EQ(first[0].dark, 240u);
  EXPECT_EQ(first[1].dark, l.sites[1].positions);
}

TEST(SiteLayout, APositionKeepsItsUnitFromQuarterToQuarter) {
  const Plan p = two_sites();
  const auto units = fleet();
  const Rollout r = roll_out(p, units, "plan");
  const FleetLayout l = lay_out(p, r, units);
  const auto q0 = positions_at(l, p, r, units, 0);
  const auto q5 = positions_at(l, p, r, units, 5);
  for (std::size_t i = 0; i < q0[0].positions.size(); ++i)
    if (q0[0].positions[i].state == PositionState::installed) {
      EXPECT_EQ(q5[0].positions[i].state, PositionState::serving) << i;
      EXPECT_EQ(q5[0].positions[i].generation, q0[0].positions[i].generation) << i;
    }
  const SiteCohort* c = cohort_of(l.sites[0], 0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->quarter, 0);
  EXPECT_EQ(c->generation, 0u);
  EXPECT_EQ(place_of(kPositionsPerHall + kPositionsPerRow + 3).hall, 1);
  EXPECT_EQ(place_of(kPositionsPerHall + kPositionsPerRow + 3).row, 1);
  EXPECT_EQ(place_of(kPositionsPerHall + kPositionsPerRow + 3).place, 3);
}

TEST(WhatIf, Edits_ScaleWhatTheyName) {
  Plan p = two_sites();
  p.generations = {fleet()[0].generation};
  Generation cmp;
  cmp.id = "other";
  p.comparators = {cmp};
  WhatIf w;
  EXPECT_TRUE(w.empty());
  w.power_scale = 0.5;
  w.supply_scale = 2;
  w.pue = 1.1;
  w.electricity_usd_per_kwh = 0.2;
  w.comparators = std::vector<std::string>{};
  auto e = apply(p, w);
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->sites[0].ramp.at({2027, 1}).value(), 20e6);
  EXPECT_DOUBLE_EQ(e->sites[1].pue.value, 1.1);
  EXPECT_TRUE(e->sites[1].pue.origin.assumption);
  EXPECT_DOUBLE_EQ(e->generations[0].supply.at({2026, 3}), 80);
  EXPECT_NEAR(e->costs.electricity_price.value * 3.6e6, 0.2, 1e-12);
  EXPECT_TRUE(e->comparators.empty());
  EXPECT_EQ(apply(p, WhatIf{})->sites[0].ramp.at({2027, 1}).value(), 40e6);
}

TEST(WhatIf, BadEdits_AreEveryOneReportedByName) {
  WhatIf w;
  w.power_scale = 0;
  w.pue = 0.9;
  w.comparators = std::vector<std::string>{"nvl"};
  auto e = apply(two_sites(), w);
  ASSERT_FALSE(e.has_value());
  ASSERT_EQ(e.error().size(), 3u);
  EXPECT_EQ(e.error()[0].path, "power_scale");
  EXPECT_EQ(e.error()[0].where.file, "what-if");
  EXPECT_EQ(e.error()[1].path, "pue");
  EXPECT_EQ(e.error()[2].path, "comparators");
}

}  // namespace
