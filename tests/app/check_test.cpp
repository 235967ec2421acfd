#include "app/check.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include <fmt/format.h>

#include "db/provenance.hpp"
#include "scenarios/scenario_loader.hpp"
#include "sim/sweep.hpp"
#include "test_support.hpp"

namespace racktwin::app {
namespace {

using racktwin::test::shipped_catalog;

std::string shipped(const std::string& rel) {
  return std::string(RACKTWIN_SOURCE_DIR) + "/" + rel;
}

// What `racktwin run` stores: db::assumptions_of over the points of sim::build_sweep.
std::vector<db::Assumption> stored_run_assumptions(const std::string& path) {
  const Catalog& cat = shipped_catalog();
  auto sc = load_scenario_file(path, cat);
  EXPECT_TRUE(sc.has_value());
  sim::SweepOptions so;
  so.seed = sc->seed;
  auto points = sim::build_sweep(cat, *sc, so);
  EXPECT_TRUE(points.has_value());
  return db::assumptions_of(cat, *points);
}

TEST(CheckScenario, InferenceX_ListsTheAssumptionsAStoredRunRecords) {
  const std::string path = shipped("scenarios/inferencex-8k1k.yaml");
  const ScenarioCheck c = check_scenario(shipped_catalog(), path);
  ASSERT_TRUE(c.valid());
  EXPECT_FALSE(c.sweep_problem);
  EXPECT_EQ(c.assumptions, stored_run_assumptions(path));
  // Every system, chip, model and efficiency prior of the scenario is covered, each entry once.
  std::set<std::pair<std::string, std::string>> entries;
  for (const auto& a : c.assumptions) entries.emplace(a.entry_kind, a.entry_id);
  std::set<std::string> kinds;
  for (const auto& [kind, id] : entries) kinds.insert(kind);
  EXPECT_TRUE(kinds.contains("efficiency"));
  EXPECT_TRUE(kinds.contains("chip"));
  for (const auto& id : c.scenario->systems) {
    const EfficiencyPrior* prior = shipped_catalog().efficiency_prior_for(id);
    ASSERT_NE(prior, nullptr) << id;
    int assumed = 0;
    for (const auto& f : prior->fields) assumed += f.provenance.assumption ? 1 : 0;
    if (assumed > 0) {
      EXPECT_TRUE(entries.contains({"efficiency", prior->id})) << prior->id;
    }
  }
  std::set<db::Assumption> unique(c.assumptions.begin(), c.assumptions.end());
  EXPECT_EQ(unique.size(), c.assumptions.size());
  const Json j = to_json(c);
  EXPECT_EQ(j["assumptions"].size(), c.assumptions.size());
  EXPECT_EQ(j["assumptions"][0]["entry_kind"], c.assumptions[0].entry_kind);
}

TEST(CheckScenario, Summary_CountsLoadsAndPointsAndNamesEveryWorkload) {
  const ScenarioCheck c = check_scenario(shipped_catalog(), shipped("tests/sim/golden/small.yaml"));
  ASSERT_TRUE(c.valid());
  const Scenario& sc = *c.scenario;
  EXPECT_EQ(c.points, sc.systems.size() * sc.models.size() * c.loads);
  std::size_t workloads = 0;
  bool in_workloads = false;
  for (const auto& f : c.summary) {
    if (f.label == "workloads")
      in_workloads = true;
    else if (!f.label.empty())
      in_workloads = false;
    workloads += in_workloads ? 1 : 0;
  }
  EXPECT_EQ(workloads, sc.workloads.size());
  EXPECT_EQ(c.summary.front().label, "seed");
  EXPECT_EQ(c.summary.back().label, "assumptions");
  EXPECT_NE(c.summary.back().text.find(std::to_string(c.assumptions.size())), std::string::npos);
  EXPECT_EQ(to_json(c)["points_per_layout"], c.points);
}

// Each serving mode is a point of every layout and load, as build_sweep makes them; the summary
// lists the modes, a prefill layout of its own included.
TEST(CheckScenario, ServingModes_MultiplyThePointsAndAreListed) {
  const std::string text =
      "name: s\nsystems: [b300-hgx]\nmodels: [deepseek-r1]\nlayouts: {named: [tp8-ep8-dpa]}\n"
      "serving: [aggregated, 1p1d, 3p1d/tp2]\nworkloads: [{isl: 1024, osl: 1024}]\n"
      "concurrency: [1, 64]\n";
  const ScenarioCheck c = check_scenario_text(shipped_catalog(), text, "serving.yaml");
  ASSERT_TRUE(c.valid());
  EXPECT_EQ(c.points, 6u);
  sim::SweepOptions so;
  auto points = sim::build_sweep(shipped_catalog(), *c.scenario, so);
  ASSERT_TRUE(points.has_value()) << points.error();
  EXPECT_EQ(points->size(), c.points);  // one named layout
  std::string serving, sweep;
  for (const auto& f : c.summary) {
    if (f.label == "serving") serving = f.text;
    if (f.label == "sweep") sweep = f.text;
  }
  EXPECT_NE(serving.find("aggregated, 1p1d, 3p1d/tp2"), std::string::npos) << serving;
  EXPECT_NE(sweep.find("x 3 serving modes = 6 points per layout"), std::string::npos) << sweep;
}

TEST(CheckScenario, BrokenFile_CarriesEveryErrorWithItsLine) {
  const ScenarioCheck c =
      check_scenario(shipped_catalog(), shipped("tests/scenarios/data/bad-unit.yaml"));
  ASSERT_FALSE(c.valid());
  EXPECT_FALSE(c.scenario);
  EXPECT_TRUE(c.assumptions.empty());
  EXPECT_EQ(c.errors.front().where.line, 8);
  const Json j = to_json(c);
  EXPECT_EQ(j["valid"], false);
  EXPECT_EQ(j["errors"][0]["path"], "facility.power_budget");
}

// A sweep of four points with limits.points at 3: check rejects it before any simulation,
// with the limit and how to raise it.
TEST(CheckScenario, SweepAboveThePointsLimit_IsAnErrorWithTheLimit) {
  const test::TempFile f("s.yaml",
                         "name: l\nsystems: [h100-hgx]\nmodels: [llama-3.3-70b]\n"
                         "workloads:\n  - {kind: inferencex, isl: 1024, osl: 1024}\n"
                         "concurrency: [1, 2, 4, 8]\nlayouts: {named: [tp8]}\n"
                         "limits: {points: 3}\n");
  const ScenarioCheck c = check_scenario(shipped_catalog(), f.path());
  ASSERT_FALSE(c.valid());
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_EQ(c.errors[0].path, "limits.points");
  EXPECT_NE(c.errors[0].message.find("4 points, above the limit of 3"), std::string::npos)
      << c.errors[0].message;
  EXPECT_NE(c.errors[0].hint.find("limits: {points: 4}"), std::string::npos) << c.errors[0].hint;
}

}  // namespace
}  // namespace racktwin::app

