// Deployments: replicas placed on the system's topology, with their bandwidths and host pools.

#include "sim/deployment.hpp"
#include "sim/sweep.hpp"

#include <gtest/gtest.h>

#include <set>

#include "test_support.hpp"

namespace racktwin::sim {
namespace {

using test::shipped_catalog;

TEST(Deployment_Jalapeno, Tp8ReplicasEachOwnATrayAndItsKatsu) {
  const System& s = *shipped_catalog().find_system("jalapeno-a0");
  const auto d = deploy(s, 8, 4);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d->domains, 1);
  ASSERT_EQ(d->sites.size(), 4u);
  ASSERT_EQ(d->pools.size(), 4u);  // one Katsu per Vindaloo tray: no pool is shared
  for (std::size_t k = 0; k < 4; ++k) {
    const Site& site = d->sites[k];
    EXPECT_EQ(site.xpus.size(), 8u);
    EXPECT_EQ(site.xpus.front(), static_cast<int>(8 * k));  // packed tray by tray
    EXPECT_EQ(site.pool, static_cast<int>(k));
    // 8 XPUs x 64 GB/s host link (catalog assumption), 8 x 800 GB/s scale-up, 8 x 400 Gb/s NICs.
    EXPECT_NEAR(site.host_link_bw, 8 * 64e9, 1.0);
    EXPECT_NEAR(site.fabric_bw, 8 * 800e9, 1e3);
    EXPECT_NEAR(site.scale_out_bw, 8 * 50e9, 1.0);
  }
  EXPECT_EQ(d->pools[0].parts.size(), 1u);
  EXPECT_NEAR(d->pools[0].dram_bytes, 1.5e12, 1.0);
}

TEST(Deployment_Gb200, ReplicasSharingAGraceShareItsPool) {
  const System& s = *shipped_catalog().find_system("gb200-nvl72");
  // tp1: a Grace serves two GPUs, so replicas 0 and 1 share one pool.
  const auto d = deploy(s, 1, 4);
  ASSERT_TRUE(d) << d.error();
  ASSERT_EQ(d->pools.size(), 2u);
  EXPECT_EQ(d->sites[0].pool, d->sites[1].pool);
  EXPECT_NE(d->sites[1].pool, d->sites[2].pool);
  EXPECT_EQ(d->pools[0].replicas, (std::vector<int>{0, 1}));
  EXPECT_EQ(d->pools[0].parts.size(), 1u);
  // A compute tray's 960 GB of LPDDR5X is split between its two Graces.
  EXPECT_NEAR(d->pools[0].dram_bytes, 480e9, 1.0);
}

TEST(Deployment_Domains, MoreReplicasThanADomainHolds_BuildMoreDomains) {
  const System& s = *shipped_catalog().find_system("gb300-nvl72");
  const auto d = deploy(s, 8, 10);  // 72 GPUs hold 9 replicas of 8
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d->domains, 2);
  EXPECT_EQ(d->sites[8].domain, 0);
  EXPECT_EQ(d->sites[9].domain, 1);
  EXPECT_FALSE(deploy(s, 100, 1));  // larger than a domain, not whole domains: an error
  EXPECT_FALSE(deploy(s, 8, 0));
}

