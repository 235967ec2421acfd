// The failure engine's invariants: no failures, no loss; the same seed, the same outcome; tokens
// add up; blast radius from the topology; restarts need no spares; repairs wait for spares and
// technicians; Weibull and exponential clocks with the same mean fail as often in the long run.

#include "rehearse/engine.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "../scenarios/test_support.hpp"
#include "scenarios/rehearsal_loader.hpp"
#include "topology/queries.hpp"
#include "topology/topology.hpp"

namespace {

using namespace racktwin;
using racktwin::test::shipped_system;

std::size_t ix(PartClass c) { return static_cast<std::size_t>(c); }

struct Engine : ::testing::Test {
  topology::Topology jalapeno = topology::build(shipped_system("jalapeno-a0"), 1);

  rehearse::EngineInput serving(int domains, double days) {
    rehearse::EngineInput in;
    in.domain = &jalapeno;
    in.domains = domains;
    in.horizon = Seconds(days * 86400);
    in.sample_every = Seconds(3600);
    in.seed = 7;
    in.classes = rehearsal_defaults().classes;
    in.repair = rehearsal_defaults().repair;
    in.surrogate.replica_xpus = 8;
    in.surrogate.tps_at_target = 1000;
    in.surrogate.tps_saturated = 1200;
    in.surrogate.curve = {{500, 1.0, 0.01}, {1000, 2.0, 0.02}, {1200, 4.0, 0.05}};
    in.offered_replicas = 240.0 * domains;  // of 256 per domain
    return in;
  }
  static void only(rehearse::EngineInput& in, PartClass c, double rate) {
    for (auto& k : in.classes) k.rate.value = k.part == c ? rate : 0.0;
  }
};

TEST_F(Engine, NoFailures_FullAvailabilityAndNoLoss) {
  auto in = serving(2, 3);
  for (auto& k : in.classes) k.rate.value = 0;
  const auto o = rehearse::run_engine(in);
  EXPECT_EQ(o.replicas_total, 512);
  EXPECT_TRUE(o.events.empty());
  EXPECT_DOUBLE_EQ(o.availability, 1.0);
  EXPECT_DOUBLE_EQ(o.attainment, 1.0);
  EXPECT_DOUBLE_EQ(o.tokens_lost, 0.0);
  EXPECT_DOUBLE_EQ(o.min_replicas_up, 512);
  EXPECT_NEAR(o.tokens_offered, 480 * 1000.0 * 3 * 86400, 1.0);
}

TEST_F(Engine, SameSeed_SameOutcome_OtherSeed_OtherFailures) {
  auto in = serving(3, 20);
  const auto a = rehearse::run_engine(in), b = rehearse::run_engine(in);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].t_s, b.events[i].t_s);
    EXPECT_EQ(a.events[i].part, b.events[i].part);
  }
  EXPECT_EQ(a.availability, b.availability);
  in.seed = 8;
  const auto c = rehearse::run_engine(in);
  EXPECT_TRUE(c.events.size() != a.events.size() || c.events.front().t_s != a.events.front().t_s);
}

TEST_F(Engine, Tokens_AddUp_AndSharesStayInRange) {
  auto in = serving(4, 30);
  in.offered_replicas = 4 * 256.0;  // no spare: every loss of a replica misses the target
  const auto o = rehearse::run_engine(in);
  ASSERT_FALSE(o.events.empty());
  EXPECT_NEAR(o.tokens_served + o.tokens_lost, o.tokens_offered, 1e-6 * o.tokens_offered);
  EXPECT_GT(o.tokens_late, 0.0);
  EXPECT_LT(o.attainment, 1.0);
  EXPECT_GT(o.availability, 0.9);
  EXPECT_LE(o.availability, 1.0);
  int failures = 0;
  for (const auto& c : o.classes) failures += c.failures;
  EXPECT_EQ(static_cast<std::size_t>(failures), o.events.size());
  for (std::size_t i = 1; i < o.events.size(); ++i) EXPECT_LE(o.events[i - 1].t_s, o.events[i].t_s);
  for (const auto& s : o.samples) {
    EXPECT_GE(s.attainment, 0.0);
    EXPECT_LE(s.attainment, 1.0 + 1e-12);
    EXPECT_LE(s.min_replicas_up, s.replicas_up + 1e-9);
    EXPECT_LE(s.replicas_up, o.replicas_total + 1e-9);
  }
}

