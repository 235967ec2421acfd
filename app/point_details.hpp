#pragma once
// One stored point of a run shown on its own (the GUI's Results view, when a point of a Pareto
// chart is picked): what it simulated, then every metric its stored result holds
// (sim/result_schema.hpp) in sections: load and throughput, latency, power and efficiency,
// iteration time, memory and cache, failures.
//
// Contract: pure; the values are the stored ones, formatted, with their stored units.

#include <string>
#include <vector>

#include "db/store.hpp"

namespace racktwin::app {

// The first row is the header: section, name, value, unit.
std::vector<std::vector<std::string>> point_detail_table(const db::StoredPoint& p);

// What the point's latency CDFs are drawn from: the stored percentiles of each distribution.
std::string point_cdf_note(const db::StoredPoint& p);

}  // namespace racktwin::app
