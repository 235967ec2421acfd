#include "gui/results_view.hpp"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "app/point_details.hpp"
#include "gui/palette.hpp"
#include "scenarios/points_loader.hpp"
#include "gui/widgets.hpp"

namespace racktwin::gui {
namespace {

const char* const kLatencies[3] = {"ttft_s", "tpot_s", "e2e_s"};

QChartView* chart_view(QWidget* parent) {
  auto* v = new QChartView(parent);
  v->setRenderHint(QPainter::Antialiasing);
  v->setMinimumHeight(180);
  return v;
}

std::string run_label(const db::RunInfo& r) {
  return std::to_string(r.id) + ": " + r.scenario_name + " (" + r.state() + ", " +
         std::to_string(r.points) + " points, " + r.started_at + ")";
}

}  // namespace

ResultsView::ResultsView(const Catalog& catalog, std::string db_path, QWidget* parent)
    : QWidget(parent), catalog_(catalog), db_path_(std::move(db_path)) {
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(top_bar());
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  layout->addWidget(status_);
  auto* split = new QSplitter(Qt::Horizontal, this);
  auto* charts = new QSplitter(Qt::Vertical, split);
  for (auto*& p : pareto_) {
    p = chart_view(charts);
    charts->addWidget(p);
  }
  split->addWidget(charts);
  split->addWidget(point_pane());
  split->setSizes({720, 620});
  layout->addWidget(split, 1);
  set_points_file({});
  refresh();
}

QWidget* ResultsView::top_bar() {
  auto* bar = new QWidget(this);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  runs_ = new RowsModel(this);
  groups_model_ = new RowsModel(this);
  runs_combo_ = new QComboBox(bar);
  runs_combo_->setModel(runs_);
  runs_combo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  groups_combo_ = new QComboBox(bar);
  groups_combo_->setModel(groups_model_);
  connect(runs_combo_, &QComboBox::activated, this, [this](int i) {
    if (i >= 0 && static_cast<std::size_t>(i) < run_ids_.size())
      show_run(run_ids_[static_cast<std::size_t>(i)]);
  });
  connect(groups_combo_, &QComboBox::activated, this, [this](int i) { show_group(i); });
  auto* points = new QPushButton("Published points…", bar);
  points->setToolTip("A file of published points to overlay (scenarios/reference/published.yaml)");
  connect(points, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, "Published points", {}, "Points (*.yaml)");
    if (!f.isEmpty()) set_points_file(f.toStdString());
  });
  auto* refresh_button = new QPushButton("Refresh", bar);
  connect(refresh_button, &QPushButton::clicked, this, [this] { refresh(); });
  row->addWidget(new QLabel("Run", bar));
  row->addWidget(runs_combo_, 3);
  row->addWidget(new QLabel("Model / workload", bar));
  row->addWidget(groups_combo_, 2);
  row->addWidget(points);
  row->addWidget(refresh_button);
  return bar;
}

QWidget* ResultsView::point_pane() {
  auto* pane = new QWidget(this);
  auto* layout = new QVBoxLayout(pane);
  layout->setContentsMargins(0, 0, 0, 0);
  point_title_ = new QLabel("Click a point of a Pareto chart to see it.", pane);
  point_title_->setWordWrap(true);
  layout->addWidget(point_title_);
  auto* split = new QSplitter(Qt::Vertical, pane);
  details_ = new RowsModel(pane);
  auto* table = table_over(details_, split);
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
  auto* cdfs = new QWidget(split);
  auto* cdf_layout = new QVBoxLayout(cdfs);
  cdf_layout->setContentsMargins(0, 0, 0, 0);
  auto* tabs = new QTabWidget(cdfs);
  const char* const names[3] = {"TTFT CDF", "TPOT CDF", "e2e CDF"};
  for (int i = 0; i < 3; ++i) {
    cdf_[i] = chart_view(tabs);
    tabs->addTab(cdf_[i], names[i]);
  }
  cdf_note_ = new QLabel(cdfs);
  cdf_note_->setWordWrap(true);
  cdf_layout->addWidget(tabs, 1);
  cdf_layout->addWidget(cdf_note_);
  split->addWidget(table);
  split->addWidget(cdfs);
  split->setSizes({300, 320});
  layout->addWidget(split, 1);
  return pane;
}

void ResultsView::replace_chart(QChartView* view, QChart* chart) {
  QChart* old = view->chart();
  view->setChart(chart);  // the view takes the new chart and lets the old one go
  delete old;
}

