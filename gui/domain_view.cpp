#include "gui/domain_view.hpp"

#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "gui/blast_radius.hpp"
#include "gui/widgets.hpp"

namespace racktwin::gui {
namespace {

constexpr double kMargin = 8, kGap = 8, kHeader = 16, kTierGap = 14, kSpineH = 24, kMaxColumn = 240;

std::size_t most_slots(const std::vector<app::ElevationRack>& racks) {
  std::size_t n = 0;
  for (const auto& r : racks) n = std::max(n, r.rack_slots.size());
  return n;
}

}  // namespace

DomainView::DomainView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(360, 300);
}

void DomainView::set_elevation(app::DomainElevation e) {
  elevation_ = std::move(e);
  all_slots_ = elevation_.every_slot();
  effects_.clear();
  failed_.clear();
  reset_view();
}

void DomainView::set_effects(std::vector<topology::Effect> effects, std::string failed) {
  effects_ = std::move(effects);
  failed_ = std::move(failed);
  update();
}

void DomainView::reset_view() {
  zoom_ = 1;
  pan_ = {};
  moved_ = false;
  lay_out();
  update();
}

void DomainView::lay_out() {
  fitted_.clear();
  frames_.clear();
  const auto& e = elevation_;
  const double n = static_cast<double>(std::max<std::size_t>(1, e.compute.size()));
  const double colw = std::min(kMaxColumn, (width() - 2 * kMargin - (n - 1) * kGap) / n);
  const double total = n * colw + (n - 1) * kGap;
  const double x0 = (width() - total) / 2;
  const double top = kMargin + (e.spines.empty() ? 0 : kSpineH + kTierGap);
  const auto rows_c = static_cast<double>(most_slots(e.compute));
  const auto rows_h = static_cast<double>(most_slots(e.host));
  const double avail = height() - top - kMargin - kHeader - (rows_h > 0 ? kHeader + kTierGap : 0);
  const double slot_h = std::clamp(avail / std::max(1.0, rows_c + rows_h), 3.0, 22.0);
  const double pad = slot_h >= 6 ? 1 : 0;
  auto column = [&](const app::ElevationRack& r, double x, double y) {
    frames_.push_back({QRectF(x, y, colw, kHeader + static_cast<double>(r.rack_slots.size()) * slot_h), q(r.name)});
    for (std::size_t i = 0; i < r.rack_slots.size(); ++i)
      fitted_.emplace_back(x + 2, y + kHeader + static_cast<double>(i) * slot_h, colw - 4, slot_h - pad);
  };
  for (std::size_t k = 0; k < e.compute.size(); ++k)
    column(e.compute[k], x0 + static_cast<double>(k) * (colw + kGap), top);
  const double host_y = top + kHeader + rows_c * slot_h + kTierGap;
  for (std::size_t j = 0; j < e.host.size(); ++j) {
    std::size_t col = j;
    for (std::size_t k = 0; k < e.compute.size(); ++k)
      if (e.compute[k].rack == e.host[j].rack) col = k;
    column(e.host[j], x0 + static_cast<double>(col) * (colw + kGap), host_y);
  }
  const double s = static_cast<double>(e.spines.size());
  const double spw = s > 0 ? (total - (s - 1) * kGap) / s : 0;
  for (std::size_t i = 0; i < e.spines.size(); ++i)
    fitted_.emplace_back(x0 + static_cast<double>(i) * (spw + kGap), kMargin, spw, kSpineH);
}

QRectF DomainView::on_screen(const QRectF& r) const {
  return QRectF(r.topLeft() * zoom_ + pan_, r.size() * zoom_);
}

QRectF DomainView::slot_rect(std::size_t i) const {
  return i < fitted_.size() ? on_screen(fitted_[i]) : QRectF();
}

std::optional<std::size_t> DomainView::slot_at(QPoint p) const {
  for (std::size_t i = 0; i < fitted_.size(); ++i)
    if (slot_rect(i).contains(p)) return i;
  return std::nullopt;
}

std::optional<std::size_t> DomainView::find(const std::string& part) const {
  for (std::size_t i = 0; i < all_slots_.size(); ++i)
    if (all_slots_[i]->name == part) return i;
  return std::nullopt;
}

void DomainView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QPalette& pal = palette();
  p.fillRect(rect(), pal.color(QPalette::Window));
  if (all_slots_.empty()) {
    p.setPen(pal.color(QPalette::WindowText));
    p.drawText(rect(), Qt::AlignCenter, "Select a system to see its scale-up domain.");
    return;
  }
  const QRectF view = rect();
  QFont small = font();
  for (const auto& f : frames_) {
    const QRectF r = on_screen(f.rect);
    if (!r.intersects(view)) continue;
    p.setPen(QPen(pal.color(QPalette::Mid), 1));
    p.drawRect(r);
    if (r.width() >= 30) {  // "hostrack3" becomes "host3" where it does not fit
      QString title = f.title;
      if (p.fontMetrics().horizontalAdvance(title) > r.width() - 6) title.replace("rack", "");
      p.setPen(pal.color(QPalette::WindowText));
      p.drawText(r.adjusted(3, 0, -3, 0).topLeft() + QPointF(0, kHeader * zoom_ * 0.5 + 4),
                 p.fontMetrics().elidedText(title, Qt::ElideRight, static_cast<int>(r.width() - 6)));
    }
  }
  for (std::size_t i = 0; i < all_slots_.size(); ++i) {
    const QRectF r = slot_rect(i);
    if (!r.intersects(view)) continue;
    const auto& s = *all_slots_[i];
    const auto effect = i < effects_.size() ? effects_[i] : topology::Effect::none;
    p.fillRect(r, slot_fill(s.kind, effect, pal));
    p.setPen(s.name == failed_ ? QPen(pal.color(QPalette::Highlight), 2) : QPen(pal.color(QPalette::Mid), 1));
    p.drawRect(r);
    if (r.height() < 8 || r.width() < 28) continue;
    small.setPointSizeF(std::clamp(r.height() * 0.5, 5.5, 9.0));
    p.setFont(small);
    p.setPen(effect == topology::Effect::none ? pal.color(QPalette::Text) : QColor(Qt::white));
    const QRectF text = r.adjusted(3, 0, -3, 0);
    QString label = q(s.label);
    if (s.kind == topology::PartKind::spine) label = "spine plane " + label.mid(5);
    const bool power = r.width() >= 150 && s.rated.value() > 0;
    if (power)
      p.drawText(text, Qt::AlignRight | Qt::AlignVCenter, QString::number(s.rated.value() / 1e3, 'f', 2) + " kW");
    p.drawText(text, Qt::AlignLeft | Qt::AlignVCenter,
               p.fontMetrics().elidedText(label, Qt::ElideRight, static_cast<int>(text.width() - (power ? 60 : 0))));
  }
}

