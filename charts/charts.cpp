#include "charts/charts.hpp"

#include <QApplication>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QBuffer>
#include <QChart>
#include <QChartView>
#include <QHorizontalBarSeries>
#include <QImage>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QSvgGenerator>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/atomic_file.hpp"
#include "sim/serving.hpp"

namespace racktwin::charts {

// A fixed palette so that a system keeps its colour across the charts of a run.
QColor series_colour(std::size_t i) {
  static const std::vector<QColor> palette{QColor(0x1f, 0x77, 0xb4), QColor(0xd6, 0x27, 0x28),
                                           QColor(0x2c, 0xa0, 0x2c), QColor(0xff, 0x7f, 0x0e),
                                           QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                           QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f),
                                           QColor(0xbc, 0xbd, 0x22), QColor(0x17, 0xbe, 0xcf)};
  return palette[i % palette.size()];
}

namespace {

QString q(const std::string& s) {
  return QString::fromStdString(s);
}

QColor colour(std::size_t i) { return series_colour(i); }

// The systems of a run in their sweep order (the order of the scenario).
std::vector<std::string> systems_of(const db::StoredRun& run) {
  std::vector<std::string> out;
  for (const auto& p : run.points)
    if (std::find(out.begin(), out.end(), p.key.system) == out.end()) out.push_back(p.key.system);
  return out;
}

std::size_t system_index(const db::StoredRun& run, const std::string& system) {
  const auto s = systems_of(run);
  return static_cast<std::size_t>(std::find(s.begin(), s.end(), system) - s.begin());
}

bool in_group(const db::StoredPoint& p, const Group& g) {
  return p.error.empty() && p.key.model == g.model && p.key.workload == g.workload;
}

double value(const db::StoredPoint& p, std::string_view name) {
  return p.metric(name).value_or(0.0);
}

std::unique_ptr<QChart> new_chart(const std::string& title) {
  auto c = std::make_unique<QChart>();
  c->setTitle(q(title));
  QFont f = c->titleFont();
  f.setPointSize(13);
  f.setBold(true);
  c->setTitleFont(f);
  c->setBackgroundBrush(Qt::white);
  c->legend()->setAlignment(Qt::AlignBottom);
  c->setAnimationOptions(QChart::NoAnimation);
  return c;
}

QValueAxis* value_axis(const std::string& title, double lo, double hi) {
  auto* a = new QValueAxis;
  a->setTitleText(q(title));
  if (!(hi > lo)) hi = lo + 1;
  a->setRange(lo, hi);
  a->applyNiceNumbers();
  a->setLabelFormat(a->max() >= 100 ? "%.0f" : "%.3g");
  return a;
}

void attach(QChart& c, QAbstractSeries* s, QAbstractAxis* x, QAbstractAxis* y) {
  c.addSeries(s);
  s->attachAxis(x);
  s->attachAxis(y);
}

void hide_legend(QChart& c, QAbstractSeries* s) {
  for (auto* m : c.legend()->markers(s)) m->setVisible(false);
}

std::string group_title(const Group& g) {
  return g.model + " / " + g.workload;
}

std::string point_label(const db::StoredPoint& p) {
  std::string s = p.key.system + " (" + p.key.layout;
  if (p.key.serving != "aggregated") s += " " + p.key.serving;
  if (p.key.arrivals == "poisson")
    s += ", " + QString::number(p.key.rate, 'g', 4).toStdString() + " req/s";
  else if (p.key.arrivals != "trace")
    s += ", C=" + std::to_string(p.key.concurrency);
  return s + ")";
}

}  // namespace

std::vector<Group> groups(const db::StoredRun& run) {
  std::vector<Group> out;
  for (const auto& p : run.points) {
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Group& g) {
      return g.model == p.key.model && g.workload == p.key.workload;
    });
    if (seen) continue;
    Group g{p.key.model, p.key.workload};
    g.isl = static_cast<int>(value(p, "workload_isl_tokens"));
    g.osl = static_cast<int>(value(p, "workload_osl_tokens"));
    out.push_back(g);
  }
  return out;
}

