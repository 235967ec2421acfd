// The CSV export writes each file through a fresh temporary file: a link planted beside the output
// (at the name a temporary file used to take) or at the output itself is never written through.

#include "app/plots.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace racktwin::app {
namespace {

namespace fs = std::filesystem;

// The first line of a file.
std::string first_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(ExportCsv, LinksPlantedAtTheOutputAndBesideIt_AreNotWrittenThrough) {
  const fs::path dir =
      fs::temp_directory_path() / ("racktwin-csv-links-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path victim = dir / "victim";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, dir / ("run.csv.tmp-" + std::to_string(::getpid())));
  fs::create_symlink(victim, dir / "points.csv");

  const auto names = export_csv(db::StoredRun{}, dir.string());
  ASSERT_TRUE(names.has_value()) << names.error();
  EXPECT_EQ(first_line(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(dir / "points.csv"));
  EXPECT_EQ(first_line(dir / "run.csv").substr(0, 11), "field,value");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace racktwin::app
