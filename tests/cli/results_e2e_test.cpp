// The results database end to end through the racktwin binary: runs stored, listed, shown,
// compared, exported (the CSV reads back to the stored values), deleted and plotted; a run killed
// with SIGKILL; --db on files that are not racktwin databases; the progress bar on a terminal.

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QImage>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "run_support.hpp"

namespace {

using racktwin::test::run;
using json = nlohmann::json;
namespace fs = std::filesystem;

std::string src(const std::string& rel) {
  return std::string(RACKTWIN_SOURCE_DIR) + "/" + rel;
}

const std::string kSmall = src("tests/sim/golden/small.yaml");
const std::string kLong = src("tests/cli/data/long.yaml");

class Results : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("racktwin-results-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "results.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  racktwin::test::Result rt(const std::string& args) { return run(args + " --db " + db_); }
  fs::path dir_;
  std::string db_;
};

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// RFC 4180 CSV: rows of fields.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
    any = true;
  }
  if (any && rows.back().empty()) rows.pop_back();
  return rows;
}

TEST_F(Results, RunTwice_ListCompareExport_CsvRoundTrips) {
  auto r1 = rt("run " + kSmall);
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  EXPECT_NE(r1.out.find("Stored as run 1 in " + db_), std::string::npos) << r1.out;
  auto r2 = rt("run " + kSmall + " --json");
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_TRUE(json::accept(r2.out)) << "stdout must stay JSON";
  EXPECT_NE(r2.err.find("Stored as run 2"), std::string::npos) << r2.err;

  auto list = rt("runs list --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const json runs = json::parse(list.out)["runs"];
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& r : runs) {
    EXPECT_EQ(r["status"], "finished");
    EXPECT_EQ(r["points"], 20);
    EXPECT_EQ(r["seed"], 1234);
    EXPECT_EQ(r["scenario"]["name"], "golden-small");
    EXPECT_FALSE(r["catalog_hash"].get<std::string>().empty());
  }
  auto text_list = rt("runs list");
  EXPECT_NE(text_list.out.find("golden-small"), std::string::npos);

  auto show = rt("runs show 1 --json");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const json shown = json::parse(show.out);
  EXPECT_GT(shown["assumptions"].size(), 0u);
  EXPECT_EQ(shown["points"].size(), 20u);
  EXPECT_EQ(shown["run"]["scenario"]["text"], read_bytes(kSmall));

  // Same scenario, same seed: nothing differs but the record's times.
  auto cmp = rt("runs compare 1 2 --json");
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const json c = json::parse(cmp.out);
  EXPECT_EQ(c["run_differences"].size(), 0u) << c["run_differences"].dump();
  EXPECT_EQ(c["scenario_diff"].size(), 0u);
  EXPECT_EQ(c["differing_points"], 0);
  EXPECT_EQ(c["points"].size(), 20u);
  auto cmp_text = rt("runs compare 1 latest");
  ASSERT_EQ(cmp_text.exit_code, 0) << cmp_text.err;
  EXPECT_NE(cmp_text.out.find("0 differ"), std::string::npos) << cmp_text.out;

  // Exports are deterministic: the two runs' points are the same bytes.
  auto e1 = rt("runs export 1 --json"), e2 = rt("runs export 2 --json");
  ASSERT_EQ(e1.exit_code, 0) << e1.err;
  const json j1 = json::parse(e1.out), j2 = json::parse(e2.out);
  EXPECT_EQ(j1["points"].dump(), j2["points"].dump());

  // The CSV reads back to the values of the JSON export, to the last bit.
  const fs::path csv = dir_ / "csv";
  auto ex = rt("runs export 1 --csv " + csv.string());
  ASSERT_EQ(ex.exit_code, 0) << ex.err;
  for (const char* f : {"run.csv", "points.csv", "metrics.csv", "latency_percentiles.csv",
                        "timeseries.csv", "assumptions.csv", "scenario.yaml"})
    EXPECT_TRUE(fs::exists(csv / f)) << f;
  EXPECT_EQ(read_bytes(csv / "scenario.yaml"), read_bytes(kSmall));
  const auto rows = parse_csv(read_bytes(csv / "points.csv"));
  ASSERT_EQ(rows.size(), 21u);
  const auto& header = rows[0];
  const json& points = j1["points"];
  std::size_t checked = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const json& p = points[i - 1];
    ASSERT_EQ(rows[i].size(), header.size());
    for (std::size_t k = 0; k < header.size(); ++k) {
      const std::string& h = header[k];
      const std::string& cell = rows[i][k];
      if (p.contains(h)) {  // a key column
        if (p[h].is_string())
          EXPECT_EQ(cell, p[h].get<std::string>()) << h;
        else
          EXPECT_EQ(std::stod(cell), p[h].get<double>()) << h;
      } else {
        ASSERT_TRUE(p["metrics"].contains(h)) << h;
        EXPECT_EQ(std::stod(cell), p["metrics"][h].get<double>()) << h << " row " << i;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20u * 50u);
  const auto pct = parse_csv(read_bytes(csv / "latency_percentiles.csv"));
  EXPECT_EQ(pct.size(), 1u + 20u * 3u * 101u);
  EXPECT_EQ(std::stod(pct[1 + 50][3]),
            points[0]["latency_percentiles"]["e2e_s"][50].get<double>());  // e2e_s sorts first

  auto del = rt("runs delete 1");
  ASSERT_EQ(del.exit_code, 0) << del.err;
  EXPECT_EQ(json::parse(rt("runs list --json").out)["runs"].size(), 1u);
  EXPECT_EQ(rt("runs show 1").exit_code, 2);
}

TEST_F(Results, OtherSeed_CompareShowsTheSeedAndTheResultDifferences) {
  ASSERT_EQ(rt("run " + kSmall).exit_code, 0);
  ASSERT_EQ(rt("run " + kSmall + " --seed 99").exit_code, 0);
  const json c = json::parse(rt("runs compare 1 2 --json").out);
  ASSERT_EQ(c["run_differences"].size(), 1u);
  EXPECT_EQ(c["run_differences"][0]["field"], "seed");
  EXPECT_GT(c["differing_points"].get<int>(), 0);
  auto text = rt("runs compare 1 2");
  EXPECT_NE(text.out.find("seed: 1234 -> 99"), std::string::npos) << text.out;
}

TEST_F(Results, SigkillMidRun_EarlierRunsIntactThisOneIncomplete) {
  ASSERT_EQ(rt("run " + kSmall).exit_code, 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::freopen("/dev/null", "w", stdout);
    ::freopen("/dev/null", "w", stderr);
    ::execl(RACKTWIN_BIN, RACKTWIN_BIN, "run", kLong.c_str(), "--db", db_.c_str(), nullptr);
    ::_exit(127);
  }
  // Kill it as soon as its run is recorded: it is then simulating.
  bool seen = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!seen && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto l = rt("runs list --json");
    if (l.exit_code != 0) continue;
    const json listed = json::parse(l.out);
    for (const auto& r : listed["runs"])
      if (r["id"] == 2) {
        seen = true;
        EXPECT_EQ(r["status"], "running") << "the run finished before it could be killed";
      }
  }
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(seen) << "the run never appeared in the database";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  {
    SQLite::Database raw(db_, SQLite::OPEN_READONLY);
    EXPECT_EQ(raw.execAndGet("PRAGMA integrity_check").getString(), "ok");
  }
  auto list = rt("runs list --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const json runs = json::parse(list.out)["runs"];
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["id"], 2);
  EXPECT_EQ(runs[0]["status"], "incomplete");
  EXPECT_EQ(runs[1]["id"], 1);
  EXPECT_EQ(runs[1]["status"], "finished");
  EXPECT_EQ(runs[1]["points"], 20);
  EXPECT_NE(rt("runs list").out.find("incomplete"), std::string::npos);
  auto show = rt("runs show 1 --json");
  ASSERT_EQ(show.exit_code, 0);
  EXPECT_EQ(json::parse(show.out)["points"].size(), 20u);
  // The database takes new runs after the crash.
  ASSERT_EQ(rt("run " + kSmall).exit_code, 0);
  EXPECT_EQ(json::parse(rt("runs list --json").out)["runs"][0]["id"], 3);
}