std::vector<std::pair<std::string, std::size_t>> peak_points(const db::StoredRun& run,
                                                             const Group& g) {
  std::vector<std::pair<std::string, std::size_t>> out;
  for (const auto& system : systems_of(run)) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < run.points.size(); ++i) {
      const auto& p = run.points[i];
      if (!in_group(p, g) || p.key.system != system) continue;
      if (!best || value(p, "total_tps_per_xpu") > value(run.points[*best], "total_tps_per_xpu"))
        best = i;
    }
    if (best) out.emplace_back(system, *best);
  }
  return out;
}

std::unique_ptr<QChart> pareto_chart(const db::StoredRun& run, const Group& g, ParetoAxis axis,
                                     const std::vector<ReferencePoint>& published) {
  const bool mw = axis == ParetoAxis::per_allin_mw;
  const std::string metric = mw ? "tps_per_allin_provisioned_mw" : "total_tps_per_xpu";
  const double scale = mw ? 1e-6 : 1.0;  // per MW drawn in millions
  auto c = new_chart((mw ? "Throughput per all-in MW against interactivity — "
                         : "Throughput per XPU against interactivity — ") +
                     group_title(g));
  double xmax = 0, ymax = 0;
  struct Drawn {
    QAbstractSeries* series;
    bool legend;
  };
  std::vector<Drawn> drawn;
  // Published per-XPU peaks are converted with each system's simulated ratio of the metric to
  // tok/s/XPU (the all-in or rated power per XPU does not depend on the point).
  std::map<std::string, double> to_metric, rated_kw;
  for (const auto& system : systems_of(run)) {
    std::vector<sim::CurvePoint> pts;
    auto* scatter = new QScatterSeries;
    scatter->setMarkerSize(6);
    scatter->setColor(colour(system_index(run, system)));
    scatter->setBorderColor(colour(system_index(run, system)));
    scatter->setName(q(system + " points"));
    QList<qulonglong> indices;
    for (std::size_t i = 0; i < run.points.size(); ++i) {
      const auto& p = run.points[i];
      if (!in_group(p, g) || p.key.system != system) continue;
      const double x = value(p, "interactivity_tok_s_user"), y = value(p, metric) * scale;
      if (x <= 0) continue;
      pts.push_back({x, y, i});
      scatter->append(x, y);
      indices.push_back(i);
      xmax = std::max(xmax, x);
      ymax = std::max(ymax, y);
      const double per_xpu = value(p, "total_tps_per_xpu");
      if (per_xpu > 0) {
        to_metric[system] = value(p, metric) * scale / per_xpu;
        rated_kw[system] = per_xpu / std::max(1e-30, value(p, "tps_per_rated_kw"));
      }
    }
    if (pts.empty()) {
      delete scatter;
      continue;
    }
    scatter->setProperty(kPointIndices, QVariant::fromValue(indices));
    auto* line = new QLineSeries;
    line->setName(q(system));
    QPen pen(colour(system_index(run, system)));
    pen.setWidthF(2.5);
    line->setPen(pen);
    for (const auto& e : sim::pareto_envelope(pts)) line->append(e.interactivity, e.value);
    drawn.push_back({line, true});
    drawn.push_back({scatter, false});
  }
  // Published points of this model and workload shape.
  struct Mark {
    std::string system;
    double x = -1, y = -1;  // x < 0: a horizontal line at y; y < 0: a vertical line at x
    std::string label;
  };
  std::vector<Mark> marks;
  for (const auto& pp : published) {
    // Published points are fixed-length workloads: they match a group of the same lengths only.
    if (pp.model != g.model || g.isl == 0 || pp.workload.isl != g.isl || pp.workload.osl != g.osl)
      continue;
    if (!to_metric.contains(pp.system)) continue;
    const double k = to_metric[pp.system];
    if (pp.metric == (mw ? Metric::total_tps_per_allin_mw_at : Metric::total_tps_per_xpu_at) &&
        pp.at)
      marks.push_back({pp.system, *pp.at, pp.value * scale, pp.id});
    else if (pp.metric == Metric::peak_total_tps_per_xpu)
      marks.push_back({pp.system, -1, pp.value * k, pp.id});
    else if (pp.metric == Metric::peak_mixed_tps_per_kw_rated)
      marks.push_back({pp.system, -1, pp.value * rated_kw[pp.system] * k, pp.id});
    else if (pp.metric == Metric::max_interactivity_tok_s_user)
      marks.push_back({pp.system, pp.value, -1, pp.id});
    else if (pp.metric == Metric::min_tbt_ms && pp.value > 0)
      marks.push_back({pp.system, 1000.0 / pp.value, -1, pp.id});
  }
  for (const auto& m : marks) {
    xmax = std::max(xmax, m.x);
    ymax = std::max(ymax, m.y);
  }
  auto* x = value_axis("interactivity (tok/s/user = 1 / median TPOT)", 0, xmax * 1.05);
  auto* y = value_axis(mw ? "total tok/s per all-in MW (millions)" : "total tok/s per XPU", 0,
                       ymax * 1.05);
  xmax = x->max();  // reference lines span the whole plot
  ymax = y->max();
  bool published_legend = false;
  for (const auto& m : marks) {
    const QColor col = colour(system_index(run, m.system));
    if (m.x >= 0 && m.y >= 0) {
      auto* s = new QScatterSeries;
      s->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
      s->setMarkerSize(13);
      s->setColor(Qt::white);
      s->setBorderColor(col);
      s->append(m.x, m.y);
      s->setName("published");
      drawn.push_back({s, !published_legend});
      published_legend = true;
    } else {
      auto* l = new QLineSeries;
      QPen pen(col);
      pen.setStyle(Qt::DashLine);
      pen.setWidthF(1.5);
      l->setPen(pen);
      if (m.x < 0) {
        l->append(0, m.y);
        l->append(xmax, m.y);
      } else {
        l->append(m.x, 0);
        l->append(m.x, ymax);
      }
      l->setName("published (dashed: peak or best interactivity)");
      drawn.push_back({l, !published_legend});
      published_legend = true;
    }
  }
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  for (const auto& d : drawn) {
    attach(*c, d.series, x, y);
    if (!d.legend) hide_legend(*c, d.series);
  }
  return c;
}

