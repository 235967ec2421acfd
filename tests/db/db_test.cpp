// The results database: opening and refusing files, writing and reading runs, deleting with
// everything they own; the metric list, CSV quoting, the line diff and run comparison.

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "db/codec.hpp"
#include "db/compare.hpp"
#include "db/export.hpp"
#include "db/metrics.hpp"
#include "db/provenance.hpp"
#include "db/store.hpp"
#include "sim/evaluate.hpp"
#include "sim/result_schema.hpp"
#include "test_support.hpp"

namespace {

using namespace racktwin;
namespace fs = std::filesystem;

// A fresh temporary directory per test, removed afterwards.
class Db : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("racktwin-db-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A point result as the simulation would return it, with made-up numbers.
sim::PointResult fake_point(const std::string& system, int concurrency, double tps) {
  sim::PointResult r;
  r.spec.system = &test::shipped_system(system);
  r.spec.model = test::shipped_catalog().find_model("gpt-oss-120b");
  r.spec.layout.tp = 4;
  r.spec.precision = "fp4";
  r.spec.workload.isl = 1024;
  r.spec.workload.osl = 128;
  r.spec.workload_id = "1k128";
  r.spec.arrivals = sim::ClosedLoop{concurrency};
  r.xpus = 4;
  r.requests = 100;
  r.completed = 110;
  r.total_tps_per_xpu = tps;
  r.interactivity = 1000.0 / concurrency;
  r.compute_activity = 0.4;
  r.memory_activity = 0.6;
  std::vector<double> lat;
  for (int i = 0; i < 100; ++i) lat.push_back(0.01 * (i + 1) + 1e-3 * concurrency);
  r.ttft = sim::Stats::of(lat);
  r.tpot = sim::Stats::of(lat);
  r.e2e = sim::Stats::of(lat);
  r.timeseries.resize(3);
  r.timeseries[1].output_tokens = 42;
  r.timeseries[1].compute_activity = 0.5;
  sim::evaluate(r, *power::PowerModel::of(*r.spec.system));
  return r;
}

db::RunInfo fake_info(std::uint64_t seed) {
  db::RunInfo i;
  i.scenario_name = "fake";
  i.scenario_file = "fake.yaml";
  i.scenario_text = "name: fake\nseed: " + std::to_string(seed) + "\n";
  i.scenario_hash = db::content_hash(i.scenario_text);
  i.seed = seed;
  i.version = "0.0.0";
  i.commit = "abc";
  i.catalog_hash = "c";
  i.calibration_hash = "k";
  i.options = "{}";
  return i;
}

std::int64_t store_run(db::Store& s, std::uint64_t seed, double tps_scale = 1.0) {
  const auto id = s.begin_run(fake_info(seed), {{"system", "x", "f", "1 W", "why"}});
  sim::PointResult failed = fake_point("gb200-nvl72", 2, 0);
  failed.error = "layout does not fit";
  s.add_points(id, {fake_point("jalapeno-a0", 1, 100 * tps_scale),
                    fake_point("gb200-nvl72", 1, 90 * tps_scale), failed});
  s.finish_run(id, 1.5);
  return id;
}

TEST_F(Db, Open_TextFile_RefusedAndLeftUntouched) {
  const std::string p = path("notes.txt");
  std::ofstream(p) << "my notes, not a database\n";
  const std::string before = read_bytes(p);
  auto s = db::Store::open(p, db::Store::Mode::create);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("not a racktwin results database"), std::string::npos) << s.error();
  EXPECT_NE(s.error().find("not an SQLite database"), std::string::npos) << s.error();
  EXPECT_EQ(read_bytes(p), before);
}

TEST_F(Db, Open_ForeignSqlite_RefusedAndLeftUntouched) {
  const std::string p = path("other.db");
  {
    SQLite::Database other(p, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    other.exec("CREATE TABLE runs (id INTEGER); INSERT INTO runs VALUES (7)");
  }
  const std::string before = read_bytes(p);
  auto s = db::Store::open(p, db::Store::Mode::create);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("not racktwin's"), std::string::npos) << s.error();
  EXPECT_EQ(read_bytes(p), before);
}

TEST_F(Db, Open_NewerSchema_Refused) {
  const std::string p = path("new.db");
  ASSERT_TRUE(db::Store::open(p, db::Store::Mode::create));
  {
    SQLite::Database raw(p, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA user_version = " + std::to_string(db::kSchemaVersion + 1));
  }
  auto s = db::Store::open(p, db::Store::Mode::create);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("newer racktwin"), std::string::npos) << s.error();
}

TEST_F(Db, Open_MissingFileForReading_FailsWithoutCreatingIt) {
  const std::string p = path("absent.db");
  auto s = db::Store::open(p, db::Store::Mode::existing);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("no results database"), std::string::npos);
  EXPECT_FALSE(fs::exists(p));
}