TEST_F(Engine, AtLoad_FromTheHistogram_MatchesTheRunAndFallsWithLoad) {
  auto in = serving(4, 30);
  in.offered_replicas = 4 * 256.0;
  const auto o = rehearse::run_engine(in);
  double time = 0;
  for (const auto& [n, t] : o.time_at_replicas) time += t;
  EXPECT_NEAR(time, in.horizon.value(), 1e-6);
  const auto same = rehearse::at_load(o, in.surrogate, in.offered_replicas);
  EXPECT_NEAR(same.attainment, o.attainment, 1e-12);
  EXPECT_NEAR(same.tokens_lost_share, o.tokens_lost / o.tokens_offered, 1e-9);
  const auto less = rehearse::at_load(o, in.surrogate, 4 * 240.0);
  EXPECT_GE(less.attainment, same.attainment);
  EXPECT_DOUBLE_EQ(rehearse::at_load(o, in.surrogate, 0).attainment, 1.0);
}

TEST_F(Engine, AFeed_TakesItsRack_SixteenReplicasOfEight) {
  auto in = serving(1, 60);
  only(in, PartClass::power_feed, 1e-3);
  const auto o = rehearse::run_engine(in);
  ASSERT_FALSE(o.events.empty());
  const auto& first = o.events.front();
  EXPECT_EQ(first.cls, PartClass::power_feed);
  EXPECT_EQ(first.xpus_out, 128);  // 16 Vindaloo trays of 8 XPUs
  EXPECT_EQ(first.replicas_hit, 16);
  EXPECT_NEAR(first.recovered_s, in.repair.feed_repair.value + in.repair.reschedule.value, 1e-6);
  EXPECT_EQ(o.classes[ix(PartClass::power_feed)].spares_used, 0);
}

TEST_F(Engine, AChanaTray_SlowsAndTakesNoReplica_BothUplinksOfARack_CutItOff) {
  auto in = serving(1, 60);
  only(in, PartClass::switch_tray, 1e-3);
  in.repair.technicians = 0;  // nothing is mended: failures accumulate
  const auto o = rehearse::run_engine(in);
  ASSERT_GT(o.events.size(), 20u);
  EXPECT_EQ(o.events.front().replicas_hit, 0) << o.events.front().part;
  EXPECT_EQ(o.events.front().xpus_out, 0);
  // Later, a rack whose two uplink trays are down is cut off from its domain: 16 replicas.
  bool cut = false;
  for (const auto& e : o.events) cut = cut || (e.xpus_out == 128 && e.replicas_hit == 16);
  EXPECT_TRUE(cut);
}

TEST_F(Engine, SoftwareFailures_RestartWithoutSpares) {
  auto in = serving(1, 10);
  only(in, PartClass::software, 1e-4);
  const auto o = rehearse::run_engine(in);
  ASSERT_FALSE(o.events.empty());
  for (const auto& e : o.events) {
    EXPECT_EQ(e.xpus_out, 0);
    EXPECT_DOUBLE_EQ(e.recovered_s, in.repair.restart.value);
  }
  for (const auto& c : o.classes) EXPECT_EQ(c.spares_used, 0);
  EXPECT_EQ(o.technician_utilisation, 0.0);
}

TEST_F(Engine, NoSpares_SwapsWaitForTheVendor) {
  auto in = serving(1, 60);
  only(in, PartClass::compute_tray, 2e-4);
  in.repair.spares[ix(PartClass::compute_tray)] = {0, false, {}};
  const auto o = rehearse::run_engine(in);
  ASSERT_FALSE(o.events.empty());
  const auto& e = o.events.front();
  EXPECT_NEAR(e.waited_spare_s, in.repair.vendor_return.value, 1e-6);
  EXPECT_NEAR(e.recovered_s,
              in.repair.vendor_return.value + in.repair.swap.value + in.repair.reschedule.value, 1e-6);
}

