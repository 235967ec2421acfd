// A results database that this user may not write (a read-only directory or file) is still listed
// and read; writing it fails saying why, not that it is not racktwin's.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

#include "db/store.hpp"

namespace {

using namespace racktwin;
namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

class DbReadOnly : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("racktwin-db-readonly-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "results.db").string();
    auto s = db::Store::open(path_, db::Store::Mode::create);
    ASSERT_TRUE(s) << s.error();
    db::RunInfo run;
    run.scenario_name = "kept";
    run.scenario_file = "kept.yaml";
    run.scenario_text = "name: kept\n";
    run.options = "{}";
    s->finish_run(s->begin_run(run, {}), 1.0);
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all);
    fs::remove_all(dir_);
  }

  // Makes the directory and the file read-only and runs `check` as a user who may not write them:
  // root may write anything, so as root `check` runs in a child process as nobody. Returns
  // `check`'s result (a failed expectation prints its reason).
  bool as_reader(const std::function<bool()>& check) {
    fs::permissions(path_, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read |
                              fs::perms::others_exec);
    if (::geteuid() != 0) return check();
    std::fflush(nullptr);
    const pid_t child = ::fork();
    if (child == 0) {
      if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(3);
      ::_exit(check() ? 0 : 1);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  fs::path dir_;
  std::string path_;
};

TEST_F(DbReadOnly, Read_InAReadOnlyDirectory_ListsAndLoadsTheRuns) {
  const std::string path = path_;
  EXPECT_TRUE(as_reader([&] {
    auto s = db::Store::open(path, db::Store::Mode::read);
    if (!s) {
      std::fprintf(stderr, "open: %s\n", s.error().c_str());
      return false;
    }
    const auto runs = s->list();
    if (runs.size() != 1 || runs[0].scenario_name != "kept" || runs[0].status != "finished") {
      std::fprintf(stderr, "list: %zu runs\n", runs.size());
      return false;
    }
    return s->load(runs[0].id).has_value();
  }));
  EXPECT_FALSE(fs::exists(path_ + "-wal"));  // nothing written beside it
}

TEST_F(DbReadOnly, Existing_InAReadOnlyDirectory_SaysItCannotBeWrittenButCanBeRead) {
  const std::string path = path_;
  EXPECT_TRUE(as_reader([&] {
    auto s = db::Store::open(path, db::Store::Mode::existing);
    if (s) return false;
    const bool says = s.error().find("may not write") != std::string::npos &&
                      s.error().find("can still be read") != std::string::npos &&
                      s.error().find("not a racktwin results database") == std::string::npos;
    if (!says) std::fprintf(stderr, "message: %s\n", s.error().c_str());
    return says;
  }));
}

TEST_F(DbReadOnly, Read_OfAMissingFile_SaysThereIsNone) {
  auto s = db::Store::open((dir_ / "absent.db").string(), db::Store::Mode::read);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("no results database"), std::string::npos) << s.error();
}

}  // namespace
