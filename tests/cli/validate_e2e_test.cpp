// racktwin validate and calibrate end to end: reports, error lines naming points, exit codes.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_support.hpp"

namespace {

using racktwin::test::run;
using json = nlohmann::json;

// A points file in the temporary directory, removed with the object.
struct PointsFile {
  std::filesystem::path path;
  explicit PointsFile(const std::string& name, const std::string& text)
      : path(std::filesystem::temp_directory_path() / name) {
    std::ofstream(path) << text;
  }
  ~PointsFile() { std::filesystem::remove(path); }
};

// Cheap points: 1k/128 requests on the 8-XPU layouts of jalapeno-a0. The tests of what the
// commands report narrow the sweep to two client counts and the 8-XPU replicas (kQuick);
// Validate_GoodFile runs it whole.
const char* kGood = R"(
  - id: jal-tbt
    system: jalapeno-a0
    model: gpt-oss-120b
    workload: {isl: 1024, osl: 128, range_ratio: 0.8, mtp: false}
    metric: min_tbt_ms
    value: 0.7
  - id: jal-interactivity
    system: jalapeno-a0
    model: gpt-oss-120b
    workload: {isl: 1024, osl: 128, range_ratio: 0.8, mtp: false}
    metric: max_interactivity_tok_s_user
    value: 1400
)";
const std::string kQuick = " --concurrency 1,8 --replica-xpus 8";

TEST(Validate_BadPoints, UnknownSystemAndMalformedPoint_ReportedAndTheRestEvaluated) {
  PointsFile f("racktwin-validate-bad.yaml", std::string("points:") + kGood + R"(
  - id: nosuch-system
    system: gb900-nvl576
    model: gpt-oss-120b
    workload: {isl: 1024, osl: 128}
    metric: min_tbt_ms
    value: 1.0
  - id: broken
    system: jalapeno-a0
    model: gpt-oss-120b
    workload: {isl: 1024, osl: 128}
    metric: min_tbt_ms
)");
  auto r = run("validate " + f.path.string() + kQuick);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("point nosuch-system"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown system 'gb900-nvl576'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("point broken"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'value'"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("jal-tbt"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("jal-interactivity"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 points: 2 predicted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 rejected"), std::string::npos) << r.out;

  auto j = run("validate " + f.path.string() + " --json" + kQuick);
  EXPECT_EQ(j.exit_code, 2) << j.err;
  const json doc = json::parse(j.out);
  EXPECT_EQ(doc["sweep"], "clients 1,8; replicas of 8 XPUs");
  EXPECT_EQ(doc["summary"]["rejected"], 2);
  EXPECT_EQ(doc["summary"]["predicted"], 2);
  std::map<std::string, json> by_id;
  for (const auto& p : doc["points"]) by_id[p["id"].get<std::string>()] = p;
  EXPECT_EQ(by_id["nosuch-system"]["status"], "rejected");
  EXPECT_EQ(by_id["broken"]["status"], "rejected");
  ASSERT_EQ(by_id["jal-tbt"]["status"], "ok");
  // Two views of one figure agree: interactivity = 1000 / TBT ms.
  const double tbt = by_id["jal-tbt"]["predicted"].get<double>();
  EXPECT_GT(tbt, 0.05);
  EXPECT_LT(tbt, 50.0);
  EXPECT_NEAR(by_id["jal-interactivity"]["predicted"].get<double>(), 1000.0 / tbt,
              1e-6 * 1000 / tbt);
  EXPECT_NEAR(by_id["jal-tbt"]["error_pct"].get<double>(), 100.0 * (tbt - 0.7) / 0.7, 1e-9);
}

TEST(Validate_GoodFile, ExitsZeroWithMedianAndMax) {
  PointsFile f("racktwin-validate-good.yaml", std::string("points:") + kGood);
  auto r = run("validate " + f.path.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 points: 2 predicted, median |error|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max |error|"), std::string::npos) << r.out;
}

TEST(Validate_Errors, MissingFileOrNoPointsList_ExitsTwo) {
  EXPECT_EQ(run("validate /nonexistent/points.yaml").exit_code, 2);
  PointsFile f("racktwin-validate-empty.yaml", "name: nothing here\n");
  auto r = run("validate " + f.path.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("points"), std::string::npos) << r.err;
  // A client count must be a positive whole number; nothing runs otherwise.
  auto c = run("validate " + f.path.string() + " --concurrency 1,0");
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("--concurrency"), std::string::npos) << c.err;
}

