// The results database under another connection's lock: open and writes wait for the busy timeout,
// then say that the database is locked by another process, not that it is not racktwin's.

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "db/store.hpp"

namespace {

using namespace racktwin;
namespace fs = std::filesystem;

// Short, so that the tests do not wait the default five seconds.
constexpr Seconds kShortTimeout{0.05};

class DbLock : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("racktwin-db-lock-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "results.db").string();
    ASSERT_TRUE(db::Store::open(path_, db::Store::Mode::create));  // a racktwin database
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string path_;
};

db::RunInfo some_run() {
  db::RunInfo i;
  i.scenario_name = "locked";
  i.scenario_file = "locked.yaml";
  i.scenario_text = "name: locked\n";
  i.options = "{}";
  return i;
}

void expect_locked_message(const std::string& message, const std::string& path) {
  EXPECT_NE(message.find("the results database '" + path + "' is locked by another process"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("--db"), std::string::npos) << message;
  EXPECT_EQ(message.find("not a racktwin results database"), std::string::npos) << message;
}

TEST_F(DbLock, Open_WhileAnotherConnectionHoldsAnExclusiveLock_SaysLocked) {
  // Exclusive locking mode: the holder keeps the file locked against readers too.
  SQLite::Database holder(path_, SQLite::OPEN_READWRITE);
  holder.exec("PRAGMA locking_mode = EXCLUSIVE");
  holder.exec("BEGIN EXCLUSIVE");
  holder.exec("UPDATE runs SET error = ''");
  for (const auto mode : {db::Store::Mode::existing, db::Store::Mode::create}) {
    auto s = db::Store::open(path_, mode, kShortTimeout);
    ASSERT_FALSE(s);
    expect_locked_message(s.error(), path_);
  }
  holder.exec("COMMIT");
}

TEST_F(DbLock, Write_WhileAnotherConnectionHoldsAWriteTransaction_ThrowsDatabaseLocked) {
  auto s = db::Store::open(path_, db::Store::Mode::existing, kShortTimeout);
  ASSERT_TRUE(s) << s.error();
  SQLite::Database holder(path_, SQLite::OPEN_READWRITE);
  holder.exec("BEGIN EXCLUSIVE");
  holder.exec("UPDATE runs SET error = ''");
  // Reading goes on (WAL), writing waits for the timeout and then says why it failed.
  EXPECT_TRUE(s->list().empty());
  try {
    s->begin_run(some_run(), {});
    FAIL() << "begin_run wrote while another connection held the write lock";
  } catch (const db::DatabaseLocked& e) {
    expect_locked_message(e.what(), path_);
  }
  holder.exec("COMMIT");
  // Once the lock is released, the same store writes.
  EXPECT_GT(s->begin_run(some_run(), {}), 0);
}

TEST(DbLockMessage, LockedMessage_NamesThePathTheCauseAndWhatToDo) {
  const std::string m = db::locked_message("a.db", "SQLite: database is locked");
  EXPECT_EQ(m,
            "the results database 'a.db' is locked by another process (SQLite: database is "
            "locked); wait for it to finish, or use --db with another path");
}

}  // namespace
