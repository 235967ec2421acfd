#pragma once
// A rack elevation drawn with QPainter from the topology graph (app::rack_elevation): the compute
// rack's trays and switch trays beside the host rack's trays, each slot with its rated power on
// hover. Clicking a slot emits part_clicked; the window fails that part and colours every slot by
// what it does to its XPUs (app::slot_effects).

#include <QWidget>
#include <optional>
#include <string>
#include <vector>

#include "app/topology.hpp"

namespace racktwin::gui {

class RackView : public QWidget {
  Q_OBJECT
 public:
  explicit RackView(QWidget* parent = nullptr);

  void set_elevation(app::RackElevation e);
  // One effect per slot, compute slots then host slots; empty: nothing failed.
  void set_effects(std::vector<topology::Effect> effects, std::string failed);
  const app::RackElevation& elevation() const { return elevation_; }
  const std::vector<topology::Effect>& effects() const { return effects_; }
  // The slot under a point of the widget, if any (compute slots first, then host slots).
  std::optional<std::size_t> slot_at(QPoint p) const;
  QRect slot_rect(std::size_t slot) const;
  // What a left click at `p` does: emits part_clicked for the slot there.
  void click(QPoint p);
  QSize sizeHint() const override { return {640, 560}; }

 signals:
  void part_clicked(const QString& name);

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  bool event(QEvent* e) override;  // tooltips

 private:
  const app::ElevationSlot& slot(std::size_t i) const;
  std::size_t slot_count() const { return elevation_.compute.size() + elevation_.host.size(); }

  app::RackElevation elevation_;
  std::vector<topology::Effect> effects_;
  std::string failed_;
};

}  // namespace racktwin::gui
