#include "gui/failures_view.hpp"

#include <QChart>
#include <QGraphicsLayout>
#include <QLegend>
#include <QChartView>
#include <QDialog>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "gui/failure_text.hpp"
#include "gui/palette.hpp"
#include "gui/widgets.hpp"

namespace racktwin::gui {
namespace {

constexpr std::size_t kEventRows = 5000;

}  // namespace

FailuresView::FailuresView(const Catalog& catalog, std::string db_path, QWidget* parent)
    : QWidget(parent), catalog_(catalog), db_path_(std::move(db_path)) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  status_ = new QLabel("Open a rehearsal file (File > Open rehearsal, Ctrl+Shift+O); "
                       "scenarios/rehearsals/ has the shipped ones.",
                       this);
  status_->setWordWrap(true);
  auto* open = new QPushButton("Open rehearsal…", this);
  connect(open, &QPushButton::clicked, this, [this] {
    const QString f =
        QFileDialog::getOpenFileName(this, "Open a rehearsal", {}, "Rehearsals (*.yaml)");
    if (!f.isEmpty()) open_rehearsal(f);
  });
  replay_button_ = new QPushButton("Replay the worst failure", this);
  replay_button_->setToolTip(
      "Simulate the failure that took the most replicas down request by request, on a slice of "
      "the site, with and without it (double-click a failure to replay that one)");
  replay_button_->setEnabled(false);
  connect(replay_button_, &QPushButton::clicked, this, [this] { replay("worst"); });
  bar->addWidget(status_, 1);
  bar->addWidget(replay_button_);
  bar->addWidget(open);
  layout->addLayout(bar);

  summary_ = new RowsModel(this);
  classes_ = new RowsModel(this);
  events_ = new RowsModel(this);
  summary_view_ = table_over(summary_, this);
  summary_view_->setFixedHeight(64);
  layout->addWidget(summary_view_);
  // The failures over time with the throughput and the attainment beneath them; the tables beside.
  auto* split = new QSplitter(Qt::Horizontal, this);
  auto* charts = new QSplitter(Qt::Vertical, split);
  for (auto*& c : charts_) {
    c = new QChartView(charts);
    c->setRenderHint(QPainter::Antialiasing);
    c->setMinimumHeight(150);
    charts->addWidget(c);
  }
  auto* tables = new QSplitter(Qt::Vertical, split);
  tables->addWidget(table_over(classes_, tables));
  auto* events_view = table_over(events_, tables);
  events_view->setToolTip("Double-click a failure to replay it request by request");
  connect(events_view, &QTableView::doubleClicked, this,
          [this](const QModelIndex& i) { replay(std::to_string(i.row() + 1)); });
  tables->addWidget(events_view);
  split->addWidget(charts);
  split->addWidget(tables);
  split->setSizes({820, 520});
  layout->addWidget(split, 1);
  watcher_ = new QFutureWatcher<std::expected<app::RehearsalOutcome, app::Failure>>(this);
  connect(watcher_, &QFutureWatcherBase::finished, this, [this] { show_outcome(); });

  // The replay's window: what was replayed, the table with and without the failure, the chart.
  replay_window_ = new QDialog(this);
  replay_window_->setWindowTitle("Failure replayed request by request");
  replay_window_->resize(900, 760);
  auto* rl = new QVBoxLayout(replay_window_);
  replay_text_ = new QLabel(replay_window_);
  replay_text_->setWordWrap(true);
  replay_rows_ = new RowsModel(replay_window_);
  replay_chart_ = new QChartView(replay_window_);
  replay_chart_->setRenderHint(QPainter::Antialiasing);
  rl->addWidget(replay_text_);
  replay_table_ = table_over(replay_rows_, replay_window_);
  rl->addWidget(replay_table_);
  rl->addWidget(replay_chart_, 1);
  replay_watcher_ = new QFutureWatcher<std::expected<app::ReplayOutcome, std::string>>(this);
  connect(replay_watcher_, &QFutureWatcherBase::finished, this, [this] { show_replay(); });
}

FailuresView::~FailuresView() {
  if (watcher_ != nullptr) watcher_->waitForFinished();
  if (replay_watcher_ != nullptr) replay_watcher_->waitForFinished();
  if (replay_window_ != nullptr) replay_window_->hide();
}