// --serving sets the serving modes of every sweep: B300's DeepSeek-R1 1k/1k peak read off the
// configuration the benchmark ran (three TP2 prefill replicas beside one 8-GPU decode replica),
// at the clients that fill its decode pool; the sweep says it was narrowed. A system whose stack
// has no disaggregation gets no point from a disaggregated-only sweep, and says why; a mode that
// does not parse stops the command.
TEST(Validate_Serving, PublishedMultiNodeConfiguration_AndModesASystemCannotRun) {
  PointsFile f("racktwin-validate-serving.yaml", std::string("points:") + kGood + R"(
  - id: b300-peak
    system: b300-hgx
    model: deepseek-r1
    workload: {isl: 1024, osl: 1024, range_ratio: 0.8, mtp: false, precision: fp4}
    metric: peak_total_tps_per_xpu
    value: 14773.4
)");
  auto r = run("validate " + f.path.string() + " --json --replica-xpus 8 --serving 3p1d/tp2");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["sweep"], "replicas of 8 XPUs; serving 3p1d/tp2");
  std::map<std::string, json> by_id;
  for (const auto& p : doc["points"]) by_id[p["id"].get<std::string>()] = p;
  ASSERT_EQ(by_id["b300-peak"]["status"], "ok") << by_id["b300-peak"];
  EXPECT_EQ(by_id["b300-peak"]["decided_by"],
            "tp8-ep8-dpa 3p1d/tp2 at 8192 clients, decode batch at most 8192");
  EXPECT_EQ(by_id["jal-tbt"]["status"], "failed");
  EXPECT_NE(by_id["jal-tbt"].dump().find("has no disaggregation"), std::string::npos)
      << by_id["jal-tbt"];

  auto bad = run("validate " + f.path.string() + " --serving 3p1d/tq2");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--serving"), std::string::npos) << bad.err;
}

TEST(Calibrate_Cli, WritesACalibrationFileThatTheCatalogLoads) {
  PointsFile f("racktwin-calibrate-points.yaml", std::string("points:") + kGood);
  const auto dir = std::filesystem::temp_directory_path() / "racktwin-calibrate-catalog";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/catalog"))
    if (e.path().filename() != "calibration.yaml")
      std::filesystem::copy_file(e.path(), dir / e.path().filename());
  auto r = run("--catalog " + dir.string() + " calibrate " + f.path.string() +
               " --params step_overhead --iterations 3 --rounds 1" + kQuick);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sweep narrowed to clients 1,8; replicas of 8 XPUs"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("jalapeno-a0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("median |error|"), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(dir / "calibration.yaml"));
  // The catalog now gives jalapeno-a0 its calibration and jalapeno-b0 the family's.
  auto v = run("--catalog " + dir.string() + " validate " + f.path.string() + kQuick);
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_NE(v.out.find("jalapeno-a0 calibrated"), std::string::npos) << v.out;
  // Jalapeno's chip has a measured sustained power: the calibration fits the busy share to it, and
  // the same sweeps, rerun from the written file, draw at most that power.
  EXPECT_NE(r.out.find("XPU busy share fitted to the chip's measured sustained power"),
            std::string::npos)
      << r.out;
  std::ifstream written(dir / "calibration.yaml");
  const std::string file((std::istreambuf_iterator<char>(written)), {});
  EXPECT_NE(file.find("power: {xpu_busy_share: "), std::string::npos) << file;
  const auto row = v.out.find("\njalapeno-a0  gpt-oss-120b");
  ASSERT_NE(row, std::string::npos) << v.out;
  const std::string line = v.out.substr(row + 1, v.out.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find(" yes "), std::string::npos) << line;
  EXPECT_NE(line.find("(fitted)"), std::string::npos) << line;
  std::filesystem::remove_all(dir);
}

TEST(Validate_SeveralFiles, ReadAsOne_AnIdUsedTwiceIsRejectedWithItsFile) {
  PointsFile a("racktwin-validate-a.yaml", std::string("points:") + kGood);
  PointsFile b("racktwin-validate-b.yaml", std::string("points:") + kGood);
  auto r = run("validate " + a.path.string() + " " + b.path.string() + kQuick);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.out.find("seed 20260801, sweep narrowed to clients 1,8; replicas of 8 XPUs\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find(b.path.string() + ":2:5:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("used by a point of an earlier file"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find(a.path.string() + " + " + b.path.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 points: 2 predicted"), std::string::npos) << r.out;
}

TEST(Crossval_Cli, LeaveOneSystemOut_PredictsEachFromTheOthers) {
  PointsFile f("racktwin-crossval-points.yaml", std::string("points:") + kGood + R"(
  - id: b0-tbt
    system: jalapeno-b0
    model: gpt-oss-120b
    workload: {isl: 1024, osl: 128, range_ratio: 0.8, mtp: false}
    metric: min_tbt_ms
    value: 0.6
)");
  auto r = run("crossval " + f.path.string() +
               " --by system --params step_overhead --iterations 2 --rounds 1" + kQuick);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("leave one system out: 2 folds"), std::string::npos) << r.out;
  // Each Jalapeno stepping is predicted from the other's fit (their shared family), never its own.
  EXPECT_NE(r.out.find("family jalapeno-teacup (jalapeno-b0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("family jalapeno-teacup (jalapeno-a0)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("fitted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("leave one system out: median |error|"), std::string::npos) << r.out;
  // The two min-TBT points differ in the system alone; the interactivity point has no such twin.
  EXPECT_NE(r.out.find("system alone: 2 of the held-out points"), std::string::npos) << r.out;
  // One model only: nothing to hold out by model, said before any simulation.
  auto m = run("crossval " + f.path.string() + " --by model");
  EXPECT_EQ(m.exit_code, 2) << m.err;
  EXPECT_NE(m.err.find("at least two models"), std::string::npos) << m.err;
}

}  // namespace