// Pools of different replica sizes: three tp2 prefill replicas, then one tp8 decode replica on
// the XPUs they left, each group in placement order; on 8-GPU servers they take two. A group of
// replicas wider than a domain is not placed beside another size.
TEST(Deployment_Groups, PoolsOfDifferentSizes_TakeDisjointXpusInGroupOrder) {
  const System& s = *shipped_catalog().find_system("b300-hgx");
  TopologyCache cache;
  const auto d = deploy(s, std::vector<ReplicaGroup>{{2, 3}, {8, 1}}, cache);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d->domains, 2);
  ASSERT_EQ(d->sites.size(), 4u);
  std::set<int> used;
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(d->sites[k].xpus.size(), k < 3 ? 2u : 8u);
    for (int x : d->sites[k].xpus) EXPECT_TRUE(used.insert(x).second) << "XPU " << x << " twice";
  }
  EXPECT_EQ(d->sites[0].domain, 0);
  EXPECT_EQ(d->sites[3].domain, 1);  // the first server keeps two GPUs free, too few for tp8
  // One group is the plain deployment, site for site.
  const auto one = deploy(s, std::vector<ReplicaGroup>{{8, 3}}, cache);
  const auto plain = deploy(s, 8, 3, cache);
  ASSERT_TRUE(one && plain);
  ASSERT_EQ(one->sites.size(), plain->sites.size());
  for (std::size_t k = 0; k < one->sites.size(); ++k)
    EXPECT_EQ(one->sites[k].xpus, plain->sites[k].xpus);
  EXPECT_FALSE(deploy(s, std::vector<ReplicaGroup>{{2, 1}, {16, 1}}, cache));
}

// A later group packs on the XPUs the earlier ones left, not on the whole domain's slots minus
// those overlapping them: one tp4 prefill tray beside four 16-GPU decode replicas takes 68 of an
// NVL72's 72 GPUs, one domain (placing the 16s on the domain's own 16-GPU slots, the first of
// which the tray overlaps, would hold three and need a second domain).
TEST(Deployment_Groups, LaterGroupsPackOnTheXpusLeftFree) {
  const System& s = *shipped_catalog().find_system("gb200-nvl72");
  TopologyCache cache;
  const auto d = deploy(s, std::vector<ReplicaGroup>{{4, 1}, {16, 4}}, cache);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d->domains, 1);
  ASSERT_EQ(d->sites.size(), 5u);
  std::set<int> used;
  for (const auto& site : d->sites)
    for (int x : site.xpus) EXPECT_TRUE(used.insert(x).second) << "XPU " << x << " twice";
  EXPECT_EQ(used.size(), 68u);
}

// A batch builds each topology once: deployments of other replica counts on as many domains share
// it, and give what a deployment with a topology of its own gives.
TEST(Deployment_TopologyCache, SameSystemAndDomains_OneTopology_SamePlacement) {
  const System& s = *shipped_catalog().find_system("gb300-nvl72");
  TopologyCache cache;
  const auto few = deploy(s, 8, 2, cache);
  const auto more = deploy(s, 8, 9, cache);
  const auto two = deploy(s, 8, 10, cache);
  ASSERT_TRUE(few && more && two);
  EXPECT_EQ(few->topology, more->topology);
  EXPECT_NE(more->topology, two->topology);  // two domains: another topology
  EXPECT_EQ(cache.get(s, 2), two->topology);
  const auto alone = deploy(s, 8, 10);
  ASSERT_TRUE(alone);
  EXPECT_NE(alone->topology, two->topology);
  ASSERT_EQ(alone->sites.size(), two->sites.size());
  for (std::size_t k = 0; k < alone->sites.size(); ++k) {
    EXPECT_EQ(alone->sites[k].xpus, two->sites[k].xpus);
    EXPECT_EQ(alone->sites[k].domain, two->sites[k].domain);
    EXPECT_DOUBLE_EQ(alone->sites[k].fabric_bw, two->sites[k].fabric_bw);
  }
}

TEST(Deployment_Hgx, ReplicaOfTwoServers_SpansTwoDomainsAndBothHosts) {
  const System& s = *shipped_catalog().find_system("h100-hgx");
  const auto d = deploy(s, 16, 3);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d->domains, 6);
  ASSERT_EQ(d->sites.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(d->sites[k].xpus.size(), 16u);
    EXPECT_EQ(d->sites[k].domain, static_cast<int>(2 * k));
  }
  // Each replica is served by the hosts of its two servers: one pool per replica, two parts.
  ASSERT_EQ(d->pools.size(), 3u);
  EXPECT_EQ(d->pools[0].parts.size(), 2u);
}

