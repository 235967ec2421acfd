#include "gui/site_heatmap.hpp"

#include <QEvent>
#include <QHelpEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "charts/charts.hpp"
#include "gui/widgets.hpp"

namespace racktwin::gui {
namespace {

constexpr int kHallW = plan::kPositionsPerRow, kHallH = plan::kRowsPerHall;
constexpr int kHallGap = 2, kSiteGap = 10;  // cells
constexpr double kTop = 46, kBottom = 30, kSide = 10;  // pixels: site labels, legend
constexpr double kAspect = 2.8;  // the shape the fleet is laid out for (wide, like the tab)
constexpr double kMaxScale = 48;

QString mw(double w) {
  return w >= 1e9 ? QString::number(w / 1e9, 'f', 2) + " GW" : QString::number(w / 1e6, 'f', 0) + " MW";
}

QString units_text(std::size_t n) { return QLocale(QLocale::English).toString(static_cast<qulonglong>(n)); }

bool is_unit(plan::PositionState s) {
  return s == plan::PositionState::serving || s == plan::PositionState::installed;
}

int rows_in_hall(const plan::SiteLayout& s, int hall) {
  const auto left = s.positions - static_cast<std::size_t>(hall) * plan::kPositionsPerHall;
  return static_cast<int>(std::min<std::size_t>(kHallH, left / kHallW));
}

}  // namespace

SiteHeatmap::SiteHeatmap(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(320, 200);
}

void SiteHeatmap::set_plan(std::shared_ptr<const app::PlanOutcome> outcome, const std::string& fleet) {
  outcome_ = std::move(outcome);
  fleet_ = fleet;
  cache_.clear();
  units_.clear();
  layout_ = {};
  rollout_ = outcome_ ? app::fleet_rollout(*outcome_, fleet) : nullptr;
  if (rollout_ != nullptr && !rollout_->quarters.empty()) {
    units_ = app::fleet_units(*outcome_, fleet);
    layout_ = plan::lay_out(outcome_->plan, *rollout_, units_);
  }
  if (units_.empty()) rollout_ = nullptr;
  lay_out_world();
  quarter_ = rollout_ ? static_cast<int>(rollout_->quarters.size()) - 1 : 0;
  moved_ = false;
  fit();
}

void SiteHeatmap::set_quarter(int quarter) {
  if (rollout_ == nullptr) return;
  quarter_ = std::clamp(quarter, 0, static_cast<int>(rollout_->quarters.size()) - 1);
  update();
}

void SiteHeatmap::lay_out_world() {
  blocks_.clear();
  world_w_ = world_h_ = 0;
  if (layout_.sites.empty()) return;
  int most = 1;
  for (const auto& s : layout_.sites) most = std::max(most, s.halls());
  const auto sites = static_cast<int>(layout_.sites.size());
  int best_rows = 1;
  double best = 1e300;
  for (int rows = 1; rows <= most; ++rows) {  // hall rows per site: the fleet closest to kAspect
    const int cols = (most + rows - 1) / rows;
    const double w = sites * cols * (kHallW + kHallGap) + (sites - 1) * kSiteGap;
    const double h = rows * (kHallH + kHallGap);
    const double miss = std::abs(std::log(w / h / kAspect));
    if (miss < best) best = miss, best_rows = rows;
  }
  int x = 0;
  for (const auto& s : layout_.sites) {
    const int halls = std::max(1, s.halls());
    const int cols = (halls + best_rows - 1) / best_rows;
    blocks_.push_back({x, cols, s.halls()});
    x += cols * (kHallW + kHallGap) - kHallGap + kSiteGap;
  }
  world_w_ = x - kSiteGap;
  world_h_ = best_rows * (kHallH + kHallGap) - kHallGap;
}

QPoint SiteHeatmap::hall_origin(std::size_t site, int hall) const {
  const SiteBlock& b = blocks_[site];
  return {b.x + hall % b.hall_cols * (kHallW + kHallGap), hall / b.hall_cols * (kHallH + kHallGap)};
}

QPoint SiteHeatmap::cell_of(std::size_t site, std::size_t position) const {
  const plan::PositionPlace pl = plan::place_of(position);
  return hall_origin(site, pl.hall) + QPoint(pl.place, pl.row);
}

QColor SiteHeatmap::colour_of(const plan::PositionAt& at) const {
  const bool dark = palette().color(QPalette::Window).lightness() < 128;
  switch (at.state) {
    case plan::PositionState::serving:
    case plan::PositionState::installed: {
      std::size_t base = at.generation;
      if (fleet_ != "plan") {
        base = outcome_->plan.generations.size();
        for (const auto& c : outcome_->comparators) {
          if (c.fleet == fleet_) break;
          ++base;
        }
      }
      const QColor c = charts::series_colour(base);
      return at.state == plan::PositionState::serving ? c : c.lighter(dark ? 140 : 165);
    }
    case plan::PositionState::energised: return dark ? QColor(112, 112, 118) : QColor(172, 172, 178);
    case plan::PositionState::dark: return dark ? QColor(62, 62, 66) : QColor(222, 222, 226);
  }
  return {};
}

const SiteHeatmap::QuarterCache& SiteHeatmap::cache(int quarter) const {
  if (auto it = cache_.find(quarter); it != cache_.end()) return it->second;
  QuarterCache c;
  c.sites = plan::positions_at(layout_, outcome_->plan, *rollout_, units_, quarter);
  c.image = QImage(std::max(1, world_w_), std::max(1, world_h_), QImage::Format_ARGB32_Premultiplied);
  c.image.fill(Qt::transparent);
  for (std::size_t s = 0; s < c.sites.size(); ++s) {
    QRgb last_rgb = 0;
    plan::PositionAt last{plan::PositionState::dark, 255};
    for (std::size_t i = 0; i < c.sites[s].positions.size(); ++i) {
      const plan::PositionAt& at = c.sites[s].positions[i];
      if (i == 0 || at.state != last.state || at.generation != last.generation) {
        last = at;
        last_rgb = colour_of(at).rgb();
      }
      const QPoint cell = cell_of(s, i);
      reinterpret_cast<QRgb*>(c.image.scanLine(cell.y()))[cell.x()] = last_rgb;
    }
  }
  return cache_.emplace(quarter, std::move(c)).first->second;
}

QRectF SiteHeatmap::map_area() const {
  return QRectF(kSide, kTop, std::max(1.0, width() - 2 * kSide), std::max(1.0, height() - kTop - kBottom));
}

void SiteHeatmap::fit() {
  if (world_w_ > 0 && world_h_ > 0) {
    const QRectF a = map_area();
    scale_ = std::min(a.width() / world_w_, a.height() / world_h_);
    offset_ = QPointF(a.left() + (a.width() - world_w_ * scale_) / 2, a.top());
  }
  update();
  emit view_changed();
}

void SiteHeatmap::pan_by(QPointF d) {
  offset_ += d;
  moved_ = true;
  update();
  emit view_changed();
}

void SiteHeatmap::zoom_at(QPointF at, double factor) {
  if (world_w_ <= 0) return;
  const QRectF a = map_area();
  const double fit_scale = std::min(a.width() / world_w_, a.height() / world_h_);
  const double to = std::clamp(scale_ * factor, fit_scale / 2, std::max(kMaxScale, fit_scale));
  offset_ = at - (at - offset_) * (to / scale_);
  scale_ = to;
  moved_ = true;
  update();
  emit view_changed();
}

std::size_t SiteHeatmap::units_in(plan::PositionState state) const {
  if (rollout_ == nullptr) return 0;
  std::size_t n = 0;
  for (const auto& s : cache(quarter_).sites)
    n += state == plan::PositionState::serving     ? s.serving
         : state == plan::PositionState::installed ? s.installed
         : state == plan::PositionState::energised ? s.energised
                                                   : s.dark;
  return n;
}

void SiteHeatmap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Window));
  if (rollout_ == nullptr) {
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(rect(), Qt::AlignCenter, "Open a plan to see its sites, halls and rack pairs.");
    drawn_ = 0;
    return;
  }
  const QuarterCache& c = cache(quarter_);
  const QRectF area = map_area();
  const QRectF visible = QRectF((area.left() - offset_.x()) / scale_, (area.top() - offset_.y()) / scale_,
                                area.width() / scale_, area.height() / scale_)
                             .intersected(QRectF(0, 0, world_w_, world_h_));
  p.save();
  p.setClipRect(area);
  if (!visible.isEmpty()) {
    const QRect src = visible.toAlignedRect().intersected(c.image.rect());
    const QRectF target(offset_.x() + src.x() * scale_, offset_.y() + src.y() * scale_,
                        src.width() * scale_, src.height() * scale_);
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    p.drawImage(target, c.image, src);
    draw_lines(p, visible);
  }
  p.restore();
  draw_labels(p, c);
  draw_legend(p);
  drawn_ = count_drawn(c, visible);
}

