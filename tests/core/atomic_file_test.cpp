// Atomic output files: the old bytes or the new, and never written through a planted link.

#include "core/atomic_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace racktwin {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh directory unique to the process and the test, removed with the object.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("racktwin-atomic-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

TEST(AtomicFile, ExistingFile_IsReplacedWhole_AndNothingElseIsLeft) {
  TempDir d("replace");
  const fs::path out = d.path / "calibration.yaml";
  std::ofstream(out) << "old contents that are longer than the new ones\n";
  ASSERT_TRUE(write_file_atomically(out.string(), "new\n").has_value());
  EXPECT_EQ(slurp(out), "new\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(d.path), fs::directory_iterator{}), 1);
}

TEST(AtomicFile, LinkPlantedAtThePath_IsReplacedNotFollowed) {
  TempDir d("link");
  const fs::path victim = d.path / "victim";
  std::ofstream(victim) << "precious\n";
  const fs::path out = d.path / "chart.png";
  fs::create_symlink(victim, out);
  ASSERT_TRUE(write_file_atomically(out.string(), "image").has_value());
  EXPECT_EQ(slurp(victim), "precious\n");
  EXPECT_FALSE(fs::is_symlink(out));
  EXPECT_EQ(slurp(out), "image");
}

TEST(AtomicFile, NewFile_GetsTheUsualPermissions) {
  TempDir d("mode");
  const fs::path out = d.path / "table.csv";
  const mode_t mask = ::umask(022);
  const auto w = write_file_atomically(out.string(), "a,b\n");
  ::umask(mask);
  ASSERT_TRUE(w.has_value()) << w.error();
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(AtomicFile, MissingDirectory_IsAnErrorNamingThePath) {
  TempDir d("missing");
  const fs::path out = d.path / "no-such-dir" / "x.csv";
  const auto w = write_file_atomically(out.string(), "x");
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().find(out.string()), std::string::npos) << w.error();
}

}  // namespace
}  // namespace racktwin
