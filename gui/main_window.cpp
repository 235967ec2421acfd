#include "gui/main_window.hpp"

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QPushButton>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "app/catalog_views.hpp"
#include "app/describe.hpp"
#include "charts/charts.hpp"
#include "app/plots.hpp"
#include "app/runs.hpp"
#include "db/compare.hpp"
#include "db/store.hpp"
#include "gui/blast_radius.hpp"
#include "gui/failure_text.hpp"
#include "gui/palette.hpp"
#include "gui/rack_view.hpp"
#include "gui/widgets.hpp"

namespace racktwin::gui {
namespace {

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// An entry's sections and every figure with its source or assumption, as HTML.
QString entry_html(const app::CatalogEntry& e) {
  QString h = "<h3>" + q(e.heading).toHtmlEscaped() + "</h3>";
  if (!e.description.empty()) h += "<p>" + q(e.description).toHtmlEscaped() + "</p>";
  auto cells = [](const std::vector<std::string>& row, const char* tag) {
    QString r = "<tr>";
    for (const auto& c : row)
      r += QString("<%1>").arg(tag) + q(c).toHtmlEscaped() + QString("</%1>").arg(tag);
    return r + "</tr>";
  };
  for (const auto& s : e.sections) {
    h += "<h4>" + q(s.title).toHtmlEscaped() + "</h4><table>";
    for (const auto& f : s.facts)
      h += "<tr><td><b>" + q(f.label).toHtmlEscaped() + "</b></td><td>" + q(f.text).toHtmlEscaped() +
           "</td></tr>";
    h += "</table>";
    if (!s.table.empty()) {  // the first row is the header
      h += "<table cellspacing=\"0\" cellpadding=\"2\">" + cells(s.table.front(), "th");
      for (std::size_t i = 1; i < s.table.size(); ++i) h += cells(s.table[i], "td");
      h += "</table>";
    }
    for (const auto& n : s.notes) h += "<p>" + q(n).toHtmlEscaped() + "</p>";
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
  scenario_ = new ScenarioView(catalog_, db_path_, this);
  tabs_->addTab(scenario_, "Scenario");
  results_ = new ResultsView(catalog_, db_path_, this);
  tabs_->addTab(results_, "Results");
  connect(scenario_, &ScenarioView::run_done, this, [this](qint64 run) { show_stored_run(run); });
  tabs_->addTab(runs_view(), "Runs");
  plan_view_ = new PlanView(catalog_, db_path_, this);
  connect(plan_view_, &PlanView::planned, this, [this] {
    refresh_runs();
    emit planned();
  });
  tabs_->addTab(plan_view_, "Fleet plan");
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
  file->addAction("Open &scenario…", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, "Open a scenario", {}, "Scenarios (*.yaml)");
    if (f.isEmpty()) return;
    tabs_->setCurrentWidget(scenario_);
    scenario_->open_file(f);
  });
  file->addAction("&Save scenario", QKeySequence::Save, this, [this] { scenario_->save(); });
  file->addAction("R&un scenario", QKeySequence(Qt::CTRL | Qt::Key_R), this, [this] {
    tabs_->setCurrentWidget(scenario_);
    scenario_->run();
  });
  file->addAction("&Refresh runs", QKeySequence::Refresh, this, [this] { refresh_runs(); });
  file->addAction("&Quit", QKeySequence::Quit, qApp, &QApplication::quit);
  QSettings settings("racktwin", "racktwin-gui");
  auto* view = menuBar()->addMenu("&View");
  for (int i = 0; i < tabs_->count(); ++i)  // Alt+1 .. Alt+6: the tabs
    view->addAction(tabs_->tabText(i), QKeySequence(Qt::ALT | static_cast<Qt::Key>(Qt::Key_1 + i)), this,
                    [this, i] { tabs_->setCurrentIndex(i); });
  view->addSeparator();
  auto* dark = view->addAction("&Dark palette");
  dark->setCheckable(true);
  dark->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
  dark->setChecked(settings.value("dark", false).toBool());
  apply_palette(dark->isChecked());
  connect(dark, &QAction::toggled, this, [](bool on) {
    apply_palette(on);
    QSettings("racktwin", "racktwin-gui").setValue("dark", on);
  });
  // A run double-clicked in the Runs view is shown in the Results view.
  connect(runs_table_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
    results_->show_run(i.siblingAtColumn(0).data().toLongLong());  // the id, through the filter
    tabs_->setCurrentWidget(results_);
  });
  if (!restoreGeometry(settings.value("geometry").toByteArray())) resize(1366, 768);
  tabs_->setCurrentIndex(settings.value("tab", 0).toInt());
}

