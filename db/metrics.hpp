#pragma once
// The metrics of one simulated point as one ordered list of (name, value, unit). The results
// database, the CSV and JSON exports and `runs compare` all read this list, so a metric added to
// sim::PointResult reaches every one of them by one line in point_metrics().
//
// Contract: pure; the same PointResult gives the same list, in the same order. Names are stable
// identifiers (snake_case, unit suffix where it helps: _s, _w, _j); units are plain text.

#include <compare>
#include <optional>
#include <string>
#include <vector>

#include "sim/serving.hpp"

namespace racktwin::db {

struct Metric {
  std::string name;
  double value = 0;
  std::string unit;
};

// What a point simulated: its identity within a run, and the key runs are compared on.
struct PointKey {
  std::string system, model, workload, layout, precision;
  std::string serving;   // aggregated, or 1p3d for disaggregated prefill and decode pools
  std::string arrivals;  // closed_loop, poisson, trace, agentic
  int concurrency = 0;   // clients (closed loop and agentic)
  double rate = 0;       // requests per second (poisson)
  int replicas = 1;      // aggregated: replicas; disaggregated: decode replicas
  auto operator<=>(const PointKey&) const = default;
  // "gb200-nvl72 gpt-oss-120b 8k1k tp4 fp4 C=64" (rate=... for open loop; xN for N replicas; the
  // serving mode when disaggregated).
  std::string label() const;
};

std::string arrivals_name(WorkloadKind k);
PointKey point_key(const sim::PointResult& r);

// Every metric of a point that ran, in report order. A point with an error has none.
std::vector<Metric> point_metrics(const sim::PointResult& r);

// The latency distributions kept per point, by name, for CDFs: ttft_s, tpot_s, e2e_s.
struct Distribution {
  std::string name;
  const sim::Stats* stats = nullptr;
};
std::vector<Distribution> point_distributions(const sim::PointResult& r);

// The metric called `name` in a list, if there is one.
std::optional<double> find_metric(const std::vector<Metric>& metrics, std::string_view name);

}  // namespace racktwin::db
