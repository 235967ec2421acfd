#pragma once
// Two stored runs side by side: what differs in their records, in their scenario text, in the
// assumptions they rest on, and in the results of the points they share.
//
// Contract: pure and deterministic. Points are matched by PointKey; points of one run only are
// listed as such. A metric differs when its values are not bitwise equal. A metric that one run
// does not report at all (a run stored before the metric existed) is listed once, and does not make
// a point differ.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/store.hpp"

namespace racktwin::db {

struct FieldDiff {
  std::string field, a, b;
};

struct MetricDiff {
  std::string name, unit;
  std::optional<double> a, b;
  bool in_both_runs = true;  // false: one run reports this metric for none of its points
  bool differs() const { return a != b; }
  // (b - a) / |a|; nullopt when either is missing or a is 0.
  std::optional<double> relative() const;
};

struct PointDiff {
  PointKey key;
  std::optional<std::int64_t> index_a, index_b;  // absent: the point is in one run only
  std::string error_a, error_b;
  std::vector<MetricDiff> metrics;  // every metric of either run, in the first run's order
  bool differs() const;
};

struct Comparison {
  RunInfo a, b;
  std::vector<FieldDiff> fields;           // run-record fields that differ (times excluded)
  std::vector<std::string> scenario_diff;  // "- line", "+ line", "  line"; empty when identical
  std::vector<Assumption> assumptions_only_a, assumptions_only_b;
  // Metrics one run reports and the other does not report for any point (newer or older versions).
  std::vector<std::string> metrics_only_a, metrics_only_b;
  std::vector<PointDiff> points;  // matched points in the first run's order, then the second's
  int differing_points = 0;
  int in_both = 0, only_in_a = 0, only_in_b = 0;  // points matched, and those of one run only
};

Comparison compare(const StoredRun& a, const StoredRun& b);

// A line diff of two texts (longest common subsequence), each line prefixed by "- ", "+ " or "  ".
// Unchanged lines are kept only within `context` lines of a change.
std::vector<std::string> line_diff(const std::string& a, const std::string& b, int context = 2);

nlohmann::ordered_json comparison_json(const Comparison& c);

}  // namespace racktwin::db