MainWindow::~MainWindow() {
  QSettings settings("racktwin", "racktwin-gui");
  settings.setValue("geometry", saveGeometry());
  settings.setValue("tab", tabs_->currentIndex());
}

QWidget* MainWindow::systems_view() {
  auto* w = new QSplitter(Qt::Vertical, this);
  systems_split_ = w;
  systems_ = new RowsModel(w);
  systems_->set_rows(app::catalog_list(catalog_).system_table);
  auto* table = table_over(systems_, w);
  systems_table_ = table;
  auto* detail = new QTabWidget(w);
  system_tabs_ = detail;
  system_detail_ = new QTextBrowser(detail);
  system_detail_->setPlaceholderText("Select a system to see every figure with its source.");
  detail->addTab(system_detail_, "Figures");
  detail->addTab(rack_view_pane(detail), "Rack");
  domain_ = new DomainPane(catalog_, detail);
  detail->addTab(domain_, "Domain");
  connect(table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& i) { show_system(i); });
  w->addWidget(table);
  w->addWidget(detail);
  return w;
}

QWidget* MainWindow::rack_view_pane(QWidget* parent) {
  auto* pane = new QWidget(parent);
  auto* layout = new QHBoxLayout(pane);
  rack_ = new RackView(pane);
  rack_status_ = new QLabel("Select a system, then click a tray, switch or host to fail it.", pane);
  rack_status_->setWordWrap(true);
  rack_status_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  rack_status_->setMinimumWidth(300);
  layout->addWidget(rack_, 3);
  layout->addWidget(rack_status_, 2);
  connect(rack_, &RackView::part_clicked, this, [this](const QString& name) { fail_part(name); });
  return pane;
}

void MainWindow::fail_part(const QString& name) {
  const auto& e = rack_->elevation();
  const System* s = catalog_.find_system(e.system);
  if (s == nullptr) return;
  app::FailureRequest rq;
  rq.topology = app::TopologyRequest{e.system, 1, 1.10};
  rq.failed = {name.toStdString()};
  rq.place_xpus = std::min(8, s->domain_xpus);
  auto a = app::assess_failure(catalog_, rq);
  if (!a) {
    rack_status_->setText(q(a.error().message));
    return;
  }
  rack_->set_effects(app::slot_effects(e, *a), name.toStdString());
  rack_status_->setText(blast_radius_html(*a, name, rq.place_xpus, e.note));
}

void MainWindow::show_system(const QModelIndex& index) {
  if (!index.isValid()) return;
  const std::string id = systems_->rows()[static_cast<std::size_t>(index.row()) + 1].front();
  auto e = app::catalog_entry(catalog_, id, app::EntryKind::system);
  system_detail_->setHtml(e ? entry_html(*e) : QString("No entry %1").arg(q(id)));
  if (auto rack = app::rack_elevation(catalog_, id)) {
    rack_status_->setText("Click a tray, switch or host of " + q(id) + " to fail it.<p><i>" +
                          q(rack->note).toHtmlEscaped() + "</i></p>");
    rack_->set_elevation(std::move(*rack));
  }
  domain_->set_system(id);
}

