#pragma once
// Reads a scenario file and checks it against the catalog. All problems are reported at once,
// each with file:line:column, the key path, what was expected and, for an unknown catalog id, the
// nearest known id.

#include <expected>
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

}  // namespace racktwin
