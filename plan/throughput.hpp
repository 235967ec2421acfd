#pragma once
// Throughput at a service target, read off simulated sweeps: among the points of one system, model
// and workload that meet every limit of the target, the one with the most tok/s per XPU (the
// Pareto envelope's point at the target). Blending a workload mix: the fleet spends its time on
// each workload in proportion to share / throughput, so the blended tok/s per XPU is the harmonic
// mean 1 / sum(share_i / tps_i), and activity (power) is the time-weighted mean.
//
// Contract: pure functions of the results; failed points are never chosen.

#include <cstddef>
#include <expected>
#include <string>
#include <vector>

#include "core/plan.hpp"
#include "power/xpu_power.hpp"
#include "sim/serving.hpp"

namespace racktwin::plan {

struct ServicePoint {
  std::size_t index = 0;    // into the results
  double tps_per_xpu = 0;   // total (input + output) tok/s per XPU
  double output_share = 0;  // output / total tokens
  power::Activity activity;  // of the XPUs over the point's window
  double tpot_p50_s = 0, tpot_p99_s = 0, ttft_p99_s = 0;
  std::string layout;
  int clients = 0;  // closed-loop concurrency; 0 for other arrivals
};

// Does the point meet every limit the workload's target sets?
bool meets(const sim::PointResult& r, const PlanWorkload& target);

// The best point of `system` for the workload at its target; the error says what the sweep reaches
// (the lowest TPOT and TTFT it has) when no point meets the target.
std::expected<ServicePoint, std::string> best_at_target(const std::vector<sim::PointResult>& results,
                                                        const std::string& system,
                                                        const PlanWorkload& target);

struct Blend {
  double tps_per_xpu = 0, output_share = 0;
  power::Activity activity;  // time-weighted over the workloads
};
// `points[i]` serves workloads[i]; shares add up to 1.
Blend blend(const std::vector<ServicePoint>& points, const std::vector<PlanWorkload>& workloads);

}  // namespace racktwin::plan
