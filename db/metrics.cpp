#include "db/metrics.hpp"

#include <fmt/core.h>

#include "power/power_model.hpp"

namespace racktwin::db {

std::string arrivals_name(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::poisson:
      return "poisson";
    case WorkloadKind::trace:
      return "trace";
    case WorkloadKind::agentic:
      return "agentic";
    case WorkloadKind::inferencex:
      break;
  }
  return "closed_loop";
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
  k.serving = ServingMode{s.prefill_replicas, s.replicas}.label();
  k.arrivals = arrivals_name(s.kind);
  k.concurrency = s.concurrency;
  k.rate = s.rate;
  k.replicas = s.replicas;
  return k;
}

std::vector<Distribution> point_distributions(const sim::PointResult& r) {
  return {{"ttft_s", &r.ttft}, {"tpot_s", &r.tpot}, {"e2e_s", &r.e2e}};
}

std::vector<Metric> point_metrics(const sim::PointResult& r) {
  std::vector<Metric> m;
  if (!r.error.empty()) return m;
  auto add = [&](std::string name, double value, std::string unit) {
    m.push_back({std::move(name), value, std::move(unit)});
  };
  auto count = [](std::int64_t n) { return static_cast<double>(n); };
  const bool fixed_lengths =
      r.spec.kind == WorkloadKind::inferencex || r.spec.kind == WorkloadKind::poisson;
  add("workload_isl_tokens", fixed_lengths ? r.spec.workload.isl : 0, "tokens (0: not fixed)");
  add("workload_osl_tokens", fixed_lengths ? r.spec.workload.osl : 0, "tokens (0: not fixed)");
  add("requests", count(r.requests), "requests");
  add("completed", count(r.completed), "requests");
  add("duration_s", r.duration_s, "s");
  add("input_tokens", r.input_tokens, "tokens");
  add("output_tokens", r.output_tokens, "tokens");
  add("total_tps_per_xpu", r.total_tps_per_xpu, "tok/s/XPU");
  add("output_tps_per_xpu", r.output_tps_per_xpu, "tok/s/XPU");
  add("input_tps_per_xpu", r.input_tps_per_xpu, "tok/s/XPU");
  add("interactivity_tok_s_user", r.interactivity, "tok/s/user");
  add("e2e_normalised_interactivity", r.e2e_norm_interactivity, "1/s per output token");
  for (const auto& d : point_distributions(r)) {
    const std::string base = d.name.substr(0, d.name.size() - 2);  // "ttft" of "ttft_s"
    add(base + "_mean_s", d.stats->mean, "s");
    add(base + "_median_s", d.stats->median, "s");
    add(base + "_p90_s", d.stats->p90, "s");
    add(base + "_p99_s", d.stats->p99, "s");
    add(base + "_min_s", d.stats->min, "s");
    add(base + "_max_s", d.stats->max, "s");
  }
  add("prefix_hit_rate", r.prefix_hit_rate, "fraction");
  add("offload_hit_rate", r.offload_hit_rate, "fraction");
  add("offloaded_bytes", r.offloaded_bytes, "bytes");
  add("host_tier_blocks", r.host_tier_blocks, "blocks per replica");
  add("domains", r.domains, "scale-up domains");
  add("kv_transfer_bytes", r.kv_transfer_bytes, "bytes per request");
  add("kv_transfer_s", r.kv_transfer_s, "s per request");
  add("retried_requests", count(r.retried_requests), "requests");
  add("replica_down_s", r.replica_down_s, "replica-seconds");
  add("recovery_s", r.recovery_s, "s per failure");
  add("mean_concurrency", r.mean_concurrency, "requests");
  add("kv_capacity_tokens", r.kv_capacity_tokens, "tokens per replica");
  add("max_kv_used_tokens", r.max_kv_used, "tokens per replica");
  add("compute_activity", r.compute_activity, "fraction");
  add("memory_activity", r.memory_activity, "fraction");
  add("xpu_power_w", r.xpu_power_w, "W per XPU");
  add("energy_per_token_j", r.energy_per_token_j, "J/token");
  add("tps_per_rated_kw", r.tps_per_rated_kw, "tok/s per rated kW");
  add("tps_per_measured_kw", r.tps_per_measured_kw, "tok/s per measured kW");
  add("tps_per_it_kw", r.tps_per_it_kw, "tok/s per IT kW");
  add("tps_per_allin_mw", r.tps_per_allin_mw, "tok/s per all-in MW");
  add("all_in_computed", r.all_in_computed ? 1.0 : 0.0, "flag");
  // Where each XPU's all-in power goes at the point's activity (docs/power.md).
  if (auto pm = power::PowerModel::of(*r.spec.system, power::Facility::from(r.spec.facility))) {
    const auto share =
        pm->share_per_xpu(power::Operating::at({r.compute_activity, r.memory_activity}));
    add("power_xpu_w", share.xpu.value(), "W per XPU");
    add("power_tray_overhead_w", share.tray_overhead.value(), "W per XPU");
    add("power_switches_w", share.switches.value(), "W per XPU");
    add("power_hosts_w", share.hosts.value(), "W per XPU");
    add("power_conversion_loss_w", share.conversion_loss.value(), "W per XPU");
    add("power_facility_overhead_w", share.facility_overhead.value(), "W per XPU");
    add("power_all_in_w", share.all_in().value(), "W per XPU");
  }
  add("iteration_compute_s", r.iteration_compute_s, "s per iteration");
  add("iteration_memory_s", r.iteration_memory_s, "s per iteration");
  add("iteration_communication_s", r.iteration_communication_s, "s per iteration");
  add("iteration_overhead_s", r.iteration_overhead_s, "s per iteration");
  add("iterations", count(r.iterations), "iterations");
  add("plans", count(r.plans), "plans");
  add("preemptions", count(r.preemptions), "preemptions");
  return m;
}

std::optional<double> find_metric(const std::vector<Metric>& metrics, std::string_view name) {
  for (const auto& m : metrics)
    if (m.name == name) return m.value;
  return std::nullopt;
}

}  // namespace racktwin::db
