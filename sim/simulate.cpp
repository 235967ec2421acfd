// simulate(): the batch through its stages (sim/point_state.hpp): prepare every point, start the
// SimGrid engine, build the platform, spawn the actors, run, collect the metrics. Stats::of, the
// latency summary the metrics use, is here too.

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <simgrid/s4u.hpp>

#include "sim/contexts.hpp"
#include "sim/point_state.hpp"
#include "sim/serving.hpp"

namespace racktwin::sim {
namespace {

bool& engine_used() {
  static bool used = false;
  return used;
}

// The process's SimGrid engine. Network model: CM02, max-min fair sharing of link bandwidth with
// the links' own latency, no TCP corrections (LV08's latency x13 and bandwidth x0.97 factors and
// window bound are fitted to wide-area TCP, not to scale-up fabrics). Actor stacks of 1 MiB, not
// SimGrid's 8 MiB: a point runs an actor per client and per replica, and their reserved stacks,
// not the memory they use, made a run fail under an address-space limit ("Failed to allocate
// stack"); the actors' code calls no deep recursion. The arguments are static: SimGrid may keep
// pointers into them.
// The context factory: sim/contexts.cpp.
std::unique_ptr<simgrid::s4u::Engine> start_engine() {
  static char arg0[] = "racktwin";
  static char arg1[] = "--log=root.thresh:critical";
  static char arg2[] = "--cfg=network/model:CM02";
  static char arg3[] = "--cfg=network/TCP-gamma:0";
  static char arg4[] = "--cfg=contexts/stack-size:1024";  // KiB
  static std::string arg5 = detail::context_factory_option();
  char* argv[] = {arg0, arg1, arg2, arg3, arg4, arg5.data(), nullptr};
  int argc = 6;
  return std::make_unique<simgrid::s4u::Engine>(&argc, argv);
}

}  // namespace

Stats Stats::of(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto q = [&](double f) {
    // Linear interpolation between closest ranks (numpy's default).
    const double pos = f * static_cast<double>(v.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.median = q(0.5);
  s.p90 = q(0.9);
  s.p99 = q(0.99);
  s.min = v.front();
  s.max = v.back();
  s.percentiles.reserve(101);
  for (int k = 0; k <= 100; ++k) s.percentiles.push_back(q(k / 100.0));
  return s;
}

std::expected<std::vector<PointResult>, std::string> simulate(const Catalog& catalog,
                                                              const std::vector<PointSpec>& specs,
                                                              const SimOptions& options) {
  if (engine_used())
    return std::unexpected("a process runs one simulation: SimGrid keeps one engine per process");
  engine_used() = true;

  std::vector<PointResult> results(specs.size());
  detail::Progress progress{&options.progress};
  const detail::Points points = detail::prepare(catalog, specs, options, progress, results);
  const auto engine = start_engine();
  detail::build_platform(points);
  detail::spawn_actors(points);
  engine->run();
  if (options.progress) options.progress(1.0);
  detail::collect(points, results);
  return results;
}

}  // namespace racktwin::sim