TEST(SweepLayouts_Hgx, DeepSeekR1Fp8_NeedsTwoServers_AndTheSweepTriesThem) {
  const Catalog& cat = shipped_catalog();
  const System& s = *cat.find_system("h100-hgx");
  const Model& m = *cat.find_model("deepseek-r1");
  Scenario sc;
  const auto layouts = sweep_layouts(cat, sc, s, m, "fp8", 9216);
  ASSERT_FALSE(layouts.empty()) << "671 GB of FP8 weights do not fit one 640 GB server";
  bool pipelined = false;
  for (const Layout& l : layouts) {
    EXPECT_EQ(l.xpus(), 16) << l.label();
    pipelined = pipelined || (l.tp == 8 && l.pp == 2);
  }
  EXPECT_TRUE(pipelined) << "TP within a server, a pipeline stage per server";
  // A model that fits one server is never spread over two.
  for (const Layout& l : sweep_layouts(cat, sc, s, *cat.find_model("gpt-oss-120b"), "fp4", 9216))
    EXPECT_LE(l.xpus(), 8) << l.label();
}

TEST(SweepLayouts_Domain, MoeModels_AddWideExpertParallelReplicas_UpToTheDomain) {
  const Catalog& cat = shipped_catalog();
  const Model& dsr1 = *cat.find_model("deepseek-r1");  // 256 routed experts
  const Model& gptoss = *cat.find_model("gpt-oss-120b");  // 128 routed experts
  EXPECT_EQ(wide_ep_sizes(*cat.find_system("jalapeno-a0"), dsr1),
            (std::vector<int>{16, 32, 64, 128, 256}));
  EXPECT_EQ(wide_ep_sizes(*cat.find_system("jalapeno-a0"), gptoss),
            (std::vector<int>{16, 32, 64, 128}))
      << "one rank per routed expert at most";
  EXPECT_EQ(wide_ep_sizes(*cat.find_system("gb200-nvl72"), dsr1), (std::vector<int>{16, 32, 64}))
      << "within the 72-GPU domain";
  EXPECT_TRUE(wide_ep_sizes(*cat.find_system("h200-hgx"), dsr1).empty()) << "a one-server domain";
  EXPECT_TRUE(wide_ep_sizes(*cat.find_system("jalapeno-a0"), *cat.find_model("llama-3.3-70b"))
                  .empty());

  // The default sweep tries each wide size once, as expert parallelism over DP-attention ranks;
  // the narrower sizes keep every valid layout.
  Scenario sc;
  const auto layouts = sweep_layouts(cat, sc, *cat.find_system("jalapeno-a0"), dsr1, "fp4", 9216);
  int wide = 0;
  bool narrow_tp = false;
  for (const Layout& l : layouts) {
    if (l.xpus() > 8) {
      ++wide;
      EXPECT_TRUE(l.tp == l.ep && l.dp_attention && l.pp == 1) << l.label();
    }
    narrow_tp = narrow_tp || (l.xpus() == 8 && !l.dp_attention);
  }
  EXPECT_EQ(wide, 5);
  EXPECT_TRUE(narrow_tp);
  // A scenario's own sizes replace the defaults, wide ones included.
  sc.layouts.replica_xpus = {8};
  for (const Layout& l : sweep_layouts(cat, sc, *cat.find_system("jalapeno-a0"), dsr1, "fp4", 9216))
    EXPECT_EQ(l.xpus(), 8) << l.label();
}

