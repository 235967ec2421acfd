// The memory planner and the layout enumeration.

#include <gtest/gtest.h>

#include <set>

#include "core/perf/memory.hpp"
#include "core/perf/step.hpp"
#include "test_support.hpp"

namespace racktwin::perf {
namespace {

using test::shipped_catalog;

const System& sys(const char* id) {
  return *shipped_catalog().find_system(id);
}
const Model& mdl(const char* id) {
  return *shipped_catalog().find_model(id);
}

TEST(PerfMemory_HandChecked, DeepSeekFp4OnJalapenoDep8_KvCapacity) {
  const MemoryParams mem;
  const Layout l{"", 8, 8, 1, true};
  const MemoryPlan p =
      plan_memory(mdl("deepseek-r1"), sys("jalapeno-a0"), shipped_catalog(), l, "fp4", mem, 9216);
  ASSERT_TRUE(p.fits) << p.reason;
  // Weights per XPU with DP attention and EP8: full attention (FP8) on every rank; 256/8 = 32
  // routed experts (NVFP4, 4.5 bits) + the FP8 shared expert + BF16 router per MoE layer; the three
  // dense layers' FFN split 8 ways (FP8); BF16 embeddings and head split 8 ways.
  const double h = 7168;
  const double attn =
      7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
  const double expert = 3 * h * 2048;
  const double moe_layer = 32 * expert * 4.5 / 8 + expert * 1.0 + h * 256 * 2.0;
  const double dense_layer = 3 * h * 18432 * 1.0 / 8;
  const double weights =
      61 * attn * 1.0 + 58 * moe_layer + 3 * dense_layer + 2 * (129280 * h * 2.0 / 8);
  EXPECT_NEAR(p.weights.value() / weights, 1.0, 1e-12);
  // Free per XPU: 288 GB x 0.9 - 2 GiB reserve - weights - workspace. Under DP attention a rank
  // computes its slice of the 16,384 batched tokens (2,048 x 7168 x 2 B x 16) and holds one
  // gathered copy of all of them (16,384 x 7168 x 2 B).
  const double workspace = 2048 * h * 2 * 16 + 16384 * h * 2;
  EXPECT_NEAR(p.workspace.value(), workspace, 1e-6);
  // Without DP attention every rank holds the activations of every token.
  EXPECT_NEAR(workspace_bytes(mdl("deepseek-r1"), Layout{"", 8, 8, 1, false}, mem).value(),
              16384 * h * 2 * 16, 1e-6);
  const double free = 288e9 * 0.9 - 2 * 1073741824.0 - weights - workspace;
  // MLA latent at FP8: (512 + 64) B per layer x 61 layers per token; each of the 8 DP ranks holds
  // its own sequences.
  const double kv_per_token = 576.0 * 61;
  EXPECT_NEAR(p.kv_per_token.value(), kv_per_token, 1e-9);
  EXPECT_NEAR(p.kv_tokens, 8 * free / kv_per_token, 1e-6 * p.kv_tokens);
}

TEST(PerfMemory_Fit, OneXpu_CannotHoldDeepSeek) {
  const MemoryPlan p = plan_memory(mdl("deepseek-r1"), sys("jalapeno-a0"), shipped_catalog(),
                                   Layout{"", 1, 1, 1, false}, "fp4", MemoryParams{}, 9216);
  EXPECT_FALSE(p.fits);
  EXPECT_NE(p.reason.find("does not fit in HBM"), std::string::npos) << p.reason;
  EXPECT_LT(p.kv_free.value(), 0.0);
}

TEST(PerfMemory_Fit, KvCapacityGrowsWithReplicaSize) {
  double prev = 0;
  for (int t : {2, 4, 8, 16, 32}) {
    const MemoryPlan p = plan_memory(mdl("deepseek-r1"), sys("jalapeno-a0"), shipped_catalog(),
                                     Layout{"", t, t, 1, true}, "fp4", MemoryParams{}, 9216);
    ASSERT_TRUE(p.fits) << t << " " << p.reason;
    EXPECT_GT(p.kv_tokens, prev);
    prev = p.kv_tokens;
  }
}

TEST(PerfMemory_Layouts, JalapenoAndGb300_ListFittingLayoutsAndRejectTheRestWithReasons) {
  for (const char* system : {"jalapeno-a0", "gb300-nvl72"}) {
    const auto options =
        enumerate_layouts(mdl("deepseek-r1"), sys(system), shipped_catalog(), LayoutQuery{});
    int valid = 0, hbm = 0, domain = 0;
    for (const auto& o : options) {
      if (o.valid) {
        ++valid;
        EXPECT_GT(o.memory.kv_tokens, 9216) << o.layout.label();
        EXPECT_TRUE(o.reason.empty());
      } else {
        EXPECT_FALSE(o.reason.empty()) << o.layout.label();
        hbm += o.reason.find("does not fit in HBM") != std::string::npos;
        domain += o.reason.find("exceeds the scale-up domain") != std::string::npos;
      }
    }
    EXPECT_GT(valid, 4) << system;
    EXPECT_GT(hbm, 0) << system;  // tp1 cannot hold 671B parameters
  }
  // A replica larger than the domain and not a whole number of domains is rejected as such.
  LayoutQuery q;
  q.replica_xpus = {100};
  const auto big = enumerate_layouts(mdl("deepseek-r1"), sys("gb300-nvl72"), shipped_catalog(), q);
  ASSERT_FALSE(big.empty());
  for (const auto& o : big) {
    EXPECT_FALSE(o.valid);
    EXPECT_NE(o.reason.find("exceeds the scale-up domain of 72"), std::string::npos) << o.reason;
  }
}

TEST(PerfMemory_Layouts, EveryRejection_IsTypedAndItsDetailIsTheReason) {
  LayoutQuery q;
  q.replica_xpus = {1, 3, 8, 100, 144};
  for (const char* model : {"deepseek-r1", "llama-3.3-70b", "gpt-oss-120b"}) {
    std::set<LayoutRejection> seen;
    for (const auto& o : enumerate_layouts(mdl(model), sys("gb300-nvl72"), shipped_catalog(), q)) {
      EXPECT_EQ(o.valid, o.rejection == LayoutRejection::none) << o.layout.label();
      EXPECT_EQ(o.rejection, o.memory.rejection);
      if (o.valid) continue;
      seen.insert(o.rejection);
      const bool hbm = o.reason.find("does not fit in HBM") != std::string::npos;
      EXPECT_EQ(is_memory(o.rejection), hbm) << o.reason;
      if (o.layout.xpus() > 72 && o.layout.xpus() % 72 != 0) {
        EXPECT_EQ(o.rejection, LayoutRejection::exceeds_domain);
      }
      if (o.layout.xpus() == 144) {  // two whole domains: never rejected for its size
        EXPECT_NE(o.rejection, LayoutRejection::exceeds_domain) << o.layout.label();
      }
      // A structural rejection is the one StepModel::create fails with.
      if (!hbm) {
        const auto p =
            layout_problem(mdl(model), sys("gb300-nvl72"), shipped_catalog(), o.layout,
                           best_precision(mdl(model), sys("gb300-nvl72"), shipped_catalog()));
        ASSERT_TRUE(p) << o.layout.label();
        EXPECT_EQ(p->reason, o.rejection);
        EXPECT_EQ(p->detail, o.reason);
      }
    }
    EXPECT_TRUE(seen.contains(LayoutRejection::exceeds_domain)) << model;
    EXPECT_TRUE(seen.contains(LayoutRejection::heads_not_divisible)) << model;  // tp 3
  }
}

TEST(PerfMemory_Layouts, DefaultReplicaSizes_IncludeTrayRackAndDomain) {
  const auto j = default_replica_sizes(sys("jalapeno-a0"));
  EXPECT_EQ(j.front(), 1);
  EXPECT_EQ(j.back(), 2048);
  const auto g = default_replica_sizes(sys("gb200-nvl72"));
  EXPECT_NE(std::find(g.begin(), g.end(), 72), g.end());
  EXPECT_NE(std::find(g.begin(), g.end(), 4), g.end());
  EXPECT_EQ(g.back(), 72);
}

TEST(PerfMemory_Layouts, ParseLayout_RoundTripsLabels) {
  for (const char* s : {"tp8", "tp8-ep8", "tp8-ep8-dpa", "tp4-pp2", "tp1"}) {
    auto l = parse_layout(s);
    ASSERT_TRUE(l.has_value()) << s << l.error();
    EXPECT_EQ(l->label(), s);
  }
  EXPECT_FALSE(parse_layout("tp0").has_value());
  EXPECT_FALSE(parse_layout("tq8").has_value());
  EXPECT_FALSE(parse_layout("tp8-tp4").has_value());
  EXPECT_FALSE(parse_layout("").has_value());
}

}  // namespace
}  // namespace racktwin::perf