TEST_F(Engine, NoTechnicians_NothingIsSwapped) {
  auto in = serving(1, 20);
  only(in, PartClass::xpu, 1e-4);
  in.repair.technicians = 0;
  const auto o = rehearse::run_engine(in);
  ASSERT_FALSE(o.events.empty());
  EXPECT_EQ(o.swaps_unfinished, static_cast<int>(o.events.size()));
  EXPECT_EQ(o.classes[ix(PartClass::xpu)].spares_used, 0);
  // Replicas lost stay lost: the last interval has fewer replicas than the first.
  EXPECT_LT(o.samples.back().replicas_up, o.samples.front().replicas_up);
}

TEST_F(Engine, WeibullAndExponential_SameMean_RenewalCounts) {
  // Jobs of 8 XPUs: every part is replaced at once, so each XPU is a renewal process.
  auto in = serving(1, 365);
  in.serving = false;
  in.job_xpus = 8;
  in.repair.restart.value = 0;
  only(in, PartClass::xpu, 1e-3);  // mean life 1,000 h: 8.76 lives a year, 17,940 failures
  const double lives = 365 * 24 * 1e-3, expected = 2048 * lives;
  const auto exp = rehearse::run_engine(in);
  EXPECT_NEAR(static_cast<double>(exp.events.size()), expected, 0.03 * expected);
  // Weibull shape 0.7 from new parts: the renewal function t/mu + (CV^2 - 1)/2 per part, with
  // CV^2 = Gamma(1 + 2/k) / Gamma(1 + 1/k)^2 - 1: more failures early (infant mortality).
  in.classes[ix(PartClass::xpu)].shape.value = 0.7;
  const auto wei = rehearse::run_engine(in);
  const double g1 = std::tgamma(1 + 1 / 0.7), g2 = std::tgamma(1 + 2 / 0.7);
  const double cv2 = g2 / (g1 * g1) - 1;
  EXPECT_NEAR(static_cast<double>(wei.events.size()), 2048 * (lives + (cv2 - 1) / 2), 0.03 * expected);
}

TEST_F(Engine, ReplicaLargerThanADomain_IsAnInputError) {
  auto in = serving(1, 1);
  in.surrogate.replica_xpus = 4096;
  EXPECT_THROW(rehearse::run_engine(in), InputError);
}

// A disaggregated point's groups: 3 prefill replicas of 2 XPUs and 1 decode replica of 8 (14
// XPUs). On a 2,048-XPU Jalapeno domain of 256 trays of 8, m groups take 3m / 4 trays of
// prefill replicas and then m whole trays for the decode replicas: 146 groups fit (109.5 + 146
// trays), 147 do not.
TEST_F(Engine, Groups_PackedFirstFit_OnOneDomainOrABlockOfServers) {
  rehearse::Surrogate s;
  s.pools = {{2, 3}, {8, 1}};
  EXPECT_EQ(s.unit_xpus(), 14);
  EXPECT_EQ(s.unit_replicas(), 4);
  const auto k = rehearse::pack_units(jalapeno, s);
  EXPECT_EQ(k.block, 1);
  EXPECT_EQ(k.units_per_block, 146);
  EXPECT_EQ(k.targets[0], (std::vector<int>{438, 146}));
  EXPECT_EQ(rehearse::units_placed(jalapeno, s, 3), 3 * 146);
  // An 8-GPU server holds the decode replica or the three prefill replicas, not both: a group
  // takes two servers, and five servers hold two whole groups (servers 0, 2, 4 prefill; 1, 3
  // decode).
  const auto hgx = topology::build(shipped_system("b300-hgx"), 1);
  const auto two = rehearse::pack_units(hgx, s);
  EXPECT_EQ(two.block, 2);
  EXPECT_EQ(two.units_per_block, 1);
  EXPECT_EQ(rehearse::units_placed(hgx, s, 5), 2);
  s.pools = {{2, 3}, {16, 1}};  // a decode replica wider than a server is not placed
  EXPECT_THROW(rehearse::pack_units(hgx, s), InputError);
}