namespace {

std::string latency_name(const std::string& metric) {
  return metric == "ttft_s"   ? "Time to first token"
         : metric == "tpot_s" ? "Time per output token"
                              : "End-to-end latency";
}

// The CDF of a latency through the stored percentiles of each of `points` (indices into
// run.points), a line per point in its system's colour.
std::unique_ptr<QChart> cdf_chart(const db::StoredRun& run, const std::vector<std::size_t>& points,
                                  const std::string& metric, const std::string& title) {
  const bool ms = metric == "tpot_s";
  const std::string name = latency_name(metric);
  auto c = new_chart(title);
  double xmax = 0;
  std::vector<QLineSeries*> series;
  for (const std::size_t i : points) {
    const auto& p = run.points[i];
    const std::string& system = p.key.system;
    const auto it = p.percentiles_s.find(metric);
    if (it == p.percentiles_s.end() || it->second.empty()) continue;
    auto* s = new QLineSeries;
    s->setName(q(point_label(p)));
    QPen pen(colour(system_index(run, system)));
    pen.setWidthF(2.5);
    s->setPen(pen);
    const auto& v = it->second;
    for (std::size_t k = 0; k < v.size(); ++k) {
      const double xv = v[k] * (ms ? 1e3 : 1.0);
      s->append(xv, static_cast<double>(k) / static_cast<double>(v.size() - 1));
      xmax = std::max(xmax, xv);
    }
    series.push_back(s);
  }
  auto* x = value_axis(ms ? name + " (ms)" : name + " (s)", 0, xmax * 1.05);
  auto* y = value_axis("share of requests", 0, 1);
  y->setRange(0, 1);
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  for (auto* s : series) attach(*c, s, x, y);
  return c;
}

}  // namespace

std::unique_ptr<QChart> latency_cdf_chart(const db::StoredRun& run, const Group& g,
                                          const std::string& metric) {
  std::vector<std::size_t> peaks;
  for (const auto& [system, i] : peak_points(run, g)) peaks.push_back(i);
  return cdf_chart(run, peaks, metric,
                   latency_name(metric) + " CDF at each system's peak throughput — " +
                       group_title(g));
}

