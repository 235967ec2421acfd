// The scenario editor under the offscreen platform: its models pass Qt's model tester, a scenario
// with an error is located on its line and in the list, the form edits the text in place, and a
// small scenario runs from the editor into the Runs and Results views; a cancelled run is resumed.

#include "gui/scenario_view.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QChart>
#include <QChartView>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTextBlock>
#include <filesystem>
#include <fstream>

#include "charts/charts.hpp"
#include "gui/main_window.hpp"
#include "scenarios/catalog_loader.hpp"

namespace racktwin::gui {
namespace {

using Tester = QAbstractItemModelTester;
constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

const Catalog& catalog() {
  static const Catalog cat =
      *load_catalog_dir(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/catalog");
  return cat;
}

// Two points of one system, one model and one layout: a run of a few seconds.
const char* const kSmall =
    "# The smallest run: two points.\n"
    "name: editor-small\n"
    "seed: 7\n"
    "systems: [jalapeno-a0]   # the baseline\n"
    "models: [gpt-oss-120b]\n"
    "workloads:\n"
    "  - {id: 1k128, kind: inferencex, isl: 1024, osl: 128, range_ratio: 0.8}\n"
    "layouts:\n"
    "  named: [tp4-ep4]\n"
    "concurrency: [1, 4]\n";

struct ScenarioEditor : ::testing::Test {
  std::filesystem::path dir;
  void SetUp() override {
    dir =
        std::filesystem::temp_directory_path() / ("racktwin-editor-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  QString write(const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return QString::fromStdString((dir / name).string());
  }
};

bool wait_check(ScenarioView& v) {
  QSignalSpy spy(&v, &ScenarioView::checked);
  return spy.wait(20000);
}

TEST_F(ScenarioEditor, Models_PassQtsModelTester) {
  ScenarioView v(catalog(), (dir / "r.db").string());
  Tester systems(v.form()->systems(), kFatal);
  Tester models(v.form()->models(), kFatal);
  Tester diagnostics(v.diagnostics_model(), kFatal);
  ASSERT_TRUE(v.open_file(write("s.yaml", kSmall)));
  ASSERT_TRUE(wait_check(v));
  EXPECT_GE(v.form()->systems()->rowCount(), 10);
  EXPECT_EQ(v.form()->systems()->checked(), (std::vector<std::string>{"jalapeno-a0"}));
  // A user checks a second system: the model says so and the text lists it after the first.
  const auto gb200 = v.form()->systems()->match(v.form()->systems()->index(0), Qt::DisplayRole,
                                                "gb200-nvl72", 1, Qt::MatchExactly);
  ASSERT_EQ(gb200.size(), 1);
  EXPECT_TRUE(v.form()->systems()->setData(gb200.front(), Qt::Checked, Qt::CheckStateRole));
  EXPECT_TRUE(
      v.editor()->toPlainText().contains("systems: [jalapeno-a0, gb200-nvl72]   # the baseline"))
      << v.editor()->toPlainText().toStdString();
}

TEST_F(ScenarioEditor, AnError_IsLocatedOnItsLineAndInTheList_AndAClickGoesThere) {
  std::string text = kSmall;
  text.replace(text.find("[jalapeno-a0]"), 13, "[jalapeno-a9]");
  ScenarioView v(catalog(), (dir / "r.db").string());
  ASSERT_TRUE(v.open_file(write("bad.yaml", text)));
  ASSERT_TRUE(wait_check(v));
  ASSERT_FALSE(v.last_check()->valid());
  ASSERT_EQ(v.diagnostics_model()->rowCount(), 1) << v.check_status().toStdString();
  EXPECT_EQ(v.diagnostics_model()->index(0, 0).data().toString(), "4:11");
  EXPECT_EQ(v.diagnostics_model()->index(0, 1).data().toString(), "systems[0]");
  EXPECT_TRUE(v.diagnostics_model()->index(0, 2).data().toString().contains("jalapeno-a9"));
  EXPECT_TRUE(v.check_status().contains("1 problem"));
  ASSERT_EQ(v.editor()->marks().size(), 1u);
  EXPECT_EQ(v.editor()->underlined(), (std::vector<std::pair<int, int>>{{4, 11}}));
  v.go_to_problem(0);
  EXPECT_EQ(v.editor()->textCursor().blockNumber(), 3);
  EXPECT_EQ(v.editor()->textCursor().positionInBlock(), 10);
  // Fixed in the text: the next check is clean and summarises the sweep.
  QTextCursor c = v.editor()->document()->find("jalapeno-a9");
  c.insertText("jalapeno-a0");
  ASSERT_TRUE(wait_check(v));
  EXPECT_TRUE(v.last_check()->valid());
  EXPECT_TRUE(v.editor()->marks().empty());
  EXPECT_TRUE(v.check_status().contains("Valid")) << v.check_status().toStdString();
  EXPECT_TRUE(v.check_status().contains("2 points per layout")) << v.check_status().toStdString();
}

TEST_F(ScenarioEditor, TheForm_EditsTheTextInPlace_AsOneUndoStep) {
  ScenarioView v(catalog(), (dir / "r.db").string());
  ASSERT_TRUE(v.open_file(write("s.yaml", kSmall)));
  ASSERT_TRUE(wait_check(v));
  EXPECT_EQ(v.form()->field("workloads[0].isl")->text(), "1024");
  EXPECT_EQ(v.form()->field("concurrency")->text(), "[1, 4]");
  ASSERT_TRUE(v.form()->apply("workloads[0].isl", "2048"));
  ASSERT_TRUE(v.form()->apply("concurrency", "{from: 1, to: 16, factor: 4}"));
  std::string expected = kSmall;
  expected.replace(expected.find("isl: 1024"), 9, "isl: 2048");
  expected.replace(expected.find("[1, 4]"), 6, "{from: 1, to: 16, factor: 4}");
  EXPECT_EQ(v.editor()->toPlainText().toStdString(), expected);
  ASSERT_TRUE(wait_check(v));
  EXPECT_TRUE(v.check_status().contains("3 points per layout")) << v.check_status().toStdString();
  EXPECT_EQ(v.form()->field("workloads[0].isl")->text(), "2048");
  v.editor()->undo();
  EXPECT_TRUE(v.editor()->toPlainText().contains("concurrency: [1, 4]\n"));
  // A key the text does not have yet is added at the end; the check reads it back.
  EXPECT_EQ(v.form()->field("engine")->text(), "");
  ASSERT_TRUE(v.form()->apply("engine", "{reserve_output: 0, max_seqs: 256}"));
  EXPECT_TRUE(v.editor()->toPlainText().endsWith("engine: {reserve_output: 0, max_seqs: 256}\n"))
      << v.editor()->toPlainText().toStdString();
  ASSERT_TRUE(wait_check(v));
  ASSERT_TRUE(v.last_check()->valid());
  EXPECT_EQ(v.last_check()->scenario->engine.max_seqs, 256);
  EXPECT_EQ(v.form()->field("engine")->text(), "{reserve_output: 0, max_seqs: 256}");
  v.editor()->undo();
  // Serving modes, a prefill pool of its own layout among them: each is a point of every layout.
  ASSERT_TRUE(v.form()->apply("serving", "[aggregated, 1p1d/tp4]"));
  ASSERT_TRUE(wait_check(v));
  ASSERT_TRUE(v.last_check()->valid());
  ASSERT_EQ(v.last_check()->scenario->serving.size(), 2u);
  EXPECT_EQ(v.last_check()->scenario->serving[1].label(), "1p1d/tp4");
  EXPECT_TRUE(v.check_status().contains("4 points per layout")) << v.check_status().toStdString();
  EXPECT_EQ(v.form()->field("serving")->text(), "[aggregated, 1p1d/tp4]");
  v.editor()->undo();
  // An edit that cannot be made in place is refused with the reason, the text untouched.
  const QString before = v.editor()->toPlainText();
  EXPECT_FALSE(v.form()->apply("concurrency", "[1, 4"));
  EXPECT_EQ(v.editor()->toPlainText(), before);
  EXPECT_FALSE(v.form()->status().isEmpty());
}

TEST_F(ScenarioEditor, Run_StoresTheRun_ShownInRunsAndResults) {
  MainWindow w(catalog(), (dir / "r.db").string());
  ScenarioView* v = w.scenario();
  ASSERT_TRUE(v->open_file(write("small.yaml", kSmall)));
  QSignalSpy done(v, &ScenarioView::run_done);
  v->run();
  EXPECT_TRUE(v->running());
  ASSERT_TRUE(done.wait(120000)) << v->run_status().toStdString();
  ASSERT_EQ(done.front().front().toLongLong(), 1) << v->run_status().toStdString();
  EXPECT_TRUE(v->run_status().contains("Stored as run 1")) << v->run_status().toStdString();
  ASSERT_EQ(w.runs_model()->rowCount(), 1);
  EXPECT_EQ(w.runs_model()->index(0, 2).data().toString(), "editor-small");
  EXPECT_EQ(w.tabs()->currentWidget(), w.results());
  EXPECT_EQ(w.results()->shown_run(), 1);
  EXPECT_FALSE(w.results()->pareto(0)->chart()->series().isEmpty());
  EXPECT_GT(w.results()->details_model()->rowCount(), 10);
}

TEST_F(ScenarioEditor, Cancel_StopsTheWorkers_KeepsTheRun_AndRunAgainResumesIt) {
  MainWindow w(catalog(), (dir / "r.db").string());
  ScenarioView* v = w.scenario();
  ASSERT_TRUE(v->open_file(write("small.yaml", kSmall)));
  QSignalSpy done(v, &ScenarioView::run_done);
  v->run();
  v->cancel();
  ASSERT_TRUE(done.wait(120000)) << v->run_status().toStdString();
  EXPECT_EQ(done.takeFirst().front().toLongLong(), 0);
  EXPECT_TRUE(v->run_status().contains("Cancelled")) << v->run_status().toStdString();
  EXPECT_TRUE(v->run_status().contains("Run 1 keeps")) << v->run_status().toStdString();
  ASSERT_EQ(w.runs_model()->rowCount(), 1);
  EXPECT_EQ(w.runs_model()->index(0, 1).data().toString(), "failed");
  v->run();
  ASSERT_TRUE(done.wait(120000)) << v->run_status().toStdString();
  EXPECT_EQ(done.takeFirst().front().toLongLong(), 1) << v->run_status().toStdString();
  EXPECT_EQ(w.runs_model()->rowCount(), 1);
  EXPECT_EQ(w.runs_model()->index(0, 1).data().toString(), "finished");
}

}  // namespace
}  // namespace racktwin::gui
