// End-to-end: racktwin check lists the catalog assumptions a stored run of the scenario records.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
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
