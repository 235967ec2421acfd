#include "gui/plan_view.hpp"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "charts/charts.hpp"
#include "gui/failure_text.hpp"
#include "gui/palette.hpp"
#include "gui/widgets.hpp"

namespace racktwin::gui {
namespace {

constexpr double kJoulesPerKwh = 3.6e6;
constexpr int kEditDelayMs = 250;  // edits within this time re-plan once

QString edits_text(const plan::WhatIf& w) {
  QStringList parts;
  if (w.power_scale != 1.0) parts << QString("power %1 %").arg(w.power_scale * 100, 0, 'f', 0);
  if (w.supply_scale != 1.0)
    parts << QString("deliveries %1 %").arg(w.supply_scale * 100, 0, 'f', 0);
  if (w.electricity_usd_per_kwh)
    parts << QString("electricity $%1/kWh").arg(*w.electricity_usd_per_kwh, 0, 'f', 3);
  if (w.pue) parts << QString("PUE %1").arg(*w.pue, 0, 'f', 2);
  if (w.comparators)
    parts << (w.comparators->empty() ? QString("no comparator")
                                     : "comparator " + q(w.comparators->front()));
  return parts.join(", ");
}

}  // namespace

PlanView::PlanView(const Catalog& catalog, std::string db_path, QWidget* parent)
    : QWidget(parent), catalog_(catalog), db_path_(std::move(db_path)) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  status_ = new QLabel(
      "Open a plan file (File > Open plan, Ctrl+O); scenarios/plans/ has the shipped ones.", this);
  status_->setWordWrap(true);
  auto* open = new QPushButton("Open plan…", this);
  connect(open, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, "Open a plan", {}, "Plans (*.yaml)");
    if (!f.isEmpty()) open_plan(f);
  });
  bar->addWidget(status_, 1);
  bar->addWidget(open);
  layout->addLayout(bar);
  auto* body = new QHBoxLayout;
  body->addWidget(what_if_form());
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(heatmap_pane());
  timeline_ = new QTabWidget(split);
  table_ = new RowsModel(this);
  table_view_ = table_over(table_, timeline_);
  connect(table_view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& i) {
            if (i.isValid()) select_quarter(i.row());
          });
  timeline_->addTab(table_view_, "Quarters");
  // The units: power, availability, throughput and where it comes from, cost (app::unit_table).
  units_ = new RowsModel(this);
  timeline_->addTab(table_over(units_, timeline_), "Units");
  const char* names[] = {"MW by generation", "Tokens/s", "$/Mtok", "Tokens/s per MW", "Binding"};
  for (int i = 0; i < 5; ++i) {
    charts_[i] = new QChartView(timeline_);
    charts_[i]->setRenderHint(QPainter::Antialiasing);
    timeline_->addTab(charts_[i], names[i]);
  }
  split->addWidget(timeline_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  body->addWidget(split, 1);
  layout->addLayout(body, 1);
  watcher_ = new QFutureWatcher<Result>(this);
  connect(watcher_, &QFutureWatcherBase::finished, this, [this] { show_outcome(); });
  edits_ = new QTimer(this);
  edits_->setSingleShot(true);
  edits_->setInterval(kEditDelayMs);
  connect(edits_, &QTimer::timeout, this, [this] { replan(); });
}

PlanView::~PlanView() {
  watcher_->waitForFinished();
}

QWidget* PlanView::what_if_form() {
  auto* box = new QGroupBox("What if", this);
  box->setMaximumWidth(250);
  auto* form = new QFormLayout(box);
  power_ = new QSpinBox(box);
  power_->setRange(10, 300);
  power_->setSingleStep(10);
  power_->setSuffix(" %");
  power_->setToolTip("Every site's energised power, each quarter, as a share of the plan's ramp");
  supply_ = new QSpinBox(box);
  supply_->setRange(0, 300);
  supply_->setSingleStep(10);
  supply_->setSuffix(" %");
  supply_->setToolTip("Units delivered per quarter of every generation, as a share of the plan's");
  price_ = new QDoubleSpinBox(box);
  price_->setRange(0, 1);
  price_->setDecimals(3);
  price_->setSingleStep(0.005);
  price_->setPrefix("$");
  price_->setSuffix("/kWh");
  price_->setToolTip("The electricity price (costs.electricity_price)");
  pue_ = new QDoubleSpinBox(box);
  pue_->setRange(1, 3);
  pue_->setDecimals(2);
  pue_->setSingleStep(0.01);
  pue_->setToolTip("Every site's PUE");
  comparators_ = new QComboBox(box);
  comparators_->setToolTip("The comparator fleets planned on the same power");
  form->addRow("Power ramp", power_);
  form->addRow("Deliveries", supply_);
  form->addRow("Electricity", price_);
  form->addRow("PUE", pue_);
  form->addRow("Compare with", comparators_);
  auto* reset = new QPushButton("Plan as written", box);
  reset->setToolTip("Clear the edits and plan the file as it is");
  connect(reset, &QPushButton::clicked, this, [this] { set_what_if({}); });
  form->addRow(reset);
  what_if_status_ = new QLabel(
      "Edits re-plan at once against the stored throughput sweeps; what-if "
      "plans are not stored.",
      box);
  what_if_status_->setWordWrap(true);
  form->addRow(what_if_status_);
  auto edited = [this] {
    if (outcome_) edits_->start();
  };
  connect(power_, &QSpinBox::valueChanged, this, edited);
  connect(supply_, &QSpinBox::valueChanged, this, edited);
  connect(price_, &QDoubleSpinBox::valueChanged, this, edited);
  connect(pue_, &QDoubleSpinBox::valueChanged, this, edited);
  connect(comparators_, &QComboBox::currentIndexChanged, this, edited);
  box->setEnabled(false);
  return box;
}