namespace racktwin::app {
namespace {

// A Llama-3.3-70B 8k/1k scenario at one client on tp4, over `systems`, with `extra` YAML lines.
std::string tp4_scenario(const std::string& systems, const std::string& extra) {
  return "name: e\nsystems: [" + systems +
         "]\nmodels: [llama-3.3-70b]\nworkloads: [{isl: 8192, osl: 1024}]\nconcurrency: [1]\n"
         "layouts: {named: [tp4]}\n" + extra;
}

TEST(CheckScenario, Engine_ShowsWhatEveryPointRunsWith_DefaultsMarked_AndTheSweepTakesIt) {
  const std::string text = tp4_scenario(
      "h100-hgx", "engine: {reserve_output: 0, max_batched_tokens: 8192, memory_utilization: 0.8}\n");
  const ScenarioCheck c = check_scenario_text(shipped_catalog(), text, "e.yaml");
  ASSERT_TRUE(c.valid());
  std::string engine;
  for (const auto& f : c.summary)
    if (f.label == "engine") engine = f.text;
  EXPECT_EQ(engine,
            "1024 sequences (default), 8192 tokens per iteration, 80% of HBM; admits on the "
            "current context, preempts when the cache fills; prefix cache on (default); attention "
            "tensor-parallel: no DP-attention layouts unless named (catalog)");
  const Json j = to_json(c);
  EXPECT_EQ(j["engine"]["reserve_output"], 0.0);
  EXPECT_EQ(j["engine"]["max_seqs"], 1024);
  // Every point runs with them, and the memory planner gives the layout less KV at 80% of HBM.
  sim::SweepOptions so;
  auto points = sim::build_sweep(shipped_catalog(), *c.scenario, so);
  ASSERT_TRUE(points && points->size() == 1);
  EXPECT_EQ(points->front().engine.reserve_output_ratio, 0.0);
  EXPECT_EQ(points->front().memory.max_batched_tokens, 8192);
  EXPECT_DOUBLE_EQ(points->front().memory.memory_utilization, 0.8);
}

// A disaggregated pool batches as the system's multi-node benchmarks did: per attention rank under
// DP attention, per replica otherwise; aggregated points keep the single-server limits and a
// scenario's max_seqs wins over both.
TEST(CheckScenario, Engine_DisaggregatedPoolsTakeTheMultiNodeBatch) {
  const System& b300 = *shipped_catalog().find_system("b300-hgx");
  const int per_rank = *b300.serving.multinode.max_seqs_per_rank;
  const std::string base =
      "name: e\nsystems: [b300-hgx]\nmodels: [deepseek-r1]\nworkloads: [{isl: 1024, osl: "
      "1024}]\nconcurrency: [1]\nlayouts: {named: [tp8-ep8-dpa, tp8-ep8]}\nserving: "
      "[aggregated, 1p1d]\n";
  auto sweep = [&](const std::string& text) {
    const ScenarioCheck c = check_scenario_text(shipped_catalog(), text, "e.yaml");
    EXPECT_TRUE(c.valid());
    sim::SweepOptions so;
    auto points = sim::build_sweep(shipped_catalog(), *c.scenario, so);
    EXPECT_TRUE(points && points->size() == 4);
    std::map<std::string, int> seqs;
    for (const auto& p : *points)
      seqs[p.layout.label() + (p.prefill_replicas ? " 1p1d" : "")] = p.engine.max_seqs;
    return seqs;
  };
  const auto seqs = sweep(base);
  EXPECT_EQ(seqs.at("tp8-ep8-dpa 1p1d"), per_rank * 8);
  EXPECT_EQ(seqs.at("tp8-ep8 1p1d"), per_rank);
  EXPECT_EQ(seqs.at("tp8-ep8-dpa"), *b300.serving.engine_limits.max_seqs);
  for (const auto& [layout, n] : sweep(base + "engine: {max_seqs: 64}\n")) EXPECT_EQ(n, 64) << layout;
}

// A system's catalog engine limits (what its published benchmarks ran) apply where the scenario is
// silent; the scenario's keys win; a system without them keeps the simulation's defaults.
TEST(CheckScenario, Engine_SystemDefaultsFromTheCatalog_UnderTheScenarioKeys) {
  const System* h200 = shipped_catalog().find_system("h200-hgx");
  ASSERT_TRUE(h200 && h200->serving.engine_limits.max_seqs && h200->serving.engine_limits.reserve_output);
  const EngineLimits& l = h200->serving.engine_limits;
  const std::string text = tp4_scenario("h200-hgx, gb200-nvl72", "engine: {max_seqs: 64}\n");
  const ScenarioCheck c = check_scenario_text(shipped_catalog(), text, "e.yaml");
  ASSERT_TRUE(c.valid());
  std::vector<std::string> engine;
  bool in = false;
  for (const auto& f : c.summary) {
    if (f.label == "engine") in = true;
    else if (!f.label.empty()) in = false;
    if (in) engine.push_back(f.text);
  }
  ASSERT_EQ(engine.size(), 4u);
  // gb200-nvl72 takes the simulation's budget, which gives wide DP-attention replicas more.
  EXPECT_EQ(engine[2],
            "tokens per iteration by default: a DP-attention replica wider than tp8 takes 2048 per "
            "attention rank, and each rank prefills within its slice");
  EXPECT_NE(engine[3].find("disaggregated pools"), std::string::npos);
  EXPECT_EQ(engine[0],
            fmt::format("h200-hgx: 64 sequences, {} tokens per iteration (catalog), {:g}% of HBM "
                        "(catalog); reserves {:g} of each output at admission, preempts when the "
                        "cache fills (catalog); prefix cache on (default); attention "
                        "tensor-parallel: no DP-attention layouts unless named (catalog)",
                        *l.max_batched_tokens, *l.memory_utilization * 100, *l.reserve_output));
  EXPECT_EQ(engine[1],
            "gb200-nvl72: 64 sequences, 16384 tokens per iteration (default), 90% of HBM "
            "(default); admits a request when its whole output fits, never preempts (default); "
            "prefix cache on (default)");
  const Json j = to_json(c);
  EXPECT_EQ(j["engine"]["by_system"]["h200-hgx"]["reserve_output"], *l.reserve_output);
  EXPECT_EQ(j["engine"]["by_system"]["gb200-nvl72"]["reserve_output"], 1.0);
  sim::SweepOptions so;
  auto points = sim::build_sweep(shipped_catalog(), *c.scenario, so);
  ASSERT_TRUE(points && points->size() == 2);  // tp4 within one server: the catalog's limits
  for (const auto& p : *points) {
    EXPECT_EQ(p.engine.max_seqs, 64);
    const bool catalog = p.system->id == "h200-hgx";
    EXPECT_EQ(p.engine.reserve_output_ratio, catalog ? *l.reserve_output : 1.0);
    EXPECT_EQ(p.memory.max_batched_tokens, catalog ? *l.max_batched_tokens : 16384);
    EXPECT_EQ(p.engine.max_batched_tokens, p.memory.max_batched_tokens);
    EXPECT_DOUBLE_EQ(p.memory.memory_utilization, catalog ? *l.memory_utilization : 0.9);
  }
}

// A system whose published benchmarks ran attention tensor-parallel (catalog dp_attention: false)
// sweeps no DP-attention layout it enumerates for aggregated replicas within a server; a named one
// runs, and so do disaggregated pools.
TEST(CheckScenario, Engine_CatalogWithoutDpAttention_SweepsLeaveItOutUnlessNamed) {
  const System* h200 = shipped_catalog().find_system("h200-hgx");
  ASSERT_TRUE(h200 && h200->serving.engine_limits.dp_attention == false);
  auto layouts_of = [](const std::string& text) {
    const ScenarioCheck c = check_scenario_text(shipped_catalog(), text, "e.yaml");
    EXPECT_TRUE(c.valid());
    std::set<std::string> out;
    auto points = sim::build_sweep(shipped_catalog(), *c.scenario, sim::SweepOptions{});
    EXPECT_TRUE(points.has_value());
    if (points)
      for (const auto& p : *points)
        out.insert(p.layout.label() + (p.prefill_replicas ? "/disaggregated" : ""));
    return out;
  };
  const std::string base =
      "name: e\nsystems: [h200-hgx]\nmodels: [deepseek-r1]\nworkloads: [{isl: 1024, osl: "
      "1024}]\nconcurrency: [1]\n";
  const auto swept = layouts_of(base + "layouts: {replica_xpus: [8]}\n");
  EXPECT_TRUE(swept.count("tp8-ep8")) << swept.size();
  for (const auto& l : swept) EXPECT_EQ(l.find("dpa"), std::string::npos) << l;
  const auto named = layouts_of(base + "layouts: {replica_xpus: [8], named: [tp8-ep8-dpa]}\n");
  EXPECT_TRUE(named.count("tp8-ep8-dpa"));
  const auto pools =
      layouts_of(base + "layouts: {replica_xpus: [8]}\nserving: [aggregated, 1p1d]\n");
  EXPECT_TRUE(pools.count("tp8-ep8-dpa/disaggregated"));
  EXPECT_FALSE(pools.count("tp8-ep8-dpa"));
  // gb200-nvl72's catalog says nothing: its sweeps keep DP attention.
  const auto gb = layouts_of(
      "name: e\nsystems: [gb200-nvl72]\nmodels: [deepseek-r1]\nworkloads: [{isl: 1024, osl: "
      "1024}]\nconcurrency: [1]\nlayouts: {replica_xpus: [4]}\n");
  EXPECT_TRUE(gb.count("tp4-ep4-dpa"));
}

// The catalog's limits are those of single-server benchmarks: a disaggregated point of the same
// system takes the defaults, with the batch of the system's multi-node benchmarks.
TEST(CheckScenario, Engine_DisaggregatedPoints_TakeTheDefaultsNotTheCatalogs) {
  const std::string text = tp4_scenario("h200-hgx", "serving: [aggregated, 1p1d]\n");
  const ScenarioCheck c = check_scenario_text(shipped_catalog(), text, "e.yaml");
  ASSERT_TRUE(c.valid());
  auto points = sim::build_sweep(shipped_catalog(), *c.scenario, sim::SweepOptions{});
  ASSERT_TRUE(points && points->size() == 2);
  const auto& l = shipped_catalog().find_system("h200-hgx")->serving.engine_limits;
  for (const auto& p : *points) {
    const bool aggregated = !p.prefill_replicas.has_value();
    const System& h200 = *shipped_catalog().find_system("h200-hgx");
    EXPECT_EQ(p.engine.max_seqs,
              aggregated ? *l.max_seqs : *h200.serving.multinode.max_seqs_per_rank);
    EXPECT_EQ(p.engine.reserve_output_ratio, aggregated ? *l.reserve_output : 1.0);
    EXPECT_EQ(p.memory.max_batched_tokens, aggregated ? *l.max_batched_tokens : 16384);
  }
}

}  // namespace
}  // namespace racktwin::app
