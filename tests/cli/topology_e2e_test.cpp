// End-to-end: racktwin topology on the shipped catalog (summary, GraphViz, failures, bad input).

#include <gtest/gtest.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "run_support.hpp"

namespace {

using json = nlohmann::json;
using racktwin::test::run;

json run_json(const std::string& args) {
  const auto r = run(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return json::parse(r.out);
}

// Part counts by kind from the summary's JSON.
std::map<std::string, int> part_counts(const json& summary) {
  std::map<std::string, int> out;
  for (const auto& p : summary["parts"]) out[p["kind"]] = p["count"];
  return out;
}

// The count in the "Parts" table row that starts with `label`.
int parts_row(const std::string& out, const std::string& label) {
  const std::regex row("\n" + label + "[^\n]*?\\s(\\d+)  ");
  std::smatch m;
  if (!std::regex_search(out, m, row)) return -1;
  return std::stoi(m[1]);
}

TEST(Cli_Topology, JalapenoSummary_PrintsCountsBisectionAndPowerBudget) {
  const auto r = run("topology jalapeno-a0 --domains 1 --summary");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parts_row(r.out, "XPU \\(jalapeno-a0\\)"), 2048) << r.out;
  EXPECT_EQ(parts_row(r.out, "Vindaloo"), 256) << r.out;
  EXPECT_EQ(parts_row(r.out, "Katsu host tray"), 256) << r.out;
  EXPECT_EQ(parts_row(r.out, "Chana \\(96 rack-local, 32 uplink\\)"), 128) << r.out;
  EXPECT_EQ(parts_row(r.out, "compute rack"), 16) << r.out;
  for (const char* needle :
       {"Links", "scale-up link", "bisection of a domain", "Compute rack", "Host rack", "residual",
        "rack pair", "All-in utility power per XPU", "computed from the components"})
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
  // Every published figure is printed against its computed value with a residual within 5%.
  const std::regex residual(R"(([+-]\d+\.\d+)%  )");
  int n = 0;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), residual);
       it != std::sregex_iterator(); ++it, ++n)
    EXPECT_LE(std::abs(std::stod((*it)[1])), 5.0) << (*it)[0];
  EXPECT_EQ(n, 4) << r.out;  // compute rack, host rack provisioned and in production, rack pair
}

TEST(Cli_Topology, SummaryJson_AgreesWithTheTable) {
  const json j = run_json("topology jalapeno-a0");
  EXPECT_EQ(j["xpus"], 2048);
  const auto parts = part_counts(j);
  EXPECT_EQ(parts.at("compute_tray"), 256);
  EXPECT_EQ(parts.at("switch_tray"), 128);
  EXPECT_EQ(parts.at("host"), 256);
  EXPECT_EQ(parts.at("compute_rack"), 16);
  EXPECT_GT(j["bisection_bytes_per_s"].get<double>(), 0.0);
  EXPECT_TRUE(j["power"]["all_in_computed"].get<bool>());
  for (const auto& c : j["power"]["budget_checks"])
    EXPECT_LE(std::abs(c["residual"].get<double>()), 0.05) << c;
}

TEST(Cli_Topology, Nvl72_IsOneRackOf72Gpus) {
  const json j = run_json("topology gb200-nvl72");
  EXPECT_EQ(j["xpus"], 72);
  const auto parts = part_counts(j);
  EXPECT_EQ(parts.at("compute_rack"), 1);
  EXPECT_EQ(parts.at("compute_tray"), 18);
  EXPECT_EQ(parts.at("switch_tray"), 9);
}

