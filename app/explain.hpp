#pragma once
// racktwin explain RUN METRIC [POINT]: where a number of a stored run comes from.
//
// An explanation is a tree of terms. The root is the metric at one point of the run; a derived term
// carries its formula (in words, over its inputs' labels), the section of the documentation that
// defines it, and its inputs, recursively; a leaf carries its origin: a catalog figure with its
// sources or its assumption reason, the scenario's facility or a documented default, a compiled-in
// constant, or a simulation output with its documentation section. Every number printed is thus at
// most two steps from where it comes from.
//
// Contract:
// - Values are computed through the same functions the simulation and the results database use
//   (power::PowerModel, power::normalise, power::XpuPower), from the point's stored simulation
//   outputs and today's catalog; the root's value is compared with the stored one.
// - Which metrics have a derivation is data: one entry per metric in explain.cpp (its names, the
//   newest first, then former ones; its formula, documentation section and inputs), so a metric
//   renamed keeps working under both names by a change of one line.
// - Pure: no I/O; errors (an unknown metric, with the close names; a point the run does not have)
//   throw InputError.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/json.hpp"
#include "core/catalog.hpp"
#include "db/store.hpp"

namespace racktwin::app {

// A cited source of a catalog figure.
struct CitedSource {
  std::string id;
  std::string citation;
  std::string url;
};

// Where a leaf's value comes from.
struct Origin {
  // catalog, scenario, default (a documented default value), constant (compiled in), simulation
  // (an output of the simulation, stored with the point), point (the point's layout)
  std::string kind;
  std::string where;  // "chip jalapeno-a0 tdp", "scenario facility.pue", ...
  std::string text;   // the value as written in the catalog or the scenario; may be empty
  std::vector<CitedSource> sources;
  bool assumption = false;
  std::string reason;  // why the value was assumed (assumption)
  std::string note;
  // The origin in one line: "catalog chip x tdp = "700 W"; source art000", with the sources it
  // cites added to `cited` (by id); `docs` is the term's documentation, for simulation outputs.
  std::string describe(const std::string& docs, std::map<std::string, CitedSource>& cited) const;
};

// One number of a derivation.
struct Term {
  std::string label;   // "all-in W per XPU"
  std::string metric;  // the stored metric it is, if any
  double value = 0;
  std::string unit;
  std::string formula;  // in words over the inputs' labels; empty for a leaf
  std::string docs;     // where the formula or the output is documented
  std::string note;     // e.g. why a figure is computed rather than published
  std::optional<Origin> origin;
  std::vector<Term> inputs;
};

struct ExplainRequest {
  std::string metric;                 // as stored, or a former or new name of it
  std::optional<std::int64_t> point;  // the stored point index; unset: where the metric peaks
};

struct Explanation {
  std::int64_t run = 0;
  std::string scenario;
  std::int64_t point = 0;
  std::string point_label;
  bool peak = false;          // no point was asked for: the point where the metric peaks
  std::int64_t compared = 0;  // points the peak was chosen among
  std::string metric;         // as asked
  std::string stored_as;      // the name the run stores it under; empty when it does not store it
  std::optional<double> stored;
  bool derived = false;  // a derivation is recorded for the metric
  std::string plain;     // without a derivation: what the metric is and where it is documented
  Term term;             // the metric, its formula and inputs
  std::vector<std::string> notes;  // e.g. the catalog changed since the run

  // The stored value equals the explained one (to 1e-9 relative); true when nothing is stored.
  bool matches() const;
  Json to_json() const;
};

// Explains `request.metric` at one point of `run` (loaded without percentiles is enough), with the
// figures of `catalog`. Throws InputError (path METRIC or POINT) for a metric neither stored in the
// run nor known here, a point the run does not have, or a point that did not run.
Explanation explain(const Catalog& catalog, const db::StoredRun& run,
                    const ExplainRequest& request);

// Every metric name with a recorded derivation, former names included, in table order.
std::vector<std::string> explained_metric_names();

}  // namespace racktwin::app
