#pragma once
// What a capacity planner asks the twin: sites that energise power quarter by quarter, silicon
// generations that arrive in volume, the limits of supply and deployment, the workload the fleet
// serves at a service target, and what it all costs. Parsed once from YAML by scenarios/
// (plan_loader.hpp) and validated there; every value below is already checked. The format is
// documented in docs/plan.md.

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/units.hpp"

namespace racktwin {

// A calendar quarter, e.g. 2026Q3.
struct Quarter {
  int year = 2026;
  int q = 1;  // 1..4

  int index() const { return year * 4 + (q - 1); }
  static Quarter of_index(int i) { return {i / 4, i % 4 + 1}; }
  Quarter next() const { return of_index(index() + 1); }
  auto operator<=>(const Quarter& o) const { return index() <=> o.index(); }
  bool operator==(const Quarter& o) const = default;
};
std::string to_string(Quarter q);                              // "2026Q3"
std::optional<Quarter> quarter_from_string(std::string_view);  // "2026Q3" or "2026-Q3"
inline constexpr double kWeeksPerQuarter = 52.0 / 4.0;
inline constexpr double kHoursPerYear = 8766.0;  // 365.25 days

// Where a plan figure comes from: the plan file (its line), or a documented default.
struct FigureOrigin {
  enum class Kind { plan, default_value } kind = Kind::default_value;
  SourceLocation where;  // plan: the line of the value
  std::string source;    // a citation (specs.md section, a document) where one is given
  bool assumption = false;
  std::string reason;  // why the value was chosen, for an assumption
};

// A number with its origin. `value` is in base units (W, $, $/J, $/W, s, or plain).
struct Figure {
  double value = 0;
  FigureOrigin origin;
};

// Which power a deployment unit (a rack pair, an NVL72 rack, a server rack) is planned at.
// provisioned: XPUs at rated TDP, hosts provisioned; production: XPUs at rated TDP, hosts at their
// production draw (Jalapeno's "about 160 kW" per rack pair); measured: everything at the simulated
// operating point of the service target; all_in: InferenceX's all-in utility power per XPU where
// the catalog has it (PUE included; else provisioned x PUE), so tok/s per facility MW is
// InferenceX's tok/s per all-in MW.
enum class PowerBasis { provisioned, production, measured, all_in };
std::string to_string(PowerBasis b);
std::optional<PowerBasis> power_basis_from_string(std::string_view s);
std::vector<std::string> power_basis_names();

// One workload of the mix the fleet serves, with its service target. The throughput per XPU at the
// target comes from a simulated sweep of `scenario` (or is given, as an assumption, in
// `throughput`).
struct PlanWorkload {
  std::string scenario;             // scenario file, resolved relative to the plan file
  std::string workload;             // workload id in the scenario
  std::string model;                // model id
  double share = 1.0;               // share of the fleet's tokens
  std::optional<Seconds> tpot_p50;  // median TPOT at or below
  std::optional<Seconds> tpot_p99;
  std::optional<Seconds> ttft_p99;
  SourceLocation where;
};

// Throughput per XPU given in the plan instead of simulated (e.g. a published figure).
struct GivenThroughput {
  double tps_per_xpu = 0;   // total (input + output) tok/s per XPU
  double output_share = 0;  // output tokens / total tokens
  FigureOrigin origin;
};

// A silicon generation (or a comparator system) and how it is bought.
struct Generation {
  std::string id;      // the plan's name, e.g. "jalapeno-b0"
  std::string system;  // catalog system whose racks and power it uses
  // A later generation described only as an assumption: `system`'s racks and power with
  // throughput per XPU times `perf_per_watt` (same power).
  std::optional<Figure> perf_per_watt;
  std::optional<Quarter> from, until;    // deliveries from .. until (inclusive); unset: the plan's
  std::map<Quarter, double> supply;      // units delivered per quarter, from that quarter on
  bool unlimited_supply = false;         // comparators by default: only power and deployment bind
  std::optional<Figure> capex_per_unit;  // $ per deployment unit (rack pair, rack, server)
  std::optional<Figure> cost_per_xpu_hour;  // owned $/XPU-hour all-in (InferenceX style)
  bool cost_from_catalog = false;           // cost_per_xpu_hour: catalog
  std::optional<GivenThroughput> throughput;
  // The time-averaged share of the generation's replicas serving through failures and repairs:
  // given (a figure with its source, or flagged as an assumption), or taken from the failure
  // rehearsal `availability_rehearsal` names (a rehearsal file, path resolved; app/plan.cpp runs it
  // and sets `availability`). Unset: every installed replica serves (no failures counted).
  std::optional<Figure> availability;
  std::string availability_rehearsal;
  // With the rehearsal: count only the replicas the site offers at its service target, the
  // installed ones less the spare racks its search holds back for the attainment goal, rather than
  // the replicas up (`availability: {rehearsal: FILE, spares: true}`).
  bool availability_holds_spares = false;
  SourceLocation availability_where;  // the `availability` key's value
  SourceLocation where;
};

struct PlanSite {
  std::string id;
  Figure pue;
  // Facility (utility) power energised, cumulative, from each quarter on.
  std::map<Quarter, Watts> ramp;
  double commission_per_week = 0;  // racks commissioned per week (a rack pair is two)
  SourceLocation where;
};

struct PlanCosts {
  Figure electricity_price;   // $/J
  Figure facility_capex;      // $/W of facility power energised
  Figure depreciation_years;  // hardware
  Figure facility_years;      // buildings and power
  Figure maintenance;         // share of hardware capex per year
  Figure financing_rate;      // per year
  Figure utilisation;         // share of the time the fleet serves at the target throughput
  Figure output_price_ratio;  // an output token priced this many input tokens
};

struct Plan;

// A figure the Monte Carlo draws and the sensitivity swings, between `low` and `high` (base units),
// drawn from a triangular distribution whose mode is the figure's value in the plan. Names:
// costs.<field>, dock_to_rack, sites.<id>.pue, <generation>.perf_per_watt, .capex_per_unit,
// .cost_per_xpu_hour, and the scales <generation>.throughput and <generation>.supply (mode 1).
struct UncertainFigure {
  std::string name;
  double low = 0, high = 0;
  SourceLocation where;
};

// What an uncertain figure's name refers to: its dimension and its value in the plan (the mode of
// its distribution); `base` unset when the plan gives no value for it (the reason in `problem`).
struct FigureRef {
  Dimension dimension;
  std::optional<double> base;
  std::string problem;
};
// nullopt: no such figure in the plan. `names` lists what can be named, for messages.
std::optional<FigureRef> find_figure(const Plan& p, std::string_view name);
std::vector<std::string> figure_names(const Plan& p);
// The plan-wide figure of that name (costs.*, dock_to_rack, sites.<id>.pue); nullptr for a
// generation's figures and unknown names.
Figure* plan_figure(Plan& p, std::string_view name);

struct Uncertainty {
  int draws = 1000;
  std::uint64_t seed = 1;
  std::vector<UncertainFigure> figures;
};

struct Plan {
  std::string file, text, name, description;
  Quarter first, last;
  PowerBasis basis = PowerBasis::production;
  std::vector<PlanWorkload> workloads;
  std::vector<PlanSite> sites;
  std::vector<Generation> generations;  // newest last: later ones are deployed first
  std::vector<Generation> comparators;  // each alone on the same sites and power
  Figure dock_to_rack;                  // s from delivery to a unit ready to commission
  PlanCosts costs;
  Uncertainty uncertainty;  // no figures: no Monte Carlo and no sensitivity
};

}  // namespace racktwin
