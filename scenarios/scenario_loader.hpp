#pragma once
// Reads a scenario file and checks it against the catalog. All problems are reported at once,
// each with file:line:column, the key path, what was expected and, for an unknown catalog id, the
// nearest known id.

#include <expected>
#include <optional>
#include <string>

#include "core/catalog.hpp"
#include "core/error.hpp"
#include "core/scenario.hpp"

namespace racktwin {

std::expected<Scenario, Diagnostics> load_scenario_file(const std::string& path,
                                                        const Catalog& catalog);

// `name` is used in messages in place of a file name.
std::expected<Scenario, Diagnostics> load_scenario_string(const std::string& text,
                                                          const std::string& name,
                                                          const Catalog& catalog);

// Only the `facility` of a scenario's text (the defaults when it has none), without the catalog:
// for a stored run whose other inputs may no longer load (a moved trace, a changed catalog).
std::expected<FacilitySpec, Diagnostics> load_scenario_facility(const std::string& text,
                                                                const std::string& name);

// The error of a sweep of `points` points above the scenario's `limits.points`, with the limit and
// how to raise it, or nothing; check and run both test the sweep they build with it.
std::optional<Diagnostic> sweep_limit_problem(const Scenario& sc, std::size_t points);

}  // namespace racktwin