void ResultsView::set_points_file(const std::string& file) {
  published_.clear();
  if (file.empty()) {
    points_note_ = "No published points overlaid (Published points… picks a file).";
  } else if (auto pf = load_points_file(file, catalog_); !pf) {
    points_note_ = "The published points of " + file + " do not load: " +
                   (pf.error().empty() ? std::string() : pf.error().front().to_string());
  } else {
    published_ = std::move(pf->points);
    points_note_ = "Published points from " + file + " (" + std::to_string(published_.size()) +
                   " points; " + std::to_string(pf->rejected.size()) + " rejected).";
  }
  if (run_ && !groups_.empty()) {
    draw_paretos();
    if (selected_) highlight(*selected_);
  }
  show_status();
}

void ResultsView::show_status() {
  status_->setText(q(run_note_.empty() ? points_note_ : run_note_ + "\n" + points_note_));
}

void ResultsView::refresh() {
  auto store = db::Store::open(db_path_, db::Store::Mode::read);
  std::vector<std::vector<std::string>> rows{{"run"}};
  run_ids_.clear();
  if (store)
    for (const auto& r : store->list()) {
      run_ids_.push_back(r.id);
      rows.push_back({run_label(r)});
    }
  {
    const QSignalBlocker block(runs_combo_);
    runs_->set_rows(std::move(rows));
  }
  if (!store) {
    run_note_ = "No results database yet (" + store.error() + ").";
    show_status();
    return;
  }
  const auto shown = shown_run();
  const auto at = shown ? std::find(run_ids_.begin(), run_ids_.end(), *shown) : run_ids_.end();
  if (at != run_ids_.end()) {
    const QSignalBlocker block(runs_combo_);
    runs_combo_->setCurrentIndex(static_cast<int>(at - run_ids_.begin()));
  } else if (!run_ids_.empty()) {
    show_run(run_ids_.front());
  } else {
    run_note_ = "No runs in " + db_path_ + " yet: run a scenario from the Scenario tab.";
    show_status();
  }
}

std::optional<std::int64_t> ResultsView::shown_run() const {
  return run_ ? std::optional(run_->info.id) : std::nullopt;
}

bool ResultsView::show_run(std::int64_t id) {
  auto store = db::Store::open(db_path_, db::Store::Mode::read);
  auto r = store ? store->load(id, {.percentiles = true, .timeseries = false}) : std::nullopt;
  if (!r) {
    run_note_ = "No run " + std::to_string(id) + " in " + db_path_ + ".";
    show_status();
    return false;
  }
  run_ = std::move(*r);
  groups_ = charts::groups(*run_);
  std::vector<std::vector<std::string>> rows{{"group"}};
  for (const auto& g : groups_)
    rows.push_back({g.model + " / " + g.workload +
                    (g.isl > 0 ? " (" + std::to_string(g.isl) + "/" + std::to_string(g.osl) + ")"
                               : std::string())});
  {
    const QSignalBlocker block(groups_combo_);
    groups_model_->set_rows(std::move(rows));
  }
  const auto at = std::find(run_ids_.begin(), run_ids_.end(), id);
  if (at != run_ids_.end()) {
    const QSignalBlocker block(runs_combo_);
    runs_combo_->setCurrentIndex(static_cast<int>(at - run_ids_.begin()));
  }
  const db::RunInfo& i = run_->info;
  run_note_ = "Run " + std::to_string(i.id) + " of " + i.scenario_name + " (" + i.scenario_file +
              "), " + i.state() + ", seed " + std::to_string(i.seed) + ": " +
              std::to_string(run_->points.size()) + " points, " + std::to_string(i.failed_points) +
              " failed.";
  show_status();
  show_group(0);
  return true;
}

void ResultsView::show_group(int index) {
  selected_.reset();
  details_->set_rows({});
  point_title_->setText("Click a point of a Pareto chart to see it.");
  cdf_note_->clear();
  for (auto* c : cdf_) replace_chart(c, new QChart);
  if (!run_ || index < 0 || static_cast<std::size_t>(index) >= groups_.size()) {
    for (auto* p : pareto_) replace_chart(p, new QChart);
    highlight_[0] = highlight_[1] = nullptr;
    return;
  }
  group_ = index;
  {
    const QSignalBlocker block(groups_combo_);
    groups_combo_->setCurrentIndex(index);
  }
  draw_paretos();
  // The first system's peak point, as the comparison table of `racktwin run` picks it.
  const auto peaks = charts::peak_points(*run_, groups_[static_cast<std::size_t>(index)]);
  if (!peaks.empty()) select_point(peaks.front().second);
}