void SiteHeatmap::draw_lines(QPainter& p, const QRectF& visible) const {
  const QColor gap = palette().color(QPalette::Window);
  const QPen outline(palette().color(QPalette::Mid), 1);
  const bool cells = scale_ >= 6;
  for (std::size_t s = 0; s < layout_.sites.size(); ++s)
    for (int h = 0; h < layout_.sites[s].halls(); ++h) {
      const QPoint o = hall_origin(s, h);
      const int rows = rows_in_hall(layout_.sites[s], h);
      const QRectF hall(o.x(), o.y(), kHallW, rows);
      if (!hall.intersects(visible)) continue;
      const QRectF screen(offset_.x() + hall.x() * scale_, offset_.y() + hall.y() * scale_,
                          hall.width() * scale_, hall.height() * scale_);
      if (cells) {
        p.setPen(QPen(gap, 1));
        for (int x = 1; x < kHallW; ++x)
          p.drawLine(QPointF(screen.left() + x * scale_, screen.top()),
                     QPointF(screen.left() + x * scale_, screen.bottom()));
        for (int y = 1; y < rows; ++y)
          p.drawLine(QPointF(screen.left(), screen.top() + y * scale_),
                     QPointF(screen.right(), screen.top() + y * scale_));
      }
      if (scale_ >= 1.5) {
        p.setPen(outline);
        p.drawRect(screen.adjusted(-0.5, -0.5, 0.5, 0.5));
      }
    }
}

