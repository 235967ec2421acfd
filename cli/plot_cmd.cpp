// racktwin plot RUN --out DIR: the charts of a stored run, rendered offscreen to PNG and SVG.

#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include "app/plots.hpp"
#include "charts/charts.hpp"
#include "cli/commands.hpp"
#include "cli/results.hpp"

namespace racktwin::cli {
namespace {

struct PlotArgs {
  std::string db;
  std::string run;
  std::string out;
  std::string points;
  std::string format = "png,svg";
  int width = charts::kDefaultSize.width();
  int height = charts::kDefaultSize.height();
};

int render(const Catalog& cat, const db::Store& store, std::int64_t run, const std::string& dir,
           const std::string& points_file, charts::Formats formats, QSize size, bool quiet) {
  const charts::OffscreenApp qt(
      [](const std::string& msg) { fmt::print(stderr, "racktwin: Qt: {}\n", msg); });
  auto o = app::render_plots(cat, store, run, {dir, points_file, formats, size});
  if (!o) return print_failure(o.error(), "plot");
  // A point the loader rejects is not drawn; say which and why.
  if (!o->rejected_points.empty()) print_diagnostics(o->rejected_points, points_file);
  if (!quiet) fmt::print("Wrote {} chart files of run {} to {}\n", o->files.size(), run, dir);
  return kExitOk;
}

int plot(const Catalog& cat, const PlotArgs& a) {
  const auto formats = charts::parse_formats(a.format);
  if (!formats) {
    fmt::print(stderr, "racktwin plot: {}\n", formats.error());
    return kExitInput;
  }
  auto store = open_store(resolve_db_path(a.db), db::Store::Mode::read);
  if (!store) return store.error();
  const auto id = resolve_run(*store, a.run);
  if (!id) return kExitInput;
  return render(cat, *store, *id, a.out, a.points, *formats, QSize(a.width, a.height), false);
}

}  // namespace

int render_run_plots(const Catalog& cat, const db::Store& store, std::int64_t run,
                     const std::string& dir, const std::string& points_file, bool quiet) {
  return render(cat, store, run, dir, points_file, {}, charts::kDefaultSize, quiet);
}

void add_plot_command(CLI::App& app, Commands& out) {
  auto a = std::make_shared<PlotArgs>();
  auto* c = app.add_subcommand(
      "plot",
      "Charts of a stored run (Pareto, latency CDFs, power and iteration-time breakdowns) as PNG "
      "and SVG");
  c->add_option("RUN", a->run, "Run id (or latest)")->required();
  c->add_option("--out", a->out, "Directory for the chart files")->required();
  c->add_option("--points", a->points,
                "Published points (YAML) to overlay on the Pareto charts, e.g. published.yaml");
  c->add_option("--format", a->format, "png, svg or png,svg")->capture_default_str();
  c->add_option("--width", a->width, "Image width in pixels")
      ->capture_default_str()
      ->check(CLI::Range(200, 10000));
  c->add_option("--height", a->height, "Image height in pixels")
      ->capture_default_str()
      ->check(CLI::Range(200, 10000));
  add_db_option(c, a->db);
  out.push_back({c, [a](const Catalog& cat) { return plot(cat, *a); }});
}

}  // namespace racktwin::cli
