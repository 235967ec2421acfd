#pragma once
// The stage after simulation: a point's power, energy and throughput normalisations from what the
// simulation measured (its activity and tokens) and the system's power model.
//
// Contract: pure. evaluate() reads the point's measured fields (total_tps_per_xpu, the activities,
// the per-second activities) and sets the derived ones (xpu_power_w, energy_per_token_j, the
// tps_per_* normalisations, the all-in power breakdown, the series' xpu_power_w); the same inputs
// give the same bytes. Equations: docs/power.md.

#include <expected>
#include <map>
#include <string>

#include "power/power_model.hpp"
#include "sim/serving.hpp"

namespace racktwin::sim {

// The power models of the systems a batch of points uses, built once per system and facility.
class PowerModels {
 public:
  // The model of the point's system in the point's facility; the reason when the catalog lacks a
  // figure the model needs.
  const std::expected<power::PowerModel, std::string>& of(const PointSpec& spec);

 private:
  std::map<std::tuple<std::string, double>, std::expected<power::PowerModel, std::string>> models_;
};

// Sets the derived power fields of `r` from its measured fields.
void evaluate(PointResult& r, const power::PowerModel& pm);

}  // namespace racktwin::sim
