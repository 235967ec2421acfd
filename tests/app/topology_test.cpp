#include "app/topology.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace racktwin::app {
namespace {

using racktwin::test::shipped_catalog;

int count_of(const TopologyReport& r, topology::PartKind k) {
  for (const auto& p : r.parts)
    if (p.kind == k) return p.count;
  return -1;
}

TEST(TopologyReport, Jalapeno_CountsPartsSplitsUplinksAndChecksPower) {
  const auto r = topology_report(shipped_catalog(), {"jalapeno-a0", 1, 1.10});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->xpus, 2048);
  EXPECT_EQ(count_of(*r, topology::PartKind::compute_tray), 256);
  EXPECT_EQ(count_of(*r, topology::PartKind::switch_tray), 128);
  for (const auto& p : r->parts)
    EXPECT_EQ(p.uplinks, p.kind == topology::PartKind::switch_tray ? 32 : 0) << p.label;
  EXPECT_GT(r->bisection.value(), 0.0);
  EXPECT_DOUBLE_EQ(r->bisection_per_xpu.value(), r->bisection.value() / 1024.0);
  EXPECT_FALSE(r->scale_out_bisection);
  ASSERT_TRUE(r->power.host_rack);
  EXPECT_FALSE(r->power.budget_checks.empty());
  for (const auto& c : r->power.budget_checks)
    EXPECT_LE(std::abs(c.residual()), r->power.budget_tolerance) << c.what;
  EXPECT_DOUBLE_EQ(r->power.facility_provisioned.value(), r->power.it_provisioned.value() * 1.10);
  // Jalapeno's XPUs were measured below their rated TDP at load; at full activity they draw it,
  // and the deployment stays below provisioned because the Katsu hosts draw their production power.
  ASSERT_TRUE(r->power.xpu_measured_sustained);
  ASSERT_LT(*r->power.xpu_measured_sustained, r->power.xpu_tdp);
  EXPECT_LT(r->power.it_full_activity, r->power.it_provisioned);
}

TEST(TopologyReport, TwoDomains_HaveAScaleOutBisectionAndAnOtherDomainPath) {
  const auto r = topology_report(shipped_catalog(), {"gb200-nvl72", 2, 1.10});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->xpus, 144);
  ASSERT_TRUE(r->scale_out_bisection);
  EXPECT_EQ(r->scale_out_split_last, 0);
  ASSERT_FALSE(r->paths.empty());
  EXPECT_EQ(r->paths.back().pair, "other domain");
  EXPECT_EQ(r->paths.back().path.network, topology::Network::scale_out);
}

TEST(TopologyReport, ToJson_HasTheDocumentFields) {
  const auto r = topology_report(shipped_catalog(), {"jalapeno-a0", 1, 1.25});
  ASSERT_TRUE(r);
  const Json j = to_json(*r);
  for (const char* key :
       {"system", "domains", "domain_xpus", "xpus", "parts", "links", "bisection_bytes_per_s",
        "scale_out_bisection_bytes_per_s", "paths", "power"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["xpus"], 2048);
  EXPECT_TRUE(j["scale_out_bisection_bytes_per_s"].is_null());
  EXPECT_DOUBLE_EQ(j["power"]["pue"].get<double>(), 1.25);
  EXPECT_EQ(j["parts"].size(), r->parts.size());
  EXPECT_EQ(j["paths"][0]["pair"], "same tray");
}

TEST(TopologyReport, UnknownSystem_IsASystemProblemWithASuggestion) {
  const auto r = topology_report(shipped_catalog(), {"jalapeno", 1, 1.10});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().input, Problem::Input::system);
  EXPECT_NE(r.error().message.find("did you mean 'jalapeno-a0'"), std::string::npos)
      << r.error().message;
}

TEST(AssessFailure, ChanaTray_SlowsTheRackAndCutsScaleUpCapacity) {
  const auto a = assess_failure(shipped_catalog(), {{"jalapeno-a0"}, {"rack3/chana2"}, 0});
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_EQ(a->failed.size(), 1u);
  EXPECT_EQ(a->failed[0].kind, topology::PartKind::switch_tray);
  EXPECT_EQ(a->lost, 0);
  EXPECT_EQ(a->slowed, 128);  // every XPU of the rack keeps serving with less bandwidth
  EXPECT_EQ(a->in_service, 2048);
  EXPECT_LT(a->scale_up_after, a->scale_up_before);
  EXPECT_LT(a->scale_up_left, 1.0);
  EXPECT_DOUBLE_EQ(a->scale_up_left, a->scale_up_after / a->scale_up_before);
  int grouped = 0;
  for (const auto& g : a->affected) grouped += static_cast<int>(g.xpus.size());
  EXPECT_EQ(grouped, a->slowed + a->lost + a->cut_off);
  EXPECT_FALSE(a->placement_after);
}

TEST(AssessFailure, PowerFeedWithPlacement_LosesTheRackAndItsReplicas) {
  const auto a = assess_failure(shipped_catalog(), {{"jalapeno-a0"}, {"rack3/feed"}, 8});
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->lost, 128);
  EXPECT_EQ(a->in_service, 2048 - 128);
  ASSERT_TRUE(a->placement_before && a->placement_after);
  EXPECT_EQ(a->placement_before->replicas.size(), 256u);
  EXPECT_EQ(a->placement_after->replicas.size(), 240u);
  EXPECT_EQ(a->placement_after->placed_xpus(), 240 * 8);
  EXPECT_EQ(a->placement_after->out_of_service, 128);
  const Json j = to_json(*a);
  EXPECT_EQ(j["lost"], 128);
  EXPECT_EQ(j["placement_after"]["replicas"], 240);
  EXPECT_EQ(j["failed"][0]["kind"], "power_feed");
}

TEST(AssessFailure, UnknownPart_IsAPartProblemNamingTheNearest) {
  const auto a = assess_failure(shipped_catalog(), {{"jalapeno-a0"}, {"rack3/channa2"}, 0});
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().input, Problem::Input::part);
  EXPECT_NE(a.error().message.find("rack3/chana2"), std::string::npos) << a.error().message;
}

TEST(TopologyPath, AcrossRacks_GoesThroughSwitchesBothEndsIncluded) {
  const auto p = topology_path(shipped_catalog(), {"jalapeno-a0"}, "rack0/vindaloo0/xpu0",
                               "rack9/vindaloo3/xpu1");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_TRUE(p->reachable);
  EXPECT_EQ(p->route.front(), "rack0/vindaloo0/xpu0");
  EXPECT_EQ(p->route.back(), "rack9/vindaloo3/xpu1");
  EXPECT_GT(p->switch_hops, 0);
  EXPECT_EQ(to_json(*p)["route"].size(), p->route.size());
}

TEST(TopologyParts, EveryPart_IsListedOnceWithItsKind) {
  const auto l = topology_parts(shipped_catalog(), {"gb200-nvl72"});
  ASSERT_TRUE(l);
  int xpus = 0;
  for (const auto& p : l->parts) xpus += p.kind == topology::PartKind::xpu ? 1 : 0;
  EXPECT_EQ(xpus, 72);
  EXPECT_EQ(to_json(*l).size(), l->parts.size());
  const auto dot = topology_dot(shipped_catalog(), {"gb200-nvl72"});
  ASSERT_TRUE(dot);
  EXPECT_NE(dot->find(l->parts.back().name), std::string::npos);
}

}  // namespace
}  // namespace racktwin::app