TEST(Cli_Topology, Dot_ParsesAsGraphvizWithEveryPart) {
  const auto r = run("topology jalapeno-a0 --dot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS,
                                  boost::property<boost::vertex_name_t, std::string>>;
  G g;
  boost::dynamic_properties dp(boost::ignore_other_properties);
  dp.property("node_id", boost::get(boost::vertex_name, g));
  ASSERT_TRUE(boost::read_graphviz(r.out, g, dp, "node_id"));
  const json j = run_json("topology jalapeno-a0");
  int parts = 0, links = 0;
  for (const auto& p : j["parts"]) parts += p["count"].get<int>();
  for (const auto& l : j["links"]) links += l["count"].get<int>();
  EXPECT_EQ(static_cast<int>(boost::num_vertices(g)), parts);
  EXPECT_EQ(static_cast<int>(boost::num_edges(g)), links);
}

TEST(Cli_Topology, FailKatsu_TakesOutItsTraysEightXpus) {
  const json j = run_json("topology jalapeno-a0 --fail hostrack3/katsu5");
  EXPECT_EQ(j["lost"], 8);
  EXPECT_EQ(j["cut_off"], 0);
  EXPECT_EQ(j["slowed"], 0);
  ASSERT_EQ(j["affected"].size(), 1u);
  EXPECT_EQ(j["affected"][0]["xpus"].size(), 8u);
  EXPECT_EQ(j["affected"][0]["xpus"][0], "rack3/vindaloo5/xpu0");
}

TEST(Cli_Topology, FailChana_SlowsTheRackAndLosesNoXpu) {
  const auto r = run("topology jalapeno-a0 --fail rack3/chana2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("lost        0 XPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("slowed      128 XPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("87.5% of scale-up bandwidth left"), std::string::npos) << r.out;
}

TEST(Cli_Topology, FailFeed_TakesOutTheRacks128XpusAndPlacementShrinks) {
  const json j = run_json("topology jalapeno-a0 --fail rack3/feed --place 8");
  EXPECT_EQ(j["lost"], 128);
  EXPECT_EQ(j["in_service"], 2048 - 128);
  EXPECT_EQ(j["placement_before"]["replicas"], 256);
  EXPECT_EQ(j["placement_after"]["replicas"], 256 - 16);
}

TEST(Cli_Topology, Path_ReportsHopsAndBandwidth) {
  const json j = run_json("topology jalapeno-a0 --path rack0/vindaloo0/xpu0 rack9/vindaloo3/xpu1");
  EXPECT_EQ(j["network"], "scale_up");
  EXPECT_EQ(j["switch_hops"], 3);
  EXPECT_EQ(j["route"].size(), 5u);
}

TEST(Cli_Topology, Help_SaysHowToListParts) {
  const auto r = run("topology --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--parts"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rack3/chana2"), std::string::npos) << r.out;
  const auto parts = run("topology jalapeno-a0 --parts");
  EXPECT_EQ(parts.exit_code, 0);
  for (const char* name :
       {"rack3/vindaloo5 ", "rack3/chana2 ", "hostrack3/katsu5 ", "rack3/feed ", "pair3 "})
    EXPECT_NE(parts.out.find(name), std::string::npos) << name;
}

TEST(Cli_Topology, BadInput_ExitsTwoWithSuggestion) {
  const auto sys = run("topology jalapeno --summary");
  EXPECT_EQ(sys.exit_code, 2);
  EXPECT_NE(sys.err.find("did you mean 'jalapeno-a0'"), std::string::npos) << sys.err;
  const auto part = run("topology jalapeno-a0 --fail rack3/channa2");
  EXPECT_EQ(part.exit_code, 2);
  EXPECT_NE(part.err.find("did you mean 'rack3/chana2'"), std::string::npos) << part.err;
  EXPECT_NE(part.err.find("--parts"), std::string::npos) << part.err;
  for (const char* n : {"0", "-3", "two", "1000"}) {
    const auto r = run(std::string("topology jalapeno-a0 --domains ") + n);
    EXPECT_EQ(r.exit_code, 2) << n;
    EXPECT_NE(r.err.find("domain"), std::string::npos) << n << ": " << r.err;
  }
}

}  // namespace