QWidget* PlanView::heatmap_pane() {
  auto* pane = new QWidget(this);
  auto* layout = new QVBoxLayout(pane);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  slider_ = new QSlider(Qt::Horizontal, pane);
  slider_->setRange(0, 0);
  slider_->setPageStep(1);
  slider_->setToolTip("The quarter the heatmap shows (or select a row of the quarter table)");
  quarter_label_ = new QLabel(pane);
  quarter_label_->setMinimumWidth(520);
  fleet_ = new QComboBox(pane);
  fleet_->setToolTip("The fleet drawn: the plan's, or a comparator's on the same sites and power");
  auto* fit = new QPushButton("Fit", pane);
  fit->setToolTip("Show every site (drag the map to pan it, the wheel zooms)");
  bar->addWidget(new QLabel("Quarter", pane));
  bar->addWidget(slider_, 1);
  bar->addWidget(quarter_label_);
  bar->addWidget(fleet_);
  bar->addWidget(fit);
  layout->addLayout(bar);
  heatmap_ = new SiteHeatmap(pane);
  layout->addWidget(heatmap_, 1);
  connect(slider_, &QSlider::valueChanged, this, [this](int v) { show_quarter(v); });
  connect(fleet_, &QComboBox::currentIndexChanged, this, [this] {
    if (!outcome_ || fleet_->currentIndex() < 0) return;
    heatmap_->set_plan(outcome_, fleet_->currentText().toStdString());
    heatmap_->set_quarter(slider_->value());
  });
  connect(fit, &QPushButton::clicked, heatmap_, &SiteHeatmap::fit);
  return pane;
}

void PlanView::open_plan(const QString& file) {
  if (watcher_->isRunning()) return;
  file_ = file;
  outcome_.reset();
  status_->setText("Planning " + file + " (the first plan of a workload simulates its sweep)…");
  app::PlanRequest rq;
  rq.plan_file = file.toStdString();
  rq.db = db_path_;
  rq.store = true;
  run(std::move(rq));
}

void PlanView::run(app::PlanRequest rq) {
  const Catalog* cat = &catalog_;
  watcher_->setFuture(QtConcurrent::run([cat, rq] { return app::plan_fleet(*cat, rq); }));
}

void PlanView::replan() {
  if (file_.isEmpty()) return;
  if (watcher_->isRunning()) {
    pending_ = true;
    return;
  }
  what_if_status_->setText("Re-planning…");
  app::PlanRequest rq;
  rq.plan_file = file_.toStdString();
  rq.db = db_path_;
  rq.what_if = what_if();
  run(std::move(rq));
}

void PlanView::set_what_if(const plan::WhatIf& w) {
  {
    const QSignalBlocker b1(power_), b2(supply_), b3(price_), b4(pue_), b5(comparators_);
    power_->setValue(static_cast<int>(std::lround(w.power_scale * 100)));
    supply_->setValue(static_cast<int>(std::lround(w.supply_scale * 100)));
    price_->setValue(w.electricity_usd_per_kwh.value_or(base_price_kwh_));
    pue_->setValue(w.pue.value_or(base_pue_));
    int c = 0;
    if (w.comparators)
      c = w.comparators->empty() ? 1 : comparators_->findText(q(w.comparators->front()));
    comparators_->setCurrentIndex(std::max(0, c));
  }
  edits_->stop();
  replan();
}

plan::WhatIf PlanView::what_if() const {
  plan::WhatIf w;
  w.power_scale = power_->value() / 100.0;
  w.supply_scale = supply_->value() / 100.0;
  if (std::abs(price_->value() - base_price_kwh_) > 5e-4)
    w.electricity_usd_per_kwh = price_->value();
  if (std::abs(pue_->value() - base_pue_) > 5e-3) w.pue = pue_->value();
  if (comparators_->currentIndex() == 1)
    w.comparators = std::vector<std::string>{};
  else if (comparators_->currentIndex() > 1)
    w.comparators = std::vector<std::string>{comparators_->currentText().toStdString()};
  return w;
}

