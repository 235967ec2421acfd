// racktwin plan on the shipped 10 GW plan: the quarterly table from 2026Q3 to 2029Q4, the power
// identity for every quarter and generation, the binding constraint changing, re-planning from the
// stored throughput, and the CSV.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "run_support.hpp"

namespace {

using racktwin::test::run;
namespace fs = std::filesystem;

const std::string kPlan = std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/plans/openai-10gw.yaml";

// The seven tests share one simulated sweep per CTest run (SharedOutput): each test is its own
// process, and the sweep is most of their time.
struct Plan : ::testing::Test {
  static std::optional<racktwin::test::SharedOutput> shared;
  static fs::path dir;
  static nlohmann::json doc;
  static void SetUpTestSuite() {
    shared.emplace();
    dir = shared->dir();
    const auto json = shared->once("plan.json", [](const fs::path& partial) {
      const auto r = run("plan " + kPlan + " --json --quiet --db " + (dir / "p.db").string());
      ASSERT_EQ(r.exit_code, 0) << r.err;
      std::ofstream(partial) << r.out;
    });
    ASSERT_TRUE(fs::exists(json)) << "the plan was not made";
    std::ifstream in(json);
    doc = nlohmann::json::parse(in);
  }
  static void TearDownTestSuite() { shared.reset(); }
};
std::optional<racktwin::test::SharedOutput> Plan::shared;
fs::path Plan::dir;
nlohmann::json Plan::doc;

TEST_F(Plan, Table_RunsFrom2026Q3To2029Q4) {
  ASSERT_EQ(doc["quarters"].size(), 14u);
  EXPECT_EQ(doc["quarters"].front()["quarter"], "2026Q3");
  EXPECT_EQ(doc["quarters"].back()["quarter"], "2029Q4");
}

TEST_F(Plan, EveryQuarterAndGeneration_UnitsTimesUnitPowerTimesPue_IsItsMw) {
  std::map<std::string, double> unit_kw;
  for (const auto& u : doc["units"]) unit_kw[u["generation"]] = u["unit_kw"];
  for (const auto& q : doc["quarters"]) {
    const double pue = q["sites"][0]["pue"];
    for (const auto& s : q["sites"]) ASSERT_EQ(s["pue"], pue);  // the shipped sites share one PUE
    double total = 0;
    for (const auto& g : q["generations"]) {
      const double mw = g["units"].get<double>() * unit_kw[g["generation"]] * pue / 1e3;
      EXPECT_NEAR(mw, g["facility_mw"].get<double>(), 1e-3 * mw + 1e-9)
          << q["quarter"] << " " << g["generation"];
      total += mw;
    }
    EXPECT_NEAR(total, q["facility_mw"].get<double>(), 1e-3 * total + 1e-9) << q["quarter"];
    EXPECT_LE(q["facility_mw"].get<double>(), q["energised_mw"].get<double>() + 1e-6);
  }
}

TEST_F(Plan, BindingConstraint_ChangesAcrossQuarters) {
  std::set<std::string> seen;
  for (const auto& q : doc["quarters"]) seen.insert(q["binding"]);
  EXPECT_GE(seen.size(), 2u);
}

TEST_F(Plan, Throughput_ComesFromTheSimulatedSweep) {
  for (const auto& u : doc["units"]) {
    EXPECT_EQ(u["throughput_origin"], "simulated") << u["generation"];
    ASSERT_EQ(u["throughput"].size(), 1u);
    EXPECT_LE(u["throughput"][0]["tpot_p50_ms"].get<double>(), 20.0);
    EXPECT_GT(u["tps_per_xpu"].get<double>(), 0);
  }
  EXPECT_GT(doc["quarters"].back()["tps"].get<double>(), 0);
  EXPECT_EQ(doc["comparators"].size(), 2u);
}

TEST_F(Plan, Replanning_TakesTheStoredThroughputAndGivesTheSameBytes) {
  const auto again = run("plan " + kPlan + " --json --db " + (dir / "p.db").string());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("taken from"), std::string::npos) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out), doc);
}

TEST_F(Plan, StoredPlan_IsListedAndItsDocumentIsTheJson) {
  const std::string db = " --db " + (dir / "p.db").string();
  const auto list = run("runs plans --json" + db);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const auto plans = nlohmann::json::parse(list.out)["plans"];
  ASSERT_GE(plans.size(), 1u);
  const auto oldest = plans.back();
  EXPECT_EQ(oldest["name"], "openai-10gw");
  EXPECT_EQ(oldest["throughput_runs"].size(), 1u);
  const auto one = run("runs plans " + std::to_string(oldest["id"].get<int>()) + db);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(nlohmann::json::parse(one.out), doc);
  EXPECT_EQ(run("runs plans 999" + db).exit_code, 2);
}

TEST_F(Plan, Csv_HasAHeaderAndOneLinePerFleetQuarterAndGeneration) {
  const std::string csv = (dir / "plan.csv").string();
  const auto r = run("plan " + kPlan + " --quiet --csv " + csv + " --db " + (dir / "p.db").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(csv);
  std::string line;
  int lines = 0;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("fleet,quarter,generation,binding", 0), 0u);
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 14 * (1 + 3) + 2 * 14 * (1 + 1));  // plan: all + 3 generations; 2 comparators
  EXPECT_NE(r.out.find("2029Q4"), std::string::npos);
}

}  // namespace
