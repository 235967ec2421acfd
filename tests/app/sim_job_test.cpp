#include "app/sim_job.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fstream>
#include <string>
#include <vector>

namespace racktwin::app {
namespace {

std::string write_temp(const std::string& text) {
  const std::string path = ::testing::TempDir() + "racktwin-job-test-" + std::to_string(::getpid());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

std::string worker_error(const std::string& job_text) {
  const std::string path = write_temp(job_text);
  std::vector<std::string> lines;
  auto r = run_worker(path, 0, [&](const std::string& l) { lines.push_back(l); });
  ::unlink(path.c_str());
  EXPECT_TRUE(lines.empty());
  return r ? std::string() : r.error();
}

// Closed-loop points of 1k output tokens at `clients`: cost 20 + 20 x clients (10 prompts each).
std::vector<sim::PointSpec> closed_loop_points(const std::vector<int>& clients) {
  std::vector<sim::PointSpec> specs;
  for (int c : clients) {
    sim::PointSpec s;
    s.workload.osl = 1024;
    s.arrivals = sim::ClosedLoop{c};
    specs.push_back(s);
  }
  return specs;
}

void expect_each_index_once(const std::vector<std::vector<std::size_t>>& groups, std::size_t n) {
  std::vector<int> seen(n, 0);
  for (const auto& g : groups)
    for (std::size_t i : g) seen.at(i) += 1;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(n));
}

// A small batch goes out in 4 groups, not one worker start per point; a large one in at most 32
// groups of at least a second's simulation each; every point in exactly one group.
TEST(PlanGroups, SmallBatchFourGroups_LargeBatchAtMost32) {
  const auto small = closed_loop_points(std::vector<int>(40, 16));  // 40 x 340 = 13,600
  const auto few = plan_groups(small);
  EXPECT_EQ(few.size(), 4u);
  expect_each_index_once(few, small.size());

  const auto large = closed_loop_points(std::vector<int>(400, 1024));  // 400 x 20,500 = 8.2M
  const auto many = plan_groups(large);
  EXPECT_LE(many.size(), 32u);
  EXPECT_GE(many.size(), 16u);
  expect_each_index_once(many, large.size());

  const auto medium = closed_loop_points(std::vector<int>(100, 1024));  // 2.05M: 300k a group
  const auto eight = plan_groups(medium);
  EXPECT_EQ(eight.size(), 8u);  // 14 points of 20,500 (287,000) to a 300,000 grain: 7 x 14 + 2
  expect_each_index_once(eight, medium.size());
}

// A killed run's job file is removed by a later job once its process is gone and a day has passed;
// the files of a live process, fresh files and other files stay.
TEST(JobFiles, OrphanedAndOld_AreRemoved_TheRestStay) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("racktwin-orphans-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string gone = std::to_string(dead), alive = std::to_string(::getpid());
  const auto two_days_ago = fs::file_time_type::clock::now() - std::chrono::hours(48);
  auto make = [&](const std::string& name, bool old) {
    std::ofstream(dir / name) << "{}";
    if (old) fs::last_write_time(dir / name, two_days_ago);
  };
  make("racktwin-job-" + gone + "-a1b2c3", true);    // orphaned and old: removed
  make("racktwin-job-" + gone + "-d4e5f6", false);   // orphaned but fresh
  make("racktwin-job-" + alive + "-g7h8i9", true);   // its process runs
  make("racktwin-job-Ab12Cd", true);                 // the former name, without a process
  make("racktwin-job-12x-abcdef", true);             // not a process number
  make("notes-" + gone + ".txt", true);
  EXPECT_EQ(remove_orphaned_job_files(dir.string()), 1);
  EXPECT_FALSE(fs::exists(dir / ("racktwin-job-" + gone + "-a1b2c3")));
  int left = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++left;
  EXPECT_EQ(left, 5);
  EXPECT_EQ(remove_orphaned_job_files((dir / "absent").string()), 0);
  fs::remove_all(dir);
}

TEST(RunWorker, AJobFromAnotherBuild_IsRefusedWithTheFix) {
  const auto e = worker_error(
      R"({"build":"0.0.0 000000000000","catalog_files":[],"catalog_hash":"","fuse":true,)"
      R"("points":[],"groups":[[]]})");
  EXPECT_NE(e.find("0.0.0 000000000000"), std::string::npos) << e;
  EXPECT_NE(e.find("rebuild or reinstall racktwin-sim"), std::string::npos) << e;
}

TEST(RunWorker, NotAJob_SaysSo) {
  EXPECT_NE(worker_error("[1, 2").find("is not a racktwin job"), std::string::npos);
  EXPECT_NE(worker_error(R"({"groups":[]})").find("is malformed"), std::string::npos);
}

}  // namespace
}  // namespace racktwin::app
