#include "app/perf.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "test_support.hpp"

namespace racktwin::app {
namespace {

using perf::LayoutRejection;
using racktwin::test::shipped_catalog;

const LayoutRow* find(const LayoutList& l, const std::string& label) {
  for (const auto& r : l.layouts)
    if (r.option.layout.label() == label) return &r;
  return nullptr;
}

TEST(LayoutList, DeepSeekOnOneXpu_IsRejectedForMemoryWithTheTypedReason) {
  // 671B parameters cannot sit in one XPU's HBM at any precision.
  LayoutsRequest req{"gb300-nvl72", "deepseek-r1", "", {1}, 1, 9216};
  const auto l = layout_list(shipped_catalog(), req);
  ASSERT_TRUE(l) << l.error().message;
  const LayoutRow* tp1 = find(*l, "tp1");
  ASSERT_NE(tp1, nullptr);
  EXPECT_FALSE(tp1->option.valid);
  EXPECT_EQ(tp1->option.rejection, LayoutRejection::weights_exceed_hbm);
  EXPECT_TRUE(perf::is_memory(tp1->option.rejection));
  EXPECT_NE(tp1->option.reason.find("does not fit in HBM"), std::string::npos);
}

TEST(LayoutList, TpThatDoesNotDivideTheHeads_IsRejectedAsHeadsNotDivisible) {
  // Llama 3.3 70B has 64 query heads: tp 3 does not divide them.
  LayoutsRequest req{"h100-hgx", "llama-3.3-70b", "", {3}, 1, 9216};
  const auto l = layout_list(shipped_catalog(), req);
  ASSERT_TRUE(l) << l.error().message;
  const LayoutRow* tp3 = find(*l, "tp3");
  ASSERT_NE(tp3, nullptr);
  EXPECT_EQ(tp3->option.rejection, LayoutRejection::heads_not_divisible);
  EXPECT_TRUE(perf::is_divisibility(tp3->option.rejection));
  ASSERT_EQ(l->rejections.size(), 1u);
  EXPECT_EQ(l->rejections[0].label, "not divisible");
  EXPECT_EQ(l->rejections[0].reason, LayoutRejection::heads_not_divisible);
}

TEST(LayoutList, ReplicaLargerThanTheDomainNotWholeDomains_IsRejectedAsExceedsDomainWithItsDetail) {
  LayoutsRequest req{"gb300-nvl72", "deepseek-r1", "", {100}, 1, 9216};
  const auto l = layout_list(shipped_catalog(), req);
  ASSERT_TRUE(l);
  for (const auto& r : l->layouts) EXPECT_EQ(r.option.rejection, LayoutRejection::exceeds_domain);
  ASSERT_FALSE(l->rejections.empty());
  EXPECT_NE(l->rejections[0].label.find("exceeds the scale-up domain of 72"), std::string::npos);
}

TEST(LayoutList, ValidLayouts_HaveNoRejectionAndHoldTheMinimumContext) {
  const auto l = layout_list(shipped_catalog(), {"jalapeno-a0", "deepseek-r1", "", {}, 8, 9216});
  ASSERT_TRUE(l);
  int valid = 0, grouped = 0;
  for (const auto& r : l->layouts) {
    if (!r.option.valid) continue;
    ++valid;
    EXPECT_EQ(r.option.rejection, LayoutRejection::none);
    EXPECT_GE(r.sequences, 1.0) << r.option.layout.label();
  }
  EXPECT_EQ(valid, l->valid);
  EXPECT_GT(valid, 0);
  for (const auto& g : l->rejections) grouped += g.count;
  EXPECT_EQ(grouped + valid, static_cast<int>(l->layouts.size()));
  const Json j = to_json(*l);
  EXPECT_EQ(j["layouts"].size(), l->layouts.size());
  EXPECT_EQ(j["precision"], l->precision);
}

// A decode step of `batch` sequences at `context` tokens.
PerfRequest decode_step(std::string system, std::string model, std::string layout, double batch,
                        double context) {
  PerfRequest req;
  req.system = std::move(system);
  req.model = std::move(model);
  req.layout = std::move(layout);
  req.batch = batch;
  req.context = context;
  return req;
}

TEST(IterationTime, DecodeBatch_AddsUpAndCarriesThroughput) {
  const PerfRequest req = decode_step("jalapeno-a0", "deepseek-r1", "tp8-ep8-dpa", 8, 8192);
  const auto t = iteration_time(shipped_catalog(), req);
  ASSERT_TRUE(t) << t.error().message;
  const perf::Breakdown& b = t->breakdown;
  EXPECT_NEAR(b.total.value(), (b.compute + b.memory + b.communication + b.overhead).value(),
              1e-12);
  EXPECT_EQ(t->xpus, 8);
  EXPECT_DOUBLE_EQ(t->output_tokens, 8 * b.tokens_per_decode_seq);
  EXPECT_DOUBLE_EQ(t->output_tokens_per_s_per_xpu, t->output_tokens / b.total.value() / 8);
  const Json j = to_json(*t);
  for (const char* key : {"total_s", "compute_s", "memory_s", "communication_s", "overhead_s",
                          "bound", "efficiency_prior", "parts", "decode_tokens_per_s_per_xpu"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["efficiency_prior"], t->prior);
}

TEST(IterationTime, TakesTheEfficienciesRunUses_OrThePriorWhenAsked) {
  PerfRequest req = decode_step("h200-hgx", "llama-3.3-70b", "tp4", 32, 8192);
  const Catalog& cat = shipped_catalog();
  const auto chosen = cat.efficiency_for(req.system);
  ASSERT_TRUE(chosen);
  ASSERT_EQ(chosen->origin, "calibrated");  // the shipped calibration fits h200-hgx
  const auto run_uses = iteration_time(cat, req);
  ASSERT_TRUE(run_uses) << run_uses.error().message;
  EXPECT_EQ(run_uses->efficiency_origin, "calibrated");
  EXPECT_DOUBLE_EQ(run_uses->efficiency.mfu, chosen->values.mfu);
  EXPECT_DOUBLE_EQ(run_uses->efficiency.step_overhead.value(), chosen->values.step_overhead.value());
  req.prior = true;
  const auto prior = iteration_time(cat, req);
  ASSERT_TRUE(prior) << prior.error().message;
  EXPECT_EQ(prior->efficiency_origin, "prior " + prior->prior);
  EXPECT_DOUBLE_EQ(prior->efficiency.mfu, cat.efficiency_prior_for(req.system)->values.mfu);
  EXPECT_NE(prior->breakdown.total.value(), run_uses->breakdown.total.value());
  EXPECT_EQ(to_json(*run_uses)["efficiency_origin"], "calibrated");
}

TEST(IterationTime, BadInputs_AreTypedProblems) {
  PerfRequest req;
  req.system = "h100-hgx";
  req.model = "gpt-oss-120b";
  req.layout = "tp3";
  const auto a = iteration_time(shipped_catalog(), req);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().input, Problem::Input::layout_run);
  EXPECT_NE(a.error().message.find("not divisible by tp 3"), std::string::npos);
  req.layout = "tq8";
  EXPECT_EQ(iteration_time(shipped_catalog(), req).error().input, Problem::Input::layout);
  req.layout = "tp8";
  req.system = "jalapeno-a1";
  EXPECT_EQ(iteration_time(shipped_catalog(), req).error().input, Problem::Input::system);
  req.system = "h100-hgx";
  req.precision = "fp9";
  EXPECT_EQ(iteration_time(shipped_catalog(), req).error().input, Problem::Input::precision);
}

}  // namespace
}  // namespace racktwin::app
