#include "gui/rack_view.hpp"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "gui/blast_radius.hpp"

namespace racktwin::gui {
namespace {

constexpr int kMargin = 12, kHeader = 28, kColumnGap = 40;

QString kw(Watts w) { return QString::number(w.value() / 1e3, 'f', 2) + " kW"; }

}  // namespace

RackView::RackView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(360, 300);
}

void RackView::set_elevation(app::RackElevation e) {
  elevation_ = std::move(e);
  effects_.clear();
  failed_.clear();
  update();
}

void RackView::set_effects(std::vector<topology::Effect> effects, std::string failed) {
  effects_ = std::move(effects);
  failed_ = std::move(failed);
  update();
}

const app::ElevationSlot& RackView::slot(std::size_t i) const {
  return i < elevation_.compute.size() ? elevation_.compute[i]
                                       : elevation_.host[i - elevation_.compute.size()];
}

QRect RackView::slot_rect(std::size_t i) const {
  const bool host = i >= elevation_.compute.size();
  const int columns = elevation_.host.empty() ? 1 : 2;
  const int width = (this->width() - 2 * kMargin - (columns - 1) * kColumnGap) / columns;
  const std::size_t rows = std::max<std::size_t>(
      1, std::max(elevation_.compute.size(), elevation_.host.size()));
  const int height = std::max(8, (this->height() - 2 * kMargin - kHeader) / static_cast<int>(rows));
  const std::size_t row = host ? i - elevation_.compute.size() : i;
  const int x = kMargin + (host ? width + kColumnGap : 0);
  return QRect(x, kMargin + kHeader + static_cast<int>(row) * height, width, height - 2);
}

std::optional<std::size_t> RackView::slot_at(QPoint p) const {
  for (std::size_t i = 0; i < slot_count(); ++i)
    if (slot_rect(i).contains(p)) return i;
  return std::nullopt;
}

void RackView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing, false);
  const QPalette& pal = palette();
  p.fillRect(rect(), pal.color(QPalette::Window));
  if (slot_count() == 0) return;
  p.setPen(pal.color(QPalette::WindowText));
  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.drawText(QRect(kMargin, kMargin, slot_rect(0).width(), kHeader - 6), Qt::AlignLeft | Qt::AlignVCenter,
             elevation_.host.empty() ? "compute rack" : "compute (ASIC) rack");
  if (!elevation_.host.empty())
    p.drawText(QRect(slot_rect(elevation_.compute.size()).x(), kMargin, slot_rect(0).width(), kHeader - 6),
               Qt::AlignLeft | Qt::AlignVCenter, "host rack");
  QFont small = font();
  small.setPointSizeF(std::max(6.0, std::min(9.0, slot_rect(0).height() * 0.45)));
  p.setFont(small);
  for (std::size_t i = 0; i < slot_count(); ++i) {
    const auto& s = slot(i);
    const auto effect = i < effects_.size() ? effects_[i] : topology::Effect::none;
    const QRect r = slot_rect(i);
    p.fillRect(r, slot_fill(s.kind, effect, pal));
    p.setPen(s.name == failed_ ? QPen(pal.color(QPalette::Highlight), 2) : QPen(pal.color(QPalette::Mid)));
    p.drawRect(r);
    p.setPen(effect == topology::Effect::none ? pal.color(QPalette::Text) : QColor(Qt::white));
    QString text = QString::fromStdString(s.label);
    if (s.xpus > 0) text += QString("  %1 XPUs").arg(s.xpus);
    p.drawText(r.adjusted(6, 0, -6, 0), Qt::AlignLeft | Qt::AlignVCenter, text);
    p.drawText(r.adjusted(6, 0, -6, 0), Qt::AlignRight | Qt::AlignVCenter, kw(s.rated));
  }
}

void RackView::click(QPoint p) {
  if (auto i = slot_at(p)) emit part_clicked(QString::fromStdString(slot(*i).name));
}

void RackView::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton) click(e->pos());
}

bool RackView::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    if (auto i = slot_at(help->pos())) {
      const auto& s = slot(*i);
      QString tip = QString::fromStdString(s.name) + "\n" + QString::fromStdString(topology::to_string(s.kind)) +
                    (s.xpus > 0 ? QString(", %1 XPUs").arg(s.xpus) : QString()) + "\nrated " + kw(s.rated) +
                    "\nclick to fail it";
      QToolTip::showText(help->globalPos(), tip, this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(e);
}

}  // namespace racktwin::gui
