// The topology builders and queries on the shipped catalog: part counts, failure domains, paths,
// bisection and placement.

#include <gtest/gtest.h>

#include <boost/graph/graphviz.hpp>
#include <map>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "tests/scenarios/test_support.hpp"
#include "topology/dot.hpp"
#include "topology/queries.hpp"

namespace racktwin::topology {
namespace {

using test::shipped_catalog;

const System& sys(const char* id) {
  return test::shipped_system(id);
}

// One 2,048-XPU Jalapeno domain, built once for the whole file.
const Topology& jalapeno() {
  static const Topology t = build(sys("jalapeno-a0"), 1);
  return t;
}

Impact fail(const Topology& t, std::initializer_list<const char*> names) {
  std::vector<PartId> parts;
  for (const char* n : names) parts.push_back(t.at(n));
  return assess(t, parts);
}

std::set<std::string> names_of(const Topology& t, const std::vector<XpuImpact>& xs) {
  std::set<std::string> out;
  for (const auto& x : xs) out.insert(t.part(x.xpu).name);
  return out;
}

TEST(Topology_Jalapeno, OneDomain_Has16Racks256Vindaloo256Katsu128Chana) {
  const auto n = jalapeno().part_counts();
  EXPECT_EQ(n.at(PartKind::xpu), 2048);
  EXPECT_EQ(n.at(PartKind::compute_rack), 16);
  EXPECT_EQ(n.at(PartKind::compute_tray), 256);
  EXPECT_EQ(n.at(PartKind::host), 256);
  EXPECT_EQ(n.at(PartKind::switch_tray), 128);
  EXPECT_EQ(n.at(PartKind::host_rack), 16);
  EXPECT_EQ(n.at(PartKind::rack_pair), 16);
  EXPECT_EQ(n.at(PartKind::power_feed), 32);
  EXPECT_EQ(n.at(PartKind::spine), 2);
  EXPECT_EQ(jalapeno().part(jalapeno().at("rack3/vindaloo5")).kind, PartKind::compute_tray);
  EXPECT_EQ(jalapeno().part(jalapeno().at("hostrack3/katsu5")).kind, PartKind::host);
  EXPECT_EQ(jalapeno().part(jalapeno().at("rack3/chana2")).kind, PartKind::switch_tray);
}

TEST(Topology_Jalapeno, ChanaSplit_FollowsTheCatalogWithUplinksAtTheEnds) {
  const Topology& t = jalapeno();
  int uplinks = 0;
  for (int i = 0; i < 8; ++i) uplinks += t.part(t.at("rack0/chana" + std::to_string(i))).uplink;
  EXPECT_EQ(uplinks, t.system().switches.uplink_trays);
  EXPECT_TRUE(t.part(t.at("rack0/chana0")).uplink);
  EXPECT_TRUE(t.part(t.at("rack0/chana7")).uplink);
  EXPECT_FALSE(t.part(t.at("rack0/chana3")).uplink);
  // Every XPU links to each of the 8 Chana trays of its rack and to the scale-out network.
  const auto links = t.link_counts();
  EXPECT_EQ(links.at(LinkKind::scale_up), 2048 * 8);
  EXPECT_EQ(links.at(LinkKind::uplink), 16 * 2);
  EXPECT_EQ(links.at(LinkKind::scale_out), 2048);
  EXPECT_EQ(links.at(LinkKind::host_link), 2048);
}

TEST(Topology_Jalapeno, KatsuFailure_TakesOutExactlyItsTraysEightXpus) {
  const Topology& t = jalapeno();
  const Impact im = fail(t, {"hostrack3/katsu5"});
  EXPECT_EQ(im.lost, 8);
  EXPECT_EQ(im.cut_off, 0);
  EXPECT_EQ(im.slowed, 0);
  std::set<std::string> expected;
  for (int i = 0; i < 8; ++i) expected.insert("rack3/vindaloo5/xpu" + std::to_string(i));
  EXPECT_EQ(names_of(t, im.affected), expected);
  for (const auto& x : im.affected) {
    EXPECT_EQ(x.effect, Effect::lost);
    EXPECT_EQ(x.cause, "hostrack3/katsu5");
    EXPECT_NE(x.how.find("host"), std::string::npos) << x.how;
  }
}

TEST(Topology_Jalapeno, ChanaFailure_RemovesNoXpuButItsShareOfScaleUpBandwidth) {
  const Topology& t = jalapeno();
  const Impact im = fail(t, {"rack3/chana2"});
  EXPECT_EQ(im.lost, 0);
  EXPECT_EQ(im.cut_off, 0);
  EXPECT_EQ(im.in_service(), 2048);
  EXPECT_EQ(im.slowed, 128);  // every XPU of rack 3, no other
  const double per_rack = t.system().switches.per_rack;
  for (const auto& x : im.affected) {
    EXPECT_EQ(t.part(x.xpu).rack, 3);
    EXPECT_EQ(x.effect, Effect::slowed);
    EXPECT_DOUBLE_EQ(x.scale_up_fraction, 1.0 - 1.0 / per_rack);
    EXPECT_DOUBLE_EQ(x.domain_fraction, 1.0);  // chana2 is rack-local
  }
  // The domain loses one tray's share: 1 of 8 trays in 1 of 16 racks.
  const double lost_share = 1.0 - im.scale_up_after.value() / im.scale_up_before.value();
  EXPECT_NEAR(lost_share, 1.0 / (per_rack * 16), 1e-12);
}

TEST(Topology_Jalapeno, UplinkChanaFailure_HalvesTheRacksBandwidthIntoTheDomain) {
  const Topology& t = jalapeno();
  const Impact im = fail(t, {"rack3/chana0"});
  EXPECT_EQ(im.slowed, 128);
  for (const auto& x : im.affected) EXPECT_DOUBLE_EQ(x.domain_fraction, 0.5);
  // Both uplinks gone: the rack is an island of 128 XPUs, cut off from the domain.
  const Impact both = fail(t, {"rack3/chana0", "rack3/chana7"});
  EXPECT_EQ(both.lost, 0);
  EXPECT_EQ(both.cut_off, 128);
  EXPECT_EQ(both.in_service(), 2048 - 128);
}

TEST(Topology_Jalapeno, RackFeedFailure_TakesOutIts128Xpus) {
  const Topology& t = jalapeno();
  const Impact im = fail(t, {"rack3/feed"});
  EXPECT_EQ(im.lost, 128);
  EXPECT_EQ(im.cut_off, 0);
  for (const auto& x : im.affected) {
    EXPECT_EQ(t.part(x.xpu).rack, 3);
    EXPECT_EQ(x.how, "loses power");
  }
  // Host-rack feed: the 16 Katsu trays go, and with them the paired ASIC rack's 128 XPUs.
  const Impact hosts = fail(t, {"hostrack3/feed"});
  EXPECT_EQ(hosts.lost, 128);
  EXPECT_EQ(names_of(t, hosts.affected), names_of(t, im.affected));
}

TEST(Topology_Jalapeno, SpinePlaneFailure_SlowsEveryXpuAndLosesNone) {
  const Impact im = fail(jalapeno(), {"domain0/spine1"});
  EXPECT_EQ(im.lost, 0);
  EXPECT_EQ(im.cut_off, 0);
  EXPECT_EQ(im.slowed, 2048);
}

TEST(Topology_Jalapeno, PathsAndBandwidth_FollowTheCatalogTiers) {
  const Topology& t = jalapeno();
  const System& s = t.system();
  const Path local = path(t, t.at("rack0/vindaloo0/xpu0"), t.at("rack0/vindaloo9/xpu3"));
  ASSERT_TRUE(local.reachable);
  EXPECT_EQ(local.switch_hops, s.scale_up[0].switch_hops);
  EXPECT_DOUBLE_EQ(local.bandwidth.value(), s.scale_up[0].bandwidth_per_xpu.value());
  EXPECT_EQ(local.latency, s.scale_up[0].latency);
  const Path far = path(t, t.at("rack0/vindaloo0/xpu0"), t.at("rack12/vindaloo3/xpu7"));
  ASSERT_TRUE(far.reachable);
  EXPECT_EQ(far.switch_hops, s.scale_up[1].switch_hops);
  EXPECT_DOUBLE_EQ(far.bandwidth.value(), s.scale_up[1].bandwidth_per_xpu.value());
  EXPECT_EQ(far.route.size(), 5u);  // XPU, uplink Chana, spine plane, uplink Chana, XPU
  // A dead local Chana takes 1/8 of the rack-local bandwidth between two XPUs.
  const Impact chana = fail(t, {"rack0/chana3"});
  const Path slowed = path(t, t.at("rack0/vindaloo0/xpu0"), t.at("rack0/vindaloo9/xpu3"), &chana);
  EXPECT_DOUBLE_EQ(slowed.bandwidth.value(), s.scale_up[0].bandwidth_per_xpu.value() * 7.0 / 8.0);
}

TEST(Topology_Jalapeno, Bisection_IsHalfTheDomainTimesTheDomainTierBandwidth) {
  const Topology& t = jalapeno();
  const double per_xpu = t.system().scale_up.back().bandwidth_per_xpu.value();
  EXPECT_DOUBLE_EQ(bisection(t, 0).value(), 1024 * per_xpu);
  // Losing a spine plane halves it.
  const Impact im = fail(t, {"domain0/spine0"});
  EXPECT_DOUBLE_EQ(bisection(t, 0, &im).value(), 512 * per_xpu);
}

TEST(Topology_Jalapeno, Placement_PacksByTrayAndRackWithLeftovers) {
  const Topology& t = jalapeno();
  const Placement p8 = place(t, 8);
  EXPECT_EQ(p8.scope, Scope::tray);
  EXPECT_EQ(p8.replicas.size(), 256u);
  EXPECT_TRUE(p8.leftover.empty());
  for (const auto& r : p8.replicas) {
    std::set<std::pair<int, int>> trays;
    for (PartId x : r.xpus) trays.insert({t.part(x).rack, t.part(x).tray});
    EXPECT_EQ(trays.size(), 1u);
  }
  const Placement p3 = place(t, 3);  // 2 per tray, 2 left in each of 256 trays
  EXPECT_EQ(p3.replicas.size(), 512u);
  EXPECT_EQ(p3.leftover.size(), 512u);
  const Placement p24 = place(t, 24);  // within a rack: 5 per rack, 8 left per rack
  EXPECT_EQ(p24.scope, Scope::rack);
  EXPECT_EQ(p24.replicas.size(), 80u);
  EXPECT_EQ(p24.leftover.size(), 128u);
  for (const auto& r : p24.replicas) {
    std::set<int> racks;
    for (PartId x : r.xpus) racks.insert(t.part(x).rack);
    EXPECT_EQ(racks.size(), 1u);
  }
  const Placement whole = place(t, 2048);
  EXPECT_EQ(whole.scope, Scope::domain);
  EXPECT_EQ(whole.replicas.size(), 1u);
  // Two domains' worth on a one-domain build: no replica, every XPU left over.
  const Placement two = place(t, 4096);
  EXPECT_EQ(two.scope, Scope::domains);
  EXPECT_TRUE(two.replicas.empty());
  EXPECT_EQ(two.leftover.size(), 2048u);
  EXPECT_THROW(place(t, 3000), InputError);
  EXPECT_THROW(place(t, 0), InputError);
}

TEST(Topology_Jalapeno, RemainingCapacity_ShrinksWithFailuresAndNeverGrows) {
  const Topology& t = jalapeno();
  const Impact katsu = fail(t, {"hostrack3/katsu5"});
  const Placement p = place(t, 8, &katsu);
  EXPECT_EQ(p.replicas.size(), 255u);
  EXPECT_EQ(p.out_of_service, 8);
  const Impact more = fail(t, {"hostrack3/katsu5", "rack7/feed"});
  EXPECT_EQ(more.in_service(), 2048 - 8 - 128);
  EXPECT_LE(place(t, 8, &more).replicas.size(), p.replicas.size());
  // Every XPU is accounted for: in replicas, left over, or out of service.
  const Placement q = place(t, 3, &more);
  EXPECT_EQ(static_cast<int>(q.replicas.size()) * 3 + static_cast<int>(q.leftover.size()) +
                q.out_of_service,
            2048);
}

TEST(Topology_Nvl72, Rack_Is72GpusIn18TraysWith9SwitchTrays) {
  for (const char* id : {"gb200-nvl72", "gb300-nvl72", "vr200-nvl72"}) {
    const Topology t = build(sys(id), 1);
    const auto n = t.part_counts();
    EXPECT_EQ(n.at(PartKind::xpu), 72) << id;
    EXPECT_EQ(n.at(PartKind::compute_rack), 1) << id;
    EXPECT_EQ(n.at(PartKind::compute_tray), 18) << id;
    EXPECT_EQ(n.at(PartKind::switch_tray), 9) << id;
    EXPECT_EQ(n.at(PartKind::host), 36) << id;  // 2 Grace (or Vera) per tray
    EXPECT_FALSE(n.contains(PartKind::host_rack)) << id;
    EXPECT_EQ(t.domain_xpus(0).size(), 72u) << id;
  }
}

TEST(Topology_Nvl72, GraceFailure_TakesOutItsTwoGpus_SwitchTrayOneNinthOfBandwidth) {
  const Topology t = build(sys("gb200-nvl72"), 1);
  const Impact grace = fail(t, {"rack0/tray4/grace1"});
  EXPECT_EQ(grace.lost, 2);
  const Impact sw = fail(t, {"rack0/nvswitch3"});
  EXPECT_EQ(sw.lost, 0);
  EXPECT_EQ(sw.slowed, 72);
  for (const auto& x : sw.affected) EXPECT_DOUBLE_EQ(x.scale_up_fraction, 8.0 / 9.0);
  EXPECT_DOUBLE_EQ(bisection(t, 0).value(), 36 * t.system().scale_up[0].bandwidth_per_xpu.value());
}

TEST(Topology_Hgx, Server_IsADomainOfEightBehindOneOnboardSwitch) {
  const Topology t = build(sys("b200-hgx"), 6);  // 6 servers: a full rack of 4 and 2 more
  const auto n = t.part_counts();
  EXPECT_EQ(n.at(PartKind::xpu), 48);
  EXPECT_EQ(n.at(PartKind::compute_tray), 6);
  EXPECT_EQ(n.at(PartKind::compute_rack), 2);
  EXPECT_EQ(n.at(PartKind::onboard_switch), 6);
  EXPECT_EQ(n.at(PartKind::host), 6);
  const Impact sw = fail(t, {"rack1/server0/switch"});
  EXPECT_EQ(sw.cut_off, 8);  // each GPU alone: no island of two or more
  const Impact host = fail(t, {"rack0/server2/host0"});
  EXPECT_EQ(host.lost, 8);
  // Across servers the route is the scale-out network.
  const Path p = path(t, t.at("rack0/server0/xpu0"), t.at("rack1/server1/xpu0"));
  EXPECT_EQ(p.network, Network::scale_out);
  EXPECT_DOUBLE_EQ(p.bandwidth.value(), t.system().scale_out_bandwidth_per_xpu.value());
  EXPECT_EQ(p.latency, t.system().scale_out_latency);
}

TEST(Topology_Hgx, ReplicaOfTwoServers_TakesTwoWholeConsecutiveDomains) {
  const Topology t = build(sys("h100-hgx"), 5);
  const Placement p = place(t, 16);
  EXPECT_EQ(p.scope, Scope::domains);
  ASSERT_EQ(p.replicas.size(), 2u);
  EXPECT_EQ(p.leftover.size(), 8u);  // the fifth server
  for (std::size_t i = 0; i < p.replicas.size(); ++i) {
    std::set<int> domains;
    for (PartId x : p.replicas[i].xpus) domains.insert(t.part(x).domain);
    EXPECT_EQ(domains, (std::set<int>{static_cast<int>(2 * i), static_cast<int>(2 * i + 1)}));
  }
  EXPECT_THROW(place(t, 12), InputError);  // more than a server, not whole servers
}

TEST(Topology_Mi, FullMesh_GivesEachPeerItsLinkAndNoTransit) {
  const Topology t = build(sys("mi300x-8"), 1);
  EXPECT_EQ(t.link_counts().at(LinkKind::scale_up), 28);  // 8 x 7 / 2
  const Path p = path(t, t.at("rack0/server0/xpu0"), t.at("rack0/server0/xpu5"));
  EXPECT_EQ(p.switch_hops, 0);
  EXPECT_DOUBLE_EQ(p.bandwidth.value(), t.system().scale_up[0].bandwidth_per_xpu.value() / 7.0);
  const Impact dead = fail(t, {"rack0/server0/xpu3"});
  EXPECT_EQ(dead.lost, 1);
  EXPECT_EQ(dead.slowed, 0);  // the living peers keep their links to each other
}

TEST(Topology_MultiDomain, DomainsJoinOverScaleOut) {
  const Topology t = build(sys("jalapeno-a0"), 2);
  EXPECT_EQ(t.part_counts().at(PartKind::xpu), 4096);
  EXPECT_EQ(t.part_counts().at(PartKind::compute_rack), 32);
  EXPECT_EQ(t.part_counts().at(PartKind::spine), 4);
  const Path p = path(t, t.at("rack0/vindaloo0/xpu0"), t.at("rack16/vindaloo0/xpu0"));
  EXPECT_EQ(p.network, Network::scale_out);
  EXPECT_DOUBLE_EQ(p.bandwidth.value(), t.system().scale_out_bandwidth_per_xpu.value());
  EXPECT_DOUBLE_EQ(scale_out_bisection(t).value(),
                   2048 * t.system().scale_out_bandwidth_per_xpu.value());
  // A failure in one domain leaves the other whole.
  const Impact im = assess(t, std::vector<PartId>{t.at("rack20/feed")});
  EXPECT_EQ(im.lost, 128);
  for (const auto& x : im.affected) EXPECT_EQ(t.part(x.xpu).domain, 1);
}

TEST(Topology_Build, BadInput_ThrowsWithTheReason) {
  EXPECT_THROW(build(sys("jalapeno-a0"), 0), InputError);
  EXPECT_THROW(build(sys("jalapeno-a0"), 1000), InputError);
  try {
    (void)jalapeno().at("rack3/chana9");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean"), std::string::npos) << e.what();
  }
}

TEST(Topology_EverySystem, BuildsWithOneDomainOfItsCatalogSize) {
  for (const auto& [id, s] : shipped_catalog().systems) {
    const Topology t = build(*s, 1);
    EXPECT_EQ(static_cast<int>(t.xpus().size()), s->domain_xpus) << id;
    // Every XPU is contained in a tray, powered through a rack, hosted, and linked to scale-out.
    const Impact none = assess(t, std::vector<PartId>{});
    EXPECT_EQ(none.in_service(), s->domain_xpus) << id;
    EXPECT_TRUE(none.affected.empty()) << id;
    EXPECT_EQ(fail(t, {"rack0/feed"}).lost,
              s->domain_xpus < s->xpus_per_rack() ? s->domain_xpus : s->xpus_per_rack())
        << id;
  }
}

// The shortcut the failure rehearsal takes (topology::Dependents): a part none of whose dependents
// carries traffic takes out exactly its own XPUs, alone and beside a failure that does carry
// traffic. Checked on the first and last part of every kind of every system, against assess.
TEST(Topology_EverySystem, PartsThatCarryNoTraffic_TakeOutTheirOwnXpusAndNothingElse) {
  for (const auto& [id, s] : shipped_catalog().systems) {
    const Topology t = build(*s, s->domain_xpus < 64 ? 2 : 1);
    const auto n = static_cast<PartId>(boost::num_vertices(t.graph()));
    std::map<PartKind, std::vector<PartId>> by_kind;
    for (PartId v = 0; v < n; ++v) by_kind[t.part(v).kind].push_back(v);
    std::optional<PartId> transit;
    for (PartId v = 0; v < n && !transit; ++v)
      if (dependents(t, v).transit) transit = v;
    int checked = 0;
    for (const auto& [kind, parts] : by_kind)
      for (PartId p : {parts.front(), parts.back()}) {
        const Dependents d = dependents(t, p);
        ASSERT_EQ(d.parts.front(), p);
        if (d.transit) continue;
        std::vector<PartId> extra;
        if (transit) extra.push_back(*transit);
        for (const bool beside : {false, true}) {
          if (beside && !transit) continue;
          const Impact before = beside ? assess(t, extra) : assess(t, std::vector<PartId>{});
          auto failed = beside ? extra : std::vector<PartId>{};
          failed.push_back(p);
          const Impact after = assess(t, failed);
          std::vector<Effect> expected = before.state;
          for (PartId v : d.parts)
            if (t.part(v).kind == PartKind::xpu)
              expected[static_cast<std::size_t>(t.ordinal(v))] = Effect::lost;
          EXPECT_TRUE(after.state == expected) << id << " " << t.part(p).name << " beside " << beside;
          for (PartId v : d.parts) EXPECT_TRUE(after.down[v]) << id << " " << t.part(v).name;
        }
        ++checked;
      }
    EXPECT_GE(checked, 3) << id;
    EXPECT_TRUE(transit.has_value()) << id;
  }
}

TEST(Topology_Dot, ParsesBackWithEveryPartAndLink) {
  const Topology t = build(sys("gb200-nvl72"), 1);
  const std::string dot = to_dot(t);
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS,
                                  boost::property<boost::vertex_name_t, std::string>,
                                  boost::property<boost::edge_name_t, std::string>>;
  G g;
  boost::dynamic_properties dp(boost::ignore_other_properties);
  dp.property("node_id", boost::get(boost::vertex_name, g));
  dp.property("kind", boost::get(boost::edge_name, g));
  ASSERT_TRUE(boost::read_graphviz(dot, g, dp, "node_id"));
  EXPECT_EQ(boost::num_vertices(g), boost::num_vertices(t.graph()));
  int links = 0;
  for (const auto& [k, n] : t.link_counts()) links += n;
  EXPECT_EQ(static_cast<int>(boost::num_edges(g)), links);
}

}  // namespace
}  // namespace racktwin::topology