void SiteHeatmap::draw_labels(QPainter& p, const QuarterCache& c) const {
  const auto& row = rollout_->quarters[static_cast<std::size_t>(quarter_)];
  QFont bold = font();
  bold.setBold(true);
  const QFontMetrics fm(font()), bm(bold);
  for (std::size_t s = 0; s < blocks_.size(); ++s) {
    const SiteBlock& b = blocks_[s];
    const double left = offset_.x() + b.x * scale_;
    const double w = std::max(40.0, b.hall_cols * (kHallW + kHallGap) * scale_ - 4);
    if (left + w < 0 || left > width()) continue;
    const double y = std::clamp(offset_.y(), kTop, kTop + 1e9);
    const auto& site = c.sites[s];
    const QString name = q(layout_.sites[s].site) + "  " + mw(row.sites[s].energised_w);
    const QString counts = units_text(site.serving + site.installed) + " " + q(units_.front().unit_name) +
                           "s, " + units_text(site.installed) + " new";
    p.setPen(palette().color(QPalette::WindowText));
    p.setFont(bold);
    p.drawText(QPointF(left, y - 8 - fm.height()), bm.elidedText(name, Qt::ElideRight, static_cast<int>(w)));
    p.setFont(font());
    p.drawText(QPointF(left, y - 6), fm.elidedText(counts, Qt::ElideRight, static_cast<int>(w)));
  }
}

void SiteHeatmap::draw_legend(QPainter& p) const {
  const QFontMetrics fm(font());
  const double y = height() - kBottom + 8;
  double x = kSide;
  auto item = [&](const QColor& c, const QString& text) {
    p.fillRect(QRectF(x, y, 12, 12), c);
    p.setPen(palette().color(QPalette::Mid));
    p.drawRect(QRectF(x, y, 12, 12));
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QPointF(x + 16, y + 11), text);
    x += 16 + fm.horizontalAdvance(text) + 14;
  };
  if (fleet_ == "plan")
    for (std::size_t g = 0; g < units_.size(); ++g)
      item(colour_of({plan::PositionState::serving, static_cast<std::uint8_t>(g)}),
           q(units_[g].generation.id));
  else
    item(colour_of({plan::PositionState::serving, 0}), q(fleet_));
  item(colour_of({plan::PositionState::installed, 0}), "installed this quarter (lighter)");
  item(colour_of({plan::PositionState::energised, 0}), "energised, empty");
  item(colour_of({plan::PositionState::dark, 0}), "not energised yet");
  const QString key = QString("a cell is a %1; rows of %2, halls of %3 rows")
                          .arg(q(units_.front().unit_name))
                          .arg(plan::kPositionsPerRow)
                          .arg(plan::kRowsPerHall);
  const double room = width() - kSide - x;
  if (room >= fm.horizontalAdvance(key))  // the key where it fits whole
    p.drawText(QRectF(x, y - 2, room, 16), Qt::AlignRight | Qt::AlignVCenter, key);
}

std::size_t SiteHeatmap::count_drawn(const QuarterCache& c, const QRectF& visible) const {
  std::size_t n = 0;
  for (std::size_t s = 0; s < blocks_.size(); ++s) {
    const SiteBlock& b = blocks_[s];
    const QRectF block(b.x, 0, b.hall_cols * (kHallW + kHallGap) - kHallGap, world_h_);
    if (!block.intersects(visible)) continue;
    if (visible.contains(block)) {
      n += c.sites[s].serving + c.sites[s].installed;
      continue;
    }
    const auto& at = c.sites[s].positions;
    for (std::size_t i = 0; i < at.size(); ++i)
      if (is_unit(at[i].state) && visible.contains(QPointF(cell_of(s, i)) + QPointF(0.5, 0.5))) ++n;
  }
  return n;
}