void FailuresView::replay(const std::string& which) {
  if (!outcome_ || replay_watcher_->isRunning() || watcher_->isRunning()) return;
  replay_button_->setEnabled(false);
  replay_text_->setText("Replaying the failure request by request (two simulations of a slice of "
                        "the site, in worker processes)…");
  replay_rows_->set_rows({});
  replay_chart_->setChart(new QChart);
  replay_window_->show();
  const Catalog* cat = &catalog_;
  const app::RehearsalOutcome* o = &*outcome_;
  replay_watcher_->setFuture(QtConcurrent::run(
      [cat, o, which] { return app::replay_failure(*cat, *o, which, app::JobOptions{}); }));
}

void FailuresView::show_replay() {
  auto r = replay_watcher_->result();
  replay_button_->setEnabled(outcome_->serving_point.has_value());
  if (!r) {
    replay_text_->setText(QString::fromStdString("The replay could not run: " + r.error()));
    emit replayed();
    return;
  }
  std::string head;
  for (const auto& line : r->summary(outcome_->outcome.events.size()))
    head += (head.empty() ? "" : "\n") + line;
  replay_text_->setText(QString::fromStdString(head));
  replay_rows_->set_rows(r->table());
  replay_table_->setFixedHeight(replay_table_->horizontalHeader()->height() +
                                replay_rows_->rowCount() *
                                    replay_table_->verticalHeader()->defaultSectionSize() + 4);
  auto c = app::replay_chart(*outcome_, *r);
  replay_chart_->setChart(c.chart.release());
  emit replayed();
}

QString FailuresView::replay_status() const {
  return replay_text_->text();
}

QWidget* FailuresView::replay_window() const {
  return replay_window_;
}

bool FailuresView::replay_chart_shown() const {
  return replay_chart_->chart() != nullptr && !replay_chart_->chart()->series().isEmpty();
}

void FailuresView::open_rehearsal(const QString& file) {
  if (watcher_->isRunning() || replay_watcher_->isRunning()) return;
  status_->setText("Rehearsing " + file + " (the first rehearsal of a workload simulates its sweep)…");
  app::RehearseRequest rq;
  rq.file = file.toStdString();
  rq.db = db_path_;
  const Catalog* cat = &catalog_;
  watcher_->setFuture(QtConcurrent::run([cat, rq] { return app::rehearse_file(*cat, rq); }));
}

void FailuresView::show_outcome() {
  auto o = watcher_->result();
  outcome_.reset();
  replay_button_->setEnabled(false);
  if (!o) {
    status_->setText(QString::fromStdString("The rehearsal failed:\n" + failure_text(o.error())));
    emit rehearsed();
    return;
  }
  const auto& r = o->rehearsal;
  std::string text = r.name + ": " + r.system + " x " + std::to_string(r.domains) + " domains, " +
                     std::to_string(static_cast<int>(r.horizon.value() / 86400)) + " days, " +
                     std::to_string(o->outcome.events.size()) + " failures, seed " +
                     std::to_string(o->seed) + ".";
  if (r.serving) {
    summary_->set_rows(o->summary_table());
    text += " Serving: " + o->layout + " (" + o->surrogate_note + ")" +
            (o->surrogate.grouped() ? ", " + o->unit_description() + "; counts are of groups." : ".");
    text += " " + o->spare_sentence();
  } else {
    summary_->set_rows(o->jobs_table());
    text += " Jobs: one failure interrupts the job.";
  }
  if (o->outcome.events.size() > kEventRows)
    text += " The table lists the first " + std::to_string(kEventRows) + " failures (racktwin "
            "rehearse --events writes them all).";
  // The summary table as tall as its rows.
  summary_view_->setFixedHeight(summary_view_->horizontalHeader()->height() +
                                static_cast<int>(summary_->rows().size() - 1) *
                                    summary_view_->verticalHeader()->defaultSectionSize() + 4);
  classes_->set_rows(o->class_table());
  events_->set_rows(o->events_table(kEventRows));
  auto charts = app::rehearsal_charts(*o);
  for (std::size_t i = 0; i < 3; ++i) {
    if (i < charts.size()) {
      QChart* c = charts[i].chart.release();
      // Three charts share the height of a laptop screen: no margins around them either.
      compact_chart(c);
      c->layout()->setContentsMargins(0, 0, 0, 0);
      c->setBackgroundRoundness(0);
      charts_[i]->setChart(c);
    } else
      charts_[i]->setChart(new QChart);
  }
  status_->setText(QString::fromStdString(text));
  outcome_ = std::move(*o);
  replay_button_->setEnabled(outcome_->serving_point.has_value());
  emit rehearsed();
}

QString FailuresView::status() const {
  return status_->text();
}

int FailuresView::charts_shown() const {
  int n = 0;
  for (const auto* c : charts_) n += c->chart() != nullptr && !c->chart()->series().isEmpty() ? 1 : 0;
  return n;
}

}  // namespace racktwin::gui