TEST_F(Db, Open_NewFile_HasMarkerSchemaVersionWalAndForeignKeys) {
  const std::string p = path("new.db");
  auto s = db::Store::open(p, db::Store::Mode::create);
  ASSERT_TRUE(s) << s.error();
  SQLite::Database raw(p, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("PRAGMA application_id").getInt(), db::kApplicationId);
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), db::kSchemaVersion);
  EXPECT_EQ(raw.execAndGet("PRAGMA journal_mode").getString(), "wal");
  // Reopening an existing racktwin database works.
  EXPECT_TRUE(db::Store::open(p, db::Store::Mode::existing));
}

TEST_F(Db, Run_WrittenAndRead_KeepsEveryValueAndOrder) {
  auto s = db::Store::open(path("r.db"), db::Store::Mode::create);
  ASSERT_TRUE(s);
  const auto id = store_run(*s, 5);
  const auto run = s->load(id, {.percentiles = true, .timeseries = true});
  ASSERT_TRUE(run);
  EXPECT_EQ(run->info.state(), "finished");
  EXPECT_EQ(run->info.seed, 5u);
  EXPECT_EQ(run->info.points, 3);
  EXPECT_EQ(run->info.failed_points, 1);
  ASSERT_EQ(run->assumptions.size(), 1u);
  ASSERT_EQ(run->points.size(), 3u);
  const auto expected = db::point_metrics(fake_point("jalapeno-a0", 1, 100));
  const auto& p0 = run->points[0];
  EXPECT_EQ(p0.key.system, "jalapeno-a0");
  ASSERT_EQ(p0.metrics.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(p0.metrics[i].name, expected[i].name);
    EXPECT_EQ(p0.metrics[i].value, expected[i].value) << expected[i].name;  // bitwise
    EXPECT_EQ(p0.metrics[i].unit, expected[i].unit);
  }
  ASSERT_EQ(p0.percentiles_s.at("ttft_s").size(), 101u);
  EXPECT_DOUBLE_EQ(p0.percentiles_s.at("ttft_s")[50], fake_point("jalapeno-a0", 1, 1).ttft.median);
  ASSERT_EQ(p0.timeseries.size(), 3u);
  EXPECT_EQ(p0.timeseries[1].output_tokens, 42);
  EXPECT_EQ(run->points[2].error, "layout does not fit");
  EXPECT_TRUE(run->points[2].metrics.empty());
}

TEST_F(Db, Run_NotFinished_ShowsIncompleteOnceItsProcessIsGone) {
  auto s = db::Store::open(path("r.db"), db::Store::Mode::create);
  ASSERT_TRUE(s);
  const auto id = s->begin_run(fake_info(1), {});
  EXPECT_EQ(s->info(id)->state(), "running");  // this process is alive
  {
    SQLite::Database raw(path("r.db"), SQLite::OPEN_READWRITE);
    raw.exec("UPDATE runs SET pid = 999999999");  // no such process
  }
  EXPECT_EQ(s->info(id)->state(), "incomplete");
  // A process that was killed but not yet reaped by its parent (a zombie) is gone too.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // it has exited, not been reaped
  {
    SQLite::Database raw(path("r.db"), SQLite::OPEN_READWRITE);
    raw.exec("UPDATE runs SET pid = " + std::to_string(child));
  }
  EXPECT_EQ(s->info(id)->state(), "incomplete");
  ::waitpid(child, nullptr, 0);
}

