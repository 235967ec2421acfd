// Speed of the GUI's fleet plan and domain views, rendered offscreen: opening the shipped 10 GW plan
// until the window shows it (its throughput sweep stored first, as after the first plan), the first
// frame of each quarter of the site heatmap (its per-quarter image built), and a frame of the
// heatmap, the domain view and the rack view while panning, at several zooms. Prints figures; the
// targets (docs/gui.md) are under 3 s to open the plan and under 33 ms a frame.
// Usage: build/bench/racktwin_gui_bench [PLAN]   (default: scenarios/plans/openai-10gw.yaml)

#include <unistd.h>

#include <QApplication>
#include <QEventLoop>
#include <QImage>
#include <QPainter>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "app/plan.hpp"
#include "bench/support.hpp"
#include "gui/main_window.hpp"

namespace {

using racktwin::bench::seconds_since;

struct Figures {
  double median_ms = 0, max_ms = 0;
};

// Renders `frames` frames of `w`, calling `step` before each; wall time per frame.
Figures frames(QWidget* w, int count, const std::function<void(int)>& step) {
  QImage target(w->size(), QImage::Format_ARGB32_Premultiplied);
  std::vector<double> ms;
  for (int i = 0; i < count; ++i) {
    step(i);
    const auto t0 = std::chrono::steady_clock::now();
    w->render(&target);
    ms.push_back(seconds_since(t0) * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.back()};
}

void print(const char* what, const Figures& f) {
  std::printf("  %-52s %7.2f ms  (max %.2f ms)\n", what, f.median_ms, f.max_ms);
}

// A pan that goes back and forth across the view.
QPointF sway(int i) {
  return QPointF(((i / 40) % 2 == 0 ? 1.0 : -1.0) * 6.0, ((i / 25) % 2 == 0 ? 1.0 : -1.0) * 2.0);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace racktwin;
  ::setenv("QT_QPA_PLATFORM", "offscreen", 0);
  QApplication qt(argc, argv);
  const std::string src = RACKTWIN_SOURCE_DIR;
  const std::string file = argc > 1 ? argv[1] : src + "/scenarios/plans/openai-10gw.yaml";
  auto cat = bench::shipped_catalog();
  if (!cat) return 1;
  const std::string db = "/tmp/racktwin-gui-bench-" + std::to_string(::getpid()) + ".db";
  app::PlanRequest rq;
  rq.plan_file = file;
  rq.db = db;
  auto t0 = std::chrono::steady_clock::now();
  auto first = app::plan_fleet(*cat, rq);
  const double sweep_s = seconds_since(t0);
  if (!first) {
    std::fprintf(stderr, "plan failed: %s\n", first.error().message.c_str());
    ::unlink(db.c_str());
    return 1;
  }
  gui::MainWindow w(*cat, db);
  w.resize(1366, 768);
  w.tabs()->setCurrentWidget(w.plan_view());
  w.show();
  std::vector<double> open_s;
  for (int i = 0; i < 5; ++i) {
    QEventLoop loop;
    QObject::connect(&w, &gui::MainWindow::planned, &loop, &QEventLoop::quit);
    t0 = std::chrono::steady_clock::now();
    w.open_plan(QString::fromStdString(file));
    loop.exec();
    (void)w.grab();  // the window painted with the plan
    open_s.push_back(seconds_since(t0));
  }
  std::sort(open_s.begin(), open_s.end());
  gui::SiteHeatmap* map = w.plan_view()->heatmap();
  const auto& last = w.plan_view()->outcome()->rollout.quarters.back();
  const std::string shown = file.starts_with(src + "/") ? file.substr(src.size() + 1) : file;
  std::printf("%s: %zu quarters, %zu sites, %.0f %ss in the last quarter; heatmap %dx%d px\n",
              shown.c_str(), w.plan_view()->outcome()->rollout.quarters.size(),
              w.plan_view()->outcome()->plan.sites.size(), last.total.units,
              w.plan_view()->outcome()->units.front().unit.unit_name.c_str(), map->width(), map->height());
  std::printf("  first plan, simulating the sweep (once)               %7.2f s\n", sweep_s);
  std::printf("  open the plan until the window shows it (median/5)   %7.2f s   (max %.2f s)\n",
              open_s[open_s.size() / 2], open_s.back());
  const int quarters = static_cast<int>(w.plan_view()->outcome()->rollout.quarters.size());
  map->set_plan(map->outcome(), map->fleet());  // no quarter cached
  print("heatmap, first frame of a quarter (image built)", frames(map, quarters, [&](int i) { map->set_quarter(i); }));
  map->set_quarter(quarters - 1);
  map->fit();
  print("heatmap panning, whole fleet in view", frames(map, 200, [&](int i) { map->pan_by(sway(i)); }));
  map->fit();
  map->zoom_at(QPointF(map->width() / 2.0, map->height() / 2.0), 4);
  print("heatmap panning, zoomed x4", frames(map, 200, [&](int i) { map->pan_by(sway(i)); }));
  map->zoom_at(QPointF(map->width() / 2.0, map->height() / 2.0), 8);
  print("heatmap panning, cells and their lines (x32)", frames(map, 200, [&](int i) { map->pan_by(sway(i)); }));
  w.select_system("jalapeno-a0");
  w.show_domain();
  gui::DomainView* domain = w.domain()->view();
  domain->resize(1000, 560);
  domain->reset_view();
  w.domain()->fail_part("rack3/chana2");
  print("domain view (Jalapeno, 16+16 racks) panning", frames(domain, 200, [&](int i) { domain->pan_by(sway(i)); }));
  domain->zoom_at(QPointF(500, 280), 4);
  print("domain view panning, zoomed x4", frames(domain, 200, [&](int i) { domain->pan_by(sway(i)); }));
  w.show_rack();
  w.fail_part("hostrack0/katsu5");
  gui::RackView* rack = w.rack();
  rack->resize(640, 560);
  print("rack view (Jalapeno rack pair) redraw", frames(rack, 200, [](int) {}));
  ::unlink(db.c_str());
  return 0;
}
