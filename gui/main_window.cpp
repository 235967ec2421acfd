#include "gui/main_window.hpp"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "app/catalog_views.hpp"
#include "charts/charts.hpp"
#include "db/store.hpp"
#include "gui/failure_text.hpp"

namespace racktwin::gui {
namespace {

QString q(const std::string& s) {
  return QString::fromStdString(s);
}

QTableView* table_over(QAbstractItemModel* model, QWidget* parent) {
  auto* t = new QTableView(parent);
  t->setModel(model);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->verticalHeader()->setVisible(false);
  t->setAlternatingRowColors(true);
  return t;
}

// An entry's sections and every figure with its source or assumption, as HTML.
QString entry_html(const app::CatalogEntry& e) {
  QString h = "<h3>" + q(e.heading).toHtmlEscaped() + "</h3>";
  if (!e.description.empty()) h += "<p>" + q(e.description).toHtmlEscaped() + "</p>";
  for (const auto& s : e.sections) {
    h += "<h4>" + q(s.title).toHtmlEscaped() + "</h4><table>";
    for (const auto& f : s.facts)
      h += "<tr><td><b>" + q(f.label).toHtmlEscaped() + "</b></td><td>" + q(f.text).toHtmlEscaped() +
           "</td></tr>";
    h += "</table>";
  }
  for (const auto& g : e.figures) {
    h += "<h4>" + q(g.title).toHtmlEscaped() + "</h4><table>";
    for (const auto& f : g.fields) {
      std::string origin = f.provenance.assumption ? "assumption: " + f.provenance.reason : "";
      for (const auto& s : f.provenance.sources) origin += (origin.empty() ? "source " : ", ") + s;
      h += "<tr><td>" + q(f.path).toHtmlEscaped() + "</td><td>" + q(f.text).toHtmlEscaped() +
           "</td><td><i>" + q(origin).toHtmlEscaped() + "</i></td></tr>";
    }
    h += "</table>";
  }
  return h;
}

}  // namespace

MainWindow::MainWindow(const Catalog& catalog, std::string db_path, QWidget* parent)
    : QMainWindow(parent), catalog_(catalog), db_path_(std::move(db_path)) {
  setWindowTitle("racktwin");
  tabs_ = new QTabWidget(this);
  tabs_->addTab(systems_view(), "Systems");
  tabs_->addTab(not_built_view("The scenario editor with live diagnostics",
                               "check a scenario with: racktwin check FILE"),
                "Scenario");
  tabs_->addTab(not_built_view("The results view (Pareto, point details, latency CDFs)",
                               "chart a stored run with: racktwin plot RUN --out DIR"),
                "Results");
  tabs_->addTab(runs_view(), "Runs");
  tabs_->addTab(plan_view(), "Fleet plan");
  failures_ = new FailuresView(catalog_, db_path_, this);
  tabs_->addTab(failures_, "Failures");
  setCentralWidget(tabs_);
  auto* file = menuBar()->addMenu("&File");
  file->addAction("&Open plan…", QKeySequence::Open, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, "Open a plan", {}, "Plans (*.yaml)");
    if (!f.isEmpty()) open_plan(f);
  });
  file->addAction("Open &rehearsal…", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this, [this] {
    const QString f =
        QFileDialog::getOpenFileName(this, "Open a rehearsal", {}, "Rehearsals (*.yaml)");
    if (f.isEmpty()) return;
    tabs_->setCurrentWidget(failures_);
    failures_->open_rehearsal(f);
  });
  file->addAction("&Refresh runs", QKeySequence::Refresh, this, [this] { refresh_runs(); });
  file->addAction("&Quit", QKeySequence::Quit, qApp, &QApplication::quit);
  QSettings settings("racktwin", "racktwin-gui");
  if (!restoreGeometry(settings.value("geometry").toByteArray())) resize(1366, 768);
  tabs_->setCurrentIndex(settings.value("tab", 0).toInt());
}

MainWindow::~MainWindow() {
  QSettings settings("racktwin", "racktwin-gui");
  settings.setValue("geometry", saveGeometry());
  settings.setValue("tab", tabs_->currentIndex());
  if (plan_watcher_ != nullptr) plan_watcher_->waitForFinished();
}

QWidget* MainWindow::systems_view() {
  auto* w = new QSplitter(Qt::Vertical, this);
  systems_ = new RowsModel(w);
  systems_->set_rows(app::catalog_list(catalog_).system_table);
  auto* table = table_over(systems_, w);
  system_detail_ = new QTextBrowser(w);
  system_detail_->setPlaceholderText("Select a system to see every figure with its source.");
  connect(table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& i) { show_system(i); });
  w->addWidget(table);
  w->addWidget(system_detail_);
  return w;
}

