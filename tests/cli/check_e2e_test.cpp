// End-to-end: racktwin check lists the catalog assumptions a stored run of the scenario records.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run_support.hpp"

namespace {

using json = nlohmann::json;
using racktwin::test::run;
namespace fs = std::filesystem;

TEST(Cli_Check, Assumptions_AreThoseTheStoredRunRecords) {
  const std::string scenario = std::string(RACKTWIN_SOURCE_DIR) + "/tests/sim/golden/small.yaml";
  const fs::path dir =
      fs::temp_directory_path() / ("racktwin-check-e2e-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string db = (dir / "results.db").string();

  const auto check = run("check " + scenario + " --json");
  ASSERT_EQ(check.exit_code, 0) << check.err;
  const json checked = json::parse(check.out)["assumptions"];

  const auto stored = run("run " + scenario + " --quiet --db " + db);
  ASSERT_EQ(stored.exit_code, 0) << stored.err;
  const auto show = run("runs show latest --json --db " + db);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const json recorded = json::parse(show.out)["assumptions"];
  fs::remove_all(dir);

  ASSERT_GT(recorded.size(), 0u);
  EXPECT_EQ(checked.size(), recorded.size());
  EXPECT_EQ(checked, recorded);  // the same entries, in the same order
  const auto text = run("check " + scenario);
  EXPECT_NE(text.out.find("rest on " + std::to_string(recorded.size()) + " catalog assumptions"),
            std::string::npos)
      << text.out;
}

}  // namespace

namespace {

using json = nlohmann::json;
using racktwin::test::run;
namespace fs = std::filesystem;

// A scenario file in the temporary directory, unique per process, removed with the object.
struct ScenarioFile {
  fs::path path;
  explicit ScenarioFile(const std::string& text)
      : path(fs::temp_directory_path() /
             ("racktwin-check-e2e-" + std::to_string(::getpid()) + ".yaml")) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~ScenarioFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

TEST(Cli_Check, InvalidUtf8Name_IsAnErrorAndTheJsonStaysValid) {
  ScenarioFile f(
      "name: caf\xE9\nsystems: [h100-hgx]\nmodels: [llama-3.3-70b]\n"
      "workloads:\n  - {kind: inferencex, isl: 1024, osl: 1024}\nconcurrency: [1]\n");
  const auto r = run("check " + f.path.string() + " --json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  EXPECT_EQ(j["valid"], false);
  EXPECT_NE(j["errors"].dump().find("not valid UTF-8"), std::string::npos) << j.dump();
}

TEST(Cli_Run, NegativeSeed_IsAUsageErrorNotAWrappedSeed) {
  const std::string scenario = std::string(RACKTWIN_SOURCE_DIR) + "/tests/sim/golden/small.yaml";
  const auto r = run("run " + scenario + " --quiet --seed -1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("expected a seed from 0 to 18446744073709551615, found '-1'"),
            std::string::npos)
      << r.err;
}

}  // namespace