TEST_F(Results, DbOnTextFile_ClearErrorAndFileUntouched) {
  const fs::path p = dir_ / "notes.db";
  std::ofstream(p) << "quarterly capacity notes\n";
  const std::string before = read_bytes(p);
  for (const std::string& cmd : {"run " + kSmall, std::string("runs list")}) {
    auto r = run(cmd + " --db " + p.string());
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_NE(r.err.find("is not a racktwin results database: it is not an SQLite database"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("left untouched"), std::string::npos) << r.err;
  }
  EXPECT_EQ(read_bytes(p), before);
  EXPECT_FALSE(fs::exists(p.string() + "-wal"));
}

TEST_F(Results, DbOnForeignSqlite_ClearErrorAndFileUntouched) {
  const fs::path p = dir_ / "inventory.sqlite";
  {
    SQLite::Database other(p.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    other.exec("CREATE TABLE racks (id TEXT); INSERT INTO racks VALUES ('r1')");
  }
  const std::string before = read_bytes(p);
  auto r = run("run " + kSmall + " --db " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is an SQLite database, but not racktwin's"), std::string::npos) << r.err;
  EXPECT_EQ(read_bytes(p), before);
}

TEST_F(Results, EnvironmentVariable_ChoosesTheDatabase) {
  const fs::path p = dir_ / "from-env.db";
  auto r = run("run " + kSmall + " --quiet");  // RACKTWIN_DB from run_support
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string cmd =
      "env RACKTWIN_DB=" + p.string() + " " + RACKTWIN_BIN + " run " + kSmall + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_TRUE(fs::exists(p));
  EXPECT_EQ(json::parse(run("runs list --json --db " + p.string()).out)["runs"].size(), 1u);
}

TEST_F(Results, ScenarioOutputSection_NamesTheDatabaseAndThePlots) {
  const fs::path scenario = dir_ / "with-output.yaml";
  const fs::path db = dir_ / "scenario.db", plots = dir_ / "scenario-plots";
  std::ofstream(scenario) << read_bytes(kSmall) << "output: {db: " << db.string()
                          << ", plots: " << plots.string() << "}\n";
  const std::string cmd = std::string("env -u RACKTWIN_DB ") + RACKTWIN_BIN + " run " +
                          scenario.string() + " --quiet > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(json::parse(run("runs list --json --db " + db.string()).out)["runs"].size(), 1u);
  EXPECT_TRUE(fs::exists(plots / "gpt-oss-120b-2k512-power.svg"));
  // --db wins over the scenario.
  ASSERT_EQ(rt("run " + scenario.string() + " --quiet").exit_code, 0);
  EXPECT_EQ(json::parse(run("runs list --json --db " + db.string()).out)["runs"].size(), 1u);
  EXPECT_EQ(json::parse(rt("runs list --json").out)["runs"].size(), 1u);
}

TEST_F(Results, RunPlotsAndPlotCommand_WritePngAndSvg) {
  const fs::path plots = dir_ / "plots";
  auto r = rt("run " + kSmall + " --plots " + plots.string() + " --points " +
              src("tests/cli/data/published-small.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::size_t png = 0, svg = 0;
  for (const auto& f : fs::directory_iterator(plots)) {
    png += f.path().extension() == ".png" ? 1 : 0;
    svg += f.path().extension() == ".svg" ? 1 : 0;
  }
  EXPECT_EQ(png, 14u);  // 7 charts for each of the two (model, workload) groups
  EXPECT_EQ(svg, 14u);
  QImage img(QString::fromStdString((plots / "gpt-oss-120b-2k512-pareto-per-xpu.png").string()));
  EXPECT_EQ(img.width(), 1200);
  EXPECT_EQ(img.height(), 750);

  const fs::path out = dir_ / "again";
  auto p = rt("plot latest --out " + out.string() + " --format png --width 640 --height 480");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("Wrote 14 chart files of run 1"), std::string::npos) << p.out;
  QImage small(QString::fromStdString((out / "gpt-oss-120b-2k512-power.png").string()));
  EXPECT_EQ(small.width(), 640);
  EXPECT_EQ(small.height(), 480);
  EXPECT_FALSE(fs::exists(out / "gpt-oss-120b-2k512-power.svg"));
  EXPECT_EQ(rt("plot 9 --out " + out.string()).exit_code, 2);
}

// Runs racktwin on a pseudo-terminal; returns what it wrote there. With `stop_at`, kills it as
// soon as that text has appeared (what it wrote until then is returned).
std::string run_on_terminal(const std::vector<std::string>& args, const std::string& stop_at = {}) {
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) return "forkpty failed";
  if (pid == 0) {
    std::vector<char*> argv{const_cast<char*>(RACKTWIN_BIN)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(RACKTWIN_BIN, argv.data());
    ::_exit(127);
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;) {
    out.append(buf, static_cast<std::size_t>(n));
    if (!stop_at.empty() && out.find(stop_at) != std::string::npos) {
      ::kill(pid, SIGKILL);
      break;
    }
  }
  ::close(master);
  ::waitpid(pid, nullptr, 0);
  return out;
}

// The bar is drawn once the run has taken a second; the first run is stopped as soon as it shows.
// The quiet run resumes that run and draws nothing in the seconds it still takes.
TEST_F(Results, ProgressBar_OnATerminal_NotWithQuiet) {
  const std::string shown = run_on_terminal({"run", kLong, "--db", db_}, "ETA");
  EXPECT_NE(shown.find("ETA"), std::string::npos) << shown.substr(0, 400);
  EXPECT_NE(shown.find("%"), std::string::npos);
  const std::string quiet = run_on_terminal({"run", kLong, "--db", db_, "--quiet"});
  EXPECT_EQ(quiet.find("ETA"), std::string::npos);
  EXPECT_NE(quiet.find("Stored as run 1"), std::string::npos) << quiet.substr(0, 400);
}

}  // namespace
