#pragma once
// The rollout of a fleet, quarter by quarter: deployment units (a Jalapeno rack pair, an NVL72
// rack, a rack of HGX servers) installed where power is energised, as fast as supply and
// commissioning allow, with the throughput, power and cost of what is installed.
//
// Each quarter (docs/plan.md "How a quarter is planned"):
//   ready(g)   = units of generation g delivered, dock_to_rack later, not yet installed
//   site s     : room = energised(s) / PUE(s) - IT power installed(s);
//                crews = racks commissioned per week x 13 weeks
//   install    : site by site in plan order, newest generation first,
//                n = floor(min(ready(g), room / unit power(g), crews left / racks per unit))
//   binding    : the smallest of the quarter's three capacities, in units of the newest generation:
//                power (sum of rooms / unit power), supply (sum of ready), deployment (sum of crews)
// Costs (per year, at the quarter's installed base; docs/plan.md "Costs"):
//   capex units : annuity(unit price, financing rate, depreciation years) while the cohort is young
//                 enough, + maintenance share x price; facility: annuity($/W x unit facility W,
//                 rate, facility years); electricity: operating IT W x PUE x hours x price
//   owned $/XPU-hour units: XPUs x $/XPU-hour x hours (all-in, InferenceX's convention)
//   $/Mtok      = TCO per year / (tok/s x utilisation x seconds per year) x 1e6
//
// Contract: pure; the same plan and units give the same rollout. Counts of units, racks and XPUs
// are whole numbers; every quarter satisfies units x unit IT power x PUE = facility power used.

#include <optional>
#include <string>
#include <vector>

#include "core/plan.hpp"
#include "core/units.hpp"

namespace racktwin::plan {

// One generation as the planner uses it: per deployment unit.
struct UnitModel {
  Generation generation;                   // its supply, window and costs
  std::string unit_name;                   // "rack pair", "rack"
  int xpus = 0;                            // per unit
  int racks = 0;                           // racks per unit
  int domain_xpus = 0;                     // XPUs of one scale-up domain
  Watts it_power;                          // per unit, on the plan's power basis
  Watts operating_it_power;                // per unit, at the operating point (energy)
  double tps_per_xpu = 0;                  // total tok/s per XPU at the service target
  double output_share = 0;                 // output tokens / all tokens
  std::optional<double> capex_per_unit;    // $; unset when cost_per_xpu_s is set
  std::optional<double> cost_per_xpu_s;    // owned all-in $/s per XPU
};

enum class Binding { power, supply, deployment };
std::string to_string(Binding b);

// What is installed of one generation (or at one site) at the end of a quarter.
struct Installed {
  double units = 0, added = 0, racks = 0, xpus = 0;
  double domains_whole = 0, domains_partial = 0;  // 2,048-XPU domains (NVL72: racks)
  double it_w = 0, facility_w = 0;                // on the plan's power basis
  double tps = 0;                                 // tok/s at the service target
  double capex = 0;                               // spent this quarter: units and facility
  double tco_per_year = 0;
};

struct GenerationQuarter {
  std::string generation;
  Installed installed;
};

struct SiteQuarter {
  std::string site;
  double energised_w = 0;  // facility power energised
  double pue = 1;
  Binding binding = Binding::power;
  Installed installed;
  std::vector<GenerationQuarter> generations{};  // what of each generation is installed here
};

struct QuarterRow {
  Quarter quarter;
  double energised_w = 0;
  Installed total;
  double capex_cumulative = 0;
  double opex = 0;  // this quarter: electricity and maintenance
  double tps_per_facility_mw = 0;
  // Prices at which the quarter's TCO is recovered from its tokens (0 without tokens).
  double usd_per_mtok = 0, usd_per_mtok_input = 0, usd_per_mtok_output = 0, tokens_per_usd = 0;
  Binding binding = Binding::power;
  double room_units = 0, ready_units = 0, crew_units = 0;  // the three capacities
  std::vector<GenerationQuarter> generations;
  std::vector<SiteQuarter> sites;
};

struct Rollout {
  std::string fleet;  // "plan" or the comparator's id
  std::vector<QuarterRow> quarters;
};

Rollout roll_out(const Plan& plan, const std::vector<UnitModel>& units, std::string fleet);

// Cost helpers (docs/plan.md "Costs").
// Level yearly payment that repays `amount` over `years` at `rate` (amount / years at rate 0).
double annuity(double amount, double rate, double years);
// InferenceX's cost per million tokens: $/XPU-hour / (tok/s per XPU x 3600) x 1e6.
double usd_per_mtok(double usd_per_xpu_hour, double tps_per_xpu);

}  // namespace racktwin::plan
