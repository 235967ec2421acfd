#include "app/sim_job.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

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
