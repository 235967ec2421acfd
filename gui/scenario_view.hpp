#pragma once
// The scenario editor: a scenario's YAML text with line numbers, checked as it is edited (300 ms
// after the last keystroke, off the UI thread) with the same use case as `racktwin check`
// (app::check_scenario_text); every problem marked on its line and listed below, a clean scenario
// summarised; a form for the common keys that edits the text in place; and Run, which simulates
// the saved scenario in worker processes (app::run_scenario) with a progress bar, an ETA and
// Cancel, storing the run in the window's results database.

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QWidget>
#include <atomic>
#include <expected>
#include <map>
#include <optional>
#include <string>

#include "app/check.hpp"
#include "app/run.hpp"
#include "core/catalog.hpp"
#include "gui/code_editor.hpp"
#include "gui/rows_model.hpp"
#include "gui/scenario_form.hpp"

QT_BEGIN_NAMESPACE
class QLabel;
class QProgressBar;
class QPushButton;
class QTableView;
class QTimer;
QT_END_NAMESPACE

namespace racktwin::gui {

class ScenarioView : public QWidget {
  Q_OBJECT
 public:
  ScenarioView(const Catalog& catalog, std::string db_path, QWidget* parent = nullptr);
  ~ScenarioView() override;

  // Opens a scenario file into the editor (and checks it); false, with the reason shown, when it
  // cannot be read.
  bool open_file(const QString& file);
  // Saves the text to its file (asking for one when it has none); false when not saved.
  bool save();
  // Checks the text now (off the UI thread); checked() is emitted when the result is shown.
  void check_now();
  // Runs the saved scenario (saving the text first); run_done() is emitted when it has ended.
  void run();
  void cancel();
  bool running() const;
  // Moves the editor's cursor to the problem of row `row` of the diagnostics list.
  void go_to_problem(int row);

  CodeEditor* editor() const { return editor_; }
  ScenarioForm* form() const { return form_; }
  RowsModel* diagnostics_model() const { return diagnostics_; }
  QString file() const { return file_; }
  QString check_status() const;
  QString run_status() const;
  const std::optional<app::ScenarioCheck>& last_check() const { return check_; }

 signals:
  void checked();
  // A run ended: stored as `run` in the database (0 when nothing was stored).
  void run_done(qint64 run);

 private:
  struct Checked {
    std::string text;
    app::ScenarioCheck check;
    std::optional<std::map<std::string, YamlValue>> values;
  };
  QWidget* tool_bar();
  QWidget* diagnostics_pane();
  void start_check();
  void show_check();
  void show_problems(const Diagnostics& problems, const std::string& file);
  void show_progress(double share);
  void show_run();
  std::string check_name() const;

  const Catalog& catalog_;
  std::string db_path_;
  QString file_;
  CodeEditor* editor_ = nullptr;
  ScenarioForm* form_ = nullptr;
  RowsModel* diagnostics_ = nullptr;
  QTableView* diagnostics_view_ = nullptr;
  std::vector<Diagnostic> problems_;  // the rows of the diagnostics list, when they are problems
  QLabel* file_label_ = nullptr;
  QLabel* check_status_ = nullptr;
  QLabel* run_status_ = nullptr;
  QLabel* eta_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* run_button_ = nullptr;
  QPushButton* cancel_button_ = nullptr;
  QTimer* debounce_ = nullptr;
  std::optional<app::ScenarioCheck> check_;
  QFutureWatcher<Checked>* check_watcher_ = nullptr;
  QFutureWatcher<std::expected<app::RunOutcome, app::RunError>>* run_watcher_ = nullptr;
  std::atomic<bool> cancel_{false};
  QElapsedTimer run_clock_;
};

}  // namespace racktwin::gui
