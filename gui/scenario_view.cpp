#include "gui/scenario_view.hpp"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <initializer_list>

#include "db/store.hpp"
#include "gui/failure_text.hpp"
#include "gui/widgets.hpp"

namespace racktwin::gui {
namespace {

constexpr int kDebounceMs = 300;
constexpr int kProgressSteps = 1000;

// "m:ss" left, from the time spent on a share of the work (as the CLI's progress bar).
QString eta_text(double elapsed_s, double share) {
  if (share <= 0.01) return "ETA --:--";
  const auto left = static_cast<long>(elapsed_s * (1.0 - share) / share);
  return QString("ETA %1:%2").arg(left / 60).arg(left % 60, 2, 10, QChar('0'));
}

}  // namespace

ScenarioView::ScenarioView(const Catalog& catalog, std::string db_path, QWidget* parent)
    : QWidget(parent), catalog_(catalog), db_path_(std::move(db_path)) {
  auto* layout = new QVBoxLayout(this);
  editor_ = new CodeEditor(this);
  editor_->setPlaceholderText(
      "Open a scenario (File > Open scenario, Ctrl+Shift+S) or type one; "
      "scenarios/ has the shipped ones, docs/scenarios.md every key.");
  layout->addWidget(tool_bar());
  run_status_ = new QLabel(q("Run simulates the saved scenario in worker processes and stores it "
                             "in " +
                             db_path_ + "."),
                           this);
  run_status_->setWordWrap(true);
  layout->addWidget(run_status_);
  auto* split = new QSplitter(Qt::Vertical, this);
  auto* top = new QSplitter(Qt::Horizontal, split);
  top->addWidget(editor_);
  auto* box = new QGroupBox("Common keys (edit the text in place)", top);
  auto* box_layout = new QVBoxLayout(box);
  form_ = new ScenarioForm(catalog_, editor_, box);
  box_layout->addWidget(form_);
  box_layout->addStretch(1);
  top->addWidget(box);
  top->setStretchFactor(0, 3);
  top->setStretchFactor(1, 1);
  split->addWidget(top);
  split->addWidget(diagnostics_pane());
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  split->setSizes({440, 200});  // room for a few problems below the text
  layout->addWidget(split, 1);

  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(kDebounceMs);
  connect(debounce_, &QTimer::timeout, this, [this] { start_check(); });
  connect(editor_, &QPlainTextEdit::textChanged, debounce_, qOverload<>(&QTimer::start));
  check_watcher_ = new QFutureWatcher<Checked>(this);
  connect(check_watcher_, &QFutureWatcherBase::finished, this, [this] { show_check(); });
  run_watcher_ = new QFutureWatcher<std::expected<app::RunOutcome, app::RunError>>(this);
  connect(run_watcher_, &QFutureWatcherBase::finished, this, [this] { show_run(); });
}

ScenarioView::~ScenarioView() {
  cancel_ = true;
  run_watcher_->waitForFinished();
  check_watcher_->waitForFinished();
}

QWidget* ScenarioView::tool_bar() {
  auto* bar = new QWidget(this);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  file_label_ = new QLabel("No file", bar);
  auto* open = new QPushButton("Open…", bar);
  connect(open, &QPushButton::clicked, this, [this] {
    const QString f =
        QFileDialog::getOpenFileName(this, "Open a scenario", {}, "Scenarios (*.yaml)");
    if (!f.isEmpty()) open_file(f);
  });
  auto* save_button = new QPushButton("Save", bar);
  connect(save_button, &QPushButton::clicked, this, [this] { save(); });
  run_button_ = new QPushButton("Run", bar);
  run_button_->setToolTip("Save, then simulate the scenario in worker processes (Ctrl+R)");
  connect(run_button_, &QPushButton::clicked, this, [this] { run(); });
  cancel_button_ = new QPushButton("Cancel", bar);
  cancel_button_->setEnabled(false);
  connect(cancel_button_, &QPushButton::clicked, this, [this] { cancel(); });
  progress_ = new QProgressBar(bar);
  progress_->setRange(0, kProgressSteps);
  progress_->setValue(0);
  progress_->setFixedWidth(180);
  eta_ = new QLabel(bar);
  eta_->setMinimumWidth(90);
  row->addWidget(file_label_, 1);
  for (QWidget* w : std::initializer_list<QWidget*>{open, save_button, run_button_, cancel_button_,
                                                    progress_, eta_})
    row->addWidget(w);
  return bar;
}

QWidget* ScenarioView::diagnostics_pane() {
  auto* pane = new QWidget(this);
  auto* layout = new QVBoxLayout(pane);
  layout->setContentsMargins(0, 0, 0, 0);
  check_status_ = new QLabel("Not checked yet.", pane);
  check_status_->setWordWrap(true);
  diagnostics_ = new RowsModel(pane);
  diagnostics_view_ = table_over(diagnostics_, pane);
  diagnostics_view_->setAlternatingRowColors(false);
  diagnostics_view_->verticalHeader()->setDefaultSectionSize(
      diagnostics_view_->fontMetrics().height() + 6);
  diagnostics_view_->horizontalHeader()->setStretchLastSection(true);
  diagnostics_view_->setWordWrap(false);
  connect(diagnostics_view_, &QTableView::clicked, this,
          [this](const QModelIndex& i) { go_to_problem(i.row()); });
  connect(diagnostics_view_, &QTableView::activated, this,
          [this](const QModelIndex& i) { go_to_problem(i.row()); });
  layout->addWidget(check_status_);
  layout->addWidget(diagnostics_view_, 1);
  return pane;
}

bool ScenarioView::open_file(const QString& file) {
  QFile in(file);
  if (!in.open(QIODevice::ReadOnly)) {
    run_status_->setText("Cannot open " + file + ": " + in.errorString());
    return false;
  }
  file_ = QFileInfo(file).absoluteFilePath();
  editor_->setPlainText(QString::fromUtf8(in.readAll()));
  editor_->document()->setModified(false);
  file_label_->setText("<b>" + file_.toHtmlEscaped() + "</b>");
  check_now();
  return true;
}

bool ScenarioView::save() {
  if (file_.isEmpty()) {
    const QString f =
        QFileDialog::getSaveFileName(this, "Save the scenario", {}, "Scenarios (*.yaml)");
    if (f.isEmpty()) return false;
    file_ = QFileInfo(f).absoluteFilePath();
  }
  QSaveFile out(file_);
  if (!out.open(QIODevice::WriteOnly) || out.write(editor_->toPlainText().toUtf8()) < 0 ||
      !out.commit()) {
    run_status_->setText("Cannot save " + file_ + ": " + out.errorString());
    return false;
  }
  editor_->document()->setModified(false);
  file_label_->setText("<b>" + file_.toHtmlEscaped() + "</b> (saved)");
  return true;
}

std::string ScenarioView::check_name() const {
  return file_.isEmpty() ? std::string("untitled.yaml") : file_.toStdString();
}

void ScenarioView::check_now() {
  debounce_->stop();
  start_check();
}

void ScenarioView::start_check() {
  if (check_watcher_->isRunning()) return;  // show_check() checks the newer text when it ends
  const std::string text = editor_->toPlainText().toStdString();
  const std::string name = check_name();
  const Catalog* cat = &catalog_;
  check_status_->setText("Checking…");
  check_watcher_->setFuture(QtConcurrent::run([cat, text, name] {
    return Checked{text, app::check_scenario_text(*cat, text, name),
                   yaml_values(text, ScenarioForm::paths())};
  }));
}

void ScenarioView::show_check() {
  Checked c = check_watcher_->result();
  if (c.text != editor_->toPlainText().toStdString()) {  // edited meanwhile: check the new text
    start_check();
    return;
  }
  check_ = std::move(c.check);
  form_->show_values(c.values);
  if (!check_->valid()) {
    show_problems(check_->errors, check_->file);
  } else {
    problems_.clear();
    editor_->set_marks({});
    std::vector<std::vector<std::string>> rows{{"", "the scenario (as racktwin check says)"}};
    for (const auto& f : check_->summary) rows.push_back({f.label, f.text});
    diagnostics_->set_rows(std::move(rows));
    check_status_->setText(QString("<b>Valid.</b> %1 points per layout; %2 catalog assumptions.%3")
                               .arg(check_->points)
                               .arg(check_->assumptions.size())
                               .arg(check_->sweep_problem
                                        ? q(" The sweep cannot be built: " + *check_->sweep_problem)
                                        : QString()));
  }
  emit checked();
}

void ScenarioView::show_problems(const Diagnostics& problems, const std::string& file) {
  problems_ = problems;
  std::vector<TextMark> marks;
  std::vector<std::vector<std::string>> rows{{"where", "field", "problem", "hint"}};
  for (const auto& d : problems) {
    const bool here = d.where.file == file && d.where.line > 0;
    std::string where = d.where.line > 0
                            ? std::to_string(d.where.line) + ":" + std::to_string(d.where.column)
                            : std::string("file");
    if (d.where.file != file) where = d.where.file + ":" + where;
    rows.push_back({where, d.path, d.message, d.hint});
    if (here)
      marks.push_back({d.where.line, d.where.column,
                       q(d.message + (d.hint.empty() ? "" : " (" + d.hint + ")"))});
  }
  editor_->set_marks(std::move(marks));
  diagnostics_->set_rows(std::move(rows));
  check_status_->setText(QString("<b>%1 problem%2</b> (click one to go to it).")
                             .arg(problems.size())
                             .arg(QString(problems.size() == 1 ? "" : "s")));
}

void ScenarioView::go_to_problem(int row) {
  if (row < 0 || static_cast<std::size_t>(row) >= problems_.size()) return;
  const Diagnostic& d = problems_[static_cast<std::size_t>(row)];
  if (d.where.file == check_name() && d.where.line > 0)
    editor_->go_to(d.where.line, d.where.column);
}

QString ScenarioView::check_status() const {
  return check_status_->text();
}

QString ScenarioView::run_status() const {
  return run_status_->text();
}

bool ScenarioView::running() const {
  return run_watcher_->isRunning();
}

void ScenarioView::run() {
  if (running()) return;
  if ((file_.isEmpty() || editor_->document()->isModified()) && !save()) {
    run_status_->setText("Save the scenario to run it.");
    return;
  }
  app::RunRequest rq;
  rq.scenario_file = file_.toStdString();
  rq.db = db_path_;
  cancel_ = false;
  progress_->setValue(0);
  eta_->setText(eta_text(0, 0));
  run_button_->setEnabled(false);
  cancel_button_->setEnabled(true);
  run_status_->setText("Running " + file_ + " in worker processes…");
  run_clock_.start();
  auto progress = [this](double share) {
    QMetaObject::invokeMethod(
        this, [this, share] { show_progress(share); }, Qt::QueuedConnection);
  };
  auto note = [this](const std::string& s) {
    QMetaObject::invokeMethod(
        this, [this, s] { run_status_->setText(q(s)); }, Qt::QueuedConnection);
  };
  const Catalog* cat = &catalog_;
  const std::atomic<bool>* stop = &cancel_;
  run_watcher_->setFuture(QtConcurrent::run([cat, rq, progress, note, stop] {
    app::RunHooks hooks;
    hooks.progress = progress;
    hooks.note = note;
    hooks.cancel = stop;
    return app::run_scenario(*cat, rq, hooks);
  }));
}

void ScenarioView::cancel() {
  if (!running()) return;
  cancel_ = true;
  run_status_->setText("Cancelling: stopping the workers…");
}

void ScenarioView::show_progress(double share) {
  if (!running()) return;
  progress_->setValue(static_cast<int>(share * kProgressSteps));
  eta_->setText(eta_text(static_cast<double>(run_clock_.elapsed()) / 1000.0, share));
}

void ScenarioView::show_run() {
  const auto o = run_watcher_->result();
  run_button_->setEnabled(true);
  cancel_button_->setEnabled(false);
  eta_->clear();
  if (o) {
    progress_->setValue(kProgressSteps);
    QString text = QString("Stored as run %1 in %2: %3 points simulated now")
                       .arg(o->run_id)
                       .arg(q(o->db_path))
                       .arg(o->simulated);
    if (o->resumed > 0) text += QString(", %1 taken from the interrupted run").arg(o->resumed);
    if (o->failed_points > 0)
      text +=
          QString("; %1 points could not run (their errors are in Results)").arg(o->failed_points);
    run_status_->setText(text + ".");
    emit run_done(o->run_id);
    return;
  }
  const app::RunError& e = o.error();
  if (!e.diagnostics.empty()) {
    show_problems(e.diagnostics, e.file);
    run_status_->setText("The scenario cannot run: its problems are listed below.");
  } else if (cancel_ && e.run_id) {
    auto store = db::Store::open(db_path_, db::Store::Mode::read);
    const auto info = store ? store->info(*e.run_id) : std::nullopt;
    run_status_->setText(
        QString("Cancelled: the workers were stopped. Run %1 keeps the %2 points whose groups "
                "had finished; Run again resumes it and simulates only the missing points.")
            .arg(*e.run_id)
            .arg(info ? info->points : 0));
  } else {
    QString text = q("The run failed: " + failure_text(e));
    if (e.run_id)
      text += QString(" The points simulated so far are kept in run %1; Run again resumes it.")
                  .arg(*e.run_id);
    run_status_->setText(text);
  }
  progress_->setValue(0);
  emit run_done(0);
}

}  // namespace racktwin::gui
