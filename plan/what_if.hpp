#pragma once
// What-if edits of a plan's key inputs, as data: the GUI's what-if form (and any other front end)
// fills a WhatIf and the planner applies it to the loaded plan before it rolls the fleet out, so
// re-planning with an edit is the same use case as planning the file (app::plan_fleet).
//
// Contract: pure. apply() checks every field at once and returns every problem, located at
// "what-if" with the field's name as the path; a WhatIf with nothing set returns the plan as it is.
// An overridden figure becomes an assumption whose reason names the edit, so the plan's
// assumptions list it.

#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/plan.hpp"

namespace racktwin::plan {

struct WhatIf {
  double power_scale = 1.0;   // every site's energised power, each quarter, times this (> 0)
  double supply_scale = 1.0;  // every generation's deliveries per quarter times this (>= 0)
  std::optional<double> electricity_usd_per_kwh;  // costs.electricity_price
  std::optional<double> pue;                      // every site's PUE (1 to 3)
  // The comparator fleets to plan beside the fleet (their ids); unset: every one in the plan.
  std::optional<std::vector<std::string>> comparators;

  bool empty() const;
};

// The plan with the edits applied, or every problem with the edits.
std::expected<Plan, Diagnostics> apply(Plan plan, const WhatIf& what_if);

}  // namespace racktwin::plan
