// Golden images of the GUI's views: each view is set up from fixed inputs, the window rendered
// offscreen at a fixed size, font and palette, and compared with tests/gui/golden/<view>.png.
//
// Tolerance: a pixel differs when one of its channels differs by more than kChannelTolerance; the
// image matches when at most kShareTolerance of its pixels differ (anti-aliasing and font hinting
// may move a few edge pixels between builds, never a layout or a colour).
// RACKTWIN_GOLDEN_UPDATE=1 writes the images instead of comparing. A mismatch writes
// <view>-actual.png and <view>-diff.png (differing pixels in red) into the build directory and
// names them.
//
// Deterministic rendering: the offscreen platform, DejaVu Sans 9 pt, the light Fusion palette, no
// cursor blinking, no animations; inputs in a fixed directory (their paths show in status lines);
// the runs' times, versions and hosts set to fixed values.
//
// Views: Systems (the rack, and the whole domain, each with a part failed), Scenario (a file with
// two problems, checked), Results (a stored run with the published points), Runs (filtered), Fleet
// plan (heatmap, timeline, what-if form) and Failures. A new view is one more entry of kViews, with
// a set-up that fills it from fixed inputs.

#include <gtest/gtest.h>

#include <QApplication>
#include <QImage>
#include <QSignalSpy>
#include <QTabWidget>
#include <SQLiteCpp/SQLiteCpp.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "app/run.hpp"
#include "charts/charts.hpp"
#include "gui/main_window.hpp"
#include "gui/palette.hpp"
#include "gui/results_view.hpp"
#include "gui/scenario_view.hpp"
#include "scenarios/catalog_loader.hpp"