void ResultsView::draw_paretos() {
  const auto& g = groups_[static_cast<std::size_t>(group_)];
  for (int k = 0; k < 2; ++k) {
    QChart* c = compact_chart(charts::pareto_chart(
                            *run_, g,
                            k == 0 ? charts::ParetoAxis::per_xpu : charts::ParetoAxis::per_allin_mw,
                            published_)
                            .release());
    for (auto* s : c->series())
      if (auto* sc = qobject_cast<QScatterSeries*>(s);
          sc && sc->property(charts::kPointIndices).isValid())
        connect(sc, &QScatterSeries::clicked, this,
                [this, sc](const QPointF& p) { click_marker(sc, p); });
    highlight_[k] = nullptr;
    replace_chart(pareto_[k], c);
  }
}

void ResultsView::click_marker(QScatterSeries* series, const QPointF& at) {
  const auto indices = series->property(charts::kPointIndices).value<QList<qulonglong>>();
  const auto points = series->points();
  // The marker nearest the click, each axis scaled by the series' largest value.
  double sx = 1e-300, sy = 1e-300;
  for (const auto& p : points) {
    sx = std::max(sx, std::fabs(p.x()));
    sy = std::max(sy, std::fabs(p.y()));
  }
  qsizetype best = -1;
  double best_d = 0;
  for (qsizetype k = 0; k < points.size(); ++k) {
    const double d = std::hypot((points[k].x() - at.x()) / sx, (points[k].y() - at.y()) / sy);
    if (best < 0 || d < best_d) {
      best = k;
      best_d = d;
    }
  }
  if (best >= 0 && best < indices.size()) select_point(static_cast<std::size_t>(indices[best]));
}

void ResultsView::select_point(std::size_t index) {
  if (!run_ || index >= run_->points.size()) return;
  selected_ = index;
  const db::StoredPoint& p = run_->points[index];
  details_->set_rows(app::point_detail_table(p));
  point_title_->setText("<b>" + q(p.key.label()).toHtmlEscaped() + "</b>" +
                        (p.error.empty() ? QString() : " — " + q(p.error).toHtmlEscaped()));
  for (int m = 0; m < 3; ++m)
    replace_chart(cdf_[m],
                  compact_chart(charts::point_latency_cdf_chart(*run_, index, kLatencies[m]).release()));
  cdf_note_->setText(q(app::point_cdf_note(p)));
  highlight(index);
  emit point_selected();
}

// A ring around the point's marker on each Pareto chart (found by the indices its series carries).
void ResultsView::highlight(std::size_t index) {
  for (int k = 0; k < 2; ++k) {
    QChart* c = pareto_[k]->chart();
    if (highlight_[k] != nullptr) {
      c->removeSeries(highlight_[k]);
      delete highlight_[k];
      highlight_[k] = nullptr;
    }
    std::optional<QPointF> at;
    for (auto* s : c->series()) {
      auto* sc = qobject_cast<QScatterSeries*>(s);
      if (sc == nullptr || !sc->property(charts::kPointIndices).isValid()) continue;
      const auto indices = sc->property(charts::kPointIndices).value<QList<qulonglong>>();
      const auto k_at = indices.indexOf(static_cast<qulonglong>(index));
      if (k_at >= 0 && k_at < sc->count()) at = sc->at(static_cast<int>(k_at));
    }
    if (!at || c->axes(Qt::Horizontal).isEmpty() || c->axes(Qt::Vertical).isEmpty()) continue;
    auto* ring = new QScatterSeries;
    ring->setName("selected point");
    ring->setMarkerSize(18);
    ring->setColor(Qt::transparent);
    ring->setBorderColor(palette().color(QPalette::WindowText));
    ring->append(*at);
    c->addSeries(ring);
    ring->attachAxis(c->axes(Qt::Horizontal).first());
    ring->attachAxis(c->axes(Qt::Vertical).first());
    for (auto* m : c->legend()->markers(ring)) m->setVisible(false);
    highlight_[k] = ring;
  }
}

QString ResultsView::status() const {
  return status_->text();
}

QString ResultsView::cdf_note() const {
  return cdf_note_->text();
}

}  // namespace racktwin::gui
