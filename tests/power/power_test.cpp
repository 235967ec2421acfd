// The power model on the shipped catalog: XPU power against activity, energy, rack budgets and
// the normalisations.

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "power/power_model.hpp"
#include "tests/scenarios/test_support.hpp"

namespace racktwin::power {
namespace {

using test::shipped_catalog;

const System& sys(const char* id) {
  return test::shipped_system(id);
}

PowerModel model(const System& s, Facility f = {}) {
  auto m = PowerModel::of(s, f);
  if (!m) throw std::runtime_error(m.error());
  return *m;
}

const double kSteps[] = {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0};

TEST(XpuPower_Jalapeno, WorkedExample_AndFullActivityAtTdp) {
  const System& s = sys("jalapeno-a0");
  // The catalog's busy share for Jalapeno is fitted to its measured power (docs/model.md section
  // 13.3); the worked example takes the assumed 0.6 with the catalog's other figures.
  const XpuPower x(*s.power.xpu_idle, s.chip->tdp,
                   {0.6, *s.power.xpu_memory_share, *s.power.xpu_link_share});
  // docs/power.md: busy 1, compute 0.05, memory 0.9, links 0.3 with b 0.6, s 0.3, l 0.11:
  // 105 + 595 x (0.6 + 0.4 x (0.59 x 0.05 + 0.3 x 0.9 + 0.11 x 0.3)) = 541.135 W.
  EXPECT_NEAR(x.at({0.05, 0.9, 0.3, 1.0}).value(), 541.135, 1e-9);
  EXPECT_EQ(x.at(Activity::full()), s.chip->tdp);
  // The measured sustained figure is a check on operating points, not the ceiling.
  ASSERT_TRUE(s.chip->sustained_power);
  EXPECT_LT(*s.chip->sustained_power, XpuPower::of(s)->at(Activity::full()));
}

TEST(XpuPower_EverySystem, StaysBetweenIdleAndTdp_AndGrowsWithEachActivity) {
  for (const auto& [id, s] : shipped_catalog().systems) {
    const auto x = XpuPower::of(*s);
    ASSERT_TRUE(x) << x.error();
    for (double c : kSteps)
      for (double m : kSteps)
        for (double u : kSteps) {
          const Activity a{c, m, m / 2, u};
          const Watts p = x->at(a);
          EXPECT_GE(p, x->idle()) << id;
          EXPECT_LE(p, s->chip->tdp) << id;
          auto less = [&](double Activity::*f) {
            Activity b = a;
            b.*f -= 0.05;
            return x->at(b);
          };
          if (c > 0) {
            EXPECT_GT(p, less(&Activity::compute)) << id;
          }
          if (m > 0) {
            EXPECT_GT(p, less(&Activity::memory)) << id;
          }
          if (m > 0) {
            EXPECT_GT(p, less(&Activity::link)) << id;
          }
          if (u > 0) {
            EXPECT_GT(p, less(&Activity::busy)) << id;
          }
        }
    EXPECT_EQ(x->at({}), x->idle()) << id;
    EXPECT_EQ(x->at(Activity::full()), x->tdp()) << id;
  }
}

TEST(XpuPower_Shares, OutOfRangeOrAddingAboveOne_Throw) {
  const Watts idle(100), tdp(700);
  EXPECT_THROW(XpuPower(idle, tdp, {1.2, 0.3, 0.1}), InputError);
  EXPECT_THROW(XpuPower(idle, tdp, {0.6, -0.1, 0.1}), InputError);
  EXPECT_THROW(XpuPower(idle, tdp, {0.6, 0.7, 0.4}), InputError);
  EXPECT_THROW(XpuPower(tdp, tdp, {0.6, 0.3, 0.1}), InputError);
  EXPECT_NO_THROW(XpuPower(idle, tdp, {0.0, 0.9, 0.1}));
  System s = sys("gb200-nvl72");
  s.power.xpu_link_share.reset();
  const auto missing = XpuPower::of(s);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("power.xpu_link_share"), std::string::npos) << missing.error();
}

TEST(XpuPower_Activity, OutsideZeroToOne_Throws) {
  const XpuPower x = *XpuPower::of(sys("gb200-nvl72"));
  EXPECT_THROW(x.at({1.2, 0.5}), InputError);
  EXPECT_THROW(x.at({0.5, -0.1}), InputError);
  EXPECT_THROW(x.at({std::nan(""), 0.5}), InputError);
  EXPECT_THROW(x.at({0.5, 0.5, 1.5, 1.0}), InputError);
  EXPECT_THROW(x.at({0.5, 0.5, 0.5, -1.0}), InputError);
  EXPECT_THROW(x.energy({0.5, 0.5}, Seconds(-1)), InputError);
}

TEST(XpuPower_Energy, ConstantActivity_EqualsPowerTimesTime) {
  const XpuPower x = *XpuPower::of(sys("jalapeno-a0"));
  const Activity a{0.7, 0.4, 0.2, 0.9};
  const Seconds hour(3600);
  EXPECT_DOUBLE_EQ(x.energy(a, hour).value(), x.at(a).value() * 3600.0);
  // The same hour cut into stretches draws the same energy.
  const ActivitySpan parts[] = {{a, Seconds(600)}, {a, Seconds(1800)}, {a, Seconds(1200)}};
  EXPECT_NEAR(x.energy(parts).value(), x.energy(a, hour).value(), 1e-9 * x.energy(a, hour).value());
  // Mixed activity: the sum of each stretch's power times its length.
  const ActivitySpan mixed[] = {{{}, Seconds(10)}, {Activity::full(), Seconds(5)}};
  EXPECT_DOUBLE_EQ(x.energy(mixed).value(), x.idle().value() * 10 + x.tdp().value() * 5);
}

TEST(PowerModel_EverySystem, PublishedRackFigures_ComeOutOfComponentsWithinTheResidual) {
  int checks = 0;
  for (const auto& [id, s] : shipped_catalog().systems) {
    const PowerModel m = model(*s);
    for (const auto& c : m.budget_checks()) {
      ++checks;
      EXPECT_LE(std::abs(c.residual()), kBudgetTolerance)
          << id << " " << c.what << ": computed " << c.computed.value() << " W against "
          << c.published.value();
    }
  }
  // Jalapeno A0 and B0: rack, host rack x2, pair; 3 NVL72 racks; 3 HGX servers.
  EXPECT_EQ(checks, 2 * 4 + 3 + 3);
}

TEST(PowerModel_Jalapeno, RackSheet_AddsUpItsLinesAndConversion) {
  const System& s = sys("jalapeno-a0");
  const PowerModel m = model(s);
  const PowerSheet rack = m.sheet(m.compute_rack_parts(), Operating::rated());
  ASSERT_EQ(rack.lines.size(), 3u);  // XPUs, Vindaloo overhead, Chana trays
  EXPECT_EQ(rack.lines[0].count, 128);
  EXPECT_EQ(rack.lines[1].count, 16);
  EXPECT_EQ(rack.lines[2].count, 8);
  double sum = 0;
  for (const auto& l : rack.lines) sum += l.total().value();
  EXPECT_DOUBLE_EQ(rack.load.value(), sum);
  EXPECT_DOUBLE_EQ(rack.input.value(), sum / (0.96 * 0.98));
  EXPECT_DOUBLE_EQ((rack.input - rack.load).value(), rack.conversion_loss.value());
  EXPECT_EQ(m.host_rack_parts().hosts, 16);
  // Below full activity the XPU line drops and so does the rack; at full activity it is rated.
  const PowerSheet busy = m.sheet(m.compute_rack_parts(), Operating::at({0.5, 0.9, 0.3, 1}));
  EXPECT_LT(busy.input, rack.input);
  const PowerSheet full = m.sheet(m.compute_rack_parts(), Operating::at(Activity::full()));
  EXPECT_NEAR(full.lines[0].total().value(), rack.lines[0].total().value(), 1e-9);
}

TEST(PowerModel_Jalapeno, AllIn_IsComputedAndLabelled_GbIsPublished) {
  const PowerModel j = model(sys("jalapeno-a0"));
  EXPECT_TRUE(j.all_in().computed);
  EXPECT_DOUBLE_EQ(j.all_in().per_xpu.value(), j.provisioned_per_xpu().value() * 1.10);
  const PowerModel g = model(sys("gb200-nvl72"));
  EXPECT_FALSE(g.all_in().computed);
  EXPECT_EQ(g.all_in().per_xpu, *sys("gb200-nvl72").power.all_in_per_xpu);
  // A higher PUE raises the computed all-in figure in proportion.
  Facility f;
  f.pue = 1.2;
  EXPECT_NEAR(model(sys("jalapeno-a0"), f).all_in().per_xpu.value() / j.all_in().per_xpu.value(),
              1.2 / 1.1, 1e-12);
}

TEST(Normalise_EverySystem, Normalisations_AreMutuallyConsistent) {
  const TokensPerSecond tps(1234.5);
  const Activity a{0.8, 0.6, 0.3, 1.0};
  for (const auto& [id, s] : shipped_catalog().systems) {
    const PowerModel m = model(*s);
    const Normalised n = normalise(m, tps, a);
    for (TokensPerJoule x : {n.per_rated_tdp, n.per_measured, n.per_it, n.per_all_in})
      EXPECT_NEAR(per_mw(x), per_kw(x) * 1000.0, 1e-9 * per_mw(x)) << id;
    // Multiplying back by each power gives the same throughput.
    EXPECT_NEAR((n.per_rated_tdp * s->chip->tdp).value(), tps.value(), 1e-9) << id;
    EXPECT_NEAR((n.per_measured * m.xpu().at(a)).value(), tps.value(), 1e-9) << id;
    EXPECT_NEAR((n.per_it * m.it_per_xpu(Operating::at(a))).value(), tps.value(), 1e-9) << id;
    // The measured XPU draws at most its TDP, and its rack share adds trays, switches and hosts.
    EXPECT_GE(n.per_measured, n.per_rated_tdp) << id;
    EXPECT_LT(n.per_it, n.per_measured) << id;
    EXPECT_EQ(n.all_in_computed, !s->power.all_in_per_xpu.has_value()) << id;
    if (n.all_in_computed) {
      EXPECT_LT(n.per_all_in, n.per_it) << id;
    }
  }
}

TEST(PowerShare_EverySystem, PartsAddUpToItAndAllInPower) {
  const Activity a{0.7, 0.5, 0.2, 0.9};
  for (const auto& [id, s] : shipped_catalog().systems) {
    const PowerModel m = model(*s);
    const Operating op = Operating::at(a);
    const XpuPowerShare share = m.share_per_xpu(op);
    EXPECT_NEAR(share.it().value(), m.it_per_xpu(op).value(), 1e-9) << id;
    EXPECT_NEAR(share.all_in().value(), m.it_per_xpu(op).value() * m.facility().pue, 1e-9) << id;
    EXPECT_NEAR(share.xpu.value(), m.xpu().at(a).value(), 1e-9) << id;
    for (Watts w : {share.tray_overhead, share.switches, share.hosts, share.conversion_loss,
                    share.facility_overhead})
      EXPECT_GE(w.value(), 0.0) << id;
    EXPECT_GT(share.conversion_loss.value(), 0.0) << id;
  }
}

TEST(Facility_FromScenario, TakesThePueAndKeepsTheConversionDefaults) {
  FacilitySpec spec;
  spec.pue = 1.25;
  const Facility f = Facility::from(spec);
  EXPECT_DOUBLE_EQ(f.pue, 1.25);
  EXPECT_DOUBLE_EQ(f.conversion.efficiency(), Conversion{}.efficiency());
  Facility bad;
  bad.pue = 0.9;
  EXPECT_FALSE(PowerModel::of(sys("gb200-nvl72"), bad));
}

TEST(PowerModel_Missing, ComponentFigure_FailsNamingTheField) {
  System s = sys("gb200-nvl72");
  s.power.switch_tray.reset();
  auto m = PowerModel::of(s);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().find("power.switch_tray"), std::string::npos) << m.error();
  s.power.xpu_idle.reset();
  EXPECT_NE(PowerModel::of(s).error().find("power.xpu_idle"), std::string::npos);
}

}  // namespace
}  // namespace racktwin::power