TEST_F(Db, Remove_DeletesTheRunAndEverythingItOwns) {
  auto s = db::Store::open(path("r.db"), db::Store::Mode::create);
  ASSERT_TRUE(s);
  const auto keep = store_run(*s, 1);
  const auto gone = store_run(*s, 2);
  EXPECT_TRUE(s->remove(gone));
  EXPECT_FALSE(s->remove(gone));
  EXPECT_FALSE(s->info(gone));
  SQLite::Database raw(path("r.db"), SQLite::OPEN_READONLY);
  for (const char* table :
       {"points", "point_values", "latency_percentiles", "timeseries", "metrics", "assumptions"}) {
    const std::string q = std::string("SELECT COUNT(*) FROM ") + table;
    const auto after = raw.execAndGet(q).getInt64();
    EXPECT_GT(after, 0) << table << ": the kept run lost its rows";
  }
  EXPECT_EQ(raw.execAndGet("SELECT COUNT(*) FROM points WHERE run_id != " + std::to_string(keep))
                .getInt64(),
            0);
  EXPECT_EQ(raw.execAndGet("SELECT COUNT(*) FROM point_values v LEFT JOIN points p ON p.id = "
                           "v.point_id WHERE p.id IS NULL")
                .getInt64(),
            0);
}

TEST(Db_Metrics, PointMetrics_NamesUniqueAndPowerPartsAddUp) {
  const auto m = db::point_metrics(fake_point("jalapeno-a0", 4, 1000));
  std::set<std::string> names;
  for (const auto& x : m) EXPECT_TRUE(names.insert(x.name).second) << "duplicate " << x.name;
  double parts = 0;
  for (const char* n : {"power_xpu_w", "power_tray_overhead_w", "power_switches_w", "power_hosts_w",
                        "power_conversion_loss_w", "power_facility_overhead_w"})
    parts += *db::find_metric(m, n);
  EXPECT_NEAR(parts, *db::find_metric(m, "power_all_in_operating_w"), 1e-9);
  EXPECT_GT(*db::find_metric(m, "power_facility_overhead_w"), 0);
}

TEST(Db_Codec, StoredPointAndJson_RoundTripEveryField) {
  const sim::PointResult r = fake_point("jalapeno-a0", 4, 1234.5678901234567);
  const db::StoredPoint p = db::stored_point(r, 7);
  const sim::PointResult back = db::to_result(p, r.spec);
  for (const auto& f : sim::result_fields())
    EXPECT_EQ(f.get(back), f.get(r)) << f.name;  // exact: no field is lost or rounded
  for (const auto& d : sim::distribution_fields())
    EXPECT_EQ((back.*d.stats).percentiles, (r.*d.stats).percentiles) << d.name;
  ASSERT_EQ(back.timeseries.size(), r.timeseries.size());
  for (std::size_t t = 0; t < r.timeseries.size(); ++t)
    for (const auto& f : sim::series_fields())
      EXPECT_EQ(back.timeseries[t].*f.value, r.timeseries[t].*f.value) << f.name << " at " << t;
  EXPECT_GT(back.timeseries[1].xpu_power_w, back.timeseries[0].xpu_power_w);

  const auto j = db::point_json(p);
  const auto again = db::point_from_json(nlohmann::ordered_json::parse(j.dump()));
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(db::point_json(*again).dump(), j.dump());
  EXPECT_EQ(again->index, 7);
  EXPECT_FALSE(db::point_from_json(nlohmann::ordered_json{{"index", 1}}).has_value());
}

