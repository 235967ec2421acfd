#include "gui/failures_view.hpp"

#include <QChart>
#include <QGraphicsLayout>
#include <QLegend>
#include <QChartView>
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
  bar->addWidget(status_, 1);
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
  tables->addWidget(table_over(events_, tables));
  split->addWidget(charts);
  split->addWidget(tables);
  split->setSizes({820, 520});
  layout->addWidget(split, 1);
  watcher_ = new QFutureWatcher<std::expected<app::RehearsalOutcome, app::Failure>>(this);
  connect(watcher_, &QFutureWatcherBase::finished, this, [this] { show_outcome(); });
}

FailuresView::~FailuresView() {
  if (watcher_ != nullptr) watcher_->waitForFinished();
}

void FailuresView::open_rehearsal(const QString& file) {
  if (watcher_->isRunning()) return;
  status_->setText("Rehearsing " + file + " (the first rehearsal of a workload simulates its sweep)…");
  app::RehearseRequest rq;
  rq.file = file.toStdString();
  rq.db = db_path_;
  const Catalog* cat = &catalog_;
  watcher_->setFuture(QtConcurrent::run([cat, rq] { return app::rehearse_file(*cat, rq); }));
}

void FailuresView::show_outcome() {
  auto o = watcher_->result();
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
    text += " Serving: " + o->layout + " (" + o->surrogate_note + ").";
    text += o->spare_needed ? " " + std::to_string(*o->spare_needed) + " spare racks of the site's " +
                                  std::to_string(o->racks) + " hold " +
                                  std::to_string(r.attainment_goal * 100).substr(0, 4) + "% attainment."
                            : " No spare capacity holds the attainment goal.";
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
