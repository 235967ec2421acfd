#pragma once
// Fitting the XPU's busy share of dynamic power (power.xpu_busy_share, power/xpu_power.hpp) to a
// chip's measured sustained power (docs/model.md section 13, docs/power.md).
//
// A point's XPU power is linear in the busy share b at fixed activities:
//
//   P_i(b) = P_i(0) + b x (P_i(1) - P_i(0))
//
// and the most any point of a system's sweeps draws, max_i P_i(b), is convex in b. The fit is the
// largest b in [0, 1] at which no point of the system's calibration sweeps draws more than the
// measured sustained power: where the highest point can reach it, the highest point then draws it
// exactly (to within the 1e-6 the share is rounded down to). The activities come from the
// simulation and do not depend on b, so the fit is closed form over the final sweeps.
//
// Contract: pure; the same results give the same fit. Systems whose chip has no measured sustained
// power are not fitted. A system whose sweeps draw more than the measured power even at b = 0, or
// less at b = 1, gets no share and an error saying which (the catalog's share stays).

#include <string>
#include <vector>

#include "core/catalog.hpp"
#include "sim/serving.hpp"

namespace racktwin::calib {

struct PowerFit {
  std::string system;
  double measured_w = 0;   // the chip's measured sustained power
  double busy_share = 0;   // fitted b (valid when error is empty)
  double highest_w = 0;    // the most any sweep point draws at the fitted b
  std::string highest_at;  // that point: model, workload, layout, serving mode, clients
  int sweep_points = 0;    // the system's sweep points the fit ran over
  std::string error;       // non-empty: no share in [0, 1] reproduces the measured power
};

// One fit per system of `results` whose chip has a measured sustained power, by system id.
// Points with an error are left out; a system none of whose points ran gets an error saying so.
std::vector<PowerFit> fit_power(const std::vector<sim::PointResult>& results);

}  // namespace racktwin::calib