std::unique_ptr<QChart> point_latency_cdf_chart(const db::StoredRun& run, std::size_t point,
                                                const std::string& metric) {
  if (point >= run.points.size()) return new_chart(latency_name(metric) + " CDF");
  return cdf_chart(run, {point}, metric,
                   latency_name(metric) + " CDF — " + point_label(run.points[point]));
}

namespace {

// A stacked bar per system at its peak point, one set per component.
std::unique_ptr<QChart> stacked_chart(const db::StoredRun& run, const Group& g,
                                      const std::string& title, const std::string& y_title,
                                      const std::vector<std::pair<std::string, std::string>>& parts,
                                      double scale) {
  auto c = new_chart(title + " — " + group_title(g));
  auto* series = new QStackedBarSeries;
  QStringList categories;
  const auto peaks = peak_points(run, g);
  std::vector<QBarSet*> sets;
  static const std::vector<QColor> part_colours{QColor(0x44, 0x77, 0xaa), QColor(0x66, 0xcc, 0xee),
                                                QColor(0x22, 0x88, 0x33), QColor(0xcc, 0xbb, 0x44),
                                                QColor(0xee, 0x66, 0x77), QColor(0xaa, 0x33, 0x77)};
  for (std::size_t k = 0; k < parts.size(); ++k) {
    auto* set = new QBarSet(q(parts[k].second));
    set->setColor(part_colours[k % part_colours.size()]);
    sets.push_back(set);
  }
  double ymax = 0;
  for (const auto& [system, i] : peaks) {
    const auto& p = run.points[i];
    categories << q(point_label(p));
    double total = 0;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      const double v = value(p, parts[k].first) * scale;
      *sets[k] << v;
      total += v;
    }
    ymax = std::max(ymax, total);
  }
  for (auto* s : sets) series->append(s);
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  auto* y = value_axis(y_title, 0, ymax * 1.05);
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  attach(*c, series, x, y);
  return c;
}

}  // namespace

std::unique_ptr<QChart> power_breakdown_chart(const db::StoredRun& run, const Group& g) {
  return stacked_chart(run, g, "All-in power per XPU at peak throughput", "W per XPU",
                       {{"power_xpu_w", "XPU"},
                        {"power_tray_overhead_w", "compute tray overhead"},
                        {"power_switches_w", "scale-up switches"},
                        {"power_hosts_w", "hosts"},
                        {"power_conversion_loss_w", "power conversion loss"},
                        {"power_facility_overhead_w", "facility (PUE) overhead"}},
                       1.0);
}

std::unique_ptr<QChart> iteration_breakdown_chart(const db::StoredRun& run, const Group& g) {
  return stacked_chart(run, g, "Mean engine iteration time at peak throughput", "ms per iteration",
                       {{"iteration_compute_s", "compute-bound"},
                        {"iteration_memory_s", "memory-bound"},
                        {"iteration_communication_s", "exposed communication"},
                        {"iteration_overhead_s", "overhead"}},
                       1e3);
}

std::vector<NamedChart> run_charts(const db::StoredRun& run,
                                   const std::vector<ReferencePoint>& published) {
  auto safe = [](std::string s) {
    for (char& ch : s)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' && ch != '-')
        ch = '_';
    return s;
  };
  std::vector<NamedChart> out;
  for (const auto& g : groups(run)) {
    if (peak_points(run, g).empty()) continue;  // nothing ran
    const std::string stem = safe(g.model) + "-" + safe(g.workload) + "-";
    out.push_back({stem + "pareto-per-xpu", pareto_chart(run, g, ParetoAxis::per_xpu, published)});
    out.push_back(
        {stem + "pareto-per-allin-mw", pareto_chart(run, g, ParetoAxis::per_allin_mw, published)});
    out.push_back({stem + "ttft-cdf", latency_cdf_chart(run, g, "ttft_s")});
    out.push_back({stem + "tpot-cdf", latency_cdf_chart(run, g, "tpot_s")});
    out.push_back({stem + "e2e-cdf", latency_cdf_chart(run, g, "e2e_s")});
    out.push_back({stem + "power", power_breakdown_chart(run, g)});
    out.push_back({stem + "iteration-time", iteration_breakdown_chart(run, g)});
  }
  return out;
}

