#include "app/plots.hpp"

#include <QChart>
#include <cstdio>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "db/export.hpp"
#include "scenarios/points_loader.hpp"

namespace racktwin::app {
namespace fs = std::filesystem;

std::expected<PlotOutcome, Failure> render_plots(const Catalog& cat, const db::Store& store,
                                                 std::int64_t run, const PlotRequest& rq) {
  PlotOutcome out;
  std::vector<ReferencePoint> published;
  if (!rq.points_file.empty()) {
    auto p = load_points_file(rq.points_file, cat);
    if (!p) {
      return std::unexpected(Failure::input(p.error(), rq.points_file));
    }
    for (const auto& r : p->rejected)
      out.rejected_points.insert(out.rejected_points.end(), r.problems.begin(), r.problems.end());
    published = std::move(p->points);
  }
  std::error_code ec;
  fs::create_directories(rq.dir, ec);
  if (ec)
    return std::unexpected(
        Failure::of(Failure::Kind::runtime, "cannot create " + rq.dir + ": " + ec.message()));
  const auto data = store.load(run, {.percentiles = true, .timeseries = false});
  if (!data)
    return std::unexpected(Failure::of(Failure::Kind::input, "no run " + std::to_string(run)));
  for (auto& c : charts::run_charts(*data, published)) {
    auto written = charts::save_chart(std::move(c.chart), (fs::path(rq.dir) / c.name).string(),
                                      rq.formats, rq.size);
    if (!written) return std::unexpected(Failure::of(Failure::Kind::runtime, written.error()));
    out.files.insert(out.files.end(), written->begin(), written->end());
  }
  if (out.files.empty())
    return std::unexpected(Failure::of(
        Failure::Kind::input, "run " + std::to_string(run) +
                                  " has no simulated point to chart (state: " + data->info.state() +
                                  ")"));
  return out;
}

std::expected<std::vector<std::string>, std::string> export_csv(const db::StoredRun& run,
                                                                const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return std::unexpected("cannot create " + dir + ": " + ec.message());
  std::vector<std::string> names;
  for (const auto& [name, text] : db::csv_files(run)) {
    const fs::path path = fs::path(dir) / name;
    if (auto w = write_file_atomically(path.string(), text); !w) return std::unexpected(w.error());
    names.push_back(name);
  }
  return names;
}

}  // namespace racktwin::app
