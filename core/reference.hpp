#pragma once
// Published reference points: figures measured on real hardware that `racktwin validate` predicts
// and `racktwin calibrate` fits. Parsed from YAML by scenarios/points_loader.hpp; the format and
// the metric vocabulary are documented in docs/validation.md.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/scenario.hpp"

namespace racktwin {

// The metric vocabulary, all per accelerator package (XPU).
enum class Metric {
  peak_mixed_tps_per_kw_rated,   // max of (input + output tok/s per XPU) / rated TDP kW
  min_e2e_latency_s,             // min over the sweep of the median E2E latency, s
  min_tbt_ms,                    // min over the sweep of the median TPOT, ms
  max_interactivity_tok_s_user,  // 1000 / min_tbt_ms
  total_tps_per_allin_mw_at,     // total tok/s per all-in MW on the envelope at interactivity `at`
  total_tps_per_xpu_at,          // total tok/s per XPU on the envelope at interactivity `at`
  output_tps_per_xpu_at,         // output tok/s per XPU on the envelope at interactivity `at`
  peak_total_tps_per_xpu,        // max of total tok/s per XPU over layouts, modes and loads
};
std::string to_string(Metric m);
std::optional<Metric> metric_from_string(std::string_view s);
const std::vector<std::string>& metric_names();
// Whether the metric reads the curve at an interactivity (`at` required).
bool metric_needs_at(Metric m);

struct ReferencePoint {
  std::string id;
  std::string system;
  std::string model;
  InferenceXWorkload workload;  // isl, osl, range_ratio, mtp, precision
  Metric metric = Metric::peak_total_tps_per_xpu;
  std::optional<double> at;  // interactivity, tok/s/user
  double value = 0;          // the published figure, in the metric's unit
  std::string source;
  SourceLocation where;  // where the point starts in its file
};

// A point the loader could not accept: the id (or "points[i]" when it has none) and every problem.
struct RejectedPoint {
  std::string id;
  SourceLocation where;
  Diagnostics problems;
};

struct PointsFile {
  std::string file;
  std::string hash;  // "fnv1a64:<16 hex digits>" of the file's bytes
  std::vector<ReferencePoint> points;
  std::vector<RejectedPoint> rejected;
};

}  // namespace racktwin
