// racktwin explain end to end: a small Jalapeno run stored in a temporary database, then its
// tokens per all-in MW explained down to the catalog's rated TDP, as text and as JSON, against
// the stored value; errors for an unknown metric and a missing point.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "run_support.hpp"

namespace {

using racktwin::test::run;
using json = nlohmann::json;
namespace fs = std::filesystem;

// Two closed-loop points of Jalapeno A0 on one layout, at a PUE that is not the default.
constexpr const char* kScenario = R"(name: explain-e2e
seed: 7
systems: [jalapeno-a0]
models: [gpt-oss-120b]
workloads:
  - {id: 1k128, kind: inferencex, isl: 1024, osl: 128, range_ratio: 0.8}
layouts:
  named: [tp8]
concurrency: [2, 8]
facility:
  pue: 1.2
)";

class ExplainE2e : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("racktwin-explain-e2e-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "results.db").string();
    const fs::path scenario = dir_ / "explain-e2e.yaml";
    std::ofstream(scenario) << kScenario;
    const auto r = run("run " + scenario.string() + " --quiet --db " + db_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto shown = run("runs show 1 --json --db " + db_);
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    stored_ = json::parse(shown.out);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static racktwin::test::Result rt(const std::string& args) { return run(args + " --db " + db_); }

  static fs::path dir_;
  static std::string db_;
  static json stored_;  // runs show 1 --json
};
fs::path ExplainE2e::dir_;
std::string ExplainE2e::db_;
json ExplainE2e::stored_;

// The first term in the tree (depth first) for which `pred` holds; null when none.
const json* find_term(const json& t, const std::function<bool(const json&)>& pred) {
  if (pred(t)) return &t;
  if (t.contains("inputs"))
    for (const auto& x : t["inputs"])
      if (const json* f = find_term(x, pred)) return f;
  return nullptr;
}

TEST_F(ExplainE2e, AllInPerMw_Json_ValueIsTheStoredOneAndTheChainReachesTheTdp) {
  ASSERT_EQ(stored_["points"].size(), 2u);
  const auto r = rt("explain 1 tps_per_allin_provisioned_mw --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json e = json::parse(r.out);
  EXPECT_EQ(e["point"]["chosen"], "peak");
  // The peak over the stored points, and the stored value at it.
  double best = 0;
  std::int64_t best_index = -1;
  for (const auto& p : stored_["points"]) {
    const double v = p["metrics"]["tps_per_allin_provisioned_mw"];
    if (best_index < 0 || v > best) {
      best = v;
      best_index = p["index"];
    }
  }
  EXPECT_EQ(e["point"]["index"], best_index);
  EXPECT_EQ(e["stored"].get<double>(), best);
  EXPECT_EQ(e["value"].get<double>(), best);
  EXPECT_TRUE(e["matches"].get<bool>());
  const json* tdp = find_term(e["term"], [](const json& t) {
    return t.contains("origin") && t["origin"]["where"] == "chip jalapeno-a0 tdp";
  });
  ASSERT_NE(tdp, nullptr) << r.out;
  EXPECT_EQ((*tdp)["value"], 700.0);
  EXPECT_EQ((*tdp)["origin"]["text"], "700 W");
  EXPECT_FALSE((*tdp)["origin"]["sources"].empty());
  const json* pue = find_term(e["term"], [](const json& t) { return t["label"] == "PUE"; });
  ASSERT_NE(pue, nullptr);
  EXPECT_EQ((*pue)["value"], 1.2);
  EXPECT_EQ((*pue)["origin"]["kind"], "scenario");
}

TEST_F(ExplainE2e, AllInPerMw_Text_ShowsFormulaSourcesAndThePeak) {
  const auto r = rt("explain latest tps_per_allin_provisioned_mw 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* expected :
       {"run 1 ('explain-e2e'), point 0: jalapeno-a0 gpt-oss-120b 1k128 tp8 fp4 C=2",
        "= total tok/s per XPU / all-in W per XPU x 1e6",
        "computed: jalapeno-a0 has no published InferenceX all-in figure",
        "= IT W per XPU, provisioned x PUE", "- XPU rated TDP = 700 W",
        "from catalog chip jalapeno-a0 tdp = \"700 W\"; source art000, art001",
        "docs/simulation.md §6", "- PUE = 1.2", ", the same", "Sources", "  art000: "})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
  EXPECT_EQ(r.out.find("peaks"), std::string::npos) << "a POINT was given";
  const auto peak = rt("explain 1 tps_per_allin_provisioned_mw");
  ASSERT_EQ(peak.exit_code, 0) << peak.err;
  EXPECT_NE(peak.out.find("(no POINT given: the point where tps_per_allin_provisioned_mw peaks, among the 2 "
                          "points that have it)"),
            std::string::npos)
      << peak.out;
}

TEST_F(ExplainE2e, SimulationOutput_Text_SaysNoDerivationIsRecorded) {
  const auto r = rt("explain 1 ttft_p90_s 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no derivation recorded for ttft_p90_s; it is a simulation output: "
                       "docs/simulation.md §6, §6.1"),
            std::string::npos)
      << r.out;
}

TEST_F(ExplainE2e, UnknownMetric_ExitsTwoListingCloseNames) {
  const auto r = rt("explain 1 tps_per_allin_kw");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("METRIC: run 1 has no metric 'tps_per_allin_kw'"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("close names: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tps_per_allin_"), std::string::npos) << r.err;
}

TEST_F(ExplainE2e, MissingPointOrRun_ExitsTwo) {
  const auto point = rt("explain 1 tps_per_allin_provisioned_mw 9");
  EXPECT_EQ(point.exit_code, 2);
  EXPECT_NE(point.err.find("run 1 has no point 9"), std::string::npos) << point.err;
  const auto missing = rt("explain 5 tps_per_allin_provisioned_mw");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no run 5"), std::string::npos) << missing.err;
}

}  // namespace