std::expected<std::vector<std::string>, std::string> save_chart(std::unique_ptr<QChart> chart,
                                                                const std::string& stem,
                                                                Formats formats, QSize size) {
  if (QApplication::instance() == nullptr)
    return std::unexpected("charts need a QApplication (the front end creates it)");
  QChartView view(chart.release());  // the view owns the chart from here
  view.setRenderHint(QPainter::Antialiasing);
  view.resize(size);
  // Lay the chart out at the final size without showing the view.
  view.chart()->resize(QSizeF(size));
  QApplication::processEvents();
  // Each image is drawn into memory and written through a fresh temporary file renamed into
  // place, so a symbolic link planted at the output path is replaced, never written through.
  std::vector<std::string> written;
  auto save = [&](const std::string& path, const QByteArray& bytes) {
    auto w = write_file_atomically(path, std::string_view(bytes.constData(), bytes.size()));
    if (w) written.push_back(path);
    return w;
  };
  if (formats.png) {
    QImage image(size, QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    view.render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), view.rect());
    painter.end();
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG")) return std::unexpected("cannot encode " + stem + ".png");
    if (auto w = save(stem + ".png", bytes); !w) return std::unexpected(w.error());
  }
  if (formats.svg) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(view.chart()->title());
    svg.setDescription("racktwin chart");
    QPainter painter;
    if (!painter.begin(&svg)) return std::unexpected("cannot encode " + stem + ".svg");
    view.render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), view.rect());
    painter.end();
    if (auto w = save(stem + ".svg", bytes); !w) return std::unexpected(w.error());
  }
  return written;
}

std::expected<Formats, std::string> parse_formats(const std::string& text) {
  Formats f{false, false};
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string word = text.substr(at, comma - at);
    if (word == "png")
      f.png = true;
    else if (word == "svg")
      f.svg = true;
    else
      return std::unexpected("unknown format '" + word + "' (png, svg)");
    at = comma + 1;
  }
  return f;
}

namespace {

std::function<void(const std::string&)>& qt_error_sink() {
  static std::function<void(const std::string&)> sink;
  return sink;
}

}  // namespace

OffscreenApp::OffscreenApp(std::function<void(const std::string&)> on_error) {
  qt_error_sink() = std::move(on_error);
  qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& msg) {
    auto& sink = qt_error_sink();
    if ((type == QtCriticalMsg || type == QtFatalMsg) && sink) sink(msg.toStdString());
  });
  if (QCoreApplication::instance()) return;
  static int argc = 1;
  static char arg0[] = "racktwin";
  static char* argv[] = {arg0, nullptr};
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  app_ = std::make_unique<QApplication>(argc, argv);
}

OffscreenApp::~OffscreenApp() {
  app_.reset();
  qInstallMessageHandler(nullptr);
  qt_error_sink() = nullptr;
}


namespace {

QBarCategoryAxis* category_axis(const std::vector<std::string>& categories) {
  auto* x = new QBarCategoryAxis;
  for (const auto& c : categories) x->append(q(c));
  return x;
}

}  // namespace

std::unique_ptr<QChart> stacked_bar_chart(const CategoryChart& d) {
  auto c = new_chart(d.title);
  auto* series = new QStackedBarSeries;
  std::vector<double> totals(d.categories.size(), 0.0);
  for (std::size_t k = 0; k < d.series.size(); ++k) {
    auto* set = new QBarSet(q(d.series[k].name));
    set->setColor(colour(k));
    for (std::size_t i = 0; i < d.categories.size(); ++i) {
      const double v = i < d.series[k].values.size() ? d.series[k].values[i] : 0.0;
      *set << v;
      totals[i] += v;
    }
    series->append(set);
  }
  auto* x = category_axis(d.categories);
  const double top = totals.empty() ? 1.0 : *std::max_element(totals.begin(), totals.end());
  auto* y = value_axis(d.y_title, 0, top * 1.05);
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  attach(*c, series, x, y);
  return c;
}

