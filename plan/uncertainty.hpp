#pragma once
// Uncertainty of a rollout over the figures the plan marks uncertain (Plan::uncertainty):
// - sensitivity: each figure alone at its low and at its high, the others at their values; the
//   final quarter's $/Mtok and tokens/s each time, figures ranked by the swing (a tornado);
// - Monte Carlo: `draws` rollouts, every figure drawn from a triangular distribution (low, the
//   plan's value, high), each draw and figure from its own named random stream of the plan's seed
//   (sim::stream_seed(seed, "draw<i>/<figure>")), so a draw does not depend on the figures' order;
//   per quarter the P10, P50 and P90 of tokens/s and $/Mtok.
//
// Contract: pure; the same plan gives the same bytes.

#include <string>
#include <vector>

#include "core/plan.hpp"
#include "plan/rollout.hpp"

namespace racktwin::plan {

// A copy of the plan and units with the named figure set to `value` (base units).
void set_figure(const std::string& name, double value, Plan& p, std::vector<UnitModel>& units);

struct Swing {
  std::string figure;
  double low = 0, high = 0;                     // the figure's range
  double usd_per_mtok_low = 0, usd_per_mtok_high = 0;  // final quarter, figure at low / high
  double tps_low = 0, tps_high = 0;
};
struct Sensitivity {
  double usd_per_mtok = 0, tps = 0;  // final quarter at the plan's values
  std::vector<Swing> by_cost;        // ranked by |$/Mtok swing|, largest first
  std::vector<Swing> by_tokens;      // ranked by |tokens/s swing|
};
Sensitivity sensitivity(const Plan& p, const std::vector<UnitModel>& units);

struct Band {
  double p10 = 0, p50 = 0, p90 = 0;
};
struct QuarterBand {
  Quarter quarter;
  Band tps, usd_per_mtok;
};
struct MonteCarlo {
  int draws = 0;
  std::vector<QuarterBand> quarters;
};
MonteCarlo monte_carlo(const Plan& p, const std::vector<UnitModel>& units);

// A draw of the triangular distribution (low, mode, high) at u in [0, 1).
double triangular(double low, double mode, double high, double u);

}  // namespace racktwin::plan
