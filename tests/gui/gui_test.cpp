// The GUI under the offscreen platform: every model passes Qt's model tester, the catalog view
// shows the shipped systems, opening a plan fills the plan view off the UI thread, and opening a
// rehearsal fills the failure view with its tables and charts.

#include <gtest/gtest.h>
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QSignalSpy>
#include <QTabWidget>
#include <filesystem>
#include <fstream>

#include "charts/charts.hpp"
#include "app/run.hpp"
#include "gui/main_window.hpp"
#include "gui/palette.hpp"
#include "scenarios/catalog_loader.hpp"

namespace racktwin::gui {
namespace {

const Catalog& catalog() {
  static const Catalog cat = *load_catalog_dir(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/catalog");
  return cat;
}

struct Gui : ::testing::Test {
  std::filesystem::path dir;
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("racktwin-gui-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
};

TEST_F(Gui, Models_PassQtsModelTester) {
  MainWindow w(catalog(), (dir / "r.db").string());
  QAbstractItemModelTester systems(w.systems_model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  QAbstractItemModelTester runs(w.runs_model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  QAbstractItemModelTester plan(w.plan_model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  EXPECT_GE(w.systems_model()->rowCount(), 10);
  EXPECT_EQ(w.systems_model()->index(0, 0).data().toString().isEmpty(), false);
  EXPECT_EQ(w.runs_model()->rowCount(), 0);  // no database yet
}

TEST_F(Gui, ViewsWithoutABackEnd_SaySoPlainly) {
  MainWindow w(catalog(), (dir / "r.db").string());
  QStringList tabs;
  for (int i = 0; i < w.tabs()->count(); ++i) tabs << w.tabs()->tabText(i);
  EXPECT_EQ(tabs.join(","), "Systems,Scenario,Results,Runs,Fleet plan,Failures");
}

TEST_F(Gui, SystemFigures_ShowEverySection_TablesAndNotesIncluded) {
  // The catalog entry's facts, its network tiers table and its notes (the serving stack and the
  // engine limits its published benchmarks ran), as `racktwin catalog show` prints them.
  MainWindow w(catalog(), (dir / "r.db").string());
  w.select_system("h200-hgx");
  const QString text = w.system_figures();
  // and the multi-node deployments its published benchmarks ran (scenarios/catalog/multinode.yaml).
  for (const char* expected : {"h200-sxm", "switch hops", "scale-out", "engine limits, as its published",
                               "prefill/decode disaggregation", "Published multi-node deployments",
                               "1p6d/tp8-ep8-dpa", "c256_ctx1_gen6_dep8_batch512_eplb0_mtp0"})
    EXPECT_TRUE(text.contains(expected)) << expected << "\n" << text.toStdString();
}

TEST_F(Gui, OpeningAPlan_FillsTheQuarterTable) {
  const std::string plan =
      std::string(RACKTWIN_SOURCE_DIR) + "/tests/plan/data/gb200-inferencex.yaml";
  MainWindow w(catalog(), (dir / "r.db").string());
  QAbstractItemModelTester tester(w.plan_model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  QSignalSpy done(&w, &MainWindow::planned);
  w.open_plan(QString::fromStdString(plan));
  ASSERT_TRUE(done.wait(30000)) << w.plan_status().toStdString();
  ASSERT_EQ(w.plan_model()->rowCount(), 4) << w.plan_status().toStdString();
  EXPECT_EQ(w.plan_model()->index(0, 0).data().toString(), "2026Q3");
  EXPECT_EQ(w.plan_model()->index(0, 4).data().toString(), "100");  // racks installed
  EXPECT_TRUE(w.plan_status().contains("stored as plan 1"));
}

TEST_F(Gui, ABadPlan_ShowsItsLocatedErrors) {
  const auto plan = dir / "bad.yaml";
  std::ofstream(plan) << "name: x\nquarters: {from: 2026Q3, to: 2026Q1}\n";
  MainWindow w(catalog(), (dir / "r.db").string());
  QSignalSpy done(&w, &MainWindow::planned);
  w.open_plan(QString::fromStdString(plan.string()));
  ASSERT_TRUE(done.wait(30000));
  EXPECT_TRUE(w.plan_status().contains("bad.yaml:2:")) << w.plan_status().toStdString();
  EXPECT_EQ(w.plan_model()->rowCount(), 0);
}

TEST_F(Gui, OpeningARehearsal_FillsTheFailureViewWithItsCharts) {
  const auto file = dir / "site.yaml";
  std::ofstream(file) << "name: small-site\nsystem: jalapeno-a0\ndomains: 2\nhorizon: 20 days\n"
                         "sample_every: 6 h\nseed: 11\nserving:\n"
                         "  tps_per_replica: {value: 20000 tok/s, assumption: true, reason: a test}\n"
                         "  replica_xpus: 8\nspare_capacity: {racks: 1}\n";
  MainWindow w(catalog(), (dir / "r.db").string());
  FailuresView* f = w.failures();
  QAbstractItemModelTester summary(f->summary_model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  QAbstractItemModelTester classes(f->classes_model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  QAbstractItemModelTester events(f->events_model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  QSignalSpy done(f, &FailuresView::rehearsed);
  f->open_rehearsal(QString::fromStdString(file.string()));
  ASSERT_TRUE(done.wait(30000)) << f->status().toStdString();
  EXPECT_TRUE(f->status().contains("small-site")) << f->status().toStdString();
  EXPECT_TRUE(f->status().contains(" of the site's ")) << f->status().toStdString();
  EXPECT_EQ(f->summary_model()->rowCount(), 1);
  EXPECT_EQ(f->classes_model()->rowCount(), 10);  // one row per part class
  EXPECT_GT(f->events_model()->rowCount(), 0);
  EXPECT_EQ(f->charts_shown(), 3);
}

// A serving rehearsal over a simulated sweep: its worst failure replays request by request in a
// window of its own, with the table and the chart through the failure.
TEST_F(Gui, ReplayingTheWorstFailure_ShowsItsTableAndChart) {
  std::ofstream(dir / "sweep.yaml")
      << "name: replay-sweep\nseed: 5\nsystems: [jalapeno-a0]\nmodels: [gpt-oss-120b]\n"
         "workloads:\n  - {id: 8k1k, kind: inferencex, isl: 8192, osl: 1024, range_ratio: 0.8}\n"
         "layouts: {named: [{tp: 8}]}\nconcurrency: [8, 32]\n";
  const auto file = dir / "site.yaml";
  std::ofstream(file) << "name: replay-site\nsystem: jalapeno-a0\ndomains: 2\nhorizon: 10 days\n"
                         "seed: 7\nserving:\n  scenario: sweep.yaml\n  workload: 8k1k\n"
                         "  model: gpt-oss-120b\n  target: {tpot_p50: 100 ms, ttft_p99: 30 s}\n"
                         "spare_capacity: {racks: 1}\n";
  MainWindow w(catalog(), (dir / "r.db").string());
  FailuresView* f = w.failures();
  QAbstractItemModelTester rows(f->replay_model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  QSignalSpy done(f, &FailuresView::rehearsed);
  f->open_rehearsal(QString::fromStdString(file.string()));
  ASSERT_TRUE(done.wait(60000)) << f->status().toStdString();
  QSignalSpy replayed(f, &FailuresView::replayed);
  f->replay("worst");
  ASSERT_TRUE(replayed.wait(120000)) << f->replay_status().toStdString();
  EXPECT_TRUE(f->replay_status().startsWith("Failure ")) << f->replay_status().toStdString();
  EXPECT_EQ(f->replay_model()->rowCount(), 8);  // TTFT and TPOT p50 and p99, E2E, restarts, down, tokens
  EXPECT_TRUE(f->replay_chart_shown());
}

TEST_F(Gui, ABadRehearsal_ShowsItsLocatedErrors) {
  const auto file = dir / "bad.yaml";
  std::ofstream(file) << "name: x\nsystem: jalapeno-a9\ndomains: 1\nhorizon: 1 day\n";
  MainWindow w(catalog(), (dir / "r.db").string());
  QSignalSpy done(w.failures(), &FailuresView::rehearsed);
  w.failures()->open_rehearsal(QString::fromStdString(file.string()));
  ASSERT_TRUE(done.wait(30000));
  EXPECT_TRUE(w.failures()->status().contains("bad.yaml:2:")) << w.failures()->status().toStdString();
  EXPECT_EQ(w.failures()->charts_shown(), 0);
}

TEST_F(Gui, RackElevation_ClickingAPartShowsItsBlastRadius) {
  MainWindow w(catalog(), (dir / "r.db").string());
  w.resize(1366, 768);
  w.select_system("jalapeno-a0");
  w.show_rack();
  RackView* rack = w.rack();
  const auto& e = rack->elevation();
  ASSERT_EQ(e.system, "jalapeno-a0");
  EXPECT_EQ(e.compute.size(), 24u);  // 16 Vindaloo trays, 8 Chana trays
  EXPECT_EQ(e.host.size(), 16u);     // 16 Katsu trays beside them
  EXPECT_NEAR(e.compute.front().rated.value(), 8 * 700 + 1200, 1e-6);
  // A click on a Katsu tray: the Vindaloo tray it hosts loses its 8 XPUs.
  const std::size_t katsu5 = e.compute.size() + 5;
  QSignalSpy clicked(rack, &RackView::part_clicked);
  rack->resize(640, 560);
  // A click where the slot is drawn (a synthetic mouse event would create Qt's pointing device,
  // which the process's static offscreen application cannot destroy cleanly at exit).
  rack->click(rack->slot_rect(katsu5).center());
  ASSERT_EQ(clicked.count(), 1);
  EXPECT_EQ(clicked.front().front().toString(), "hostrack0/katsu5");
  EXPECT_TRUE(w.rack_status().contains("lost 8 XPUs")) << w.rack_status().toStdString();
  EXPECT_TRUE(w.rack_status().contains("256 before, 255 after")) << w.rack_status().toStdString();
  ASSERT_EQ(rack->effects().size(), e.compute.size() + e.host.size());
  for (std::size_t i = 0; i < rack->effects().size(); ++i)
    EXPECT_EQ(rack->effects()[i], i == 5 || i == katsu5 ? topology::Effect::lost : topology::Effect::none) << i;
  // A Chana tray: every Vindaloo tray of the rack is slowed, none lost.
  w.fail_part("rack0/chana2");
  EXPECT_TRUE(w.rack_status().contains("slowed 128")) << w.rack_status().toStdString();
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(rack->effects()[i], topology::Effect::slowed) << i;
}

TEST_F(Gui, DarkPalette_DarkensTheWindowAndTheCharts_AndLightRestoresIt) {
  apply_palette(true);
  EXPECT_LT(QApplication::palette().color(QPalette::Window).lightness(), 80);
  QChart chart;
  match_palette(&chart);
  EXPECT_EQ(chart.theme(), QChart::ChartThemeDark);
  apply_palette(false);
  EXPECT_GT(QApplication::palette().color(QPalette::Window).lightness(), 150);
  QChart light;
  match_palette(&light);
  EXPECT_EQ(light.theme(), QChart::ChartThemeLight);
}

TEST_F(Gui, Runs_CompareTwoSideBySide_AndExportOne) {
  const std::string db = (dir / "r.db").string();
  for (std::uint64_t seed : {1, 2}) {
    app::RunRequest rq;
    rq.scenario_file = std::string(RACKTWIN_SOURCE_DIR) + "/tests/sim/golden/small.yaml";
    rq.db = db;
    rq.seed = seed;
    ASSERT_TRUE(app::run_scenario(catalog(), rq).has_value());
  }
  MainWindow w(catalog(), db);
  QAbstractItemModelTester tester(w.comparison_model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  ASSERT_EQ(w.runs_model()->rowCount(), 2);
  w.select_runs({1});
  w.compare_selected();
  EXPECT_TRUE(w.runs_status().contains("exactly two")) << w.runs_status().toStdString();
  w.select_runs({1, 2});
  ASSERT_EQ(w.selected_runs(), (std::vector<std::int64_t>{1, 2}));
  w.compare_selected();
  ASSERT_GE(w.comparison_model()->rowCount(), 1);
  EXPECT_EQ(w.comparison_model()->headerData(1, Qt::Horizontal).toString(), "tok/s/XPU 1");
  w.select_runs({2});
  w.export_selected(QString::fromStdString((dir / "csv").string()));
  EXPECT_TRUE(w.runs_status().contains("Run 2 exported")) << w.runs_status().toStdString();
  EXPECT_TRUE(std::filesystem::exists(dir / "csv" / "points.csv"));
}

}  // namespace
}  // namespace racktwin::gui