namespace racktwin::gui {
namespace {

namespace fs = std::filesystem;

constexpr int kChannelTolerance = 40;
constexpr double kShareTolerance = 0.002;
constexpr QSize kSize{1280, 720};

const Catalog& catalog() {
  static const Catalog cat = *load_catalog_dir(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/catalog");
  return cat;
}

// The fixed directory of a view's inputs and database (their paths show in the views).
fs::path g_inputs;
const fs::path& inputs() {
  return g_inputs;
}

struct View {
  const char* name;
  // Sets the window up (the database at inputs()/views.db); fails the test when it cannot.
  std::function<void(MainWindow&)> set_up;
  // Fills inputs() before the window opens (runs in the database, files).
  std::function<void()> prepare = [] {};
};

void PrintTo(const View& v, std::ostream* os) {
  *os << v.name;
}

void fixed_runs() {
  const std::string db = (inputs() / "views.db").string();
  // The scenario from the fixed directory: its path shows in the views, the sources' does not.
  const fs::path scenario = inputs() / "small.yaml";
  fs::copy_file(std::string(RACKTWIN_SOURCE_DIR) + "/tests/sim/golden/small.yaml", scenario,
                fs::copy_options::overwrite_existing);
  for (std::uint64_t seed : {1, 2}) {
    app::RunRequest rq;
    rq.scenario_file = scenario.string();
    rq.db = db;
    rq.seed = seed;
    ASSERT_TRUE(app::run_scenario(catalog(), rq).has_value());
  }
  SQLite::Database d(db, SQLite::OPEN_READWRITE);
  d.exec("UPDATE runs SET started_at = '2026-01-05T09:00:0' || id || 'Z', "
         "finished_at = '2026-01-05T09:01:00Z', wall_s = 1.5 * id, racktwin_version = '0.0.0', "
         "racktwin_commit = 'golden', host = 'golden', pid = 1");
}

void wait_for(MainWindow& w, const std::function<void()>& start, bool rehearsal = false) {
  if (rehearsal) {
    QSignalSpy done(w.failures(), &FailuresView::rehearsed);
    start();
    ASSERT_TRUE(done.wait(60000));
  } else {
    QSignalSpy done(&w, &MainWindow::planned);
    start();
    ASSERT_TRUE(done.wait(60000));
  }
}

const std::vector<View> kViews = {
    {"systems-rack",
     [](MainWindow& w) {
       w.select_system("jalapeno-a0");
       w.show_rack();
       w.fail_part("hostrack0/katsu5");
     }},
    {"systems-domain",
     [](MainWindow& w) {
       w.select_system("jalapeno-a0");
       w.show_domain();
       w.domain()->fail_part("rack3/chana2");
     }},
    {"runs", [](MainWindow& w) {
       w.tabs()->setCurrentIndex(3);
       w.filter_runs("finished");
     },
     fixed_runs},
    {"fleet-plan",
     [](MainWindow& w) {
       w.tabs()->setCurrentWidget(w.plan_view());
       wait_for(w, [&] { w.open_plan(QString::fromStdString((inputs() / "two-sites.yaml").string())); });
     },
     [] { fs::copy_file(std::string(RACKTWIN_TEST_DATA) + "/data/two-sites.yaml", inputs() / "two-sites.yaml"); }},
    {"failures",
     [](MainWindow& w) {
       w.tabs()->setCurrentWidget(w.failures());
       wait_for(
           w, [&] { w.failures()->open_rehearsal(QString::fromStdString((inputs() / "site.yaml").string())); },
           true);
     },
     [] {
       std::ofstream(inputs() / "site.yaml")
           << "name: small-site\nsystem: jalapeno-a0\ndomains: 2\nhorizon: 20 days\n"
              "sample_every: 6 h\nseed: 11\nserving:\n"
              "  tps_per_replica: {value: 20000 tok/s, assumption: true, reason: a test}\n"
              "  replica_xpus: 8\nspare_capacity: {racks: 1}\n";
     }},
    {"scenario",
     [](MainWindow& w) {
       w.tabs()->setCurrentWidget(w.scenario());
       QSignalSpy checked(w.scenario(), &ScenarioView::checked);
       ASSERT_TRUE(w.scenario()->open_file(QString::fromStdString((inputs() / "typo.yaml").string())));
       ASSERT_TRUE(checked.count() > 0 || checked.wait(60000));
     },
     [] {
       std::ofstream(inputs() / "typo.yaml")
           << "# A scenario with two problems, each shown on its line.\nname: golden-typo\n"
              "systems: [h100-hgx, gb200-nvl27]\nmodels: [llama-3.3-70b]\nworkloads:\n"
              "  - {kind: inferencex, isl: 1024, osl: 1024}\nconcurency: [1, 8, 64]\n";
     }},
    {"results",
     [](MainWindow& w) {
       w.tabs()->setCurrentWidget(w.results());
       w.results()->set_points_file((inputs() / "published.yaml").string());
       ASSERT_TRUE(w.results()->show_run(1));
     },
     [] {
       fixed_runs();
       fs::copy_file(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/reference/published.yaml",
                     inputs() / "published.yaml");
     }},
};

// The share of pixels that differ, and an image of them (red where they differ).
double difference(const QImage& a, const QImage& b, QImage& diff) {
  diff = QImage(a.size(), QImage::Format_RGB32);
  std::size_t differ = 0;
  for (int y = 0; y < a.height(); ++y)
    for (int x = 0; x < a.width(); ++x) {
      const QRgb p = a.pixel(x, y), r = b.pixel(x, y);
      const int d = std::max({std::abs(qRed(p) - qRed(r)), std::abs(qGreen(p) - qGreen(r)),
                              std::abs(qBlue(p) - qBlue(r))});
      const bool off = d > kChannelTolerance;
      differ += off ? 1 : 0;
      const int grey = qGray(r) / 3 + 170;
      diff.setPixel(x, y, off ? qRgb(255, 0, 0) : qRgb(grey, grey, grey));
    }
  return static_cast<double>(differ) / (static_cast<double>(a.width()) * a.height());
}

class Golden : public ::testing::TestWithParam<View> {
 protected:
  void SetUp() override {
    g_inputs = fs::temp_directory_path() / ("racktwin-golden-" + std::string(GetParam().name));
    // The window's remembered geometry, tab and palette live in a settings file of their own.
    ::setenv("XDG_CONFIG_HOME", (inputs() / "config").c_str(), 1);
    QFont font("DejaVu Sans");
    font.setPointSize(9);
    font.setHintingPreference(QFont::PreferFullHinting);
    QApplication::setFont(font);
    QApplication::setCursorFlashTime(0);
    QApplication::setEffectEnabled(Qt::UI_AnimateCombo, false);
    apply_palette(false);
    fs::remove_all(inputs());
    fs::create_directories(inputs());
  }
  void TearDown() override { fs::remove_all(inputs()); }
};

TEST_P(Golden, ViewMatchesItsGoldenImage) {
  const View& v = GetParam();
  v.prepare();
  if (HasFatalFailure()) return;
  QImage actual;
  {
    MainWindow w(catalog(), (inputs() / "views.db").string());
    w.resize(kSize);
    // Shown (layouts and visibility as on screen) without a platform window: a window of the
    // process's static offscreen application would crash it at exit.
    w.setAttribute(Qt::WA_DontShowOnScreen);
    w.show();
    v.set_up(w);
    if (HasFatalFailure()) return;
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    actual = w.grab().toImage().convertToFormat(QImage::Format_RGB32);
  }
  ASSERT_EQ(actual.size(), kSize);
  const fs::path golden = fs::path(RACKTWIN_GOLDEN_DIR) / (std::string(v.name) + ".png");
  if (const char* u = std::getenv("RACKTWIN_GOLDEN_UPDATE"); u != nullptr && std::string(u) == "1") {
    ASSERT_TRUE(actual.save(QString::fromStdString(golden.string()), "PNG")) << golden;
    GTEST_SKIP() << "wrote " << golden;
  }
  QImage expected(QString::fromStdString(golden.string()));
  ASSERT_FALSE(expected.isNull()) << "no golden image " << golden
                                  << "; RACKTWIN_GOLDEN_UPDATE=1 writes it from this build";
  expected = expected.convertToFormat(QImage::Format_RGB32);
  const fs::path out = fs::path(RACKTWIN_GOLDEN_OUT);
  const fs::path actual_file = out / (std::string(v.name) + "-actual.png");
  const fs::path diff_file = out / (std::string(v.name) + "-diff.png");
  if (expected.size() != actual.size()) {
    actual.save(QString::fromStdString(actual_file.string()), "PNG");
    FAIL() << v.name << ": the golden image is " << expected.width() << "x" << expected.height()
           << ", the view " << actual.width() << "x" << actual.height() << "; actual image: " << actual_file;
  }
  QImage diff;
  const double share = difference(actual, expected, diff);
  if (share > kShareTolerance) {
    actual.save(QString::fromStdString(actual_file.string()), "PNG");
    diff.save(QString::fromStdString(diff_file.string()), "PNG");
    FAIL() << v.name << ": " << share * 100 << "% of the pixels differ by more than " << kChannelTolerance
           << " in a channel (tolerance " << kShareTolerance * 100 << "%); actual " << actual_file
           << ", differences in red " << diff_file << ", expected " << golden;
  }
}

INSTANTIATE_TEST_SUITE_P(Views, Golden, ::testing::ValuesIn(kViews),
                         [](const ::testing::TestParamInfo<View>& i) {
                           std::string n = i.param.name;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace racktwin::gui
