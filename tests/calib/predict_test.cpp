// Reading metrics off sweep results, matching points to runs, and the error summary; no simulation.

#include "calib/predict.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "test_support.hpp"

namespace {

using namespace racktwin;
using racktwin::test::shipped_catalog;

// A finished sweep point of gb200-nvl72 / gpt-oss-120b with the given figures.
sim::PointResult result(const std::string& layout, int c, double tps, double tpot_s, double e2e_s,
                        const std::string& workload = "w") {
  sim::PointResult r;
  r.spec.system = shipped_catalog().find_system("gb200-nvl72");
  r.spec.model = shipped_catalog().find_model("gpt-oss-120b");
  r.spec.layout = *parse_layout(layout);
  r.spec.workload_id = workload;
  r.spec.arrivals = sim::ClosedLoop{c};
  r.total_tps_per_xpu = tps;
  r.output_tps_per_xpu = tps / 9;
  r.tps_per_rated_kw = tps / 1.2;
  r.tps_per_allin_provisioned_mw = tps * 1000 / 2.1;
  r.tpot.median = tpot_s;
  r.interactivity = 1.0 / tpot_s;
  r.e2e.median = e2e_s;
  return r;
}

ReferencePoint point(Metric m, std::optional<double> at = std::nullopt, double value = 1) {
  ReferencePoint p;
  p.id = "p";
  p.system = "gb200-nvl72";
  p.model = "gpt-oss-120b";
  p.metric = m;
  p.at = at;
  p.value = value;
  return p;
}

TEST(Metric_Value, PeaksAndMinima_AreTheBestOverLayoutsAndLoads) {
  const std::vector<sim::PointResult> rs{
      result("tp1", 1, 100, 0.004, 5.0), result("tp1", 64, 3000, 0.02, 20.0),
      result("tp4", 1, 80, 0.002, 3.0), result("tp4", 64, 2000, 0.01, 12.0),
      result("tp4", 64, 9999, 0.0001, 0.1, "other")};
  EXPECT_DOUBLE_EQ(*calib::metric_value(point(Metric::peak_total_tps_per_xpu), "w", rs), 3000);
  EXPECT_DOUBLE_EQ(*calib::metric_value(point(Metric::peak_mixed_tps_per_kw_rated), "w", rs),
                   3000 / 1.2);
  EXPECT_DOUBLE_EQ(*calib::metric_value(point(Metric::min_tbt_ms), "w", rs), 2.0);
  EXPECT_DOUBLE_EQ(*calib::metric_value(point(Metric::max_interactivity_tok_s_user), "w", rs),
                   500.0);
  EXPECT_DOUBLE_EQ(*calib::metric_value(point(Metric::min_e2e_latency_s), "w", rs), 3.0);
}

// Each prediction of a peak or minimum names the sweep point it was read from; a value
// interpolated on the envelope names none.
TEST(Predictions, NameTheSweepPointThatDecidesThem) {
  std::vector<sim::PointResult> rs{
      result("tp1", 1, 100, 0.004, 5.0), result("tp1", 64, 3000, 0.02, 20.0),
      result("tp4", 1, 80, 0.002, 3.0), result("tp4", 64, 2000, 0.01, 12.0)};
  rs[1].spec.prefill_replicas = 2;  // the peak: a disaggregated 2p1d point
  const std::vector<ReferencePoint> pts{
      point(Metric::peak_total_tps_per_xpu, std::nullopt, 3000), point(Metric::min_tbt_ms),
      point(Metric::min_e2e_latency_s), point(Metric::total_tps_per_xpu_at, 75)};
  calib::PredictionPlan plan;
  plan.groups.push_back({"gb200-nvl72", "gpt-oss-120b", "w", 0, rs.size()});
  plan.group_of.assign(pts.size(), 0);
  plan.errors.assign(pts.size(), "");
  const auto ps = calib::predictions(pts, plan, rs);
  ASSERT_EQ(ps.size(), 4u);
  rs[1].spec.engine.max_seqs = 256;  // and its decode replicas batch at most 256
  EXPECT_EQ(calib::predictions(pts, plan, rs)[0].decided_by,
            "tp1 2p1d at 64 clients, decode batch at most 256");
  EXPECT_DOUBLE_EQ(ps[0].error_pct, 0);
  EXPECT_EQ(ps[1].decided_by, "tp4 aggregated at 1 client");
  EXPECT_EQ(ps[2].decided_by, "tp4 aggregated at 1 client");
  EXPECT_TRUE(ps[3].predicted.has_value());
  EXPECT_EQ(ps[3].decided_by, "");
}

TEST(Metric_Value, AtAnInteractivity_InterpolatesTheEnvelope) {
  // Envelope: (50 tok/s/user, 3000), (100, 2000), (500, 80); tp1 at C=1 (250, 100) is beaten.
  const std::vector<sim::PointResult> rs{
      result("tp1", 1, 100, 0.004, 5.0), result("tp1", 64, 3000, 0.02, 20.0),
      result("tp4", 1, 80, 0.002, 3.0), result("tp4", 64, 2000, 0.01, 12.0)};
  EXPECT_NEAR(*calib::metric_value(point(Metric::total_tps_per_xpu_at, 75), "w", rs), 2500, 1e-9);
  EXPECT_NEAR(*calib::metric_value(point(Metric::output_tps_per_xpu_at, 75), "w", rs), 2500.0 / 9,
              1e-9);
  EXPECT_NEAR(*calib::metric_value(point(Metric::total_tps_per_allin_mw_at, 100), "w", rs),
              2000 * 1000 / 2.1, 1e-6);
  // Below the curve: its highest throughput; beyond it: an error that says so.
  EXPECT_DOUBLE_EQ(*calib::metric_value(point(Metric::total_tps_per_xpu_at, 10), "w", rs), 3000);
  auto beyond = calib::metric_value(point(Metric::total_tps_per_xpu_at, 900), "w", rs);
  ASSERT_FALSE(beyond.has_value());
  EXPECT_NE(beyond.error().find("beyond the twin's curve"), std::string::npos) << beyond.error();
}

TEST(Metric_Value, NoSuccessfulPoint_IsAnError) {
  auto r = result("tp1", 1, 100, 0.004, 5.0);
  r.error = "does not fit";
  EXPECT_FALSE(calib::metric_value(point(Metric::peak_total_tps_per_xpu), "w", {r}).has_value());
  EXPECT_FALSE(calib::metric_value(point(Metric::peak_total_tps_per_xpu), "x", {}).has_value());
}

TEST(Describes, PrecisionUnsetMeansTheSystemsBest) {
  InferenceXWorkload run;
  run.isl = 8192;
  run.osl = 1024;
  InferenceXWorkload p = run;
  EXPECT_TRUE(calib::describes(p, run, "fp4"));
  p.precision = "fp4";
  EXPECT_TRUE(calib::describes(p, run, "fp4"));
  p.precision = "fp8";
  EXPECT_FALSE(calib::describes(p, run, "fp4"));
  run.precision = "fp8";
  EXPECT_TRUE(calib::describes(p, run, "fp4"));
  p.osl = 2048;
  EXPECT_FALSE(calib::describes(p, run, "fp4"));
}

TEST(ErrorSummary, MedianAndMaxOfAbsoluteErrors_FailuresCountedApart) {
  std::vector<calib::Prediction> ps(4);
  ps[0].predicted = 1, ps[0].error_pct = -4;
  ps[1].predicted = 1, ps[1].error_pct = 10;
  ps[2].predicted = 1, ps[2].error_pct = 2;
  const auto s = calib::summarise_errors(ps);
  EXPECT_EQ(s.predicted, 3);
  EXPECT_EQ(s.failed, 1);
  EXPECT_DOUBLE_EQ(s.median_abs_pct, 4);
  EXPECT_DOUBLE_EQ(s.max_abs_pct, 10);
}

TEST(Plan, PointsOfOneSweepShareIt_UnrunnableWorkloadsSayWhy) {
  std::vector<ReferencePoint> pts{point(Metric::min_tbt_ms), point(Metric::peak_total_tps_per_xpu),
                                  point(Metric::min_tbt_ms)};
  for (auto& p : pts) p.workload.isl = 1024, p.workload.osl = 128;
  pts[2].system = "gb900-nvl576";  // not in the catalog: its sweep cannot be built
  calib::PredictOptions opt;
  opt.concurrency = {1, 4};
  opt.multinode_concurrency = false;
  opt.recipes = false;  // the generic pools (gb200-nvl72's published ones: their own test)
  const auto plan = calib::plan_predictions(shipped_catalog(), pts, opt);
  EXPECT_EQ(plan.group_of[0], plan.group_of[1]);
  EXPECT_GE(plan.group_of[0], 0);
  EXPECT_EQ(plan.group_of[2], -1);
  EXPECT_NE(plan.errors[2].find("unknown system"), std::string::npos) << plan.errors[2];
  const auto& g = plan.groups[static_cast<std::size_t>(plan.group_of[0])];
  EXPECT_GT(g.end, g.begin);
  // Every layout at both concurrencies in each mode: aggregated, 1p1d and 2p1d on gb200-nvl72.
  EXPECT_EQ((g.end - g.begin) % 6, 0u);
}

TEST(Plan, ReplicaSizes_ChooseTheLayoutsTried) {
  std::vector<ReferencePoint> pts{point(Metric::peak_total_tps_per_xpu)};
  pts[0].workload.isl = 1024, pts[0].workload.osl = 128;
  calib::PredictOptions opt;
  opt.concurrency = {1};
  opt.disaggregated.clear();
  auto xpus_of = [&](const calib::PredictionPlan& plan) {
    std::set<int> sizes;
    for (const auto& s : plan.specs) sizes.insert(s.layout.xpus());
    return sizes;
  };
  // Default: the compute tray (4 on gb200-nvl72), 8 XPUs, the smaller replicas that hold the
  // model, and for this MoE model the wide expert-parallel replicas within the 72-GPU domain.
  EXPECT_EQ(xpus_of(calib::plan_predictions(shipped_catalog(), pts, opt)),
            (std::set<int>{1, 2, 4, 8, 16, 32, 64}));
  opt.replica_xpus = {1, 2};
  EXPECT_EQ(xpus_of(calib::plan_predictions(shipped_catalog(), pts, opt)), (std::set<int>{1, 2}));
}

TEST(Plan, AggregatedSingleDomainPoints_StopAtTheBenchmarksConcurrency) {
  std::vector<ReferencePoint> pts{point(Metric::peak_total_tps_per_xpu),
                                  point(Metric::peak_total_tps_per_xpu)};
  for (auto& p : pts) p.workload.isl = 1024, p.workload.osl = 1024;
  pts[1].system = "h100-hgx";
  calib::PredictOptions opt;
  opt.concurrency = {16, 64, 128, 1024};
  opt.multinode_concurrency = false;  // the next test: disaggregated points beyond the list
  opt.recipes = false;                // the published deployments: their own test below
  const auto plan = calib::plan_predictions(shipped_catalog(), pts, opt);
  const int cap = *shipped_catalog().find_system("h100-hgx")->serving.benchmark_concurrency;
  ASSERT_EQ(cap, 64);
  std::set<int> aggregated_h100, disaggregated_h100, gb200;
  for (const auto& s : plan.specs) {
    const int c = *sim::clients_of(s.arrivals);
    if (s.system->id == "gb200-nvl72")
      gb200.insert(c);  // no benchmark bound: the whole list
    else
      (s.prefill_replicas ? disaggregated_h100 : aggregated_h100).insert(c);
  }
  EXPECT_EQ(gb200, (std::set<int>{16, 64, 128, 1024}));
  EXPECT_EQ(aggregated_h100, (std::set<int>{16, 64}));
  // Prefill and decode pools occupy two servers: a multi-node configuration, not bounded.
  EXPECT_EQ(disaggregated_h100, (std::set<int>{16, 64, 128, 1024}));
}

// Each disaggregated configuration also runs at the clients that fill its decode pool, up to the
// concurrency of the system's multi-node benchmarks; aggregated points and a sweep whose list was
// narrowed do not.
TEST(Plan, DisaggregatedPoints_AlsoRunAtTheClientsThatFillTheirDecodePool) {
  std::vector<ReferencePoint> pts{point(Metric::peak_total_tps_per_xpu)};
  pts[0].system = "b300-hgx";
  pts[0].model = "deepseek-r1";
  pts[0].workload.isl = 1024, pts[0].workload.osl = 1024, pts[0].workload.precision = "fp4";
  const System& b300 = *shipped_catalog().find_system("b300-hgx");
  ASSERT_EQ(b300.serving.multinode.concurrency, 16384);
  ASSERT_EQ(b300.serving.multinode.max_seqs_per_rank, 1024);
  calib::PredictOptions opt;
  opt.concurrency = {256, 1024};
  opt.replica_xpus = {8};
  opt.recipes = false;  // the generic pools, not the published deployments (the next test)
  auto clients = [&](const calib::PredictionPlan& plan, const std::string& layout, int prefill) {
    std::set<int> out;
    for (const auto& s : plan.specs)
      if (s.layout.label() == layout && s.prefill_replicas.value_or(0) == prefill)
        out.insert(*sim::clients_of(s.arrivals));
    return out;
  };
  const auto plan = calib::plan_predictions(shipped_catalog(), pts, opt);
  // 8 DP-attention ranks x 1,024 per rank: one decode replica holds 8,192 clients (its KV cache
  // holds more), below the benchmarks' 16,384.
  EXPECT_EQ(clients(plan, "tp8-ep8-dpa", 1), (std::set<int>{256, 1024, 8192}));
  EXPECT_EQ(clients(plan, "tp8-ep8-dpa", 2), (std::set<int>{256, 1024, 8192}));
  for (const auto& s : plan.specs) {
    if (s.prefill_replicas && s.layout.label() == "tp8-ep8-dpa") {
      EXPECT_EQ(s.engine.max_seqs, 8192);
    }
  }
  // Attention tensor-parallel: one engine batch of 1,024, so no client beyond the list.
  EXPECT_EQ(clients(plan, "tp8-ep8", 1), (std::set<int>{256, 1024}));
  // Aggregated within a server: the single-node benchmarks' bound (512) still holds.
  EXPECT_EQ(clients(plan, "tp8-ep8-dpa", 0), (std::set<int>{256}));
  opt.multinode_concurrency = false;
  EXPECT_EQ(clients(calib::plan_predictions(shipped_catalog(), pts, opt), "tp8-ep8-dpa", 1),
            (std::set<int>{256, 1024}));
}

// Where the catalog lists the multi-node deployments a published benchmark ran for the point's
// system, model, precision and shape, the sweep runs exactly those, each at its own clients and
// batch, in place of the generic 1p1d and 2p1d pools; aggregated points stay.
TEST(Plan, PublishedMultiNodeDeployments_ReplaceTheGenericPools) {
  std::vector<ReferencePoint> pts{point(Metric::peak_total_tps_per_xpu)};
  pts[0].system = "b200-hgx";
  pts[0].model = "deepseek-r1";
  pts[0].workload.isl = 8192, pts[0].workload.osl = 1024, pts[0].workload.precision = "fp4";
  const auto recipes = shipped_catalog().recipes_for("b200-hgx", "deepseek-r1", "fp4", 8192, 1024);
  ASSERT_GE(recipes.size(), 5u);
  using Config = std::tuple<std::string, std::string, int>;  // decode layout, mode, clients
  std::multiset<Config> listed;
  for (const MultiNodeRecipe* r : recipes)
    for (int c : r->concurrency) listed.insert({r->decode.label(), r->serving.label(), c});
  auto disaggregated = [](const calib::PredictionPlan& plan) {
    std::multiset<Config> out;
    for (const auto& s : plan.specs)
      if (s.prefill_replicas)
        out.insert({s.layout.label(), sim::serving_mode(s).label(), *sim::clients_of(s.arrivals)});
    return out;
  };
  calib::PredictOptions opt;
  const auto plan = calib::plan_predictions(shipped_catalog(), pts, opt);
  EXPECT_EQ(disaggregated(plan), listed);
  EXPECT_TRUE(std::any_of(plan.specs.begin(), plan.specs.end(),
                          [](const auto& s) { return !s.prefill_replicas; }));
  // ctx4_gen1_dep8_batch192: one decode worker of 8 DP-attention ranks batching 192 each.
  bool seen = false;
  for (const auto& s : plan.specs)
    if (sim::serving_mode(s).label() == "4p1d/tp4-ep4-dpa" && s.layout.label() == "tp8-ep8-dpa") {
      EXPECT_EQ(s.engine.max_seqs, 192 * 8);
      EXPECT_EQ(*sim::clients_of(s.arrivals), 1606);
      seen = true;
    }
  EXPECT_TRUE(seen);
  // Every configuration (layout, mode, clients and decode batch) runs on a seed stream of its
  // own: h200-hgx's SGLang bs256-1p6d-dep (the system's default decode batch) and TensorRT-LLM
  // c256_ctx1_gen6_dep8_batch512 (its own) both run 1p6d/tp8-ep8-dpa at 256 clients, two samples of
  // that configuration rather than one simulated twice.
  ReferencePoint h200 = pts[0];
  h200.system = "h200-hgx";
  h200.workload.isl = 1024, h200.workload.precision = "fp8";
  const auto h200_plan = calib::plan_predictions(shipped_catalog(), {h200}, opt);
  std::set<std::uint64_t> seeds;
  int at_256 = 0;
  for (const auto& s : h200_plan.specs) {
    seeds.insert(s.seed);
    if (s.prefill_replicas && sim::serving_mode(s).label() == "1p6d/tp8-ep8-dpa" &&
        *sim::clients_of(s.arrivals) == 256)
      at_256 += 1;
  }
  EXPECT_EQ(at_256, 2);
  EXPECT_EQ(seeds.size(), h200_plan.specs.size());
  // A model whose multi-node runs the catalog does not list on a system whose runs it lists ran
  // none: aggregated configurations alone.
  pts[0].model = "gpt-oss-120b";
  ASSERT_TRUE(shipped_catalog().recipes_for("b200-hgx", "gpt-oss-120b", "fp4", 8192, 1024).empty());
  const auto gptoss = calib::plan_predictions(shipped_catalog(), pts, opt);
  EXPECT_FALSE(gptoss.specs.empty());
  EXPECT_TRUE(disaggregated(gptoss).empty());
  pts[0].model = "deepseek-r1";
  // The listed deployments ran without MTP: an MTP point keeps the generic pools.
  pts[0].workload.mtp = true;
  const auto mtp = disaggregated(calib::plan_predictions(shipped_catalog(), pts, opt));
  EXPECT_TRUE(std::any_of(mtp.begin(), mtp.end(),
                          [](const Config& c) { return std::get<1>(c) == "1p1d"; }));
  pts[0].workload.mtp = false;
  // Off: the generic pools over the sweep's layouts, and none of the published deployments.
  opt.recipes = false;
  const auto generic = disaggregated(calib::plan_predictions(shipped_catalog(), pts, opt));
  EXPECT_TRUE(std::any_of(generic.begin(), generic.end(),
                          [](const Config& c) { return std::get<1>(c) == "1p1d"; }));
  EXPECT_TRUE(std::none_of(generic.begin(), generic.end(), [](const Config& c) {
    return std::get<1>(c) == "4p1d/tp4-ep4-dpa";
  }));
}

}  // namespace
