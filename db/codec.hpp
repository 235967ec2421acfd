#pragma once
// A simulated point as stored and as JSON, by the one result schema (sim/result_schema.hpp): the
// database rows, `racktwin run --json`, `racktwin runs export --json` and the lines a simulation
// worker sends back all go through these functions.
//
// Contract: lossless and deterministic. to_result(stored_point(r, i), r.spec) gives back every
// field of the schema, the percentiles and the series of r exactly (the series' activities, an
// input of evaluate(), are not kept); point_from_json(point_json(p)) == p. Numbers are written in
// the shortest form that reads back to the same double; a value that is not finite travels as
// null and reads back as NaN.

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <string>

#include "db/store.hpp"
#include "sim/serving.hpp"

namespace racktwin::db {

// The point as the database stores it, at position `index` of its run's sweep.
StoredPoint stored_point(const sim::PointResult& r, std::int64_t index);

// The result a stored point describes, with the spec it was simulated from.
sim::PointResult to_result(const StoredPoint& p, sim::PointSpec spec);

struct PointJsonOptions {
  bool percentiles = true;
  bool timeseries = true;
};
// {index, system, model, ..., xpus, error, metrics: {...}, latency_percentiles: {...},
//  timeseries_1s: {...}}
nlohmann::ordered_json point_json(const StoredPoint& p, const PointJsonOptions& what = {});

// The inverse of point_json; the reason when a field is missing or has the wrong type.
std::expected<StoredPoint, std::string> point_from_json(const nlohmann::ordered_json& j);

}  // namespace racktwin::db