QWidget* MainWindow::runs_view() {
  auto* w = new QWidget(this);
  auto* layout = new QVBoxLayout(w);
  runs_status_ = new QLabel(w);
  runs_status_->setWordWrap(true);
  auto* refresh = new QPushButton("Refresh", w);
  connect(refresh, &QPushButton::clicked, this, [this] { refresh_runs(); });
  auto* compare = new QPushButton("Compare two", w);
  compare->setToolTip("Select two runs (Ctrl+click) to see them side by side");
  connect(compare, &QPushButton::clicked, this, [this] { compare_selected(); });
  auto* exp = new QPushButton("Export CSV…", w);
  connect(exp, &QPushButton::clicked, this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, "Export the selected run into");
    if (!d.isEmpty()) export_selected(d);
  });
  runs_filter_text_ = new QLineEdit(w);
  runs_filter_text_->setPlaceholderText("Filter runs (Ctrl+F)");
  runs_filter_text_->setClearButtonEnabled(true);
  runs_filter_text_->setMaximumWidth(260);
  auto* find = new QAction(runs_filter_text_);
  find->setShortcut(QKeySequence::Find);
  find->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(find, &QAction::triggered, runs_filter_text_, [this] { runs_filter_text_->setFocus(); });
  w->addAction(find);
  runs_filter_column_ = new QComboBox(w);
  runs_filter_column_->setToolTip("The column the filter searches");
  connect(runs_filter_text_, &QLineEdit::textChanged, this, [this] {
    filter_runs(runs_filter_text_->text(), runs_filter_column_->currentText());
  });
  connect(runs_filter_column_, &QComboBox::currentTextChanged, this, [this] {
    filter_runs(runs_filter_text_->text(), runs_filter_column_->currentText());
  });
  auto* top = new QHBoxLayout;
  top->addWidget(runs_status_, 1);
  top->addWidget(runs_filter_text_);
  top->addWidget(runs_filter_column_);
  top->addWidget(compare);
  top->addWidget(exp);
  top->addWidget(refresh);
  layout->addLayout(top);
  auto* split = new QSplitter(Qt::Vertical, w);
  runs_ = new RowsModel(w);
  runs_filter_ = new QSortFilterProxyModel(w);
  runs_filter_->setSourceModel(runs_);
  runs_filter_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  runs_filter_->setFilterKeyColumn(-1);
  runs_table_ = table_over(runs_filter_, split);
  runs_table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  auto* cmp = new QSplitter(Qt::Vertical, split);
  comparison_text_ = new QTextBrowser(cmp);
  comparison_text_->setPlaceholderText("Select two runs and press Compare two.");
  comparison_ = new RowsModel(cmp);
  cmp->addWidget(comparison_text_);
  cmp->addWidget(table_over(comparison_, cmp));
  split->addWidget(runs_table_);
  split->addWidget(cmp);
  layout->addWidget(split, 1);
  refresh_runs();
  return w;
}

std::vector<std::int64_t> MainWindow::selected_runs() const {
  std::vector<std::int64_t> ids;
  for (const auto& i : runs_table_->selectionModel()->selectedRows())
    ids.push_back(i.siblingAtColumn(0).data().toLongLong());
  std::sort(ids.begin(), ids.end());
  return ids;
}

void MainWindow::select_runs(const std::vector<std::int64_t>& ids) {
  runs_table_->clearSelection();
  for (int r = 0; r < runs_filter_->rowCount(); ++r)
    for (auto id : ids)
      if (runs_filter_->index(r, 0).data().toString() == QString::number(id))
        runs_table_->selectionModel()->select(runs_filter_->index(r, 0), QItemSelectionModel::Select |
                                                                             QItemSelectionModel::Rows);
}

void MainWindow::compare_selected() {
  const auto ids = selected_runs();
  if (ids.size() != 2) {
    runs_status_->setText("Select exactly two runs to compare (Ctrl+click the second).");
    return;
  }
  auto store = db::Store::open(db_path_, db::Store::Mode::read);
  if (!store) {
    runs_status_->setText(q(store.error()));
    return;
  }
  const auto a = store->load(ids[0], {.percentiles = false});
  const auto b = store->load(ids[1], {.percentiles = false});
  if (!a || !b) {
    runs_status_->setText("A selected run is no longer in the database; refresh the list.");
    return;
  }
  const db::Comparison c = db::compare(*a, *b);
  QString text;
  for (const auto& line : app::comparison_lines(c)) text += q(line) + "\n";
  comparison_text_->setPlainText(text);
  comparison_->set_rows(app::comparison_table(c));
}

