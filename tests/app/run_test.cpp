// racktwin run as a use case: a run that stops on an exception after it began is recorded as
// failed, with the reason, not left "running" (listed as "incomplete").

#include "app/run.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "db/store.hpp"
#include "test_support.hpp"

namespace racktwin::app {
namespace {

namespace fs = std::filesystem;

TEST(RunScenario, ExceptionAfterTheRunBegan_MarksItFailedWithTheReason) {
  const fs::path dir =
      fs::temp_directory_path() / ("racktwin-run-failed-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  RunRequest rq;
  rq.scenario_file = std::string(RACKTWIN_SOURCE_DIR) + "/tests/sim/golden/small.yaml";
  rq.db = (dir / "r.db").string();
  rq.job.jobs = 1;
  RunHooks hooks;
  hooks.progress = [](double) { throw std::runtime_error("out of memory while reporting"); };

  const auto out = run_scenario(test::shipped_catalog(), rq, hooks);
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.error().message.find("out of memory while reporting"), std::string::npos)
      << out.error().message;
  auto store = db::Store::open(rq.db, db::Store::Mode::create);
  ASSERT_TRUE(store.has_value());
  const auto runs = store->list();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs.front().state(), "failed");
  EXPECT_NE(runs.front().error.find("out of memory while reporting"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace racktwin::app