void PlanView::fill_form() {
  const Plan& p = outcome_->plan;
  base_price_kwh_ = p.costs.electricity_price.value * kJoulesPerKwh;
  base_pue_ = p.sites.empty() ? 1.0 : p.sites.front().pue.value;
  const QSignalBlocker b1(power_), b2(supply_), b3(price_), b4(pue_), b5(comparators_);
  power_->setValue(100);
  supply_->setValue(100);
  price_->setValue(base_price_kwh_);
  pue_->setValue(base_pue_);
  comparators_->clear();
  comparators_->addItem("every comparator");
  comparators_->addItem("no comparator");
  for (const auto& c : p.comparators) comparators_->addItem(q(c.id));
  what_if_status_->setText(
      "Edits re-plan at once against the stored throughput sweeps; what-if "
      "plans are not stored.");
}

void PlanView::show_outcome() {
  auto o = watcher_->result();
  const bool first = !outcome_;
  if (!o) {
    const QString why = q("The plan failed:\n" + failure_text(o.error()));
    (first ? status_ : what_if_status_)->setText(why);
  } else {
    outcome_ = std::make_shared<const app::PlanOutcome>(std::move(*o));
    if (first) fill_form();
    const plan::WhatIf w = first ? plan::WhatIf{} : what_if();
    status_->setText(
        q("Plan " + outcome_->plan.name + " (" + outcome_->plan.file + "), power basis " +
          to_string(outcome_->plan.basis) +
          (outcome_->plan_id ? ", stored as plan " + std::to_string(*outcome_->plan_id) : "")) +
        (w.empty() ? QString() : "; what-if: " + edits_text(w) + " (not stored)"));
    if (!first)
      what_if_status_->setText(w.empty() ? "Planned as written."
                                         : "Re-planned: " + edits_text(w) + ".");
    what_if_status_->parentWidget()->setEnabled(true);
    const int keep = first ? -1 : slider_->value();
    table_->set_rows(outcome_->quarter_table());
    units_->set_rows(outcome_->unit_table());
    charts::CategoryChart figures[] = {
        app::mw_by_generation_chart(*outcome_), app::tokens_chart(*outcome_),
        app::usd_per_mtok_chart(*outcome_), app::tokens_per_mw_chart(*outcome_),
        app::capacities_chart(*outcome_)};
    for (int i = 0; i < 5; ++i) {
      QChart* chart = (i == 0 ? charts::stacked_bar_chart(figures[i])
                              : charts::category_line_chart(figures[i], i == 1 || i == 4))
                          .release();
      match_palette(chart);
      QChart* old = charts_[i]->chart();
      charts_[i]->setChart(chart);
      delete old;
    }
    const QString fleet = fleet_->currentText();
    {
      const QSignalBlocker b(fleet_);
      fleet_->clear();
      fleet_->addItem("plan");
      for (const auto& c : outcome_->comparators) fleet_->addItem(q(c.fleet));
      fleet_->setCurrentIndex(std::max(0, fleet_->findText(fleet)));
    }
    heatmap_->set_plan(outcome_, fleet_->currentText().toStdString());
    const int last = static_cast<int>(outcome_->rollout.quarters.size()) - 1;
    {
      const QSignalBlocker b(slider_);
      slider_->setRange(0, std::max(0, last));
    }
    select_quarter(keep < 0 ? last : std::min(keep, last));
    show_quarter(slider_->value());
  }
  if (pending_) {
    pending_ = false;
    replan();
    return;
  }
  emit planned();
}

void PlanView::select_quarter(int quarter) {
  slider_->setValue(quarter);
}

int PlanView::quarter() const {
  return slider_->value();
}

void PlanView::select_fleet(const QString& fleet) {
  const int i = fleet_->findText(fleet);
  if (i >= 0) fleet_->setCurrentIndex(i);
}

void PlanView::show_quarter(int quarter) {
  if (!outcome_) return;
  heatmap_->set_quarter(quarter);
  const plan::Rollout* r = app::fleet_rollout(*outcome_, heatmap_->fleet());
  if (r == nullptr || quarter < 0 || quarter >= static_cast<int>(r->quarters.size())) return;
  const auto& row = r->quarters[static_cast<std::size_t>(quarter)];
  const QLocale en(QLocale::English);
  const std::string unit =
      outcome_->units.empty() ? "unit" : outcome_->units.front().unit.unit_name;
  quarter_label_->setText(
      QString("<b>%1</b>: %2 %3s (+%4), %5 MW energised, %6 Mtok/s, binding: %7")
          .arg(q(to_string(row.quarter)))
          .arg(en.toString(row.total.units, 'f', 0))
          .arg(q(unit))
          .arg(en.toString(row.total.added, 'f', 0))
          .arg(en.toString(row.energised_w / 1e6, 'f', 0))
          .arg(en.toString(row.total.tps / 1e6, 'f', 1))
          .arg(q(plan::to_string(row.binding))));
  if (heatmap_->fleet() == "plan" && table_view_->currentIndex().row() != quarter) {
    const QSignalBlocker b(table_view_->selectionModel());
    table_view_->selectRow(quarter);
  }
}

QString PlanView::status() const {
  return status_->text();
}

int PlanView::charts_shown() const {
  int n = 0;
  for (auto* c : charts_) n += c->chart() != nullptr && !c->chart()->series().isEmpty() ? 1 : 0;
  return n;
}

}  // namespace racktwin::gui
