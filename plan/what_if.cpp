#include "plan/what_if.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace racktwin::plan {
namespace {

constexpr double kJoulesPerKwh = 3.6e6;

Diagnostic problem(std::string field, std::string message, std::string hint) {
  return Diagnostic{SourceLocation{"what-if", 0, 0}, std::move(field), std::move(message),
                    std::move(hint)};
}

void check(const Plan& p, const WhatIf& w, Diagnostics& out) {
  if (!std::isfinite(w.power_scale) || w.power_scale <= 0 || w.power_scale > 100)
    out.push_back(problem("power_scale", fmt::format("{} is not a power scale", w.power_scale),
                          "give a factor above 0 and at most 100 (1 keeps the plan's ramp)"));
  if (!std::isfinite(w.supply_scale) || w.supply_scale < 0 || w.supply_scale > 100)
    out.push_back(problem("supply_scale", fmt::format("{} is not a supply scale", w.supply_scale),
                          "give a factor from 0 to 100 (1 keeps the plan's deliveries)"));
  if (w.electricity_usd_per_kwh &&
      (!std::isfinite(*w.electricity_usd_per_kwh) || *w.electricity_usd_per_kwh < 0 ||
       *w.electricity_usd_per_kwh > 10))
    out.push_back(problem("electricity_price",
                          fmt::format("${}/kWh is not an electricity price", *w.electricity_usd_per_kwh),
                          "give a price from $0 to $10 per kWh"));
  if (w.pue && (!std::isfinite(*w.pue) || *w.pue < 1 || *w.pue > 3))
    out.push_back(problem("pue", fmt::format("{} is not a PUE", *w.pue), "give a PUE from 1 to 3"));
  if (w.comparators)
    for (const auto& id : *w.comparators)
      if (std::none_of(p.comparators.begin(), p.comparators.end(),
                       [&](const Generation& g) { return g.id == id; })) {
        std::string known;
        for (const auto& g : p.comparators) known += (known.empty() ? "" : ", ") + g.id;
        out.push_back(problem("comparators", "the plan has no comparator " + id,
                              known.empty() ? "the plan has no comparators" : "one of: " + known));
      }
}

// The figure takes the edited value; it is an assumption of the edit from now on.
void edit(Figure& f, double value, const std::string& was) {
  f.value = value;
  f.origin.kind = FigureOrigin::Kind::default_value;
  f.origin.assumption = true;
  f.origin.reason = "what-if edit (the plan's value: " + was + ")";
}

}  // namespace

bool WhatIf::empty() const {
  return power_scale == 1.0 && supply_scale == 1.0 && !electricity_usd_per_kwh && !pue &&
         !comparators;
}

std::expected<Plan, Diagnostics> apply(Plan p, const WhatIf& w) {
  Diagnostics problems;
  check(p, w, problems);
  if (!problems.empty()) return std::unexpected(std::move(problems));
  for (auto& s : p.sites) {
    for (auto& [quarter, watts] : s.ramp) watts = Watts(watts.value() * w.power_scale);
    if (w.pue) edit(s.pue, *w.pue, fmt::format("{:g}", s.pue.value));
  }
  for (auto& g : p.generations)
    for (auto& [quarter, units] : g.supply) units = std::floor(units * w.supply_scale);
  if (w.electricity_usd_per_kwh)
    edit(p.costs.electricity_price, *w.electricity_usd_per_kwh / kJoulesPerKwh,
         fmt::format("${:g}/kWh", p.costs.electricity_price.value * kJoulesPerKwh));
  if (w.comparators)
    std::erase_if(p.comparators, [&](const Generation& g) {
      return std::find(w.comparators->begin(), w.comparators->end(), g.id) == w.comparators->end();
    });
  return p;
}

}  // namespace racktwin::plan
