#include "app/point_details.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/scenario.hpp"

namespace racktwin::app {
namespace {

constexpr std::array<const char*, 6> kSections{"load and throughput",  "latency",
                                               "power and efficiency", "iteration time",
                                               "memory and cache",     "failures"};

bool starts(std::string_view name, std::string_view prefix) {
  return name.substr(0, prefix.size()) == prefix;
}

// The section (an index into kSections) a metric is listed in.
std::size_t section_of(std::string_view n) {
  if (n != "e2e_normalised_interactivity" &&
      (starts(n, "ttft_") || starts(n, "tpot_") || starts(n, "e2e_")))
    return 1;
  if (starts(n, "power_") || starts(n, "energy_") || starts(n, "tps_per_") ||
      starts(n, "xpu_power") || starts(n, "all_in") || n.ends_with("_activity"))
    return 2;
  if (starts(n, "iteration") || n == "plans" || n == "preemptions") return 3;
  if (n.find("kv") != std::string_view::npos || n.find("hit_rate") != std::string_view::npos ||
      starts(n, "offload") || starts(n, "host_tier"))
    return 4;
  if (n == "retried_requests" || n == "replica_down_s" || n == "recovery_s") return 5;
  return 0;
}

std::string number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    return fmt::format("{:.0f}", v);
  if (std::fabs(v) >= 1000) return fmt::format("{:.1f}", v);
  return fmt::format("{:.4g}", v);
}

}  // namespace

std::vector<std::vector<std::string>> point_detail_table(const db::StoredPoint& p) {
  std::vector<std::vector<std::string>> rows{{"section", "name", "value", "unit"}};
  const db::PointKey& k = p.key;
  auto add = [&](std::string name, std::string value, std::string unit = "") {
    rows.push_back({"point", std::move(name), std::move(value), std::move(unit)});
  };
  add("system", k.system);
  add("model", k.model);
  add("workload", k.workload);
  // A replica's XPUs from its layout's label (a named layout may carry a name of its own); the
  // point's XPUs, every replica of both pools, are in the metrics (`xpus`).
  const auto layout = parse_layout(k.layout);
  add("layout", layout ? k.layout + " (" + std::to_string(layout->xpus()) + " XPUs per replica)"
                       : k.layout);
  add("precision", k.precision);
  add("serving", k.serving);
  add("arrivals", k.arrivals);
  if (k.arrivals == "poisson")
    add("rate", number(k.rate), "requests/s");
  else if (k.arrivals != "trace")
    add("clients", std::to_string(k.concurrency), "concurrency");
  add("replicas", std::to_string(k.replicas));
  if (!p.error.empty()) add("error", p.error);
  for (std::size_t s = 0; s < kSections.size(); ++s)
    for (const auto& m : p.metrics)
      if (section_of(m.name) == s) rows.push_back({kSections[s], m.name, number(m.value), m.unit});
  return rows;
}

std::string point_cdf_note(const db::StoredPoint& p) {
  std::string counts;
  for (const auto& [name, v] : p.percentiles_s)
    counts += (counts.empty() ? "" : ", ") + name + " " + std::to_string(v.size());
  if (counts.empty()) return "The point stores no latency distribution.";
  return "Drawn through the point's stored percentiles (" + counts +
         " values, p0 to p100); the results keep no per-request latencies.";
}

}  // namespace racktwin::app
