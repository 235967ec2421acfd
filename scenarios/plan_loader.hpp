#pragma once
// Reads a plan file (docs/plan.md) and checks it against the catalog. All problems are reported at
// once, each with file:line:column, the key path, what was expected and a hint. Figures the plan
// leaves out take the documented defaults, each with its source or flagged as an assumption
// (plan_defaults()).

#include <expected>
#include <string>

#include "core/catalog.hpp"
#include "core/error.hpp"
#include "core/plan.hpp"

namespace racktwin {

std::expected<Plan, Diagnostics> load_plan_file(const std::string& path, const Catalog& catalog);

// `name` is used in messages in place of a file name; scenario paths resolve against `base_dir`.
std::expected<Plan, Diagnostics> load_plan_string(const std::string& text, const std::string& name,
                                                  const std::string& base_dir,
                                                  const Catalog& catalog);

// The costs, PUE and dock-to-rack time a plan gets when it gives none.
struct PlanDefaults {
  PlanCosts costs;
  Figure pue;
  Figure dock_to_rack;
};
const PlanDefaults& plan_defaults();

}  // namespace racktwin
