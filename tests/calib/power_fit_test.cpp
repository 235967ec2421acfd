// The busy share fitted to a chip's measured sustained power (calib/power_fit.hpp); no simulation.

#include "calib/power_fit.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "power/xpu_power.hpp"
#include "test_support.hpp"

namespace {

using namespace racktwin;
using racktwin::test::shipped_system;

sim::PointResult at(const System& s, double compute, double memory, double link, double busy,
                    int clients = 8) {
  sim::PointResult r;
  r.spec.system = &s;
  r.spec.workload_id = "w";
  r.spec.layout = *parse_layout("tp8");
  r.spec.arrivals = sim::ClosedLoop{clients};
  r.compute_activity = compute;
  r.memory_activity = memory;
  r.link_activity = link;
  r.busy_activity = busy;
  return r;
}

double power_at(const System& s, double share, const sim::PointResult& r) {
  const auto& pw = s.power;
  const power::XpuPower x(*pw.xpu_idle, s.chip->tdp,
                          {share, *pw.xpu_memory_share, *pw.xpu_link_share});
  return x.at({r.compute_activity, r.memory_activity, r.link_activity, r.busy_activity}).value();
}

TEST(PowerFit, FittedShare_TheHighestPointDrawsTheMeasuredPower) {
  const System& j = shipped_system("jalapeno-a0");
  ASSERT_TRUE(j.chip->sustained_power);
  const std::vector<sim::PointResult> rs{at(j, 0.30, 0.80, 0.30, 1.0, 64),
                                         at(j, 0.05, 0.95, 0.20, 1.0, 8),
                                         at(j, 0.02, 0.30, 0.05, 0.4, 1)};
  const auto fits = calib::fit_power(rs);
  ASSERT_EQ(fits.size(), 1u);
  const calib::PowerFit& f = fits[0];
  ASSERT_TRUE(f.error.empty()) << f.error;
  EXPECT_EQ(f.system, "jalapeno-a0");
  EXPECT_EQ(f.sweep_points, 3);
  EXPECT_DOUBLE_EQ(f.measured_w, j.chip->sustained_power->value());
  double highest = 0;
  for (const auto& r : rs) {
    EXPECT_LE(power_at(j, f.busy_share, r), f.measured_w + 1e-9);
    highest = std::max(highest, power_at(j, f.busy_share, r));
  }
  // Rounded down to 1e-6: the highest point is within one rounding step of the measured power.
  EXPECT_NEAR(highest, f.measured_w, 1e-6 * (j.chip->tdp - *j.power.xpu_idle).value());
  EXPECT_DOUBLE_EQ(f.highest_w, highest);
  EXPECT_NE(f.highest_at.find("64 clients"), std::string::npos) << f.highest_at;
  EXPECT_GT(f.busy_share, 0.0);
  EXPECT_LT(f.busy_share, 1.0);
}

TEST(PowerFit, DoesNotDependOnTheShareTheCatalogHolds) {
  System other = shipped_system("jalapeno-a0");
  other.power.xpu_busy_share = 0.1;
  const std::vector<sim::PointResult> a{at(shipped_system("jalapeno-a0"), 0.3, 0.8, 0.3, 1.0)};
  const std::vector<sim::PointResult> b{at(other, 0.3, 0.8, 0.3, 1.0)};
  EXPECT_DOUBLE_EQ(calib::fit_power(a).at(0).busy_share, calib::fit_power(b).at(0).busy_share);
}

TEST(PowerFit, NoShareReproducesIt_SaysWhich) {
  const System& j = shipped_system("jalapeno-a0");
  // Every unit busy: the XPU draws its rated TDP whatever the share, above the measured power.
  auto over = calib::fit_power({at(j, 1.0, 1.0, 1.0, 1.0)});
  ASSERT_EQ(over.size(), 1u);
  EXPECT_NE(over[0].error.find("more than the measured"), std::string::npos) << over[0].error;
  // Nearly idle: even a share of 1 leaves every point below the measured power.
  auto under = calib::fit_power({at(j, 0.01, 0.02, 0.0, 0.1)});
  ASSERT_EQ(under.size(), 1u);
  EXPECT_NE(under[0].error.find("too low"), std::string::npos) << under[0].error;
}

TEST(PowerFit, ChipsWithoutAMeasurementAndFailedPointsAreLeftOut) {
  const System& g = shipped_system("gb200-nvl72");
  ASSERT_FALSE(g.chip->sustained_power);
  EXPECT_TRUE(calib::fit_power({at(g, 0.3, 0.8, 0.3, 1.0)}).empty());
  const System& j = shipped_system("jalapeno-a0");
  auto failed = at(j, 1.0, 1.0, 1.0, 1.0);
  failed.error = "no layout fits";
  const auto fits = calib::fit_power({failed, at(j, 0.3, 0.8, 0.3, 1.0)});
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_TRUE(fits[0].error.empty()) << fits[0].error;
  EXPECT_EQ(fits[0].sweep_points, 1);
  // A measured system none of whose points ran is reported, not passed over as unmeasured.
  const auto none = calib::fit_power({failed});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].sweep_points, 0);
  EXPECT_DOUBLE_EQ(none[0].measured_w, j.chip->sustained_power->value());
  EXPECT_NE(none[0].error.find("no sweep point"), std::string::npos) << none[0].error;
}

}  // namespace
