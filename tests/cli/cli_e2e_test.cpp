// End-to-end: the real racktwin binary on shipped and broken files.

#include <gtest/gtest.h>

#include <string>

#include "run_support.hpp"

namespace {

using racktwin::test::run;

std::string data(const std::string& name) {
  return std::string(RACKTWIN_SOURCE_DIR) + "/tests/scenarios/data/" + name;
}

TEST(Cli_Basics, HelpAndVersion_ExitZero) {
  auto h = run("--help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("catalog"), std::string::npos);
  EXPECT_NE(h.out.find("check"), std::string::npos);
  auto v = run("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("racktwin 0."), std::string::npos) << v.out;
}

TEST(Cli_Basics, UsageErrors_ExitTwo) {
  EXPECT_EQ(run("").exit_code, 2);
  EXPECT_EQ(run("frobnicate").exit_code, 2);
  EXPECT_EQ(run("catalog show").exit_code, 2);
  EXPECT_EQ(run("--catalog /nonexistent catalog list").exit_code, 2);
}

TEST(Cli_Catalog, List_ShowsEverySystemAndModel) {
  auto r = run("catalog list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* id : {"jalapeno-a0", "jalapeno-b0", "gb200-nvl72", "gb300-nvl72", "vr200-nvl72",
                         "b200-hgx", "b300-hgx", "h100-hgx", "h200-hgx", "mi300x-8", "mi325x-8",
                         "mi355x-8", "gpt-oss-120b", "deepseek-r1", "kimi-k2.5", "llama-3.3-70b"})
    EXPECT_NE(r.out.find(id), std::string::npos) << id;
}

TEST(Cli_Catalog, ShowJalapeno_ListsCompositionPowerAndAssumptions) {
  auto r = run("catalog show jalapeno-a0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* needle :
       {"16 Vindaloo trays x 8 XPUs = 128 XPUs per rack", "8 Chana trays per rack",
        "6 rack-local, 2 uplink", "16 Katsu trays per host rack", "2048 XPUs = 16 compute rack(s)",
        "compute rack      130 kW", "50 kW provisioned, 31 kW in production",
        "rack pair         160 kW", "rated TDP         700 W", "sustained power   550 W",
        "Assumptions (", "hbm_capacity = 288 GB", "local_domain_trays = 6", "art003:"})
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
}

TEST(Cli_Catalog, ShowUnknownId_SuggestsAndExitsTwo) {
  auto r = run("catalog show jalapeno-a1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'jalapeno-a0'"), std::string::npos) << r.err;
}

TEST(Cli_Catalog, ShowJson_IsMachineReadable) {
  auto r = run("catalog show deepseek-r1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.front(), '{');
  EXPECT_NE(r.out.find("\"kind\": \"model\""), std::string::npos);
  EXPECT_NE(r.out.find("\"kv_lora_rank\": 512"), std::string::npos);
}

TEST(Cli_Check, ValidScenario_ExitsZeroWithSummary) {
  auto r = run("check " + std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/inferencex-8k1k.yaml");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("valid scenario 'inferencex-8k1k'"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

struct BrokenCase {
  const char* file;
  int line;
  const char* needle;
};

TEST(Cli_Check, BrokenFiles_PrintFileLineAndExitTwo) {
  const BrokenCase cases[] = {
      {"unknown-key.yaml", 6, "unknown key 'concurency'"},
      {"bad-unit.yaml", 8, "unknown unit 'Q'"},
      {"missing-field.yaml", 5, "missing required field 'osl'"},
      {"string-for-number.yaml", 6, "expected an integer"},
      {"unknown-system.yaml", 2, "did you mean 'gb300-nvl72'"},
      {"invalid-syntax.yaml", 0, "invalid YAML"},
  };
  for (const auto& c : cases) {
    auto r = run("check " + data(c.file));
    EXPECT_EQ(r.exit_code, 2) << c.file << "\n" << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.file << "\n" << r.err;
    const std::string loc = data(c.file) + ":" + (c.line > 0 ? std::to_string(c.line) + ":" : "");
    EXPECT_NE(r.err.find(loc), std::string::npos) << c.file << " lacks " << loc << "\n" << r.err;
  }
}

TEST(Cli_Check, ManyErrors_AllPrinted) {
  auto r = run("check " + data("many-errors.yaml"));
  EXPECT_EQ(r.exit_code, 2);
  int lines = 0;
  for (char ch : r.err) lines += ch == '\n';
  EXPECT_GE(lines, 11) << r.err;
  EXPECT_NE(r.err.find("errors in"), std::string::npos);
}

TEST(Cli_Check, JsonErrors_CarryLineAndPath) {
  auto r = run("check --json " + data("bad-unit.yaml"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("\"valid\": false"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"line\": 8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"path\": \"facility.power_budget\""), std::string::npos) << r.out;
}

TEST(Cli_Check, MissingFile_ExitsTwo) {
  auto r = run("check /nonexistent/x.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot open"), std::string::npos);
}

}  // namespace

namespace {

TEST(Cli_Perf, DeepSeekOnJalapeno_PrintsBreakdownAndBound) {
  auto r =
      run("perf --system jalapeno-a0 --model deepseek-r1 --layout tp8-ep8-dpa --batch 8 --context "
          "8192");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* needle :
       {"compute-bound ops", "memory-bound ops", "communication", "overhead", "total",
        "bound: ", "attention", "moe", "lm_head", "per XPU:", "ms per output token"})
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
}

TEST(Cli_Perf, Json_CarriesTheBreakdown) {
  auto r = run(
      "perf --system h100-hgx --model gpt-oss-120b --layout tp1 --batch 1 --context 1024 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* needle :
       {"\"total_s\"", "\"compute_s\"", "\"memory_s\"", "\"communication_s\"", "\"overhead_s\"",
        "\"bound\": \"memory\"", "\"efficiency_prior\": \"nvidia-hopper\""})
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
}

TEST(Cli_Perf, BadInput_ExitsTwoWithReason) {
  auto a = run("perf --system jalapeno-a1 --model deepseek-r1 --layout tp8");
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.err.find("did you mean 'jalapeno-a0'"), std::string::npos) << a.err;
  auto b = run("perf --system h100-hgx --model gpt-oss-120b --layout tp3");
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("not divisible by tp 3"), std::string::npos) << b.err;
  auto c = run("perf --system h100-hgx --model gpt-oss-120b --layout tq8");
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("--layout"), std::string::npos) << c.err;
}

TEST(Cli_Layouts, JalapenoAndGb300_ListFittingLayoutsWithKvCapacityAndRejections) {
  for (const char* system : {"jalapeno-a0", "gb300-nvl72"}) {
    auto r = run(std::string("layouts --system ") + system + " --model deepseek-r1");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("KV capacity (tokens)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("tp8-ep8-dpa"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Rejected layouts"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("does not fit in HBM"), std::string::npos) << r.out;
  }
  auto all = run("layouts --system gb300-nvl72 --model deepseek-r1 --xpus 1 100 --all");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("exceeds the scale-up domain of 72"), std::string::npos) << all.out;
}

}  // namespace
