#pragma once
// The one schema of a simulated point's results: every scalar field of PointResult with its stable
// name and unit, the latency distributions and the one-second series. The results database's rows,
// the CSV and JSON exports, `racktwin run --json` and the codec between simulation workers and the
// job runner all read these tables, so a new metric is one line in result_fields().
//
// Contract: the tables are fixed at compile time; names are stable snake_case identifiers with a
// unit suffix where it helps (_s, _w, _j); get() and set() are exact for every field (integers and
// flags travel as doubles, exact below 2^53). Fields marked `derived` are read from the point's
// spec or another field and have no setter.

#include <string_view>
#include <vector>

#include "sim/serving.hpp"

namespace racktwin::sim {

struct ResultField {
  std::string_view name;
  std::string_view unit;
  double (*get)(const PointResult&);
  void (*set)(PointResult&, double);  // nullptr for a derived field
};

// Every scalar metric of a point that ran, in report order.
const std::vector<ResultField>& result_fields();

// The field called `name`, or nullptr.
const ResultField* find_result_field(std::string_view name);

// The latency distributions kept per point with their percentiles: ttft_s, tpot_s, e2e_s.
struct DistributionField {
  std::string_view name;
  Stats PointResult::*stats;
};
const std::vector<DistributionField>& distribution_fields();

// The columns of the one-second series.
struct SeriesField {
  std::string_view name;
  std::string_view unit;
  double PointResult::Second::*value;
};
const std::vector<SeriesField>& series_fields();

}  // namespace racktwin::sim
