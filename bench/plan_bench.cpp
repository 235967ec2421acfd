// Wall time of planning the shipped 10 GW plan once its throughput sweep is stored (the first call
// simulates it), and of the rollout arithmetic alone, for the closing notes.
// Usage: build/bench/racktwin_plan_bench [PLAN]   (default: scenarios/plans/openai-10gw.yaml)

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "app/plan.hpp"
#include "bench/support.hpp"

int main(int argc, char** argv) {
  using namespace racktwin;
  using bench::seconds_since;
  const std::string src = RACKTWIN_SOURCE_DIR;
  const std::string file = argc > 1 ? argv[1] : src + "/scenarios/plans/openai-10gw.yaml";
  auto cat = bench::shipped_catalog();
  if (!cat) return 1;
  app::PlanRequest rq;
  rq.plan_file = file;
  rq.db = "/tmp/racktwin-plan-bench-" + std::to_string(::getpid()) + ".db";
  auto t0 = std::chrono::steady_clock::now();
  auto first = app::plan_fleet(*cat, rq);
  const double cold = seconds_since(t0);
  if (!first) {
    std::fprintf(stderr, "plan failed: %s\n", first.error().message.c_str());
    ::unlink(rq.db.c_str());
    return 1;
  }
  std::vector<double> warm;
  for (int i = 0; i < 10; ++i) {
    t0 = std::chrono::steady_clock::now();
    auto o = app::plan_fleet(*cat, rq);
    warm.push_back(seconds_since(t0));
    if (!o) return 1;
  }
  std::vector<plan::UnitModel> units;
  for (const auto& u : first->units)
    if (!u.comparator) units.push_back(u.unit);
  t0 = std::chrono::steady_clock::now();
  constexpr int kRollouts = 1000;
  double sink = 0;
  for (int i = 0; i < kRollouts; ++i)
    sink += plan::roll_out(first->plan, units, "plan").quarters.back().total.tps;
  const double per_rollout = seconds_since(t0) / kRollouts;
  t0 = std::chrono::steady_clock::now();
  const auto mc = plan::monte_carlo(first->plan, units);
  const double mc_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto sens = plan::sensitivity(first->plan, units);
  const double sens_s = seconds_since(t0);
  ::unlink(rq.db.c_str());
  std::sort(warm.begin(), warm.end());
  std::printf("%s (%zu quarters, %zu sites, %zu generations, %zu comparators)\n", file.c_str(),
              first->rollout.quarters.size(), first->plan.sites.size(),
              first->plan.generations.size(), first->plan.comparators.size());
  std::printf("  first plan (simulates the sweep)   %8.3f s\n", cold);
  std::printf("  re-plan, sweep stored (median/10)  %8.3f s   (max %.3f s)\n", warm[warm.size() / 2],
              warm.back());
  std::printf("  rollout arithmetic alone           %8.3f ms  (checksum %.6g)\n", per_rollout * 1e3,
              sink);
  std::printf("  sensitivity, %2zu figures x 2        %8.3f s\n", sens.by_cost.size(), sens_s);
  std::printf("  Monte Carlo, %d draws             %8.3f s\n", mc.draws, mc_s);
  return 0;
}
