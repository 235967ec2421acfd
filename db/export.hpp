#pragma once
// A stored run as CSV files and as JSON (docs/results.md gives the columns and the schema).
//
// Contract: deterministic. Numbers are written in the shortest form that reads back to the same
// double, so a value exported and parsed again is the value stored; the only fields that differ
// between two runs of the same scenario and seed are the run record's times, wall time, process
// and host (and its id).

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "db/store.hpp"

namespace racktwin::db {

// One CSV field: quoted (RFC 4180) when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s);
// A number as text that parses back to the same double.
std::string number_text(double x);

// The CSV files of a run, by file name: run.csv, points.csv, metrics.csv, latency_percentiles.csv,
// timeseries.csv (when loaded), assumptions.csv, and scenario.yaml.
std::vector<std::pair<std::string, std::string>> csv_files(const StoredRun& run);

// One assumption, and the identity of a point, as JSON objects.
nlohmann::ordered_json assumption_json(const Assumption& a);
nlohmann::ordered_json point_key_json(const PointKey& k);

// The run record alone.
nlohmann::ordered_json run_info_json(const RunInfo& r);
struct JsonOptions {
  bool percentiles = true;
  bool timeseries = true;
  bool scenario_text = true;
};
// The run record, its assumptions, metric units and every point.
nlohmann::ordered_json run_json(const StoredRun& run, const JsonOptions& what = {});

}  // namespace racktwin::db