std::unique_ptr<QChart> category_line_chart(const CategoryChart& d, bool log_y) {
  auto c = new_chart(d.title);
  auto* labels = category_axis(d.categories);  // line points sit at the categories' indices
  double lo = INFINITY, hi = 0;
  for (const auto& s : d.series)
    for (double v : s.values)
      if (v > 0 || !log_y) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  if (!std::isfinite(lo)) lo = 0;
  QAbstractAxis* y = nullptr;
  if (log_y) {
    auto* l = new QLogValueAxis;
    l->setTitleText(q(d.y_title));
    l->setBase(10);
    l->setLabelFormat("%.3g");
    l->setRange(std::pow(10, std::floor(std::log10(std::max(lo, 1e-300)))),
                std::pow(10, std::ceil(std::log10(std::max(hi, 1e-300)))));
    y = l;
  } else {
    y = value_axis(d.y_title, std::min(0.0, lo), hi * 1.05);
  }
  c->addAxis(labels, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  for (std::size_t k = 0; k < d.series.size(); ++k) {
    auto* line = new QLineSeries;
    line->setName(q(d.series[k].name));
    QPen pen(colour(k));
    pen.setWidthF(2.0);
    line->setPen(pen);
    line->setPointsVisible(true);
    for (std::size_t i = 0; i < d.series[k].values.size(); ++i) {
      const double v = d.series[k].values[i];
      if (log_y && v <= 0) continue;
      line->append(static_cast<double>(i), v);
    }
    c->addSeries(line);
    line->attachAxis(labels);
    line->attachAxis(y);
  }
  return c;
}

std::unique_ptr<QChart> tornado_chart(const CategoryChart& d, double centre) {
  auto c = new_chart(d.title);
  auto* series = new QHorizontalBarSeries;  // side by side: a low and a high on one side stay apart
  auto* low = new QBarSet(q(d.series.size() > 0 ? d.series[0].name : "low"));
  auto* high = new QBarSet(q(d.series.size() > 1 ? d.series[1].name : "high"));
  low->setColor(colour(0));
  high->setColor(colour(1));
  double span = 0;
  for (std::size_t i = 0; i < d.categories.size(); ++i) {
    const double a = d.series.size() > 0 ? d.series[0].values[i] - centre : 0.0;
    const double b = d.series.size() > 1 ? d.series[1].values[i] - centre : 0.0;
    *low << a;
    *high << b;
    span = std::max({span, std::fabs(a), std::fabs(b)});
  }
  series->append(low);
  series->append(high);
  auto* y = category_axis(d.categories);
  auto* x = value_axis(d.y_title, -span * 1.1, span * 1.1);
  const int decimals = span > 0 ? std::max(0, 2 - static_cast<int>(std::floor(std::log10(span)))) : 0;
  x->setLabelFormat(QString("%.%1f").arg(decimals));
  c->addAxis(y, Qt::AlignLeft);
  c->addAxis(x, Qt::AlignBottom);
  attach(*c, series, x, y);
  return c;
}

std::unique_ptr<QChart> xy_line_chart(const XYChart& d) {
  auto c = new_chart(d.title);
  double x_lo = INFINITY, x_hi = -INFINITY, y_hi = 0;
  for (const auto& s : d.series)
    for (const auto& [x, y] : s.points) {
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      if (std::isfinite(y)) y_hi = std::max(y_hi, y);
    }
  if (!std::isfinite(x_lo)) x_lo = x_hi = 0;
  auto* x = value_axis(d.x_title, x_lo, x_hi);
  auto* y = d.y_range ? value_axis(d.y_title, d.y_range->first, d.y_range->second)
                      : value_axis(d.y_title, 0, y_hi * 1.05);
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  for (std::size_t k = 0; k < d.series.size(); ++k) {
    auto* line = new QLineSeries;
    line->setName(q(d.series[k].name));
    QPen pen(colour(k));
    pen.setWidthF(d.series[k].dashed ? 1.5 : 2.0);
    if (d.series[k].dashed) pen.setStyle(Qt::DashLine);
    line->setPen(pen);
    for (const auto& [px, py] : d.series[k].points)
      if (std::isfinite(py)) line->append(px, py);
    attach(*c, line, x, y);
  }
  return c;
}

}  // namespace racktwin::charts
