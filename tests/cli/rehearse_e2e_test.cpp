// racktwin rehearse end to end: the shipped Llama 3 field check, a serving rehearsal with the
// spare-capacity search and the event CSV, the same seed giving the same bytes, and a bad file
// reported with its lines.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_support.hpp"

namespace {

using racktwin::test::run;
namespace fs = std::filesystem;

const std::string kDir = std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/rehearsals/";

struct Rehearse : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("racktwin-rehearse-" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = dir / name;
    std::ofstream(p) << text;
    return p.string();
  }
};

TEST_F(Rehearse, Llama3FieldCheck_InterruptionsNear419) {
  const auto r = run("rehearse " + kDir + "llama3-16k-h100.yaml --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["jobs"].size(), 3u);
  EXPECT_EQ(j["jobs"][0]["job_xpus"], 16384);
  EXPECT_NEAR(j["jobs"][0]["interruptions"].get<double>(), 419, 41.9);
  EXPECT_EQ(j["seed"], 405);
  EXPECT_FALSE(j["figures"].empty());
  EXPECT_EQ(j["version"].get<std::string>().empty(), false);
}

const std::string kServing = R"(name: small-site
system: jalapeno-a0
domains: 2
horizon: 20 days
sample_every: 6 h
seed: 11
serving:
  tps_per_replica: {value: 20000 tok/s, assumption: true, reason: "a test figure"}
  replica_xpus: 8
spare_capacity: {racks: 0, attainment_goal: 99%}
)";

TEST_F(Rehearse, Serving_SearchFindsTheSpareRacks_AndTheEventsAreWritten) {
  const auto file = write("site.yaml", kServing);
  const auto csv = (dir / "events.csv").string();
  const auto r = run("rehearse " + file + " --json --quiet --events " + csv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& s = j["serving"];
  EXPECT_EQ(s["replicas_total"], 512);
  EXPECT_LT(s["attainment"].get<double>(), 0.99);  // no spare: every lost replica misses the target
  const auto& search = s["spare"]["search"];
  ASSERT_GE(search.size(), 2u);
  ASSERT_FALSE(s["spare"]["racks_needed"].is_null());
  EXPECT_EQ(search.back()["spare_racks"], s["spare"]["racks_needed"]);
  EXPECT_GE(search.back()["attainment"].get<double>(), 0.99);
  EXPECT_LT(search[search.size() - 2]["attainment"].get<double>(), 0.99);  // the fewest that do
  for (std::size_t i = 1; i < search.size(); ++i)  // the same failures with less load
    EXPECT_GE(search[i]["attainment"].get<double>(), search[i - 1]["attainment"].get<double>());
  // With no spare rack, the search's first load is the rehearsal's own.
  EXPECT_DOUBLE_EQ(search[0]["attainment"].get<double>(), s["attainment"].get<double>());
  std::ifstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("t_h,domain,part,class", 0), 0u);
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, j["failures"].get<int>());
  // The same seed gives the same bytes.
  const auto again = run("rehearse " + file + " --json --quiet");
  EXPECT_EQ(again.out, r.out);
}

