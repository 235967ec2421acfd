// Simulation jobs end to end: the same bytes from one worker, two workers and Open MPI, and a run
// killed halfway that the same command resumes, simulating only the missing points.

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
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

// A process's state letter (R, S, T, Z, ...), or 0 when it is gone.
char state_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');  // "pid (name) state ..."
  return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : 0;
}

// The processes whose parent is `pid`.
std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t c = 0; in >> c;) out.push_back(c);
  return out;
}

// Kills `pid` if it has not ended yet: stopped first, so that it cannot end between the check
// and the kill. True when it was killed.
bool kill_running(pid_t pid) {
  if (::kill(pid, SIGSTOP) != 0) return false;
  char st = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while ((st = state_of(pid)) != 'T' && st != 'Z' && st != 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return st == 'T' && ::kill(pid, SIGKILL) == 0;
}

struct KillAttempt {
  bool killed = false;  // a group's process was killed while it ran
  int status = 0;       // the run's wait status
  std::string said;     // its standard error
};

// Runs the small sweep with one worker and, once a group is stored (the worker is on a later
// one), kills the process of the group it is simulating.
KillAttempt kill_a_group(const std::string& database, const std::string& err) {
  KillAttempt a;
  const pid_t pid = ::fork();
  if (pid < 0) return a;
  if (pid == 0) {
    ::setpgid(0, 0);
    ::freopen("/dev/null", "w", stdout);
    ::freopen(err.c_str(), "w", stderr);
    ::execl(RACKTWIN_BIN, RACKTWIN_BIN, "run", kSmall.c_str(), "--json", "--jobs", "1", "--db",
            database.c_str(), nullptr);
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!a.killed && std::chrono::steady_clock::now() < deadline) {
    if (stored_points(database) > 0)
      for (pid_t worker : children_of(pid))
        for (pid_t group : children_of(worker)) a.killed = a.killed || kill_running(group);
    if (!a.killed) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::waitpid(pid, &a.status, 0);
  std::ifstream in(err);
  a.said.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return a;
}

// A local worker reads the job once and forks a process for each group it is handed. One of
// those processes killed halfway fails the run, which says so; the groups done before are kept
// and the same command simulates only the rest. A kill that lands after the group sent all its
// results (between its last line and its exit) lets the run finish whole: then it is tried again.
TEST_F(Jobs, AGroupsProcessKilled_TheRunSaysSo_TheSameCommandResumes) {
  std::string killed_db;
  KillAttempt a;
  for (int attempt = 0; attempt < 5; ++attempt) {
    killed_db = db("g" + std::to_string(attempt) + ".db");
    a = kill_a_group(killed_db, (dir / "err.txt").string());
    ASSERT_TRUE(a.killed) << "no group's process was seen before the run ended";
    if (!(WIFEXITED(a.status) && WEXITSTATUS(a.status) == 0)) break;
    ASSERT_EQ(stored_points(killed_db), 20) << "the run succeeded without every point\n" << a.said;
  }
  EXPECT_TRUE(WIFEXITED(a.status) && WEXITSTATUS(a.status) == 1) << a.status;
  EXPECT_NE(a.said.find("killed by signal 9"), std::string::npos) << a.said;
  const int before = stored_points(killed_db);
  EXPECT_GT(before, 0);
  EXPECT_LT(before, 20);

  const auto resumed = run("run " + kSmall + " --json --jobs 1 --db " + killed_db);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("simulating " + std::to_string(20 - before)), std::string::npos)
      << resumed.err;
  EXPECT_EQ(stored_points(killed_db), 20);
}

// The disk fills while the run stores its points: `ulimit -f` caps every file the run writes at
// nine tenths of the size of the whole run's database (SIGXFSZ ignored, so a write past the cap
// fails as on a full disk; the write-ahead log passes the cap before the last groups are stored,
// while the JSON lines of the points left over stay below it). The points the database cannot take are kept in a file, the command fails, and the
// same command once there is room stores them without simulating them again: the same bytes as a
// run that never ran out of room.
TEST_F(Jobs, DiskFullWhileStoring_KeepsThePoints_AndTheSameCommandStoresThem) {
  const std::string args = "run " + kSmall + " --json --jobs 1 --db ";
  const auto whole = run(args + db("whole.db") + " --quiet");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const auto cap_blocks = fs::file_size(db("whole.db")) * 9 / 10 / 512;  // dash: 512-byte blocks

  const std::string full_db = db("full.db");
  const auto full =
      run(args + full_db, "trap '' XFSZ; ulimit -f " + std::to_string(cap_blocks) + "; ");
  EXPECT_EQ(full.exit_code, 1) << full.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      full.err, m,
      std::regex("could not store (\\d+) of the 20 points of run 1 \\([^)]+\\); they are kept "
                 "in (\\S+): ")))
      << full.err;
  const int kept = std::stoi(m[1]);
  const std::string kept_file = m[2];
  EXPECT_GT(kept, 0);
  EXPECT_EQ(stored_points(full_db) + kept, 20) << "every point is stored or kept";
  {
    std::ifstream in(kept_file);
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) {
      const auto j = nlohmann::json::parse(line);
      if (lines++ == 0)
        EXPECT_EQ(j["unstored_points_of_run"]["id"], 1) << line.substr(0, 200);
      else
        EXPECT_TRUE(j.contains("metrics") && j.contains("index")) << line.substr(0, 200);
    }
    EXPECT_EQ(lines, 1 + kept);
  }

  const auto resumed = run(args + full_db);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("stored the points the database could not take before, from " +
                             kept_file),
            std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.err.find("resuming run 1: 20 of 20 points already stored, simulating 0"),
            std::string::npos)
      << resumed.err;
  EXPECT_FALSE(fs::exists(kept_file));
  EXPECT_EQ(stored_points(full_db), 20);
  EXPECT_EQ(resumed.out, whole.out);
}

}  // namespace
