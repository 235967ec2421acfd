#pragma once
// What a run rests on, for its record in the results database: content hashes of the scenario, the
// catalog and the efficiencies it used, and the catalog assumptions behind its points.
//
// Contract: pure functions of their inputs (catalog_hash reads the catalog's files); the same
// inputs give the same hashes and the same assumption list, in the same order.

#include <string>
#include <string_view>
#include <vector>

#include "core/catalog.hpp"
#include "db/store.hpp"
#include "sim/serving.hpp"

namespace racktwin::db {

// 64-bit FNV-1a of the bytes, as 16 hex digits: identifies content, not a security hash.
std::string content_hash(std::string_view bytes);

// The hash of the catalog's files (by file name, then content); "unknown" if one cannot be read.
std::string catalog_hash(const Catalog& catalog);

// The hash of the efficiency parameters each system of the points was simulated with (the
// catalog priors today; calibrated values once `calibrate` writes them).
std::string calibration_hash(const std::vector<sim::PointSpec>& points);

// The catalog values flagged as assumptions that the points rest on: those of each system, its
// chip, each model and each efficiency prior used, in that order, each entry once.
std::vector<Assumption> assumptions_of(const Catalog& catalog,
                                       const std::vector<sim::PointSpec>& points);

}  // namespace racktwin::db
