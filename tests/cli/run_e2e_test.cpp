// racktwin run end to end: the comparison table, determinism, fusion and the golden scenario.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_support.hpp"

namespace {

using racktwin::test::run;
using json = nlohmann::json;

std::string src(const std::string& rel) {
  return std::string(RACKTWIN_SOURCE_DIR) + "/" + rel;
}

// The run's JSON without the fields that name the build (they change with every commit).
json points_of(const std::string& out) {
  json j = json::parse(out);
  j.erase("racktwin");
  j.erase("commit");
  j.erase("file");
  return j;
}

// "--catalog DIR " for the shipped catalog without its calibration file: the golden outputs check
// the model and the simulation under the efficiency priors, so a recalibration does not move them.
// The copy is made once per process and removed when the process ends.
std::string prior_catalog() {
  struct Copy {
    std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                ("racktwin-prior-catalog-" + std::to_string(::getpid()));
    Copy() {
      std::filesystem::create_directories(dir);
      for (const auto& e : std::filesystem::directory_iterator(src("scenarios/catalog")))
        if (e.path().extension() == ".yaml" && e.path().filename() != "calibration.yaml")
          std::filesystem::copy_file(e.path(), dir / e.path().filename(),
                                     std::filesystem::copy_options::overwrite_existing);
    }
    ~Copy() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  };
  static const Copy copy;
  return "--catalog " + copy.dir.string() + " ";
}

// Runs `racktwin run` on a scenario given as text (written to a temporary file) with `args`,
// under the efficiency priors (prior_catalog).
racktwin::test::Result run_text(const std::string& name, const std::string& yaml,
                                const std::string& args = "") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("racktwin-" + name + "-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << yaml;
  auto r = run(prior_catalog() + "run " + path.string() + args);
  std::filesystem::remove(path);
  return r;
}

TEST(Run_Golden, SmallScenario_MatchesTheCheckedInOutput) {
  auto r = run(prior_catalog() + "run " + src("tests/sim/golden/small.yaml") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(src("tests/sim/golden/small.expected.json"));
  std::stringstream ss;
  ss << in.rdbuf();
  ASSERT_FALSE(ss.str().empty()) << "missing tests/sim/golden/small.expected.json";
  EXPECT_EQ(points_of(r.out), points_of(ss.str()))
      << "the simulation's output changed; if on purpose, regenerate the golden file (see "
         "small.yaml)";
}

TEST(Run_Golden, TraceReplay_MatchesTheCheckedInOutput) {
  auto r = run(prior_catalog() + "run " + src("tests/sim/golden/trace.yaml") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(src("tests/sim/golden/trace.expected.json"));
  std::stringstream ss;
  ss << in.rdbuf();
  ASSERT_FALSE(ss.str().empty()) << "missing tests/sim/golden/trace.expected.json";
  EXPECT_EQ(points_of(r.out), points_of(ss.str()));
  const json out = points_of(r.out);  // a range-for over a member of a temporary would dangle
  for (const auto& p : out["points"]) {
    EXPECT_EQ(p["metrics"]["completed"], 18);
    EXPECT_GT(p["metrics"]["prefix_hit_rate"].get<double>(), 0.4);
  }
}

// The prefix-hit rate of the example trace on gb300-nvl72 (tp8), with extra workload keys and
// scenario lines, under the efficiency priors (hits depend on timing, the routers' tests should
// not move with a recalibration).
double example_trace_hit_rate(const std::string& workload_keys, const std::string& extra) {
  auto r = run_text("trace-hits",
                    std::string("name: t\nsystems: [gb300-nvl72]\nmodels: [llama-3.3-70b]\n") +
                        "workloads: [{kind: trace, " + workload_keys +
                        "file: " + src("scenarios/traces/example-multiturn.jsonl") +
                        "}]\nlayouts: {named: [tp8]}\n" + extra,
                    " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? json::parse(r.out)["points"][0]["metrics"]["prefix_hit_rate"].get<double>() : -1.0;
}

TEST(Run_Routing, SessionAffinity_KeepsPrefixHitsThatRoundRobinLoses) {
  EXPECT_GT(example_trace_hit_rate("", "replicas: 2\nrouter: session_affinity\n"),
            example_trace_hit_rate("", "replicas: 2\nrouter: round_robin\n"));
}

// Prefix-aware routing finds each turn's cached prefix without session ids, and also a prefix
// another session left on a replica: at least session affinity's hit rate on the example trace.
TEST(Run_Routing, PrefixAware_FindsCachedPrefixes) {
  const double aware = example_trace_hit_rate("", "replicas: 2\nrouter: prefix_aware\n");
  EXPECT_GE(aware, example_trace_hit_rate("", "replicas: 2\nrouter: session_affinity\n"));
  EXPECT_GT(aware, example_trace_hit_rate("", "replicas: 2\nrouter: least_outstanding\n") + 0.1);
}

// The table run goes under a 1 GB address-space limit (ulimit -v, which the workers inherit): with
// SimGrid's default 8 MiB actor stacks the workers failed there ("Failed to allocate stack").
TEST(Run_Agentic, ShippedScenario_FinishesAndPrintsItsTable) {
#ifdef __SANITIZE_ADDRESS__
  // AddressSanitizer reserves terabytes of address space for its shadow memory: no limit applies.
  const std::string limit;
#else
  const std::string limit = "ulimit -v 1000000; ";
#endif
  auto r = run("run " + src("scenarios/agentic-multiturn.yaml"), limit);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* needle : {"gpt-oss-120b / agentic", "deepseek-r1 / agentic", "jalapeno-a0",
                             "gb300-nvl72", "vr200-nvl72", "peak tok/s per rated kW"})
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
  auto j = run("runs show latest --json");  // the run just stored, not simulated again
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json out = json::parse(j.out);  // held: the loop ranges over one of its members
  ASSERT_EQ(out["run"]["scenario"]["name"], "agentic-multiturn") << out["run"].dump().substr(0, 300);
  ASSERT_FALSE(out["points"].empty());
  for (const auto& p : out["points"]) {
    EXPECT_EQ(p["error"], "");
    EXPECT_GT(p["metrics"]["prefix_hit_rate"].get<double>(), 0.5);  // turns reuse their session's prefix
    EXPECT_GT(p["metrics"]["e2e_normalised_interactivity"].get<double>(), 0.0);
  }
}

// Arrivals far above what one replica serves: the table names the overloaded point, runs show notes
// it, and the point below capacity is not flagged.
TEST(Run_Overload, OpenLoopAboveCapacity_IsFlaggedInTheTableAndTheResults) {
  auto r = run_text("overload",
                    "name: overload\nsystems: [h100-hgx]\nmodels: [llama-3.3-70b]\n"
                    "layouts: {named: [tp8]}\nworkloads:\n  - {kind: poisson, isl: 1024, osl: 128, "
                    "rate: [0.5, 400], requests: 120, warmup_requests: 20}\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("h100-hgx: 1 point overloaded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tp8 at 400 req/s"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("at 0.5 req/s"), std::string::npos) << r.out;
  auto show = run("runs show latest");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("overloaded: "), std::string::npos) << show.out;
}

TEST(Run_Trace, BlockTokens_ReachTheEngine) {
  // Half-size blocks cover half of each prompt, so fewer tokens are found in the cache.
  EXPECT_LT(example_trace_hit_rate("block_tokens: 256, ", ""),
            example_trace_hit_rate("block_tokens: 512, ", ""));
}

TEST(Run_Determinism, SameSeedSameBytes_OtherSeedOtherSamples) {
  const std::string args = "run " + src("tests/sim/golden/small.yaml") + " --json";
  auto a = run(args), b = run(args), c = run(args + " --seed 99");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(points_of(a.out)["points"], points_of(c.out)["points"]);
}

TEST(Run_Fusion, FusedAndUnfused_GiveTheSameMetrics) {
  const std::string args = "run " + src("tests/sim/golden/small.yaml") + " --json";
  auto fused = run(args), plain = run(args + " --no-fuse");
  ASSERT_EQ(fused.exit_code, 0) << fused.err;
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  // Every metric the same, except the simulator's own work: fused plans cover many iterations.
  auto without_plans = [](const std::string& out) {
    json j = json::parse(out);
    for (auto& p : j["points"]) p["metrics"].erase("plans");
    return j;
  };
  EXPECT_EQ(without_plans(fused.out), without_plans(plain.out));
  EXPECT_LT(json::parse(fused.out)["points"][0]["metrics"]["plans"].get<double>(),
            json::parse(plain.out)["points"][0]["metrics"]["plans"].get<double>());
}

TEST(Run_Table, DefaultScenario_PrintsTheComparisonTable) {
  auto r = run("run " + src("tests/sim/golden/small.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* needle :
       {"peak tok/s/XPU", "peak tok/s per rated kW", "x jalapeno-a0", "per all-in MW", "min TBT ms",
        "min E2E s", "gb200-nvl72", "(computed)", "Efficiencies"})
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
}

TEST(Run_Errors, BadScenario_ExitsTwo) {
  auto r = run("run " + src("tests/scenarios/data/unknown-system.yaml"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'gb300-nvl72'"), std::string::npos) << r.err;
}

}  // namespace

namespace {

// MTP in the serving simulation: with acceptance 1.7 the single-client TBT of deepseek-r1 falls,
// but by less than 1.7x (a step verifies two tokens and runs the draft module).
TEST(Run_Speculation, MtpLowersTbtByLessThanTheAcceptance) {
  auto tbt = [](const std::string& mtp) {
    auto r =
        run_text("mtp",
                 std::string("name: m\nsystems: [gb200-nvl72]\nmodels: [deepseek-r1]\n"
                             "layouts: {named: [tp8-ep8-dpa]}\nworkloads: [{isl: 1024, osl: 256") +
                     mtp + "}]\nconcurrency: [1]\n",
                 " --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["points"][0]["error"], "");
    return j["points"][0]["metrics"]["tpot_median_s"].get<double>();
  };
  const double plain = tbt("");
  const double spec = tbt(", mtp: true, mtp_acceptance: 1.7");
  EXPECT_LT(spec, plain / 1.2);
  EXPECT_GT(spec, plain / 1.7);
}

TEST(Run_Errors, MtpAcceptanceAboveDraftPlusOne_IsAnInputError) {
  auto r = run_text("mtp-bad",
                    "name: m\nsystems: [gb200-nvl72]\nmodels: [deepseek-r1]\n"
                    "workloads: [{isl: 1024, osl: 128, mtp: true, mtp_acceptance: 2.5}]\n"
                    "concurrency: [1]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exceeds mtp_draft_tokens + 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(":4:"), std::string::npos) << r.err;
}

// Disaggregated serving: one prefill and one decode replica of deepseek-r1 on gb200-nvl72. Every
// request completes once; each prompt's KV crosses the NVLink fabric from the prefill replica to
// the decode replica, at no more than the replicas' summed link bandwidth (8 GPUs x 900 GB/s per
// direction); the point counts both pools' XPUs. Jalapeno's stack has no disaggregation: its
// points carry an error, and the run still reports the others.
TEST(Run_Disaggregated, EveryRequestOnce_KvCrossesTheFabric) {
  auto r = run_text("disagg",
                    "name: d\nsystems: [gb200-nvl72, jalapeno-a0]\nmodels: [deepseek-r1]\n"
                    "layouts: {named: [tp8-ep8-dpa]}\nserving: [aggregated, 1p1d]\n"
                    "workloads: [{isl: 8192, osl: 1024}]\nconcurrency: [16]\n",
                    " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  int checked = 0;
  for (const auto& p : j["points"]) {
    if (p["system"] == "jalapeno-a0") {
      if (p["serving"] == "1p1d") {
        EXPECT_NE(p["error"].get<std::string>().find("no prefill/decode disaggregation"),
                  std::string::npos);
      }
      continue;
    }
    ASSERT_EQ(p["error"], "") << p;
    EXPECT_EQ(p["metrics"]["completed"], 160);
    EXPECT_EQ(p["metrics"]["requests"], 128);
    if (p["serving"] == "aggregated") {
      EXPECT_EQ(p["xpus"], 8);
      EXPECT_EQ(p["metrics"]["kv_transfer_s"], 0.0);
      EXPECT_EQ(p["metrics"]["kv_prompts_per_transfer"], 0.0);
      continue;
    }
    EXPECT_EQ(p["xpus"], 16);
    EXPECT_EQ(p["serving"], "1p1d");
    // deepseek-r1 caches (512 + 64) x 61 layers at 1 byte per token (FP8 latent): ~35 kB.
    const double bytes = p["metrics"]["kv_transfer_bytes"].get<double>();
    EXPECT_NEAR(bytes / (0.9 * 8192 + 1), 576.0 * 61, 576.0 * 61 * 0.15);
    EXPECT_GE(p["metrics"]["kv_transfer_s"].get<double>(), bytes / (8 * 900e9));
    EXPECT_LT(p["metrics"]["kv_transfer_s"].get<double>(), 0.05);
    EXPECT_GE(p["metrics"]["kv_prompts_per_transfer"].get<double>(), 1.0);
    ++checked;
  }
  EXPECT_EQ(checked, 1);
}

// Short prompts under load: one prefill iteration finishes many prompts, and those bound for the
// same decode replica leave as one transfer of their summed KV. The mean transfer time stays at or
// above a prompt's KV over the replicas' links alone, and grows with the load: a prompt shares the
// links with the others of its transfer and of its instant.
TEST(Run_Disaggregated, PromptsOfOneIterationTravelTogether) {
  auto r = run_text("disagg-together",
                    "name: d\nsystems: [gb200-nvl72]\nmodels: [deepseek-r1]\n"
                    "layouts: {named: [tp8-ep8-dpa]}\nserving: [1p1d]\n"
                    "workloads: [{isl: 512, osl: 64}]\nconcurrency: [1, 128]\n",
                    " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["points"].size(), 2u);
  const json& one = j["points"][0]["metrics"];
  const json& many = j["points"][1]["metrics"];
  ASSERT_EQ(j["points"][1]["concurrency"], 128);
  EXPECT_EQ(one["kv_prompts_per_transfer"], 1.0);  // one client: one prompt at a time
  EXPECT_GT(many["kv_prompts_per_transfer"].get<double>(), 2.0);
  for (const json* m : {&one, &many})
    EXPECT_GE((*m)["kv_transfer_s"].get<double>(),
              (*m)["kv_transfer_bytes"].get<double>() / (8 * 900e9));
  EXPECT_GT(many["kv_transfer_s"].get<double>(), one["kv_transfer_s"].get<double>());
}

// Disaggregated pools of different layouts, as the published multi-node runs served DeepSeek-R1
// (three TP2 prefill workers beside one wide decode worker): `2p1d/tp4` puts two tp4 prefill
// replicas beside one tp8-ep8-dpa decode replica. The point counts 2 x 4 + 8 XPUs, serves every
// request once, and its activity is the XPU-weighted mean over both pools (at one client the
// prefill replicas idle most of the time; dividing by the decode pool alone put it at 1). A
// prefill layout that does not hold the model is that point's error, naming the layout.
TEST(Run_Disaggregated, PrefillPoolOfItsOwnLayout) {
  auto r = run_text("disagg-own",
                    "name: d\nsystems: [gb200-nvl72]\nmodels: [deepseek-r1]\n"
                    "layouts: {named: [tp8-ep8-dpa]}\nserving: [1p1d, 2p1d/tp4, 1p1d/tp1]\n"
                    "workloads: [{isl: 1024, osl: 256}]\nconcurrency: [1, 32]\n",
                    " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  int own = 0, too_small = 0;
  for (const auto& p : j["points"]) {
    const json& m = p["metrics"];
    if (p["serving"] == "1p1d/tp1") {
      EXPECT_NE(p["error"].get<std::string>().find("prefill layout tp1"), std::string::npos) << p;
      ++too_small;
      continue;
    }
    ASSERT_EQ(p["error"], "") << p;
    EXPECT_EQ(m["completed"], m["requests"].get<double>() * 10 / 8);
    EXPECT_LE(m["busy_activity"].get<double>(), 1.0);
    if (p["concurrency"] == 1) {
      EXPECT_LT(m["busy_activity"].get<double>(), 0.75) << p["serving"];
    }
    if (p["serving"] != "2p1d/tp4") continue;
    EXPECT_EQ(p["xpus"], 16);
    EXPECT_EQ(p["layout"], "tp8-ep8-dpa");
    EXPECT_GT(m["kv_transfer_bytes"].get<double>(), 0.0);
    ++own;
  }
  EXPECT_EQ(own, 2);
  EXPECT_EQ(too_small, 2);
}

// Pools wider than a server, of the same size but different layouts (H100's published DeepSeek-R1
// FP8 deployments: TP16 prefill with DP attention beside TP16 decode): each replica takes two
// whole servers, and KV crosses the scale-out network between them.
TEST(Run_Disaggregated, PoolsOfTwoServersEach_OfDifferentLayouts) {
  auto r = run_text("disagg-wide",
                    "name: d\nsystems: [h100-hgx]\nmodels: [deepseek-r1]\n"
                    "layouts: {named: [tp16-ep16]}\nserving: [1p1d/tp16-ep16-dpa]\n"
                    "workloads: [{isl: 1024, osl: 128, precision: fp8}]\nconcurrency: [16]\n",
                    " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json p = json::parse(r.out)["points"][0];
  ASSERT_EQ(p["error"], "") << p;
  EXPECT_EQ(p["xpus"], 32);
  EXPECT_EQ(p["metrics"]["domains"], 4);
  EXPECT_GT(p["metrics"]["kv_transfer_bytes"].get<double>(), 0.0);
  EXPECT_EQ(p["metrics"]["completed"], p["metrics"]["requests"].get<double>() * 10 / 8);
}

TEST(Run_Errors, BadServingMode_IsAnInputErrorWithItsLine) {
  auto r = run_text("serving-bad",
                    "name: m\nsystems: [gb200-nvl72]\nmodels: [deepseek-r1]\n"
                    "serving: [aggregated, 1p0d]\n"
                    "workloads: [{isl: 1024, osl: 128}]\nconcurrency: [1]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(":4:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'1p0d'"), std::string::npos) << r.err;
}

// KV offload on a replica whose HBM cannot hold every live session (llama-3.3-70b in tp4 on
// H100): with host_offload the blocks HBM evicts go to the server's host DRAM over the host link,
// and later turns load them back, so more of the prompt is a cache hit and throughput rises.
TEST(Run_Offload, HostDramTurnsEvictionsIntoHits) {
  auto point = [](const std::string& share) {
    auto r =
        run_text("offload",
                 std::string("name: o\nsystems: [h100-hgx]\nmodels: [llama-3.3-70b]\n"
                             "workloads: [{id: a, kind: agentic, sessions_per_client: 2, "
                             "max_context: 131072}]\nlayouts: {named: [tp4]}\nconcurrency: [32]\n"
                             "replicas: 2\nrouter: session_affinity\nhost_offload: ") +
                     share + "\n",
                 " --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out)["points"][0];
  };
  const json off = point("0");
  const json on = point("0.75");
  ASSERT_EQ(on["error"], "");
  EXPECT_EQ(off["metrics"]["offload_hit_rate"], 0.0);
  EXPECT_EQ(off["metrics"]["offloaded_bytes"], 0.0);
  EXPECT_GT(on["metrics"]["offload_hit_rate"].get<double>(), 0.01);
  EXPECT_GT(on["metrics"]["offloaded_bytes"].get<double>(), 1e11);
  EXPECT_GT(on["metrics"]["prefix_hit_rate"].get<double>(), off["metrics"]["prefix_hit_rate"].get<double>() + 0.01);
  EXPECT_GT(on["metrics"]["total_tps_per_xpu"].get<double>(), off["metrics"]["total_tps_per_xpu"].get<double>());
  EXPECT_EQ(on["metrics"]["completed"], off["metrics"]["completed"]);
}

// Failures: four llama-3.3-70b replicas (tp8) on one GB300 NVL72 rack. A dead compute tray takes
// replica 0 down at 10 s: its requests restart on the others, and it serves again after the 30 s
// repair plus its weight reload. A dead power feed takes the whole rack down: no token comes out
// until it is repaired. A part the deployment does not have is a point error naming it (and, the
// run's only point failing, the command fails).
TEST(Run_Failures, RequestsRestart_ServiceRecoversAfterRepairAndReload) {
  auto point = [](const std::string& failures, int exit_code = 0) {
    auto r = run_text("failures",
                      std::string("name: f\nsystems: [gb300-nvl72]\nmodels: [llama-3.3-70b]\n"
                                  "workloads: [{isl: 8192, osl: 1024}]\nlayouts: {named: [tp8]}\n"
                                  "concurrency: [64]\nreplicas: 4\n") +
                          failures,
                      " --json --timeseries");
    EXPECT_EQ(r.exit_code, exit_code) << r.err;
    return json::parse(r.out)["points"][0];
  };
  const json healthy = point("");
  const json tray = point("failures: [{part: compute_tray, index: 0, at: 10 s, repair: 30 s}]\n");
  const json feed = point("failures: [{part: power_feed, index: 0, at: 10 s, repair: 30 s}]\n");
  const json missing = point("failures: [{part: compute_tray, index: 99, at: 1 s}]\n", 1);
  ASSERT_EQ(tray["error"], "");
  for (const json* p : {&healthy, &tray, &feed}) EXPECT_EQ((*p)["metrics"]["completed"], 640);
  EXPECT_EQ(healthy["metrics"]["retried_requests"], 0);
  EXPECT_GT(tray["metrics"]["retried_requests"].get<int>(), 0);
  EXPECT_LE(tray["metrics"]["retried_requests"].get<int>(), 16);  // at most replica 0's share of 64 clients
  // Repair, then the weights (tens of GB) over the replica's host links: well under a second.
  EXPECT_GT(tray["metrics"]["recovery_s"].get<double>(), 30.0);
  EXPECT_LT(tray["metrics"]["recovery_s"].get<double>(), 31.0);
  EXPECT_LT(tray["metrics"]["total_tps_per_xpu"].get<double>(), healthy["metrics"]["total_tps_per_xpu"].get<double>());
  // The rack's feed: every replica down from 10 s to 40 s, nothing produced in between.
  EXPECT_EQ(feed["metrics"]["retried_requests"], 64);
  const auto& out = feed["timeseries_1s"]["output_tokens"];
  for (std::size_t t = 11; t < 40; ++t) EXPECT_EQ(out[t].get<double>(), 0.0) << t;
  EXPECT_GT(out[42].get<double>(), 0.0);
  EXPECT_NEAR(feed["metrics"]["replica_down_s"].get<double>(), 4 * 30.0, 4 * 1.0);
  EXPECT_NE(missing["error"].get<std::string>().find("compute_tray"), std::string::npos);
}

// Failures with disaggregated serving: llama-3.3-70b on tp8 replicas of one GB300 NVL72 rack,
// one prefill and three decode replicas (trays 0-1 the prefill replica, 2-3 the first decode
// one). A dead decode tray restarts the requests it held from their prompts (their KV went with
// it); a dead prefill tray holds the entry pool's only replica down, so arrivals wait for its
// repair; with one decode replica down for good the prefilled requests have nowhere to go and
// the point says why.
TEST(Run_Failures, Disaggregated_DecodeAndPrefillReplicasFailAndRecover) {
  auto point = [](const std::string& serving, const std::string& failures, int exit_code = 0) {
    auto r = run_text("failures-pd",
                      "name: f\nsystems: [gb300-nvl72]\nmodels: [llama-3.3-70b]\n"
                      "workloads: [{isl: 8192, osl: 1024}]\nlayouts: {named: [tp8]}\n"
                      "concurrency: [64]\nserving: [" +
                          serving + "]\n" + failures,
                      " --json");
    EXPECT_EQ(r.exit_code, exit_code) << r.err;
    return json::parse(r.out)["points"][0];
  };
  const json healthy = point("1p3d", "");
  const std::string tray2 = "failures: [{part: compute_tray, index: 2, at: 10 s, repair: 30 s}]\n";
  const std::string tray0 = "failures: [{part: compute_tray, index: 0, at: 10 s, repair: 30 s}]\n";
  const json decode = point("1p3d", tray2);
  const json prefill = point("1p3d", tray0);
  const json parked = point("1p1d", tray2);
  // The prefill replica fails for 5 s while the prompts it prefilled wait for the decode
  // replica: their KV is gone although it serves again before the decode replica does.
  const json lost = point("1p1d",
                          "failures: [{part: compute_tray, index: 2, at: 10 s, repair: 30 s}, "
                          "{part: compute_tray, index: 0, at: 20 s, repair: 5 s}]\n");
  const json gone = point("1p1d", "failures: [{part: compute_tray, index: 2, at: 10 s}]\n", 1);
  for (const json* p : {&healthy, &decode, &prefill, &parked}) {
    ASSERT_EQ((*p)["error"], "") << (*p)["error"];
    EXPECT_EQ((*p)["metrics"]["completed"], 640);
  }
  // Every token is served once, whatever failed (restarted requests count once, as finished).
  for (const json* p : {&decode, &prefill})
    EXPECT_EQ((*p)["metrics"]["output_tokens"], healthy["metrics"]["output_tokens"]);
  EXPECT_EQ(healthy["metrics"]["retried_requests"], 0);
  // The decode replica held about a third of the 64 clients' requests.
  EXPECT_GT(decode["metrics"]["retried_requests"].get<int>(), 10);
  EXPECT_LT(decode["metrics"]["retried_requests"].get<int>(), 32);
  EXPECT_GT(decode["metrics"]["recovery_s"].get<double>(), 30.0);
  EXPECT_LT(decode["metrics"]["recovery_s"].get<double>(), 31.0);
  // Nothing is prefilled for 30 s: the run takes about that much longer.
  EXPECT_GT(prefill["metrics"]["duration_s"].get<double>(),
            healthy["metrics"]["duration_s"].get<double>() + 20.0);
  // The only decode replica: the requests it held restart (most of the 64 clients'; the others
  // were being prefilled), and those prefilled while it is down wait for it.
  EXPECT_GE(parked["metrics"]["retried_requests"].get<int>(), 48);
  EXPECT_LE(parked["metrics"]["retried_requests"].get<int>(), 64);
  ASSERT_EQ(lost["error"], "");
  EXPECT_EQ(lost["metrics"]["completed"], 640);
  EXPECT_GT(lost["metrics"]["retried_requests"].get<int>(),
            parked["metrics"]["retried_requests"].get<int>() + 32);
  EXPECT_NE(gone["error"].get<std::string>().find("never served"), std::string::npos)
      << gone["error"];
}

// The failure metrics are in the run's table and in `runs compare` once a run rehearsed failures.
TEST(Run_Failures, MetricsInTheTableAndInRunsCompare) {
  const std::string base =
      "name: f\nsystems: [gb300-nvl72]\nmodels: [llama-3.3-70b]\n"
      "workloads: [{isl: 1024, osl: 128, prompts_per_client: 4}]\nlayouts: {named: [tp8]}\n"
      "concurrency: [16]\nreplicas: 4\n";
  const auto healthy = run_text("fail-metrics-a", base);
  ASSERT_EQ(healthy.exit_code, 0) << healthy.err;
  EXPECT_EQ(healthy.out.find("retried requests"), std::string::npos) << healthy.out;
  const auto failing = run_text(
      "fail-metrics-b", base + "failures: [{part: compute_tray, index: 0, at: 0.3 s, repair: 1 s}]\n");
  ASSERT_EQ(failing.exit_code, 0) << failing.err;
  EXPECT_NE(failing.out.find("retried requests"), std::string::npos) << failing.out;
  EXPECT_NE(failing.out.find("mean recovery s"), std::string::npos) << failing.out;
  auto id = [](const std::string& err) {
    const auto at = err.find("Stored as run ");
    return at == std::string::npos ? std::string("?") : err.substr(at + 14, err.find(' ', at + 14) - at - 14);
  };
  const auto cmp = run("runs compare " + id(healthy.out + healthy.err) + " " + id(failing.out + failing.err));
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_NE(cmp.out.find("replica-down s"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("retried"), std::string::npos) << cmp.out;
}

// The only replica fails at 0 s and is never repaired: SimGrid runs out of events with every
// request waiting. The point is an error saying so, the table shows no figure (no sentinel such as
// 1e33 ms), and, no point having run, the command fails.
TEST(Run_Failures, OnlyReplicaDownForGood_PointFailsWithTheReasonAndTheCommandFails) {
  const std::string scenario =
      "name: f\nsystems: [h100-hgx]\nmodels: [llama-3.3-70b]\n"
      "workloads: [{isl: 1024, osl: 128, prompts_per_client: 2, warmup_per_client: 0}]\n"
      "layouts: {named: [tp8]}\nconcurrency: [2]\nfailures: [{part: xpu, index: 0, at: 0 s}]\n";
  const auto j = run_text("failure-final", scenario, " --json");
  EXPECT_EQ(j.exit_code, 1) << j.err;
  const json out = json::parse(j.out);
  EXPECT_NE(out["points"][0]["error"].get<std::string>().find("4 of 4 requests were never served"),
            std::string::npos)
      << out["points"][0]["error"];
  const auto text = run_text("failure-final", scenario);
  EXPECT_EQ(text.exit_code, 1) << text.err;
  EXPECT_NE(text.out.find("every point failed"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("e+"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("00000000000"), std::string::npos) << text.out;
  // The run ends by itself once nothing can serve again, not by SimGrid's deadlock detection
  // (which hangs when the actors run as threads).
  EXPECT_EQ(text.err.find("Deadlock detected"), std::string::npos) << text.err;
}

TEST(Run_Errors, UnknownFailurePart_IsAnInputErrorWithItsLine) {
  auto r = run_text("failure-bad",
                    "name: m\nsystems: [gb200-nvl72]\nmodels: [deepseek-r1]\n"
                    "workloads: [{isl: 1024, osl: 128}]\nconcurrency: [1]\n"
                    "failures: [{part: chana, at: 1 s}]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(":6:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("switch_tray"), std::string::npos) << r.err;  // the list of kinds
}

TEST(Run_Options, TimeseriesNeedsJson) {
  auto r = run("run " + src("tests/sim/golden/small.yaml") + " --timeseries");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace

namespace {

TEST(Run_Facility, PowerBudget_ShowsTheUnitsItHolds_AndThePriceGivesTheEnergyCost) {
  const std::string yaml = R"(name: budget
seed: 1
systems: [jalapeno-a0, gb300-nvl72]
models: [gpt-oss-120b]
workloads:
  - {id: 8k1k, kind: inferencex, isl: 8192, osl: 1024}
concurrency: [64]
facility: {power_budget: 100 MW, electricity_price: $0.10/kWh}
)";
  const auto r = run_text("budget", yaml, " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A Jalapeno rack pair is 128 XPUs at about 178 kW provisioned: 560 fit in 100 MW.
  EXPECT_NE(r.out.find("within the IT power budget of 100.0 MW"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("jalapeno-a0: 560 rack pairs, 71680 XPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gb300-nvl72: "), std::string::npos) << r.out;
  const auto j = run_text("budget-json", yaml, " --quiet --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json out = json::parse(j.out);  // held: the loop ranges over one of its members
  for (const auto& p : out["points"]) {
    const auto& m = p["metrics"];
    const double expected = m["power_all_in_operating_w"].get<double>() /
                            m["total_tps_per_xpu"].get<double>() * (0.10 / 3.6e6) * 1e6;
    EXPECT_NEAR(m["energy_usd_per_mtok"].get<double>(), expected, 1e-9 * expected);
  }
}

}  // namespace