TEST_F(Rehearse, Table_NamesTheAssumptions) {
  const auto r = run("rehearse " + write("site.yaml", kServing) + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("availability"), std::string::npos);
  EXPECT_NE(r.out.find("tps_per_replica"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a test figure"), std::string::npos) << r.out;
}

TEST_F(Rehearse, BadFile_EveryErrorWithItsLine) {
  const auto file = write("bad.yaml", "name: x\nsystem: gb300\ndomains: -1\nhorizon: 2 days\n");
  const auto r = run("rehearse " + file);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("bad.yaml:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bad.yaml:3"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// A small simulated sweep behind a two-domain site, for the request-level replay.
const std::string kSweep = R"(name: replay-sweep
seed: 5
systems: [jalapeno-a0]
models: [gpt-oss-120b]
workloads:
  - {id: 8k1k, kind: inferencex, isl: 8192, osl: 1024, range_ratio: 0.8, mtp: false}
layouts: {named: [{tp: 8}]}
concurrency: [8, 32]
)";

const std::string kReplaySite = R"(name: replay-site
system: jalapeno-a0
domains: 2
horizon: 10 days
seed: 7
serving:
  scenario: sweep.yaml
  workload: 8k1k
  model: gpt-oss-120b
  target: {tpot_p50: 100 ms, ttft_p99: 30 s}
spare_capacity: {racks: 1, attainment_goal: 99%}
)";

// The worst failure replayed request by request: the same arrivals with and without it, the
// requests on the replicas it took down restarted, the served tokens dipping.
TEST_F(Rehearse, Replay_TheWorstFailureRestartsRequestsAndDipsTheServedTokens) {
  write("sweep.yaml", kSweep);
  const auto file = write("site.yaml", kReplaySite);
  const auto db = (dir / "r.db").string();
  const auto csv = (dir / "events.csv").string();
  const auto r = run("rehearse " + file + " --json --quiet --replay worst --db " + db + " --events " + csv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("replay")) << r.out;
  const auto& p = j["replay"];
  // The failure that took the most replicas down (column 6 of the events), the first of those.
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  int most = 0, first = 0;
  for (int row = 1; std::getline(in, line); ++row) {
    std::stringstream ss(line);
    std::string cell;
    for (int c = 0; c < 6; ++c) std::getline(ss, cell, ',');
    if (std::stoi(cell) > most) {
      most = std::stoi(cell);
      first = row;
    }
  }
  EXPECT_EQ(p["event"], first);
  EXPECT_EQ(p["replicas_hit_in_domain"], most);
  EXPECT_GE(p["slice"]["replicas"].get<int>(), 16);
  EXPECT_GE(p["slice"]["replicas_down"].get<int>(), 1);
  EXPECT_LT(p["slice"]["replicas_down"].get<int>(), p["slice"]["replicas"].get<int>());
  EXPECT_EQ(p["without"]["retried_requests"], 0);
  EXPECT_GT(p["with"]["retried_requests"].get<int>(), 0);
  EXPECT_EQ(p["without"]["replica_down_s"].get<double>(), 0.0);
  EXPECT_GT(p["with"]["replica_down_s"].get<double>(), 0.0);
  EXPECT_EQ(p["with"]["error"], "");
  EXPECT_EQ(p["with"]["requests"], p["without"]["requests"]);  // the same arrivals, all served
  EXPECT_LT(p["lowest_served_share"].get<double>(), 1.0);
  // The survivors take the lost replica's load: requests take longer end to end.
  EXPECT_GT(p["with"]["e2e_p99_s"].get<double>(), p["without"]["e2e_p99_s"].get<double>());
  // Replayed again from the stored sweep: the same replay, byte for byte.
  const auto again = run("rehearse " + file + " --json --quiet --replay worst --db " + db);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["replay"].dump(), p.dump());
}

TEST_F(Rehearse, Replay_ANumberPicksItsFailure_BadChoicesSayWhy) {
  write("sweep.yaml", kSweep);
  const auto file = write("site.yaml", kReplaySite);
  const auto db = (dir / "r.db").string();
  const auto r = run("rehearse " + file + " --quiet --replay 0 --db " + db);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'worst' or a failure's number from 1 to"), std::string::npos) << r.err;
  // A number picks that failure, a row of --events.
  const auto second = run("rehearse " + file + " --json --quiet --replay 2 --db " + db);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(nlohmann::json::parse(second.out)["replay"]["event"], 2);
  // Given figures have no point to simulate.
  const auto given = run("rehearse " + write("given.yaml", kServing) + " --quiet --replay worst");
  EXPECT_EQ(given.exit_code, 2);
  EXPECT_NE(given.err.find("given in the file"), std::string::npos) << given.err;
}

// A site whose serving point is disaggregated (one prefill and one decode replica of tp4 on
// GB300 NVL72) replays its worst failure too: the slice holds whole serving groups, both pools
// scaled alike, and the failed replica is out of service through the window.
TEST_F(Rehearse, Replay_ADisaggregatedPoint_ReplaysWholeServingGroups) {
  // The replay's sweep and site, on GB300 NVL72 tp4 replicas in 1p1d groups.
  auto edit = [](std::string text, const std::string& from, const std::string& to) {
    return text.replace(text.find(from), from.size(), to);
  };
  std::string sweep = edit(kSweep, "jalapeno-a0", "gb300-nvl72");
  sweep = edit(sweep, "{tp: 8}]}", "{tp: 4}]}\nserving: [1p1d]");
  write("sweep.yaml", sweep);
  std::string site = edit(kReplaySite, "jalapeno-a0", "gb300-nvl72");
  const auto file = write("site.yaml", edit(site, "domains: 2", "domains: 4"));
  const auto r = run("rehearse " + file + " --json --quiet --replay worst --db " +
                     (dir / "pd.db").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out)["replay"];
  const int replicas = j["slice"]["replicas"].get<int>();
  EXPECT_GE(replicas, 16);
  EXPECT_EQ(replicas % 2, 0) << "whole 1p1d groups";
  EXPECT_GE(j["slice"]["replicas_down"].get<int>(), 1);
  EXPECT_EQ(j["with"]["error"], "");
  EXPECT_GT(j["with"]["replica_down_s"].get<double>(), 0.0);
  EXPECT_EQ(j["without"]["replica_down_s"].get<double>(), 0.0);
  EXPECT_EQ(j["without"]["requests"], j["with"]["requests"]);
}

// A serving point whose prefill pool runs a layout of its own (one tp2 prefill replica beside one
// tp4 decode replica on GB300 NVL72) is rehearsed in groups of 6 XPUs: 12 to a 72-GPU domain,
// both pools packed on it, and its worst failure replays on whole groups of both layouts.
TEST_F(Rehearse, PrefillPoolOfItsOwnLayout_CountsGroupsOfBothPools) {
  std::string sweep = kSweep;
  sweep.replace(sweep.find("jalapeno-a0"), 11, "gb300-nvl72");
  sweep.replace(sweep.find("{tp: 8}]}"), 9, "{tp: 4}]}\nserving: [1p1d/tp2]");
  write("sweep.yaml", sweep);
  std::string site = kReplaySite;
  site.replace(site.find("jalapeno-a0"), 11, "gb300-nvl72");
  const auto file = write("site.yaml", site);
  const auto db = (dir / "own.db").string();
  const auto text = run("rehearse " + file + " --quiet --db " + db);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("tp4 1p1d/tp2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("6 XPUs per group (1 prefill replica of 2 XPUs and 1 decode replica of 4)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("fewest groups up"), std::string::npos) << text.out;
  const auto r = run("rehearse " + file + " --json --quiet --replay worst --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& unit = j["serving"]["surrogate"]["unit"];
  EXPECT_EQ(unit["kind"], "group");
  EXPECT_EQ(unit["xpus"], 6);
  ASSERT_EQ(unit["pools"].size(), 2u);
  EXPECT_EQ(unit["pools"][0]["xpus"], 2);
  EXPECT_EQ(unit["pools"][1]["xpus"], 4);
  EXPECT_EQ(j["serving"]["replicas_total"], 2 * 12);
  EXPECT_LE(j["serving"]["min_replicas_up"].get<double>(), 2 * 12);
  const auto& p = j["replay"];
  const int replicas = p["slice"]["replicas"].get<int>();
  EXPECT_GE(replicas, 16);
  EXPECT_EQ(replicas % 2, 0) << "whole groups of a prefill and a decode replica";
  // The slice is whole domains packed as the site's: the failed part keeps its name and takes
  // down what it took on the site.
  EXPECT_EQ(p["slice"]["part"], p["part"]);
  EXPECT_EQ(p["slice"]["replicas_down"], p["replicas_hit_in_domain"]);
  EXPECT_GE(p["slice"]["replicas_down"].get<int>(), 1);
  EXPECT_EQ(p["with"]["error"], "");
  EXPECT_GT(p["with"]["replica_down_s"].get<double>(), 0.0);
  EXPECT_EQ(p["with"]["requests"], p["without"]["requests"]);
}

// A sweep with no successful point says why its first point failed: here, disaggregated serving
// on a stack without it.
TEST_F(Rehearse, NoSuccessfulPoint_SaysWhyTheFirstFailed) {
  std::string sweep = kSweep;
  sweep.replace(sweep.find("{tp: 8}]}"), 9, "{tp: 8}]}\nserving: [1p1d]");
  write("sweep.yaml", sweep);
  const auto r = run("rehearse " + write("site.yaml", kReplaySite) + " --quiet --db " +
                     (dir / "none.db").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("the first to fail, tp8 1p1d: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("has no prefill/decode disaggregation"), std::string::npos) << r.err;
}

}  // namespace