void MainWindow::export_selected(const QString& dir) {
  const auto ids = selected_runs();
  if (ids.size() != 1) {
    runs_status_->setText("Select one run to export.");
    return;
  }
  auto store = db::Store::open(db_path_, db::Store::Mode::read);
  if (!store) {
    runs_status_->setText(q(store.error()));
    return;
  }
  const auto run = store->load(ids[0], {.percentiles = true, .timeseries = true});
  if (!run) {
    runs_status_->setText("The run is no longer in the database; refresh the list.");
    return;
  }
  const auto files = app::export_csv(*run, dir.toStdString());
  runs_status_->setText(files ? QString("Run %1 exported to %2 (%3 files)").arg(ids[0]).arg(dir).arg(files->size())
                              : q("The export failed: " + files.error()));
}

void MainWindow::refresh_runs() {
  auto store = db::Store::open(db_path_, db::Store::Mode::read);
  std::vector<std::vector<std::string>> rows = app::run_list_table({});
  // The GUI's list also names each run's systems, beside its scenario.
  auto with_systems = [](std::vector<std::string> row, const std::string& systems) {
    row.insert(row.begin() + 3, systems);
    return row;
  };
  rows[0] = with_systems(rows[0], "systems");
  if (!store) {
    runs_status_->setText(q("No results database: " + store.error()));
    runs_->set_rows(rows);
    return;
  }
  const auto runs = store->list();
  const auto listed = app::run_list_table(runs);
  for (std::size_t i = 0; i < runs.size(); ++i)
    rows.push_back(with_systems(listed[i + 1], join(runs[i].systems)));
  runs_status_->setText(q(std::to_string(rows.size() - 1) + " runs in " + db_path_));
  runs_->set_rows(std::move(rows));
  if (runs_filter_column_->count() == 0) {
    runs_filter_column_->addItem("any column");
    for (int c = 0; c < runs_->columnCount(); ++c)
      runs_filter_column_->addItem(runs_->headerData(c, Qt::Horizontal).toString());
  }
  if (results_ != nullptr) results_->refresh();
}

void MainWindow::filter_runs(const QString& text, const QString& column) {
  int key = -1;
  for (int c = 0; c < runs_->columnCount(); ++c)
    if (runs_->headerData(c, Qt::Horizontal).toString() == column) key = c;
  runs_filter_->setFilterKeyColumn(key);
  runs_filter_->setFilterFixedString(text);
  if (runs_filter_text_->text() != text) runs_filter_text_->setText(text);
  const int i = runs_filter_column_->findText(key < 0 ? "any column" : column);
  if (i >= 0 && runs_filter_column_->currentIndex() != i) runs_filter_column_->setCurrentIndex(i);
  runs_status_->setText(
      text.isEmpty() ? QString("%1 runs in %2").arg(runs_->rowCount()).arg(q(db_path_))
                     : QString("%1 of %2 runs match \"%3\"").arg(runs_filter_->rowCount()).arg(runs_->rowCount()).arg(text));
}

void MainWindow::open_plan(const QString& file) {
  plan_view_->open_plan(file);
}

void MainWindow::show_rack() {
  tabs_->setCurrentIndex(0);
  system_tabs_->setCurrentIndex(1);
}

void MainWindow::show_domain() {
  tabs_->setCurrentIndex(0);
  system_tabs_->setCurrentWidget(domain_);
  systems_split_->setSizes({150, 10000});  // the domain wants the height
}

QString MainWindow::runs_status() const {
  return runs_status_->text();
}

QString MainWindow::rack_status() const {
  return rack_status_->text();
}

QString MainWindow::system_figures() const {
  return system_detail_->toPlainText();
}

void MainWindow::select_system(const QString& id) {
  for (int r = 0; r < systems_->rowCount(); ++r)
    if (systems_->index(r, 0).data().toString() == id) systems_table_->selectRow(r);
}

QString MainWindow::plan_status() const {
  return plan_view_->status();
}

void MainWindow::show_stored_run(std::int64_t run) {
  refresh_runs();
  if (run <= 0 || !results_->show_run(run)) return;
  tabs_->setCurrentWidget(results_);
}

}  // namespace racktwin::gui
