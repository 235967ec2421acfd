#include "sim/result_schema.hpp"

#include <type_traits>

namespace racktwin::sim {
namespace {

template <auto M>
double get_member(const PointResult& r) {
  return static_cast<double>(r.*M);
}
template <auto M>
void set_member(PointResult& r, double v) {
  using T = std::remove_cvref_t<decltype(r.*M)>;
  if constexpr (std::is_same_v<T, bool>)
    r.*M = v != 0;
  else
    r.*M = static_cast<T>(v);
}
template <auto S, auto M>
double get_stat(const PointResult& r) {
  return (r.*S).*M;
}
template <auto S, auto M>
void set_stat(PointResult& r, double v) {
  (r.*S).*M = v;
}

#define RT_FIELD(member, unit)                                                              \
  ResultField {                                                                             \
#member, unit, &get_member < &PointResult::member>, &set_member < &PointResult::member> \
  }
#define RT_STAT(dist, stat, unit)                                              \
  ResultField {                                                                \
#dist "_" #stat "_s", unit, &get_stat < &PointResult::dist, &Stats::stat>, \
        &set_stat < &PointResult::dist, &Stats::stat>                          \
  }
#define RT_STATS(dist)                                                           \
  RT_STAT(dist, mean, "s"), RT_STAT(dist, median, "s"), RT_STAT(dist, p90, "s"), \
      RT_STAT(dist, p99, "s"), RT_STAT(dist, min, "s"), RT_STAT(dist, max, "s")

// The workload's fixed lengths, for exports that compare runs of different workloads.
double fixed_isl(const PointResult& r) {
  const bool fixed = std::holds_alternative<ClosedLoop>(r.spec.arrivals) ||
                     std::holds_alternative<OpenLoop>(r.spec.arrivals);
  return fixed ? r.spec.workload.isl : 0;
}
double fixed_osl(const PointResult& r) {
  const bool fixed = std::holds_alternative<ClosedLoop>(r.spec.arrivals) ||
                     std::holds_alternative<OpenLoop>(r.spec.arrivals);
  return fixed ? r.spec.workload.osl : 0;
}

}  // namespace

const std::vector<ResultField>& result_fields() {
  static const std::vector<ResultField> fields{
      {"workload_isl_tokens", "tokens (0: not fixed)", &fixed_isl, nullptr},
      {"workload_osl_tokens", "tokens (0: not fixed)", &fixed_osl, nullptr},
      RT_FIELD(xpus, "XPUs"),
      RT_FIELD(requests, "requests"),
      RT_FIELD(completed, "requests"),
      RT_FIELD(duration_s, "s"),
      RT_FIELD(input_tokens, "tokens"),
      RT_FIELD(output_tokens, "tokens"),
      RT_FIELD(total_tps_per_xpu, "tok/s/XPU"),
      RT_FIELD(output_tps_per_xpu, "tok/s/XPU"),
      RT_FIELD(input_tps_per_xpu, "tok/s/XPU"),
      {"interactivity_tok_s_user", "tok/s/user", &get_member<&PointResult::interactivity>,
       &set_member<&PointResult::interactivity>},
      {"e2e_normalised_interactivity", "1/s per output token",
       &get_member<&PointResult::e2e_norm_interactivity>,
       &set_member<&PointResult::e2e_norm_interactivity>},
      RT_STATS(ttft),
      RT_STATS(tpot),
      RT_STATS(e2e),
      RT_FIELD(prefix_hit_rate, "fraction"),
      RT_FIELD(offload_hit_rate, "fraction"),
      RT_FIELD(offloaded_bytes, "bytes"),
      RT_FIELD(host_tier_blocks, "blocks per replica"),
      RT_FIELD(domains, "scale-up domains"),
      RT_FIELD(kv_transfer_bytes, "bytes per request"),
      RT_FIELD(kv_transfer_s, "s per request"),
      RT_FIELD(kv_prompts_per_transfer, "prompts"),
      RT_FIELD(retried_requests, "requests"),
      RT_FIELD(replica_down_s, "replica-seconds"),
      RT_FIELD(recovery_s, "s per failure"),
      RT_FIELD(mean_concurrency, "requests"),
      RT_FIELD(queue_growth, "fraction of arrivals"),
      RT_FIELD(queue_rise, "requests"),
      RT_FIELD(queue_scatter, "requests"),
      RT_FIELD(overloaded, "flag"),
      RT_FIELD(kv_capacity_tokens, "tokens per replica"),
      {"max_kv_used_tokens", "tokens per replica", &get_member<&PointResult::max_kv_used>,
       &set_member<&PointResult::max_kv_used>},
      RT_FIELD(compute_activity, "fraction"),
      RT_FIELD(memory_activity, "fraction"),
      RT_FIELD(link_activity, "fraction"),
      RT_FIELD(busy_activity, "fraction"),
      RT_FIELD(xpu_power_w, "W per XPU"),
      RT_FIELD(energy_per_token_j, "J/token"),
      RT_FIELD(tps_per_rated_kw, "tok/s per rated kW"),
      RT_FIELD(tps_per_measured_kw, "tok/s per measured kW"),
      RT_FIELD(tps_per_it_kw, "tok/s per IT kW"),
      RT_FIELD(tps_per_allin_provisioned_mw, "tok/s per provisioned all-in MW"),
      RT_FIELD(tps_per_allin_operating_mw, "tok/s per all-in MW drawn"),
      RT_FIELD(all_in_computed, "flag"),
      RT_FIELD(power_xpu_w, "W per XPU"),
      RT_FIELD(power_tray_overhead_w, "W per XPU"),
      RT_FIELD(power_switches_w, "W per XPU"),
      RT_FIELD(power_hosts_w, "W per XPU"),
      RT_FIELD(power_conversion_loss_w, "W per XPU"),
      RT_FIELD(power_facility_overhead_w, "W per XPU"),
      RT_FIELD(power_all_in_operating_w, "W per XPU"),
      RT_FIELD(energy_usd_per_mtok, "$ per million tokens"),
      RT_FIELD(iteration_compute_s, "s per iteration"),
      RT_FIELD(iteration_memory_s, "s per iteration"),
      RT_FIELD(iteration_communication_s, "s per iteration"),
      RT_FIELD(iteration_overhead_s, "s per iteration"),
      RT_FIELD(iteration_roofline_s, "s per iteration"),
      {"roofline_ratio", "iteration time / roofline (>= 1; 0: no iteration)",
       [](const PointResult& r) { return r.roofline_ratio(); }, nullptr},
      RT_FIELD(iterations, "iterations"),
      RT_FIELD(plans, "plans"),
      RT_FIELD(preemptions, "preemptions"),
  };
  return fields;
}

const ResultField* find_result_field(std::string_view name) {
  for (const auto& f : result_fields())
    if (f.name == name) return &f;
  return nullptr;
}

const std::vector<DistributionField>& distribution_fields() {
  static const std::vector<DistributionField> d{
      {"ttft_s", &PointResult::ttft}, {"tpot_s", &PointResult::tpot}, {"e2e_s", &PointResult::e2e}};
  return d;
}

const std::vector<SeriesField>& series_fields() {
  using S = PointResult::Second;
  static const std::vector<SeriesField> s{
      {"output_tokens", "tokens", &S::output_tokens},
      {"prefill_tokens", "tokens", &S::prefill_tokens},
      {"completed", "requests", &S::completed},
      {"xpu_power_w", "W per XPU", &S::xpu_power_w},
  };
  return s;
}

}  // namespace racktwin::sim