// A feed takes a rack of 16 trays, of prefill replicas (64, 21.3 groups' worth), of decode
// replicas (16 groups') or of both; the survivors re-form the most
// whole groups the 240 trays left hold, 137 (103 trays of prefill and 137 of decode). Counts are
// of groups throughout.
TEST_F(Engine, Groups_AFeedTakesItsTrays_TheSurvivorsReformWholeGroups) {
  auto in = serving(1, 200);
  in.surrogate.pools = {{2, 3}, {8, 1}};
  in.offered_replicas = 140;
  only(in, PartClass::power_feed, 1e-3);
  in.repair.technicians = 0;  // the first feed repair comes after the facility's repair time
  const auto o = rehearse::run_engine(in);
  ASSERT_FALSE(o.events.empty());
  EXPECT_EQ(o.replicas_total, 146);
  const auto& first = o.events.front();
  EXPECT_GE(first.replicas_hit, 16);
  EXPECT_LE(first.replicas_hit, 64);
  EXPECT_LE(o.min_replicas_up, 130);
  // Between the failure and the feed's repair, once re-formed: 137 groups.
  bool reformed = false;
  for (const auto& smp : o.samples) reformed = reformed || std::abs(smp.replicas_up - 137) < 1e-9;
  EXPECT_TRUE(reformed);
  EXPECT_GE(o.min_replicas_up, 0);
  EXPECT_LT(o.attainment, 1.0);
  EXPECT_NEAR(o.tokens_served + o.tokens_lost, o.tokens_offered, 1e-6 * o.tokens_offered);
  for (const auto& smp : o.samples) EXPECT_LE(smp.replicas_up, 146 + 1e-9);
}

// The site's pools serve together: with one of its 438 prefill replicas down a 3p1d site serves
// 437 / 3 = 145.67 groups' worth, not 145 (its prefill pool binds); with a decode replica down,
// 145. Each XPU failure takes one replica of either pool until the survivors re-form.
TEST_F(Engine, Groups_AShortPoolCostsItsShareOfAGroup) {
  auto in = serving(1, 30);
  in.surrogate.pools = {{2, 3}, {8, 1}};
  in.offered_replicas = 140;
  only(in, PartClass::xpu, 1e-5);
  const auto o = rehearse::run_engine(in);
  ASSERT_GE(o.events.size(), 5u);
  EXPECT_EQ(o.replicas_total, 146);
  bool third = false;
  for (const auto& [n, t] : o.time_at_replicas) {
    const double prefill = n * 3;  // whole prefill replicas when the prefill pool binds
    EXPECT_LE(n, 146 + 1e-9);
    EXPECT_NEAR(prefill, std::round(prefill), 1e-9) << n;
    third = third || (t > 0 && std::abs(n - std::round(n)) > 0.3);
  }
  EXPECT_TRUE(third) << "no moment with the prefill pool short of a whole group";
  EXPECT_LT(o.min_replicas_up, 146);
  // The table's count of a moment at 145.67 groups meets a load of 145.5 and not one of 145.8.
  const double at = 437.0 / 3;
  double t_at = 0;
  for (const auto& [n, t] : o.time_at_replicas) t_at += std::abs(n - at) < 1e-9 ? t : 0;
  ASSERT_GT(t_at, 0) << "no moment with one prefill replica down";
  EXPECT_GT(rehearse::at_load(o, in.surrogate, 145.5).attainment,
            rehearse::at_load(o, in.surrogate, 145.8).attainment);
}

TEST_F(Engine, LatencyAtLoad_InterpolatesOnTheCurve) {
  rehearse::Surrogate s;
  s.curve = {{100, 1.0, 0.010}, {200, 3.0, 0.030}};
  EXPECT_DOUBLE_EQ(rehearse::latency_at(s, 150).ttft_p99_s, 2.0);
  EXPECT_DOUBLE_EQ(rehearse::latency_at(s, 50).tpot_p99_s, 0.010);
  EXPECT_DOUBLE_EQ(rehearse::latency_at(s, 500).ttft_p99_s, 3.0);
}

}  // namespace