TEST(Db_Codec, EverySettableFieldOfTheSchema_ReachesThePointResult) {
  // A field the schema lists but to_result cannot set would come back from a worker as zero.
  sim::PointResult r = fake_point("jalapeno-a0", 4, 100);
  double v = 1;
  for (const auto& f : sim::result_fields())
    if (f.set != nullptr) f.set(r, v += 1);
  const sim::PointResult back = db::to_result(db::stored_point(r, 0), r.spec);
  for (const auto& f : sim::result_fields()) {
    if (f.set == nullptr) continue;
    EXPECT_NE(f.get(r), 0.0) << f.name;
    EXPECT_EQ(f.get(back), f.get(r)) << f.name;
  }
}

TEST(Db_Export, CsvField_QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(db::csv_field("tp4-ep4"), "tp4-ep4");
  EXPECT_EQ(db::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(db::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(db::csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(std::stod(db::number_text(0.1 + 0.2)), 0.1 + 0.2);
}

TEST(Db_Compare, LineDiff_ShowsChangedLinesWithContext) {
  EXPECT_TRUE(db::line_diff("a\nb\nc\n", "a\nb\nc\n").empty());
  const auto d = db::line_diff("a\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nD\ne\nf\ng\n", 1);
  const std::vector<std::string> want{"  c", "- d", "+ D", "  e"};  // removals first
  EXPECT_EQ(d, want);
}

// A run stored by an older version lacks a metric the newer one reports: the metric is listed as
// reported by one run only and does not make a point differ; a metric both report still does.
TEST(Db_Compare, MetricOneRunDoesNotReport_ListedNotCountedAsADifference) {
  auto run = [](std::int64_t id, std::vector<db::Metric> metrics) {
    db::StoredRun r;
    r.info.id = id;
    for (const auto& m : metrics) r.metrics.push_back({m.name, m.unit});
    db::StoredPoint p;
    p.key.system = "gb200-nvl72";
    p.metrics = std::move(metrics);
    r.points.push_back(p);
    return r;
  };
  const auto old_run = run(1, {{"total_tps_per_xpu", 100.0, "tok/s/XPU"}});
  const auto new_run = run(2, {{"total_tps_per_xpu", 100.0, "tok/s/XPU"},
                               {"kv_prompts_per_transfer", 0.0, "prompts"}});
  const auto c = db::compare(old_run, new_run);
  EXPECT_EQ(c.differing_points, 0);
  EXPECT_TRUE(c.metrics_only_a.empty());
  ASSERT_EQ(c.metrics_only_b, std::vector<std::string>{"kv_prompts_per_transfer"});
  EXPECT_EQ(db::comparison_json(c)["metrics_only_in_b"][0], "kv_prompts_per_transfer");
  const auto moved = run(3, {{"total_tps_per_xpu", 101.0, "tok/s/XPU"}});
  EXPECT_EQ(db::compare(old_run, moved).differing_points, 1);
  EXPECT_EQ(db::compare(new_run, moved).differing_points, 1);
  EXPECT_EQ(db::compare(new_run, moved).metrics_only_a,
            std::vector<std::string>{"kv_prompts_per_transfer"});
}

TEST_F(Db, Compare_SameSeed_NoDifference_OtherSeed_SeedAndResultsDiffer) {
  auto s = db::Store::open(path("r.db"), db::Store::Mode::create);
  ASSERT_TRUE(s);
  const auto a = store_run(*s, 1), b = store_run(*s, 1), c = store_run(*s, 2, 1.1);
  const auto same = db::compare(*s->load(a), *s->load(b));
  EXPECT_TRUE(same.fields.empty());
  EXPECT_TRUE(same.scenario_diff.empty());
  EXPECT_EQ(same.differing_points, 0);
  const auto other = db::compare(*s->load(a), *s->load(c));
  ASSERT_FALSE(other.fields.empty());
  EXPECT_FALSE(other.scenario_diff.empty());
  EXPECT_EQ(other.differing_points, 2);  // the failed point is the same in both
  const auto& tps = *std::find_if(other.points[0].metrics.begin(), other.points[0].metrics.end(),
                                  [](const auto& m) { return m.name == "total_tps_per_xpu"; });
  EXPECT_NEAR(*tps.relative(), 0.1, 1e-12);
}

}  // namespace