TEST(SweepLayouts_Server, ModelThatFitsFewerXpus_IsAlsoServedOnSmallerReplicas) {
  const Catalog& cat = shipped_catalog();
  EXPECT_EQ(sub_server_sizes(*cat.find_system("h200-hgx")), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(sub_server_sizes(*cat.find_system("gb200-nvl72")), (std::vector<int>{1, 2}))
      << "the 4-GPU compute tray is a default size of its own";
  // gpt-oss-120b (about 65 GB in MXFP4) fits one 141 GB H200: the published single-server sweeps
  // served it on TP1. Below the server, plain TP and wide EP only.
  const auto layouts = sweep_layouts(cat, Scenario{}, *cat.find_system("h200-hgx"),
                                     *cat.find_model("gpt-oss-120b"), "fp4", 9216);
  std::vector<std::string> small;
  for (const Layout& l : layouts)
    if (l.xpus() < 8) small.push_back(l.label());
  EXPECT_EQ(small, (std::vector<std::string>{"tp1", "tp2", "tp2-ep2-dpa", "tp4", "tp4-ep4-dpa"}));
  // DeepSeek-R1 in FP8 (671 GB) fits no replica below the server.
  for (const Layout& l : sweep_layouts(cat, Scenario{}, *cat.find_system("h200-hgx"),
                                       *cat.find_model("deepseek-r1"), "fp8", 9216))
    EXPECT_GE(l.xpus(), 8) << l.label();
}

TEST(SweepLayouts_Domain, DenseModelNoServerHolds_TakesTheSmallestWiderReplicaThatDoes) {
  const Catalog& cat = shipped_catalog();
  // An NVL72 rack of 24 GB parts: 8 of them cannot hold Llama-3.3-70B's 141 GB of BF16 weights.
  System s = *cat.find_system("gb200-nvl72");
  Chip small = *s.chip;
  small.hbm_capacity = Bytes(24e9);
  s.chip = std::make_shared<const Chip>(small);
  const auto layouts =
      sweep_layouts(cat, Scenario{}, s, *cat.find_model("llama-3.3-70b"), "bf16", 9216);
  ASSERT_FALSE(layouts.empty());
  bool pure_tp = false;
  for (const Layout& l : layouts) {
    EXPECT_EQ(l.xpus(), 16) << l.label();
    EXPECT_EQ(l.pp, 1) << "within the domain, no pipeline";
    pure_tp = pure_tp || (l.tp == 16 && !l.dp_attention);
  }
  EXPECT_TRUE(pure_tp) << "every valid layout of the size, not only the wide-EP one";
}

TEST(EngineSettings, DpAttentionDefaultBudget_GivesEachAttentionRankItsSlice) {
  const Catalog& cat = shipped_catalog();
  const System& jal = *cat.find_system("jalapeno-a0");  // no catalog budget
  const Layout dpa64{"", 64, 64, 1, true}, dpa4{"", 4, 4, 1, true}, tp64{"", 64, 64, 1, false};
  Scenario sc;
  // 2,048 tokens per attention rank, never below the 16,384 every other replica takes.
  EXPECT_EQ(engine_of(sc, Workload{}, &jal, &dpa64).max_batched_tokens, 64 * 2048);
  EXPECT_EQ(memory_of(sc, &jal, &dpa64).max_batched_tokens, 64 * 2048);
  EXPECT_EQ(engine_of(sc, Workload{}, &jal, &dpa4).max_batched_tokens, 16384);
  EXPECT_EQ(engine_of(sc, Workload{}, &jal, &tp64).max_batched_tokens, 16384);
  EXPECT_EQ(engine_of(sc, Workload{}, &jal).max_batched_tokens, 16384);
  // The catalog's budget (what the system's benchmarks ran) and the scenario's key come first.
  const System& mi355 = *cat.find_system("mi355x-8");
  const Layout dpa8{"", 8, 8, 1, true};
  ASSERT_TRUE(mi355.serving.engine_limits.max_batched_tokens);
  EXPECT_EQ(engine_of(sc, Workload{}, &mi355, &dpa8).max_batched_tokens,
            *mi355.serving.engine_limits.max_batched_tokens);
  sc.engine.max_batched_tokens = 8192;
  EXPECT_EQ(engine_of(sc, Workload{}, &jal, &dpa64).max_batched_tokens, 8192);
  EXPECT_EQ(memory_of(sc, &jal, &dpa64).max_batched_tokens, 8192);
}

}  // namespace
}  // namespace racktwin::sim
