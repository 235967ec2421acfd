#pragma once
// A batch of sweep points as JSON, for the trip from the job runner to a simulation worker
// process (app/sim_job.hpp). The results come back through db/codec.hpp.
//
// Contract: spec_from_json(spec_to_json(s)) simulates exactly as s does: every field of PointSpec
// travels, systems and models by id (the worker loads the same catalog files and checks their
// hash), a trace by its file (reloaded and checked by size). Deterministic: same spec, same bytes.

#include <expected>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/json.hpp"
#include "core/catalog.hpp"
#include "sim/serving.hpp"

namespace racktwin::app {

// Plain (sorted-key) JSON: the job file is read by workers, not by people.
nlohmann::json spec_to_json(const sim::PointSpec& s);

// Trace files already read, by path, so a batch reads each once.
using TraceCache = std::map<std::string, std::shared_ptr<const std::vector<TraceRequest>>>;
std::expected<sim::PointSpec, std::string> spec_from_json(const nlohmann::json& j,
                                                          const Catalog& cat, TraceCache& traces);

}  // namespace racktwin::app
