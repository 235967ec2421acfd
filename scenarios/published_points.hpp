#pragma once
// Reads a file of published reference points (the format of the reference published.yaml: a
// top-level `points` list, each with id, system, model, workload {isl, osl, range_ratio, mtp,
// precision}, metric, at, value, source). Unknown keys and bad values are reported together, each
// with file:line:column. System and model ids are not checked against the catalog: a point for a
// system a run does not hold is simply not drawn.

#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace racktwin {

struct PublishedPoint {
  std::string id, system, model;
  int isl = 0, osl = 0;
  double range_ratio = 1.0;
  bool mtp = false;
  std::optional<std::string> precision;
  std::string metric;        // e.g. total_tps_per_xpu_at, peak_total_tps_per_xpu
  std::optional<double> at;  // interactivity (tok/s/user) for the *_at metrics
  double value = 0;          // in the metric's unit
  std::string source;
};

std::expected<std::vector<PublishedPoint>, Diagnostics> load_published_points(
    const std::string& path);

}  // namespace racktwin
