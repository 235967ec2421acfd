#pragma once
// Power from the XPU to the facility: racks, rack pairs and deployments built from the catalog's
// component figures, set against the published rack figures, and the throughput normalisations.
//
// Equations (docs/power.md):
//   load  = sum over parts of count x DC load at the point of use
//             (XPUs at rated TDP or at P(c, m); compute-tray overhead; switch trays; hosts rated or
//              in production)
//   input = load / (rectifier x point_of_load)          what the rack draws (IT power)
//   facility = input x PUE                               what the utility delivers
//
// Contract: pure functions of the catalog system and the facility; no I/O. Figures a system lacks
// make PowerModel::of fail with the missing field named.

#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog.hpp"
#include "core/scenario.hpp"
#include "core/units.hpp"
#include "power/xpu_power.hpp"

namespace racktwin::power {

// Power conversion between the rack input and the components (reference specs section 6: ORNL
// ExaDigiT/RAPS Frontier configuration).
struct Conversion {
  double rectifier = 0.96;      // rack input to the rack's DC bus
  double point_of_load = 0.98;  // DC bus to the component rails
  double efficiency() const { return rectifier * point_of_load; }
};

struct Facility {
  double pue = 1.10;  // facility power / IT power (reference specs section 6, central value)
  Conversion conversion;
  // A scenario's facility: its PUE, with the default conversion.
  static Facility from(const FacilitySpec& f);
};

// How many power-drawing parts a rack, a rack pair or a whole deployment holds.
struct PartCounts {
  int xpus = 0;
  int compute_trays = 0;
  int switch_trays = 0;  // scale-up switch trays (on-board switches count in the tray overhead)
  int hosts = 0;         // host parts (System::host_parts_per_compute_tray per compute tray)
};

// What the parts draw. `activity` unset: XPUs at their rated TDP (the provisioned case).
struct Operating {
  std::optional<Activity> activity;
  bool hosts_production = false;  // hosts at their production draw where the catalog has one

  static Operating rated() { return {}; }
  static Operating at(Activity a) { return {a, true}; }
};

// One row of a power sheet: `count` parts of one kind at `each` (DC load at the point of use).
struct PowerLine {
  std::string part;
  int count = 0;
  Watts each;
  Watts total() const { return each * static_cast<double>(count); }
};

struct PowerSheet {
  std::vector<PowerLine> lines;  // parts with a count of zero are left out
  Watts load;                    // sum of the lines, at the point of use
  Watts conversion_loss;         // input - load
  Watts input;                   // load / conversion efficiency: IT power drawn
};

// A computed figure against the published one it should add up to.
struct BudgetCheck {
  std::string what;   // "compute rack", "host rack (provisioned)", ...
  std::string basis;  // which operating point and parts the computed figure uses
  Watts computed;
  Watts published;
  // The share of the published figure the components leave unexplained (negative: they exceed it).
  double residual() const { return (published - computed) / published; }
};

// Components are chosen so that every published figure is met within this residual.
inline constexpr double kBudgetTolerance = 0.05;

// All-in utility power per XPU: the published InferenceX constant where there is one, else
// computed as the XPU's share of its rack (pair), provisioned, times the PUE.
struct AllIn {
  Watts per_xpu;           // the figure normalisations use
  bool computed = false;   // true when no published figure exists
  Watts computed_per_xpu;  // from components and facility, always
  std::optional<Watts> published;
};

// Where the all-in power of one XPU goes at an operating point: its share of the compute rack and
// of the host trays that serve it, part by part, then the conversion loss and the facility overhead
// (PUE - 1 times the IT power). The parts add up to all_in().
struct XpuPowerShare {
  Watts xpu, tray_overhead, switches, hosts, conversion_loss, facility_overhead;
  Watts it() const { return xpu + tray_overhead + switches + hosts + conversion_loss; }
  Watts all_in() const { return it() + facility_overhead; }
};

class PowerModel {
 public:
  // The model of a catalog system; the system must outlive the model.
  static std::expected<PowerModel, std::string> of(const System& s, Facility f = {});

  const System& system() const { return *system_; }
  const XpuPower& xpu() const { return xpu_; }
  const Facility& facility() const { return facility_; }

  // The power sheet of any set of parts at an operating point.
  PowerSheet sheet(const PartCounts& parts, const Operating& op) const;

  // The parts of one compute rack (with the hosts inside its trays), and of the separate host
  // trays that serve it (zero counts when hosts are not in a separate rack).
  PartCounts compute_rack_parts() const;
  PartCounts host_rack_parts() const;
  bool separate_host_rack() const;

  // Input power of one compute rack plus the host trays that serve it, per XPU.
  Watts it_per_xpu(const Operating& op) const;
  // Provisioned: XPUs and hosts rated.
  Watts provisioned_per_xpu() const { return it_per_xpu(Operating::rated()); }
  AllIn all_in() const;
  // it_per_xpu(op) split by part, plus the facility overhead on top of it.
  XpuPowerShare share_per_xpu(const Operating& op) const;

  // Every published rack, pair or server figure of the system against its components.
  std::vector<BudgetCheck> budget_checks() const;

 private:
  PowerModel(const System& s, XpuPower x, Facility f) : system_(&s), xpu_(x), facility_(f) {}
  const System* system_;
  XpuPower xpu_;
  Facility facility_;
};

// Throughput per unit of power. Tokens per joule is (tokens/s) per watt.
using TokensPerJoule = Quantity<0, -1, 0, 0, 1, 0>;
inline double per_kw(TokensPerJoule x) {
  return x.value() * 1e3;
}  // tokens/s per kW
inline double per_mw(TokensPerJoule x) {
  return x.value() * 1e6;
}  // tokens/s per MW

// One throughput under the four normalisations, for the same XPU at the same activity.
struct Normalised {
  TokensPerJoule per_rated_tdp;  // / the XPU's rated package TDP
  TokensPerJoule per_measured;   // / the XPU's power at the operating activity
  TokensPerJoule per_it;         // / the XPU's share of its rack (pair) input at that activity
  TokensPerJoule per_all_in;     // / all-in utility power per XPU
  bool all_in_computed = false;  // per_all_in rests on a computed, not a published, figure
};

// `per_xpu`: throughput of one XPU (tokens/s), served at activity `a`.
Normalised normalise(const PowerModel& m, TokensPerSecond per_xpu, Activity a);

}  // namespace racktwin::power
