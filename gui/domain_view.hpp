#pragma once
// The whole scale-up domain of a system drawn with QPainter from the topology graph
// (app::domain_elevation): Jalapeno's 16 compute racks in a row with their 16 host racks beneath
// and the second switch tier's planes above; an NVL72's one rack; an HGX server. Clicking a slot
// emits part_clicked; the pane fails that part (app::assess_failure, as for the single rack) and
// colours every slot of the domain by what it does to its XPUs, with the blast radius and the
// capacity left beside it. Drag pans, the wheel zooms about the cursor.

#include <QWidget>
#include <optional>
#include <string>
#include <vector>

#include "app/topology.hpp"
#include "core/catalog.hpp"

QT_BEGIN_NAMESPACE
class QLabel;
QT_END_NAMESPACE

namespace racktwin::gui {

class DomainView : public QWidget {
  Q_OBJECT
 public:
  explicit DomainView(QWidget* parent = nullptr);

  void set_elevation(app::DomainElevation e);
  // One effect per slot in DomainElevation::every_slot() order; empty: nothing failed.
  void set_effects(std::vector<topology::Effect> effects, std::string failed);
  const app::DomainElevation& elevation() const { return elevation_; }
  const std::vector<topology::Effect>& effects() const { return effects_; }
  std::size_t slot_count() const { return all_slots_.size(); }
  // The slot (in every_slot() order) under a point, and where a slot is drawn, in widget pixels.
  std::optional<std::size_t> slot_at(QPoint p) const;
  QRectF slot_rect(std::size_t slot) const;
  std::optional<std::size_t> find(const std::string& part) const;
  // What a left click at `p` does: emits part_clicked for the slot there.
  void click(QPoint p);
  void pan_by(QPointF d);
  void zoom_at(QPointF at, double factor);
  void reset_view();
  QSize sizeHint() const override { return {900, 560}; }

 signals:
  void part_clicked(const QString& name);

 protected:
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  bool event(QEvent* e) override;  // tooltips

 private:
  struct Frame {
    QRectF rect;  // the rack's outline, fitted to the widget
    QString title;
  };
  void lay_out();  // slot and rack rectangles fitted to the widget (before zoom and pan)
  QRectF on_screen(const QRectF& fitted) const;

  app::DomainElevation elevation_;
  std::vector<const app::ElevationSlot*> all_slots_;
  std::vector<QRectF> fitted_;  // per slot
  std::vector<Frame> frames_;
  std::vector<topology::Effect> effects_;
  std::string failed_;
  double zoom_ = 1;
  QPointF pan_;
  QPoint drag_;
  bool dragging_ = false, moved_ = false;
};

// The domain view beside what failing a part does.
class DomainPane : public QWidget {
  Q_OBJECT
 public:
  DomainPane(const Catalog& catalog, QWidget* parent = nullptr);
  void set_system(const std::string& id);
  void fail_part(const QString& name);
  DomainView* view() const { return view_; }
  QString status() const;

 private:
  const Catalog& catalog_;
  DomainView* view_ = nullptr;
  QLabel* status_ = nullptr;
};

}  // namespace racktwin::gui
