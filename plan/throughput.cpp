#include "plan/throughput.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

namespace racktwin::plan {

bool meets(const sim::PointResult& r, const PlanWorkload& t) {
  if (t.tpot_p50 && r.tpot.median > t.tpot_p50->value()) return false;
  if (t.tpot_p99 && r.tpot.p99 > t.tpot_p99->value()) return false;
  if (t.ttft_p99 && r.ttft.p99 > t.ttft_p99->value()) return false;
  return true;
}

namespace {

bool is_of(const sim::PointResult& r, const std::string& system, const PlanWorkload& w) {
  return r.error.empty() && r.requests > 0 && r.spec.system != nullptr && r.spec.model != nullptr &&
         r.spec.system->id == system && r.spec.model->id == w.model && r.spec.workload_id == w.workload;
}

ServicePoint service_point(const sim::PointResult& r, std::size_t i) {
  ServicePoint p;
  p.index = i;
  p.tps_per_xpu = r.total_tps_per_xpu;
  const double tokens = r.input_tokens + r.output_tokens;
  p.output_share = tokens > 0 ? r.output_tokens / tokens : 0.0;
  p.activity = {r.compute_activity, r.memory_activity, r.link_activity, r.busy_activity};
  p.tpot_p50_s = r.tpot.median;
  p.tpot_p99_s = r.tpot.p99;
  p.ttft_p99_s = r.ttft.p99;
  p.layout = sim::configuration_label(r.spec);  // with its serving mode when disaggregated
  p.clients = sim::clients_of(r.spec.arrivals).value_or(0);
  return p;
}

std::string what_is_reached(const std::vector<sim::PointResult>& results, const std::string& system,
                            const PlanWorkload& w, int points) {
  double tpot = std::numeric_limits<double>::infinity(), ttft = tpot;
  for (const auto& r : results)
    if (is_of(r, system, w)) {
      tpot = std::min(tpot, r.tpot.median);
      ttft = std::min(ttft, r.ttft.p99);
    }
  std::ostringstream s;
  if (points == 0) {
    s << "the sweep has no successful point of " << system << " with " << w.model << " on workload "
      << w.workload;
    // The first failed point of that system, model and workload says why.
    for (const auto& r : results)
      if (!r.error.empty() && r.spec.system != nullptr && r.spec.model != nullptr &&
          r.spec.system->id == system && r.spec.model->id == w.model &&
          r.spec.workload_id == w.workload) {
        s << " (the first to fail, " << sim::configuration_label(r.spec) << ": " << r.error << ")";
        break;
      }
    return s.str();
  }
  s << "no point of " << system << " with " << w.model << " on " << w.workload
    << " meets the target (of " << points << " points, the lowest median TPOT is " << tpot * 1e3
    << " ms and the lowest TTFT p99 " << ttft << " s)";
  return s.str();
}

}  // namespace

std::expected<ServicePoint, std::string> best_at_target(const std::vector<sim::PointResult>& results,
                                                        const std::string& system,
                                                        const PlanWorkload& target) {
  std::optional<std::size_t> best;
  int points = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (!is_of(r, system, target)) continue;
    ++points;
    if (!meets(r, target)) continue;
    if (!best || r.total_tps_per_xpu > results[*best].total_tps_per_xpu) best = i;
  }
  if (!best) return std::unexpected(what_is_reached(results, system, target, points));
  return service_point(results[*best], *best);
}

Blend blend(const std::vector<ServicePoint>& points, const std::vector<PlanWorkload>& workloads) {
  Blend b;
  double time = 0;  // XPU-seconds per token of the mix
  for (std::size_t i = 0; i < points.size(); ++i) time += workloads[i].share / points[i].tps_per_xpu;
  if (time <= 0) return b;
  b.tps_per_xpu = 1.0 / time;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double t = workloads[i].share / points[i].tps_per_xpu / time;  // share of the time
    b.output_share += workloads[i].share * points[i].output_share;
    const power::Activity& a = points[i].activity;
    b.activity.compute += t * a.compute;
    b.activity.memory += t * a.memory;
    b.activity.link += t * a.link;
    b.activity.busy += t * a.busy;
  }
  return b;
}

}  // namespace racktwin::plan