namespace racktwin::perf {
namespace {

TEST(PerfMemory_HandChecked, PipelineKvCapacity_TightestStageDecides) {
  // DeepSeek-R1 fp4 at tp1-pp2 on jalapeno-a0: stage 0 holds 31 layers (3 dense, 28 MoE) and the
  // embeddings, stage 1 holds 30 MoE layers and the head. Each holds its own layers' KV.
  const MemoryParams mem;
  const MemoryPlan p = plan_memory(mdl("deepseek-r1"), sys("jalapeno-a0"), shipped_catalog(),
                                   Layout{"", 1, 1, 2, false}, "fp4", mem, 9216);
  const double h = 7168;
  const double attn =
      7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
  const double moe = 256 * 3 * h * 2048 * 4.5 / 8 + 3 * h * 2048 + h * 256 * 2;
  const double dense = 3 * h * 18432;
  const double emb = 129280 * h * 2.0;
  const double stage0 = 31 * attn + 3 * dense + 28 * moe + emb, stage1 = 30 * attn + 30 * moe + emb;
  const double budget = 288e9 * 0.9 - 2 * 1073741824.0 - 16384 * h * 2 * 16;
  const double expected =
      std::min((budget - stage0) / (576.0 * 31), (budget - stage1) / (576.0 * 30));
  EXPECT_NEAR(p.weights.value() / std::max(stage0, stage1), 1.0, 1e-12);
  EXPECT_NEAR(p.kv_tokens / expected, 1.0, 1e-12);
}

TEST(PerfMemory_Fit, DraftTokens_HoldTheMtpModule) {
  const Layout l{"", 8, 8, 1, true};
  const MemoryPlan plain =
      plan_memory(mdl("deepseek-r1"), sys("jalapeno-a0"), shipped_catalog(), l, "fp4", {}, 9216);
  const MemoryPlan mtp =
      plan_memory(mdl("deepseek-r1"), sys("jalapeno-a0"), shipped_catalog(), l, "fp4", {}, 9216, 1);
  // One extra layer: full attention (FP8) + 32 routed experts (NVFP4) + shared expert + router.
  const double h = 7168;
  const double attn =
      7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
  const double layer = attn + 32 * 3 * h * 2048 * 4.5 / 8 + 3 * h * 2048 + h * 256 * 2;
  EXPECT_NEAR(mtp.weights.value() - plain.weights.value(), layer, 1.0);
  EXPECT_NEAR(mtp.kv_per_token.value() - plain.kv_per_token.value(), 576.0, 1e-9);
  // Llama has no MTP module: drafting changes nothing in its plan.
  const Layout t8{"", 8, 1, 1, false};
  EXPECT_DOUBLE_EQ(
      plan_memory(mdl("llama-3.3-70b"), sys("h200-hgx"), shipped_catalog(), t8, "bf16", {}, 9216, 2)
          .weights.value(),
      plan_memory(mdl("llama-3.3-70b"), sys("h200-hgx"), shipped_catalog(), t8, "bf16", {}, 9216)
          .weights.value());
}

}  // namespace
}  // namespace racktwin::perf