void MainWindow::show_system(const QModelIndex& index) {
  if (!index.isValid()) return;
  const std::string id = systems_->rows()[static_cast<std::size_t>(index.row()) + 1].front();
  auto e = app::catalog_entry(catalog_, id, app::EntryKind::system);
  system_detail_->setHtml(e ? entry_html(*e) : QString("No entry %1").arg(q(id)));
}

QWidget* MainWindow::runs_view() {
  auto* w = new QWidget(this);
  auto* layout = new QVBoxLayout(w);
  runs_status_ = new QLabel(w);
  auto* refresh = new QPushButton("Refresh", w);
  connect(refresh, &QPushButton::clicked, this, [this] { refresh_runs(); });
  auto* top = new QHBoxLayout;
  top->addWidget(runs_status_, 1);
  top->addWidget(refresh);
  layout->addLayout(top);
  runs_ = new RowsModel(w);
  layout->addWidget(table_over(runs_, w));
  refresh_runs();
  return w;
}

void MainWindow::refresh_runs() {
  auto store = db::Store::open(db_path_, db::Store::Mode::existing);
  std::vector<std::vector<std::string>> rows{
      {"id", "status", "scenario", "seed", "points", "failed", "started (UTC)", "wall s", "racktwin"}};
  if (!store) {
    runs_status_->setText(q("No results database: " + store.error()));
    runs_->set_rows(rows);
    return;
  }
  for (const auto& r : store->list())
    rows.push_back({std::to_string(r.id), r.state(), r.scenario_name, std::to_string(r.seed),
                    std::to_string(r.points), std::to_string(r.failed_points), r.started_at,
                    r.wall_s ? QString::number(*r.wall_s, 'f', 1).toStdString() : "-",
                    r.version + " (" + r.commit + ")"});
  runs_status_->setText(q(std::to_string(rows.size() - 1) + " runs in " + db_path_));
  runs_->set_rows(std::move(rows));
}

QWidget* MainWindow::plan_view() {
  auto* w = new QSplitter(Qt::Vertical, this);
  auto* top = new QWidget(w);
  auto* layout = new QVBoxLayout(top);
  auto* bar = new QHBoxLayout;
  plan_status_ = new QLabel("Open a plan file (File > Open plan, Ctrl+O).", top);
  plan_status_->setWordWrap(true);
  auto* open = new QPushButton("Open plan…", top);
  connect(open, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, "Open a plan", {}, "Plans (*.yaml)");
    if (!f.isEmpty()) open_plan(f);
  });
  bar->addWidget(plan_status_, 1);
  bar->addWidget(open);
  layout->addLayout(bar);
  plan_ = new RowsModel(top);
  layout->addWidget(table_over(plan_, top));
  plan_chart_ = new QChartView(w);
  plan_chart_->setRenderHint(QPainter::Antialiasing);
  w->addWidget(top);
  w->addWidget(plan_chart_);
  w->setStretchFactor(0, 1);
  w->setStretchFactor(1, 1);
  plan_chart_->setMinimumHeight(280);
  plan_watcher_ = new QFutureWatcher<std::expected<app::PlanOutcome, app::Failure>>(this);
  connect(plan_watcher_, &QFutureWatcherBase::finished, this, [this] { show_plan(); });
  return w;
}

void MainWindow::open_plan(const QString& file) {
  if (plan_watcher_->isRunning()) return;
  plan_status_->setText("Planning " + file + " (the first plan of a workload simulates its sweep)…");
  app::PlanRequest rq;
  rq.plan_file = file.toStdString();
  rq.db = db_path_;
  rq.store = true;
  const Catalog* cat = &catalog_;
  plan_watcher_->setFuture(QtConcurrent::run([cat, rq] { return app::plan_fleet(*cat, rq); }));
}

void MainWindow::show_plan() {
  auto o = plan_watcher_->result();
  if (!o) {
    plan_status_->setText(q("The plan failed:\n" + failure_text(o.error())));
    emit planned();
    return;
  }
  plan_->set_rows(o->quarter_table());
  plan_status_->setText(q("Plan " + o->plan.name + " (" + o->plan.file + "), power basis " +
                          to_string(o->plan.basis) +
                          (o->plan_id ? ", stored as plan " + std::to_string(*o->plan_id) : "")));
  plan_chart_->setChart(charts::stacked_bar_chart(app::mw_by_generation_chart(*o)).release());
  refresh_runs();
  emit planned();
}

QString MainWindow::plan_status() const {
  return plan_status_->text();
}

QWidget* MainWindow::not_built_view(const QString& what, const QString& instead) {
  auto* l = new QLabel(QString("<h3>Not built yet</h3><p>%1 is not built yet in racktwin-gui.</p>"
                               "<p>Meanwhile, %2.</p>")
                           .arg(what.toHtmlEscaped(), instead.toHtmlEscaped()),
                       this);
  l->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  l->setMargin(24);
  l->setWordWrap(true);
  return l;
}

}  // namespace racktwin::gui
