#include "db/metrics.hpp"

#include <fmt/core.h>

#include "core/enum_names.hpp"
#include "sim/result_schema.hpp"

namespace racktwin::db {

namespace {
constexpr EnumWords<WorkloadKind, 4> kArrivals{"closed_loop,poisson,trace,agentic"};
}  // namespace

std::string arrivals_name(WorkloadKind k) {
  return std::string(kArrivals.name(k));
}

std::string PointKey::label() const {
  std::string load;
  if (arrivals == "poisson")
    load = fmt::format("rate={}/s", rate);
  else if (arrivals != "trace")
    load = fmt::format("C={}", concurrency);
  std::string s = fmt::format("{} {} {} {} {}", system, model, workload, layout, precision);
  if (serving != "aggregated") s += " " + serving;
  if (!load.empty()) s += " " + load;
  if (replicas != 1 && serving == "aggregated") s += fmt::format(" x{}", replicas);
  return s;
}

PointKey point_key(const sim::PointResult& r) {
  const sim::PointSpec& s = r.spec;
  PointKey k;
  k.system = s.system->id;
  k.model = s.model->id;
  k.workload = s.workload_id;
  k.layout = s.layout.label();
  k.precision = s.precision;
  k.serving = sim::serving_mode(s).label();
  k.arrivals = arrivals_name(sim::kind_of(s.arrivals));
  // The database keeps 0 where the arrivals have no clients or no rate.
  k.concurrency = sim::clients_of(s.arrivals).value_or(0);
  k.rate = sim::rate_of(s.arrivals).value_or(0.0);
  k.replicas = s.replicas;
  return k;
}

std::vector<Distribution> point_distributions(const sim::PointResult& r) {
  std::vector<Distribution> d;
  for (const auto& f : sim::distribution_fields())
    d.push_back({std::string(f.name), &(r.*f.stats)});
  return d;
}

std::vector<Metric> point_metrics(const sim::PointResult& r) {
  std::vector<Metric> m;
  if (!r.error.empty()) return m;
  for (const auto& f : sim::result_fields())
    m.push_back({std::string(f.name), f.get(r), std::string(f.unit)});
  return m;
}

std::optional<double> find_metric(const std::vector<Metric>& metrics, std::string_view name) {
  for (const auto& m : metrics)
    if (m.name == name) return m.value;
  return std::nullopt;
}

}  // namespace racktwin::db