bool SiteHeatmap::position_at(QPoint screen, std::size_t& site, std::size_t& position) const {
  if (rollout_ == nullptr || !map_area().contains(screen)) return false;
  const QPointF w = (QPointF(screen) - offset_) / scale_;
  if (w.x() < 0 || w.y() < 0) return false;
  const int x = static_cast<int>(std::floor(w.x())), y = static_cast<int>(std::floor(w.y()));
  for (std::size_t s = 0; s < blocks_.size(); ++s) {
    const SiteBlock& b = blocks_[s];
    const int dx = x - b.x;
    if (dx < 0 || dx >= b.hall_cols * (kHallW + kHallGap)) continue;
    const int col = dx / (kHallW + kHallGap), place = dx % (kHallW + kHallGap);
    const int hrow = y / (kHallH + kHallGap), row = y % (kHallH + kHallGap);
    if (place >= kHallW || row >= kHallH) return false;
    const auto p = static_cast<std::size_t>((hrow * b.hall_cols + col) * plan::kPositionsPerHall +
                                            row * kHallW + place);
    if (p >= layout_.sites[s].positions) return false;
    site = s;
    position = p;
    return true;
  }
  return false;
}

QPointF SiteHeatmap::position_centre(std::size_t site, std::size_t position) const {
  return offset_ + (QPointF(cell_of(site, position)) + QPointF(0.5, 0.5)) * scale_;
}

QString SiteHeatmap::facts_at(QPoint at) const {
  std::size_t s = 0, i = 0;
  if (!position_at(at, s, i)) return {};
  const auto& sites = cache(quarter_).sites;
  const plan::PositionAt& pos = sites[s].positions[i];
  const plan::PositionPlace pl = plan::place_of(i);
  const auto& row = rollout_->quarters[static_cast<std::size_t>(quarter_)];
  QString t = QString("%1, hall %2, row %3, position %4\n")
                  .arg(q(layout_.sites[s].site)).arg(pl.hall + 1).arg(pl.row + 1).arg(pl.place + 1);
  if (!is_unit(pos.state)) {
    t += q(plan::to_string(pos.state));
    t += QString("\n%1 energised at the site in %2").arg(mw(row.sites[s].energised_w), q(to_string(row.quarter)));
    return t;
  }
  const plan::UnitModel& u = units_[pos.generation];
  const plan::SiteCohort* c = plan::cohort_of(layout_.sites[s], i);
  const Quarter since = Quarter::of_index(outcome_->plan.first.index() + (c ? c->quarter : quarter_));
  t += QString("%1 (%2), a %3 of %4 racks and %5 XPUs\n")
           .arg(q(u.generation.id), q(u.generation.system), q(u.unit_name)).arg(u.racks).arg(u.xpus);
  t += pos.state == plan::PositionState::installed ? "installed this quarter (" + q(to_string(since)) + ")\n"
                                                   : "serving since " + q(to_string(since)) + "\n";
  t += QString("IT power %1 kW (%2 basis), at the operating point %3 kW\n")
           .arg(u.it_power.value() / 1e3, 0, 'f', 1)
           .arg(q(to_string(outcome_->plan.basis)))
           .arg(u.operating_it_power.value() / 1e3, 0, 'f', 1);
  t += QString("%1 tok/s at the service target").arg(units_text(static_cast<std::size_t>(u.tps_per_xpu * u.xpus)));
  return t;
}

void SiteHeatmap::resizeEvent(QResizeEvent*) {
  if (!moved_) fit();
}

void SiteHeatmap::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  dragging_ = true;
  drag_ = e->position().toPoint();
  setCursor(Qt::ClosedHandCursor);
}

void SiteHeatmap::mouseMoveEvent(QMouseEvent* e) {
  if (!dragging_) return;
  const QPoint now = e->position().toPoint();
  pan_by(now - drag_);
  drag_ = now;
}

void SiteHeatmap::mouseReleaseEvent(QMouseEvent*) {
  dragging_ = false;
  unsetCursor();
}

void SiteHeatmap::wheelEvent(QWheelEvent* e) {
  zoom_at(e->position(), std::pow(2.0, e->angleDelta().y() / 480.0));
}

bool SiteHeatmap::event(QEvent* e) {
  if (e->type() == QEvent::PaletteChange) cache_.clear();
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const QString facts = facts_at(help->pos());
    if (facts.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), facts, this);
    return true;
  }
  return QWidget::event(e);
}

}  // namespace racktwin::gui