void DomainView::click(QPoint p) {
  if (auto i = slot_at(p)) emit part_clicked(q(all_slots_[*i]->name));
}

void DomainView::pan_by(QPointF d) {
  pan_ += d;
  moved_ = true;
  update();
}

void DomainView::zoom_at(QPointF at, double factor) {
  const double to = std::clamp(zoom_ * factor, 0.5, 16.0);
  pan_ = at - (at - pan_) * (to / zoom_);
  zoom_ = to;
  moved_ = true;
  update();
}

void DomainView::resizeEvent(QResizeEvent*) {
  lay_out();
}

void DomainView::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  dragging_ = true;
  moved_ = false;
  drag_ = e->position().toPoint();
}

void DomainView::mouseMoveEvent(QMouseEvent* e) {
  if (!dragging_) return;
  const QPoint now = e->position().toPoint();
  if (!moved_ && (now - drag_).manhattanLength() < 4) return;  // a click, not a drag yet
  pan_by(now - drag_);
  drag_ = now;
}

void DomainView::mouseReleaseEvent(QMouseEvent* e) {
  const bool was_click = dragging_ && !moved_;
  dragging_ = false;
  if (was_click && e->button() == Qt::LeftButton) click(e->position().toPoint());
}

void DomainView::wheelEvent(QWheelEvent* e) {
  zoom_at(e->position(), std::pow(2.0, e->angleDelta().y() / 480.0));
}

bool DomainView::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    if (auto i = slot_at(help->pos())) {
      const auto& s = *all_slots_[*i];
      QString tip = q(s.name) + "\n" + q(topology::to_string(s.kind)) +
                    (s.xpus > 0 ? QString(", %1 XPUs").arg(s.xpus) : QString()) +
                    (s.rated.value() > 0 ? "\nrated " + QString::number(s.rated.value() / 1e3, 'f', 2) + " kW"
                                         : QString("\npower counted in its tray or server")) +
                    "\nclick to fail it";
      QToolTip::showText(help->globalPos(), tip, this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(e);
}

DomainPane::DomainPane(const Catalog& catalog, QWidget* parent) : QWidget(parent), catalog_(catalog) {
  auto* layout = new QHBoxLayout(this);
  view_ = new DomainView(this);
  status_ = new QLabel("Select a system, then click a part of its scale-up domain to fail it.", this);
  status_->setWordWrap(true);
  status_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  status_->setMinimumWidth(260);
  status_->setMaximumWidth(340);
  layout->addWidget(view_, 1);
  layout->addWidget(status_);
  connect(view_, &DomainView::part_clicked, this, [this](const QString& name) { fail_part(name); });
}

void DomainPane::set_system(const std::string& id) {
  auto e = app::domain_elevation(catalog_, id);
  if (!e) {
    status_->setText(q(e.error().message).toHtmlEscaped());
    return;
  }
  QString t = QString("<b>%1</b>: one scale-up domain of %2 XPUs: %3 compute rack(s)")
                  .arg(q(e->name).toHtmlEscaped()).arg(e->domain_xpus).arg(e->compute.size());
  if (!e->host.empty()) t += QString(", %1 host racks").arg(e->host.size());
  if (!e->spines.empty()) t += QString(", %1 second-tier switch planes").arg(e->spines.size());
  t += ".<p>Click a tray, switch, host or spine plane to fail it.</p><p><i>" + q(e->note).toHtmlEscaped() +
       "</i></p>";
  status_->setText(t);
  view_->set_elevation(std::move(*e));
}

void DomainPane::fail_part(const QString& name) {
  const auto& e = view_->elevation();
  app::FailureRequest rq;
  rq.topology = app::TopologyRequest{e.system, 1, 1.10};
  rq.failed = {name.toStdString()};
  rq.place_xpus = std::min(8, e.domain_xpus);
  auto a = app::assess_failure(catalog_, rq);
  if (!a) {
    status_->setText(q(a.error().message).toHtmlEscaped());
    return;
  }
  view_->set_effects(app::slot_effects(e, *a), name.toStdString());
  status_->setText(blast_radius_html(*a, name, rq.place_xpus, e.note));
}

QString DomainPane::status() const {
  return status_->text();
}

}  // namespace racktwin::gui
