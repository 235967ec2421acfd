#include "sim/evaluate.hpp"

#include <algorithm>

namespace racktwin::sim {

const std::expected<power::PowerModel, std::string>& PowerModels::of(const PointSpec& spec) {
  const auto key = std::tuple{spec.system->id, spec.facility.pue};
  auto it = models_.find(key);
  if (it == models_.end())
    it =
        models_
            .emplace(key, power::PowerModel::of(*spec.system, power::Facility::from(spec.facility)))
            .first;
  return it->second;
}

namespace {

// Activities accumulated from floating-point sums can land a rounding step above 1.
power::Activity clamped(double compute, double memory, double link, double busy) {
  return {std::min(1.0, compute), std::min(1.0, memory), std::min(1.0, link), std::min(1.0, busy)};
}

}  // namespace

void evaluate(PointResult& r, const power::PowerModel& pm) {
  for (auto& s : r.timeseries)
    s.xpu_power_w =
        pm.xpu()
            .at(clamped(s.compute_activity, s.memory_activity, s.link_activity, s.busy_activity))
            .value();
  const power::Activity act =
      clamped(r.compute_activity, r.memory_activity, r.link_activity, r.busy_activity);
  r.xpu_power_w = pm.xpu().at(act).value();
  r.energy_per_token_j = r.total_tps_per_xpu > 0 ? r.xpu_power_w / r.total_tps_per_xpu : 0.0;
  const auto norms = power::normalise(pm, TokensPerSecond(r.total_tps_per_xpu), act);
  r.tps_per_rated_kw = power::per_kw(norms.per_rated_tdp);
  r.tps_per_measured_kw = power::per_kw(norms.per_measured);
  r.tps_per_it_kw = power::per_kw(norms.per_it);
  r.tps_per_allin_provisioned_mw = power::per_mw(norms.per_all_in);
  r.all_in_computed = norms.all_in_computed;
  const auto share = pm.share_per_xpu(power::Operating::at(act));
  r.power_xpu_w = share.xpu.value();
  r.power_tray_overhead_w = share.tray_overhead.value();
  r.power_switches_w = share.switches.value();
  r.power_hosts_w = share.hosts.value();
  r.power_conversion_loss_w = share.conversion_loss.value();
  r.power_facility_overhead_w = share.facility_overhead.value();
  r.power_all_in_operating_w = share.all_in().value();
  r.tps_per_allin_operating_mw =
      r.power_all_in_operating_w > 0 ? r.total_tps_per_xpu / r.power_all_in_operating_w * 1e6 : 0;
  r.energy_usd_per_mtok = r.total_tps_per_xpu > 0
                              ? r.power_all_in_operating_w / r.total_tps_per_xpu *
                                    r.spec.facility.electricity_price.value() * 1e6
                              : 0;
}

}  // namespace racktwin::sim
