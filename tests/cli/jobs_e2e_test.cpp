// Simulation jobs end to end: the same bytes from one worker, two workers and Open MPI, and a run
// killed halfway that the same command resumes, simulating only the missing points.

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "run_support.hpp"

namespace {

using racktwin::test::run;
namespace fs = std::filesystem;

const std::string kSmall = std::string(RACKTWIN_SOURCE_DIR) + "/tests/sim/golden/small.yaml";

struct Jobs : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("racktwin-jobs-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    // What scripts/test sets for Open MPI (root in CI, more ranks than cores).
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string db(const std::string& name) const { return (dir / name).string(); }
};

TEST_F(Jobs, OneTwoWorkersAndMpi_GiveTheSameBytes) {
  const std::string args = "run " + kSmall + " --json --quiet --db ";
  const auto one = run(args + db("1.db") + " --jobs 1");
  const auto two = run(args + db("2.db") + " --jobs 2");
  const auto mpi = run(args + db("m.db") + " --backend mpi --ranks 2");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(one.out, mpi.out);
  EXPECT_EQ(nlohmann::json::parse(one.out)["points"].size(), 20u);
}

TEST_F(Jobs, MissingWorker_IsARuntimeErrorThatSaysWhy) {
  ::setenv("RACKTWIN_SIM", (dir / "no-such-worker").c_str(), 1);
  const auto r = run("run " + kSmall + " --quiet --db " + db("w.db"));
  ::unsetenv("RACKTWIN_SIM");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no-such-worker"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("resumes"), std::string::npos) << r.err;
}

// Points stored in a database's newest run.
int stored_points(const std::string& path) {
  try {
    SQLite::Database d(path, SQLite::OPEN_READONLY);
    return d.execAndGet("SELECT COUNT(*) FROM points").getInt();
  } catch (const std::exception&) {
    return 0;
  }
}

TEST_F(Jobs, KilledHalfway_TheSameCommandSimulatesOnlyTheMissingPoints_SameBytes) {
  const std::string killed_db = db("k.db");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    ::freopen("/dev/null", "w", stdout);
    ::freopen("/dev/null", "w", stderr);
    ::execl(RACKTWIN_BIN, RACKTWIN_BIN, "run", kSmall.c_str(), "--json", "--jobs", "1", "--db",
            killed_db.c_str(), nullptr);
    ::_exit(127);
  }
  // Kill it (and its worker) once some of its points are stored.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int seen = 0;
  while ((seen = stored_points(killed_db)) < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_GE(seen, 4) << "no point was stored before the deadline";
  const int before = stored_points(killed_db);
  ASSERT_LT(before, 20) << "the run finished before it could be killed";

  const auto resumed = run("run " + kSmall + " --json --jobs 1 --db " + killed_db);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(resumed.err, m,
                                std::regex("resuming run 1: (\\d+) of 20 points already stored, "
                                           "simulating (\\d+)")))
      << resumed.err;
  EXPECT_EQ(std::stoi(m[1]), before);
  EXPECT_EQ(std::stoi(m[2]), 20 - before);
  EXPECT_EQ(stored_points(killed_db), 20);

  const auto whole = run("run " + kSmall + " --json --jobs 1 --quiet --db " + db("u.db"));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(resumed.out, whole.out);

  // Finished: the same command again starts a new run and simulates everything.
  const auto again = run("run " + kSmall + " --json --jobs 1 --db " + killed_db);
  EXPECT_EQ(again.err.find("resuming"), std::string::npos) << again.err;
  EXPECT_EQ(again.out, whole.out);
}

}  // namespace
