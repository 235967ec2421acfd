#pragma once
// The fleet's sites at one quarter, drawn with QPainter: every deployment unit (a Jalapeno rack
// pair, an NVL72 rack) is one cell, coloured by its generation when serving, lighter when it was
// installed that quarter, grey where energised power has room for a unit, faint where the site is
// not energised yet. The halls, rows and positions are derived by plan::lay_out (the plan has no
// hall layout; plan/site_layout.hpp says how). Each site's halls form a block, sites side by side,
// with its name and counts above it; a legend runs along the bottom; hovering a cell shows its
// unit's facts.
//
// Speed: a quarter is drawn once into an image of one pixel per cell (cached per quarter); a frame
// scales the visible part of it, and adds cell and hall lines only for the halls in view. Drag pans,
// the wheel zooms about the cursor.

#include <QImage>
#include <QWidget>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/plan.hpp"
#include "plan/site_layout.hpp"

namespace racktwin::gui {

class SiteHeatmap : public QWidget {
  Q_OBJECT
 public:
  explicit SiteHeatmap(QWidget* parent = nullptr);

  // Draws `fleet` ("plan" or a comparator's id) of the outcome, at its last quarter.
  void set_plan(std::shared_ptr<const app::PlanOutcome> outcome, const std::string& fleet = "plan");
  void set_quarter(int quarter);  // index from the plan's first quarter
  int quarter() const { return quarter_; }
  const std::shared_ptr<const app::PlanOutcome>& outcome() const { return outcome_; }
  const std::string& fleet() const { return fleet_; }
  bool empty() const { return units_.empty(); }

  // Units standing in each state at the selected quarter, over every site.
  std::size_t units_in(plan::PositionState s) const;
  // Units (serving or installed this quarter) whose cells the last frame drew in view.
  std::size_t units_drawn() const { return drawn_; }

  // The view: the whole fleet; pan by screen pixels; zoom by `factor` about a screen point.
  void fit();
  void pan_by(QPointF d);
  void zoom_at(QPointF at, double factor);
  double scale() const { return scale_; }
  // Where a site's position is drawn: the centre of its cell, in widget pixels.
  QPointF position_centre(std::size_t site, std::size_t position) const;
  // The facts of the unit (or empty position) under a point, empty off the cells.
  QString facts_at(QPoint p) const;
  QSize sizeHint() const override { return {900, 420}; }

 signals:
  void view_changed();

 protected:
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  bool event(QEvent* e) override;  // tooltips

 private:
  struct SiteBlock {
    int x = 0;          // world x of the block's left edge, in cells
    int hall_cols = 1;  // halls across
    int halls = 0;
  };
  struct QuarterCache {
    QImage image;  // one pixel per cell of the world
    std::vector<plan::SiteAt> sites;
  };
  void lay_out_world();
  const QuarterCache& cache(int quarter) const;
  QRectF map_area() const;
  QPoint hall_origin(std::size_t site, int hall) const;  // world cell of the hall's top left
  QPoint cell_of(std::size_t site, std::size_t position) const;
  bool position_at(QPoint screen, std::size_t& site, std::size_t& position) const;
  QColor colour_of(const plan::PositionAt& at) const;
  void draw_lines(QPainter& p, const QRectF& visible) const;
  void draw_labels(QPainter& p, const QuarterCache& c) const;
  void draw_legend(QPainter& p) const;
  std::size_t count_drawn(const QuarterCache& c, const QRectF& visible) const;

  std::shared_ptr<const app::PlanOutcome> outcome_;
  std::string fleet_;
  const plan::Rollout* rollout_ = nullptr;
  std::vector<plan::UnitModel> units_;
  plan::FleetLayout layout_;
  std::vector<SiteBlock> blocks_;
  int world_w_ = 0, world_h_ = 0;
  mutable std::map<int, QuarterCache> cache_;
  int quarter_ = 0;
  double scale_ = 1;  // pixels per cell
  QPointF offset_;    // screen position of world (0, 0)
  bool moved_ = false;  // the view was panned or zoomed: resizing keeps it
  QPoint drag_;
  bool dragging_ = false;
  mutable std::size_t drawn_ = 0;
};

}  // namespace racktwin::gui
