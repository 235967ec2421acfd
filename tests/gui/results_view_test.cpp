// The results view under the offscreen platform: a stored run's Pareto charts with the published
// points overlaid, a point picked on a chart filling its details and latency CDFs.

#include "gui/results_view.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QChart>
#include <QChartView>
#include <QScatterSeries>
#include <filesystem>

#include "app/run.hpp"
#include "charts/charts.hpp"
#include "scenarios/catalog_loader.hpp"

namespace racktwin::gui {
namespace {

constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

const Catalog& catalog() {
  static const Catalog cat =
      *load_catalog_dir(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/catalog");
  return cat;
}

std::string src(const std::string& path) {
  return std::string(RACKTWIN_SOURCE_DIR) + "/" + path;
}

struct Results : ::testing::Test {
  static inline std::filesystem::path dir;
  static std::string db() { return (dir / "r.db").string(); }
  // One run of the golden scenario: two systems, two workloads, two layouts.
  static void SetUpTestSuite() {
    dir =
        std::filesystem::temp_directory_path() / ("racktwin-results-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    app::RunRequest rq;
    rq.scenario_file = src("tests/sim/golden/small.yaml");
    rq.db = db();
    ASSERT_TRUE(app::run_scenario(catalog(), rq).has_value());
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir); }
};

// The marker series of a chart (those that carry their points' indices).
std::vector<QScatterSeries*> markers(QChart* c) {
  std::vector<QScatterSeries*> out;
  for (auto* s : c->series())
    if (auto* sc = qobject_cast<QScatterSeries*>(s);
        sc && sc->property(charts::kPointIndices).isValid())
      out.push_back(sc);
  return out;
}

QString detail(const RowsModel* m, const QString& name) {
  for (int r = 0; r < m->rowCount(); ++r)
    if (m->index(r, 1).data().toString() == name) return m->index(r, 2).data().toString();
  return {};
}

TEST_F(Results, Models_PassQtsModelTester) {
  ResultsView v(catalog(), db());
  QAbstractItemModelTester runs(v.runs_model(), kFatal);
  QAbstractItemModelTester groups(v.groups_model(), kFatal);
  QAbstractItemModelTester details(v.details_model(), kFatal);
  EXPECT_EQ(v.runs_model()->rowCount(), 1);
  EXPECT_EQ(v.groups_model()->rowCount(), 2);  // gpt-oss-120b with 2k512 and open-1k256
  v.show_group(1);
  v.refresh();
  EXPECT_GT(v.details_model()->rowCount(), 10);
}

TEST_F(Results, TheNewestRun_IsShownWithItsParetosAndThePublishedPoints) {
  ResultsView v(catalog(), db());
  v.set_points_file(src("tests/cli/data/published-small.yaml"));
  EXPECT_EQ(v.shown_run(), 1);
  EXPECT_TRUE(v.status().contains("3 points")) << v.status().toStdString();
  for (int k = 0; k < 2; ++k) {
    QChart* c = v.pareto(k)->chart();
    EXPECT_EQ(markers(c).size(), 2u) << k;  // one per system
    bool published = false;
    for (auto* s : c->series()) published = published || s->name().startsWith("published");
    EXPECT_TRUE(published) << k;  // a point on the curve, a peak and a best interactivity
  }
  // The first system's peak point is picked from the start.
  ASSERT_TRUE(v.selected_point().has_value());
  EXPECT_EQ(detail(v.details_model(), "system"), "jalapeno-a0");
}

TEST_F(Results, ClickingAPoint_FillsItsDetailsAndLatencyCdfs) {
  ResultsView v(catalog(), db());
  QScatterSeries* gb200 = markers(v.pareto(0)->chart()).at(1);
  const auto indices = gb200->property(charts::kPointIndices).value<QList<qulonglong>>();
  ASSERT_EQ(indices.size(), gb200->count());
  const QPointF last = gb200->at(gb200->count() - 1);
  v.click_marker(gb200, last);
  ASSERT_EQ(v.selected_point(), static_cast<std::size_t>(indices.back()));
  const RowsModel* d = v.details_model();
  EXPECT_EQ(detail(d, "system"), "gb200-nvl72");
  EXPECT_FALSE(detail(d, "layout").isEmpty());
  EXPECT_FALSE(detail(d, "ttft_p99_s").isEmpty());
  EXPECT_FALSE(detail(d, "power_hosts_w").isEmpty());
  EXPECT_FALSE(detail(d, "iteration_memory_s").isEmpty());
  EXPECT_NEAR(detail(d, "interactivity_tok_s_user").toDouble(), last.x(), last.x() * 1e-3);
  for (int m = 0; m < 3; ++m) EXPECT_EQ(v.cdf(m)->chart()->series().size(), 1) << m;
  EXPECT_TRUE(v.cdf_note().contains("stored percentiles")) << v.cdf_note().toStdString();
}

}  // namespace
}  // namespace racktwin::gui
