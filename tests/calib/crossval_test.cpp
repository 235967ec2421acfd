// Cross-validation folds and the parameters a held-out system gets; no simulation.

#include "calib/crossval.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

using namespace racktwin;
using racktwin::test::shipped_catalog;

ReferencePoint point(const std::string& id, const std::string& system, const std::string& model,
                     int isl) {
  ReferencePoint p;
  p.id = id;
  p.system = system;
  p.model = model;
  p.workload.isl = isl;
  p.workload.osl = 1024;
  return p;
}

calib::SystemFit fit_of(const std::string& system, double mfu) {
  calib::SystemFit f;
  f.system = system;
  f.prior_id = shipped_catalog().efficiency_prior_for(system)->id;
  f.prior = shipped_catalog().efficiency_prior_for(system)->values;
  f.fitted = f.prior;
  f.fitted.mfu = mfu;
  f.params = {"mfu"};
  return f;
}

TEST(Crossval_Folds, EachKeyIsHeldOutOnce_TrainIsTheRest) {
  const std::vector<ReferencePoint> pts{point("a", "h200-hgx", "gpt-oss-120b", 8192),
                                        point("b", "b200-hgx", "deepseek-r1", 1024),
                                        point("c", "h200-hgx", "deepseek-r1", 1024)};
  const auto by_system = calib::make_folds(pts, calib::HoldOut::system);
  ASSERT_EQ(by_system.size(), 2u);
  EXPECT_EQ(by_system[0].held_out, "h200-hgx");
  EXPECT_EQ(by_system[0].test, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(by_system[0].train, (std::vector<std::size_t>{1}));
  const auto by_model = calib::make_folds(pts, calib::HoldOut::model);
  ASSERT_EQ(by_model.size(), 2u);
  EXPECT_EQ(by_model[1].held_out, "deepseek-r1");
  EXPECT_EQ(by_model[1].test, (std::vector<std::size_t>{1, 2}));
  const auto by_shape = calib::make_folds(pts, calib::HoldOut::shape);
  ASSERT_EQ(by_shape.size(), 2u);
  EXPECT_EQ(by_shape[0].held_out, "8192/1024");
  EXPECT_EQ(by_shape[1].held_out, "1024/1024");
  for (const auto& folds : {by_system, by_model, by_shape})
    for (const auto& f : folds) EXPECT_EQ(f.train.size() + f.test.size(), pts.size());
}

TEST(Crossval_Folds, AHeldOutPointTestsItsFoldAlone_OnlyBesideAPointThatDiffersInItAlone) {
  using calib::HoldOut;
  std::vector<ReferencePoint> pts{point("h200-r1-8k", "h200-hgx", "deepseek-r1", 8192),
                                  point("h200-r1-1k", "h200-hgx", "deepseek-r1", 1024),
                                  point("h200-oss-1k", "h200-hgx", "gpt-oss-120b", 1024),
                                  point("b200-r1-8k", "b200-hgx", "deepseek-r1", 8192)};
  pts[0].workload.precision = pts[1].workload.precision = "fp8";
  const auto alone = [&](std::size_t p, std::vector<std::size_t> train, HoldOut by) {
    return calib::differs_alone(pts, train, pts[p], by);
  };
  // The shape alone differs between the two H200 DeepSeek-R1 points, not from the gpt-oss one.
  EXPECT_TRUE(alone(0, {1, 2, 3}, HoldOut::shape));
  EXPECT_FALSE(alone(0, {2, 3}, HoldOut::shape));
  // The system alone: B200 beside H200 at the same model, shape and metric, not at another
  // precision.
  EXPECT_FALSE(alone(0, {3}, HoldOut::system));
  pts[3].workload.precision = "fp8";
  EXPECT_TRUE(alone(0, {3}, HoldOut::system));
  // The model alone: gpt-oss-120b beside DeepSeek-R1 on the same system and shape, whatever the
  // precisions of the two models' weights ...
  EXPECT_TRUE(alone(2, {1}, HoldOut::model));
  EXPECT_FALSE(alone(2, {0}, HoldOut::model));
  // ... and of the same metric.
  pts[1].metric = Metric::min_tbt_ms;
  EXPECT_FALSE(alone(2, {1}, HoldOut::model));
}

TEST(Crossval_Folds, NamesParse_AndOneFoldIsAnErrorBeforeAnyFit) {
  EXPECT_EQ(calib::parse_hold_out("shape"), calib::HoldOut::shape);
  EXPECT_FALSE(calib::parse_hold_out("rack").has_value());
  calib::FitOptions opt;
  bool simulated = false;
  opt.simulate = [&](const std::vector<sim::PointSpec>&)
      -> std::expected<std::vector<sim::PointResult>, std::string> {
    simulated = true;
    return std::vector<sim::PointResult>{};
  };
  const std::vector<ReferencePoint> pts{point("a", "h200-hgx", "gpt-oss-120b", 8192)};
  auto cv = calib::cross_validate(shipped_catalog(), pts, calib::HoldOut::model, opt);
  ASSERT_FALSE(cv.has_value());
  EXPECT_NE(cv.error().find("at least two models"), std::string::npos) << cv.error();
  EXPECT_FALSE(simulated);
}

TEST(Crossval_Efficiency, OwnFit_ElseFamilyPoolWithoutTheHeldOut_ElsePrior) {
  const Catalog& cat = shipped_catalog();
  const std::vector<calib::SystemFit> fits{fit_of("h200-hgx", 0.2), fit_of("h100-hgx", 0.8),
                                           fit_of("b200-hgx", 0.6)};
  // Trained: its own fit.
  auto own = calib::held_out_efficiency(cat, "h200-hgx", fits, "");
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(own->origin, "fitted");
  EXPECT_DOUBLE_EQ(own->values.mfu, 0.2);
  // Held out: the pool of the other Hopper member only, never its own fit.
  auto held = calib::held_out_efficiency(cat, "h200-hgx", fits, "h200-hgx");
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->origin, "family nvidia-hopper (h100-hgx)");
  EXPECT_NEAR(held->values.mfu, 0.8, 1e-12);
  // No other member fitted: the prior.
  auto alone = calib::held_out_efficiency(cat, "b200-hgx", fits, "b200-hgx");
  ASSERT_TRUE(alone.has_value());
  EXPECT_EQ(alone->origin.rfind("prior ", 0), 0u) << alone->origin;
  EXPECT_DOUBLE_EQ(alone->values.mfu, cat.efficiency_prior_for("b200-hgx")->values.mfu);
  // A system without points of its own takes its family's pool of both Hopper fits.
  auto pooled = calib::held_out_efficiency(cat, "h100-hgx", {fits[0]}, "");
  ASSERT_TRUE(pooled.has_value());
  EXPECT_EQ(pooled->origin, "family nvidia-hopper (h200-hgx)");
}

}  // namespace
