#pragma once
// A plan and units made up for the plan library's tests: one site energising 10 MW, then 40 MW from
// 2027Q1, over 2026Q3 to 2027Q4; units of 100 kW (60 kW operating) holding 100 XPUs at 1,000 tok/s
// each. Costs: $0.10/kWh, $10M per MW of facility, 4-year depreciation, no maintenance or financing.

#include <map>
#include <string>

#include "plan/rollout.hpp"

namespace racktwin::plan::test {

inline Figure fig(double v) {
  return Figure{v, {}};
}

inline Plan one_site_plan() {
  Plan p;
  p.first = {2026, 3};
  p.last = {2027, 4};
  PlanSite s;
  s.id = "a";
  s.pue = fig(1.25);
  s.ramp = {{{2026, 3}, Watts(10e6)}, {{2027, 1}, Watts(40e6)}};
  s.commission_per_week = 20;
  p.sites = {s};
  p.dock_to_rack = fig(0);
  p.costs.electricity_price = fig(usd_per_kwh(0.1).value());
  p.costs.facility_capex = fig(10);  // $10M/MW
  p.costs.depreciation_years = fig(4);
  p.costs.facility_years = fig(15);
  p.costs.maintenance = fig(0.0);
  p.costs.financing_rate = fig(0.0);
  p.costs.utilisation = fig(1.0);
  p.costs.output_price_ratio = fig(1.0);
  return p;
}

// A generation `id` delivered as `supply` (units per quarter).
inline UnitModel made_up_unit(std::string id, std::map<Quarter, double> supply, double capex = 1e6) {
  UnitModel u;
  u.generation.id = std::move(id);
  u.generation.supply = std::move(supply);
  u.unit_name = "rack pair";
  u.xpus = 100;
  u.racks = 2;
  u.domain_xpus = 1000;
  u.it_power = Watts(100e3);
  u.operating_it_power = Watts(60e3);
  u.tps_per_xpu = 1000;
  u.output_share = 0.25;
  u.capex_per_unit = capex;
  return u;
}

}  // namespace racktwin::plan::test
