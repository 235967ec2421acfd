// The charts render offscreen: PNG files of the asked size that are not blank, SVG files that
// parse, for every chart of a run; published points add to the Pareto chart.

#include "charts/charts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <QChart>
#include <QFile>
#include <QImage>
#include <QXmlStreamReader>
#include <filesystem>
#include <fstream>
#include <set>

namespace {

using namespace racktwin;
namespace fs = std::filesystem;

class Charts : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("racktwin-charts-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A run of two systems, three loads each, with the metrics and distributions charts read.
db::StoredRun sample_run() {
  db::StoredRun run;
  run.info.id = 1;
  std::int64_t index = 0;
  for (const std::string system : {"jalapeno-a0", "gb200-nvl72"}) {
    const double k = system == "jalapeno-a0" ? 1.3 : 1.0;
    for (int c : {1, 8, 64}) {
      db::StoredPoint p;
      p.index = index++;
      p.key = {system, "gpt-oss-120b", "8k1k", "tp4", "fp4", "aggregated", "closed_loop", c, 0, 1};
      p.xpus = 4;
      const double tps = k * 1000.0 * c / (1 + c / 16.0);
      p.metrics = {{"workload_isl_tokens", 8192, ""},
                   {"workload_osl_tokens", 1024, ""},
                   {"total_tps_per_xpu", tps, ""},
                   {"interactivity_tok_s_user", 800.0 / (1 + c / 8.0), ""},
                   {"tps_per_allin_provisioned_mw", tps * 1e6 / 1500, ""},
                   {"tps_per_rated_kw", tps / 1.2, ""},
                   {"power_xpu_w", 600, ""},
                   {"power_tray_overhead_w", 100, ""},
                   {"power_switches_w", 50, ""},
                   {"power_hosts_w", 80, ""},
                   {"power_conversion_loss_w", 40, ""},
                   {"power_facility_overhead_w", 90, ""},
                   {"iteration_compute_s", 1e-3 * k, ""},
                   {"iteration_memory_s", 2e-3, ""},
                   {"iteration_communication_s", 5e-4, ""},
                   {"iteration_overhead_s", 2e-4, ""}};
      for (const char* d : {"ttft_s", "tpot_s", "e2e_s"}) {
        std::vector<double> v;
        for (int q = 0; q <= 100; ++q) v.push_back(0.01 * c * (1 + q / 50.0));
        p.percentiles_s[d] = v;
      }
      run.points.push_back(p);
    }
  }
  return run;
}

// Distinct colours in the image and the share of pixels that are not white.
std::pair<std::size_t, double> ink(const QImage& img) {
  std::set<QRgb> colours;
  std::size_t inked = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) {
      const QRgb c = img.pixel(x, y);
      colours.insert(c);
      inked += qRed(c) < 250 || qGreen(c) < 250 || qBlue(c) < 250 ? 1 : 0;
    }
  return {colours.size(), static_cast<double>(inked) / (img.width() * img.height())};
}

// Parses an SVG file; returns the number of elements, or -1 on a parse error.
int svg_elements(const std::string& path, std::string& root) {
  QFile f(QString::fromStdString(path));
  if (!f.open(QIODevice::ReadOnly)) return -1;
  QXmlStreamReader xml(&f);
  int n = 0;
  while (!xml.atEnd()) {
    if (xml.readNext() == QXmlStreamReader::StartElement) {
      if (n == 0) root = xml.name().toString().toStdString();
      ++n;
    }
  }
  return xml.hasError() ? -1 : n;
}

TEST_F(Charts, EveryChart_RendersPngOfTheSizeNotBlank_AndSvgThatParses) {
  const auto run = sample_run();
  auto all = charts::run_charts(run);
  ASSERT_EQ(all.size(), 7u);  // two Pareto, three CDFs, power, iteration time
  for (auto& c : all) {
    SCOPED_TRACE(c.name);
    const auto stem = (dir_ / c.name).string();
    auto files = charts::save_chart(std::move(c.chart), stem, {}, QSize(900, 600));
    ASSERT_TRUE(files) << files.error();
    ASSERT_EQ(files->size(), 2u);
    QImage img(QString::fromStdString(stem + ".png"));
    ASSERT_FALSE(img.isNull());
    EXPECT_EQ(img.width(), 900);
    EXPECT_EQ(img.height(), 600);
    const auto [colours, share] = ink(img);
    EXPECT_GT(colours, 20u) << "looks blank";
    EXPECT_GT(share, 0.01) << "looks blank";
    std::string root;
    EXPECT_GT(svg_elements(stem + ".svg", root), 20);
    EXPECT_EQ(root, "svg");
  }
}

TEST_F(Charts, LinksPlantedAtTheOutputPaths_AreReplacedNotWrittenThrough) {
  const auto victim = dir_ / "victim";
  std::ofstream(victim) << "precious\n";
  auto all = charts::run_charts(sample_run());
  ASSERT_FALSE(all.empty());
  const auto stem = (dir_ / all.front().name).string();
  std::filesystem::create_symlink(victim, stem + ".png");
  std::filesystem::create_symlink(victim, stem + ".svg");
  auto files = charts::save_chart(std::move(all.front().chart), stem, {}, QSize(300, 200));
  ASSERT_TRUE(files) << files.error();
  std::ifstream in(victim);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "precious");
  EXPECT_FALSE(std::filesystem::is_symlink(stem + ".png"));
  EXPECT_FALSE(QImage(QString::fromStdString(stem + ".png")).isNull());
  std::string root;
  EXPECT_GT(svg_elements(stem + ".svg", root), 20);
}

TEST_F(Charts, Pareto_ReferencePointsOfTheSameShape_AreOverlaid) {
  const auto run = sample_run();
  const auto g = charts::groups(run).at(0);
  EXPECT_EQ(g.isl, 8192);
  ReferencePoint at;
  at.id = "p1";
  at.system = "gb200-nvl72";
  at.model = "gpt-oss-120b";
  at.workload.isl = 8192;
  at.workload.osl = 1024;
  at.metric = Metric::total_tps_per_xpu_at;
  at.at = 100;
  at.value = 5000;
  ReferencePoint peak = at;
  peak.metric = Metric::peak_total_tps_per_xpu;
  peak.at.reset();
  ReferencePoint other_shape = at;
  other_shape.workload.isl = 1024;
  const auto base = charts::pareto_chart(run, g, charts::ParetoAxis::per_xpu);
  const auto with =
      charts::pareto_chart(run, g, charts::ParetoAxis::per_xpu, {at, peak, other_shape});
  EXPECT_EQ(with->series().size(), base->series().size() + 2);
}

TEST_F(Charts, PeakPoints_OnePerSystem_TheHighestThroughput) {
  const auto run = sample_run();
  const auto peaks = charts::peak_points(run, charts::groups(run).at(0));
  ASSERT_EQ(peaks.size(), 2u);
  EXPECT_EQ(peaks[0].first, "jalapeno-a0");
  EXPECT_EQ(run.points[peaks[0].second].key.concurrency, 64);
}

}  // namespace
