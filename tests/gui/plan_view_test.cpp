// The fleet plan view, the domain view and the runs filter under the offscreen platform: the
// heatmap draws every unit the plan installs by the selected quarter, a what-if edit re-plans and
// changes the table, failing a part of a whole domain shows what it costs, and the filter filters.

#include <gtest/gtest.h>
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <filesystem>

#include "app/run.hpp"
#include "charts/charts.hpp"
#include "gui/main_window.hpp"
#include "scenarios/catalog_loader.hpp"

namespace racktwin::gui {
namespace {

const Catalog& catalog() {
  static const Catalog cat =
      *load_catalog_dir(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/catalog");
  return cat;
}

const std::string kTwoSites = std::string(RACKTWIN_TEST_DATA) + "/data/two-sites.yaml";

struct GuiViews : ::testing::Test {
  std::filesystem::path dir;
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("racktwin-gui-views-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  // Plans the file in the window's plan view and waits for it to be shown.
  static void plan(MainWindow& w, const std::string& file) {
    QSignalSpy done(&w, &MainWindow::planned);
    w.open_plan(QString::fromStdString(file));
    ASSERT_TRUE(done.wait(30000)) << w.plan_status().toStdString();
    ASSERT_NE(w.plan_view()->outcome(), nullptr) << w.plan_status().toStdString();
  }
  static void replan(MainWindow& w, const plan::WhatIf& edit) {
    QSignalSpy done(&w, &MainWindow::planned);
    w.plan_view()->set_what_if(edit);
    ASSERT_TRUE(done.wait(30000)) << w.plan_status().toStdString();
  }
};

TEST_F(GuiViews, Heatmap_DrawsEveryUnitInstalledByTheSelectedQuarter) {
  MainWindow w(catalog(), (dir / "r.db").string());
  QAbstractItemModelTester tester(w.plan_model(),
                                  QAbstractItemModelTester::FailureReportingMode::Fatal);
  plan(w, kTwoSites);
  PlanView* v = w.plan_view();
  SiteHeatmap* map = v->heatmap();
  map->resize(900, 420);
  map->fit();
  const auto& rollout = v->outcome()->rollout;
  ASSERT_EQ(rollout.quarters.size(), 4u);
  for (int q = 0; q < 4; ++q) {
    v->select_quarter(q);
    ASSERT_EQ(map->quarter(), q);
    (void)map->grab();  // paints the frame
    const auto& row = rollout.quarters[static_cast<std::size_t>(q)];
    EXPECT_EQ(map->units_drawn(), static_cast<std::size_t>(row.total.units)) << q;
    EXPECT_EQ(map->units_in(plan::PositionState::installed),
              static_cast<std::size_t>(row.total.added))
        << q;
    EXPECT_EQ(map->units_in(plan::PositionState::serving),
              static_cast<std::size_t>(row.total.units - row.total.added))
        << q;
  }
  EXPECT_GT(rollout.quarters.back().total.units, 0);
  // Zoomed in on the first site, the frame draws only the units in view.
  map->zoom_at(map->position_centre(0, 0), 8);
  (void)map->grab();
  EXPECT_GT(map->units_drawn(), 0u);
  EXPECT_LT(map->units_drawn(), static_cast<std::size_t>(rollout.quarters.back().total.units));
  // A table row selects the quarter the heatmap shows.
  v->select_quarter(1);
  EXPECT_EQ(map->quarter(), 1);
  // The comparator's fleet fills the same sites with its racks.
  v->select_fleet("gb300-nvl72");
  ASSERT_EQ(map->fleet(), "gb300-nvl72");
  (void)map->grab();
  EXPECT_EQ(
      map->units_in(plan::PositionState::serving) + map->units_in(plan::PositionState::installed),
      static_cast<std::size_t>(v->outcome()->comparators.front().quarters[1].total.units));
  EXPECT_EQ(v->charts_shown(), 5);
}

TEST_F(GuiViews, Heatmap_HoverNamesTheUnitUnderTheCursor) {
  MainWindow w(catalog(), (dir / "r.db").string());
  plan(w, kTwoSites);
  SiteHeatmap* map = w.plan_view()->heatmap();
  map->resize(900, 420);
  map->fit();
  const QString facts = map->facts_at(map->position_centre(0, 0).toPoint());
  EXPECT_TRUE(facts.startsWith("north, hall 1, row 1")) << facts.toStdString();
  EXPECT_TRUE(facts.contains("jalapeno-a0")) << facts.toStdString();
  EXPECT_TRUE(facts.contains("128 XPUs")) << facts.toStdString();
  EXPECT_TRUE(map->facts_at(QPoint(2, 2)).isEmpty());
}

TEST_F(GuiViews, UnitsTab_ListsEveryGenerationAndComparatorAsPlanned) {
  MainWindow w(catalog(), (dir / "r.db").string());
  plan(w, kTwoSites);
  RowsModel* u = w.plan_view()->units_model();
  const auto& units = w.plan_view()->outcome()->units;
  ASSERT_EQ(u->rowCount(), static_cast<int>(units.size()));
  EXPECT_EQ(u->headerData(0, Qt::Horizontal, Qt::DisplayRole).toString(), "generation");
  const auto rows = w.plan_view()->outcome()->unit_table();
  ASSERT_EQ(u->columnCount(), static_cast<int>(rows.front().size()));
  for (int c = 0; c < u->columnCount(); ++c)
    EXPECT_EQ(u->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString().toStdString(),
              rows.front()[static_cast<std::size_t>(c)]);
  for (int r = 0; r < u->rowCount(); ++r) {
    EXPECT_TRUE(u->index(r, 0).data().toString().startsWith(
        QString::fromStdString(units[static_cast<std::size_t>(r)].generation)));
    for (int c = 0; c < u->columnCount(); ++c)
      EXPECT_EQ(u->index(r, c).data().toString().toStdString(),
                rows[static_cast<std::size_t>(r) + 1][static_cast<std::size_t>(c)]);
  }
}

TEST_F(GuiViews, WhatIf_AnEditReplansAndChangesTheTable) {
  MainWindow w(catalog(), (dir / "r.db").string());
  plan(w, kTwoSites);
  RowsModel* t = w.plan_model();
  const int last = t->rowCount() - 1;
  const QString energised = t->index(last, 2).data().toString();
  const QString cost = t->index(last, 13).data().toString();
  EXPECT_EQ(energised, "130.0");
  plan::WhatIf half;
  half.power_scale = 0.5;
  replan(w, half);
  EXPECT_EQ(t->index(last, 2).data().toString(), "65.0");
  EXPECT_TRUE(w.plan_status().contains("what-if: power 50 %")) << w.plan_status().toStdString();
  EXPECT_FALSE(w.plan_status().contains("stored as plan 2"));  // what-if plans are not stored
  plan::WhatIf dear;
  dear.electricity_usd_per_kwh = 0.30;
  replan(w, dear);
  EXPECT_EQ(t->index(last, 2).data().toString(), energised);
  EXPECT_NE(t->index(last, 13).data().toString(), cost);
  EXPECT_NEAR(w.plan_view()->what_if().electricity_usd_per_kwh.value_or(0), 0.30, 1e-9);
  plan::WhatIf alone;
  alone.comparators = std::vector<std::string>{};
  replan(w, alone);
  EXPECT_TRUE(w.plan_view()->outcome()->comparators.empty());
  replan(w, {});
  EXPECT_EQ(t->index(last, 13).data().toString(), cost);
  EXPECT_EQ(w.plan_view()->outcome()->comparators.size(), 1u);
}

TEST_F(GuiViews, DomainView_FailingAChanaTrayReducesCapacity) {
  MainWindow w(catalog(), (dir / "r.db").string());
  w.resize(1366, 768);
  w.select_system("jalapeno-a0");
  w.show_domain();
  DomainView* v = w.domain()->view();
  v->resize(1000, 600);
  const auto& e = v->elevation();
  ASSERT_EQ(e.compute.size(), 16u);  // 16 ASIC racks of 128 XPUs: one 2,048-XPU domain
  ASSERT_EQ(e.host.size(), 16u);     // with their host racks
  EXPECT_EQ(e.spines.size(), 2u);    // one plane per uplink tray of each rack
  EXPECT_EQ(v->slot_count(), 16u * 24 + 16u * 16 + 2);
  QSignalSpy clicked(v, &DomainView::part_clicked);
  const auto chana = v->find("rack3/chana2");
  ASSERT_TRUE(chana);
  v->click(v->slot_rect(*chana).center().toPoint());
  ASSERT_EQ(clicked.count(), 1);
  const QString s = w.domain()->status();
  EXPECT_TRUE(s.contains("slowed 128")) << s.toStdString();
  EXPECT_FALSE(s.contains("scale-up bandwidth left 100.00%")) << s.toStdString();
  ASSERT_EQ(v->effects().size(), v->slot_count());
  const auto all = e.every_slot();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool rack3_tray = all[i]->name.starts_with("rack3/vindaloo");
    EXPECT_EQ(v->effects()[i], rack3_tray                       ? topology::Effect::slowed
                               : all[i]->name == "rack3/chana2" ? topology::Effect::lost
                                                                : topology::Effect::none)
        << all[i]->name;
  }
  // A Katsu host of another rack takes one replica of eight XPUs out of the domain's 256.
  w.domain()->fail_part("hostrack9/katsu5");
  EXPECT_TRUE(w.domain()->status().contains("256 before, 255 after"))
      << w.domain()->status().toStdString();
}

TEST_F(GuiViews, DomainView_AnNvl72IsOneRackAndAnHgxServerOneServer) {
  MainWindow w(catalog(), (dir / "r.db").string());
  w.select_system("gb200-nvl72");
  const auto& nvl = w.domain()->view()->elevation();
  EXPECT_EQ(nvl.compute.size(), 1u);
  EXPECT_TRUE(nvl.host.empty());
  EXPECT_TRUE(nvl.spines.empty());
  w.select_system("h100-hgx");
  const auto& hgx = w.domain()->view()->elevation();
  ASSERT_EQ(hgx.compute.size(), 1u);
  EXPECT_EQ(hgx.domain_xpus, 8);
  EXPECT_EQ(hgx.compute.front().rack_slots.front().xpus, 8);
  EXPECT_GT(hgx.compute.front().rack_slots.size(),
            1u);  // the server's on-board switch and host CPUs
}

TEST_F(GuiViews, RunsFilter_ShowsOnlyTheMatchingRuns) {
  const std::string db = (dir / "r.db").string();
  for (std::uint64_t seed : {1, 2}) {
    app::RunRequest rq;
    rq.scenario_file = std::string(RACKTWIN_SOURCE_DIR) + "/tests/sim/golden/small.yaml";
    rq.db = db;
    rq.seed = seed;
    ASSERT_TRUE(app::run_scenario(catalog(), rq).has_value());
  }
  MainWindow w(catalog(), db);
  QAbstractItemModelTester tester(w.runs_shown(),
                                  QAbstractItemModelTester::FailureReportingMode::Fatal);
  ASSERT_EQ(w.runs_shown()->rowCount(), 2);
  const QString systems = w.runs_model()->index(0, 3).data().toString();
  EXPECT_FALSE(systems.isEmpty());
  w.filter_runs("FINISHED");  // any column, case-insensitive
  EXPECT_EQ(w.runs_shown()->rowCount(), 2);
  w.filter_runs("2", "seed");
  ASSERT_EQ(w.runs_shown()->rowCount(), 1);
  EXPECT_EQ(w.runs_shown()->index(0, 0).data().toString(), "2");
  EXPECT_TRUE(w.runs_status().contains("1 of 2 runs match")) << w.runs_status().toStdString();
  w.select_runs({2});
  EXPECT_EQ(w.selected_runs(), (std::vector<std::int64_t>{2}));
  w.filter_runs(systems.section(',', 0, 0), "systems");
  EXPECT_EQ(w.runs_shown()->rowCount(), 2);
  w.filter_runs("no-such-run");
  EXPECT_EQ(w.runs_shown()->rowCount(), 0);
  w.filter_runs("");
  EXPECT_EQ(w.runs_shown()->rowCount(), 2);
}

}  // namespace
}  // namespace racktwin::gui
