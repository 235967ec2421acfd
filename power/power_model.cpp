#include "power/power_model.hpp"

namespace racktwin::power {

Facility Facility::from(const FacilitySpec& f) {
  Facility out;
  out.pue = f.pue;
  return out;
}

std::expected<PowerModel, std::string> PowerModel::of(const System& s, Facility f) {
  auto x = XpuPower::of(s);
  if (!x) return std::unexpected(x.error());
  const auto& p = s.power;
  if (!p.compute_tray_overhead)
    return std::unexpected(s.id + ": power.compute_tray_overhead is not in the catalog");
  if (!p.host) return std::unexpected(s.id + ": power.host is not in the catalog");
  if (s.switches.per_rack > 0 && !p.switch_tray)
    return std::unexpected(s.id + ": power.switch_tray is not in the catalog");
  if (!(f.pue >= 1.0)) return std::unexpected("a PUE below 1 is not physical");
  if (!(f.conversion.efficiency() > 0.0 && f.conversion.efficiency() <= 1.0))
    return std::unexpected("conversion efficiencies must be in (0, 1]");
  return PowerModel(s, *x, f);
}

PowerSheet PowerModel::sheet(const PartCounts& n, const Operating& op) const {
  const auto& p = system_->power;
  const std::string xpu_name = op.activity ? "XPU at the operating activity" : "XPU at rated TDP";
  const Watts xpu_each = op.activity ? xpu_.at(*op.activity) : xpu_.tdp();
  const bool production = op.hosts_production && p.host_production.has_value();
  const Watts host_each = production ? *p.host_production : *p.host;
  const std::string host_name = system_->host.name + (production ? " (production)" : " (rated)");
  const std::string tray = system_->compute_tray.name + " overhead";

  PowerSheet out;
  auto add = [&](const std::string& part, int count, Watts each) {
    if (count > 0) out.lines.push_back({part, count, each});
  };
  add(xpu_name, n.xpus, xpu_each);
  add(tray, n.compute_trays, *p.compute_tray_overhead);
  add(system_->switches.name, n.switch_trays, p.switch_tray.value_or(Watts{}));
  add(host_name, n.hosts, host_each);
  for (const auto& l : out.lines) out.load += l.total();
  out.input = out.load / facility_.conversion.efficiency();
  out.conversion_loss = out.input - out.load;
  return out;
}

bool PowerModel::separate_host_rack() const {
  return system_->host.placement == HostPlacement::separate_rack;
}

PartCounts PowerModel::compute_rack_parts() const {
  const System& s = *system_;
  PartCounts n;
  n.xpus = s.xpus_per_rack();
  n.compute_trays = s.compute_trays_per_rack;
  n.switch_trays = s.switches.per_rack;
  if (!separate_host_rack()) n.hosts = s.compute_trays_per_rack * s.host_parts_per_compute_tray();
  return n;
}

PartCounts PowerModel::host_rack_parts() const {
  PartCounts n;
  if (separate_host_rack())
    n.hosts = system_->compute_trays_per_rack * system_->host_parts_per_compute_tray();
  return n;
}

Watts PowerModel::it_per_xpu(const Operating& op) const {
  const Watts input = sheet(compute_rack_parts(), op).input + sheet(host_rack_parts(), op).input;
  return input / static_cast<double>(system_->xpus_per_rack());
}

XpuPowerShare PowerModel::share_per_xpu(const Operating& op) const {
  const PartCounts r = compute_rack_parts(), h = host_rack_parts();
  const PartCounts all{r.xpus + h.xpus, r.compute_trays + h.compute_trays,
                       r.switch_trays + h.switch_trays, r.hosts + h.hosts};
  const double n = static_cast<double>(system_->xpus_per_rack());
  auto load = [&](PartCounts only) { return sheet(only, op).load / n; };
  const PowerSheet whole = sheet(all, op);
  XpuPowerShare s;
  s.xpu = load({all.xpus, 0, 0, 0});
  s.tray_overhead = load({0, all.compute_trays, 0, 0});
  s.switches = load({0, 0, all.switch_trays, 0});
  s.hosts = load({0, 0, 0, all.hosts});
  s.conversion_loss = whole.conversion_loss / n;
  s.facility_overhead = whole.input / n * (facility_.pue - 1.0);
  return s;
}

AllIn PowerModel::all_in() const {
  AllIn a;
  a.computed_per_xpu = provisioned_per_xpu() * facility_.pue;
  a.published = system_->power.all_in_per_xpu;
  a.computed = !a.published.has_value();
  a.per_xpu = a.published.value_or(a.computed_per_xpu);
  return a;
}

std::vector<BudgetCheck> PowerModel::budget_checks() const {
  const System& s = *system_;
  const auto& p = s.power;
  std::vector<BudgetCheck> out;
  const Watts rack_rated = sheet(compute_rack_parts(), Operating::rated()).input;
  Operating host_prod = Operating::rated();
  host_prod.hosts_production = true;
  const Watts hosts_rated = sheet(host_rack_parts(), Operating::rated()).input;
  const Watts hosts_prod = sheet(host_rack_parts(), host_prod).input;
  if (p.compute_rack)
    out.push_back({"compute rack", "XPUs at rated TDP, trays, switch trays, in-rack hosts",
                   rack_rated, *p.compute_rack});
  if (separate_host_rack() && p.host_rack_provisioned)
    out.push_back(
        {"host rack (provisioned)", "host trays rated", hosts_rated, *p.host_rack_provisioned});
  if (separate_host_rack() && p.host_rack_production && p.host_production)
    out.push_back({"host rack (production)", "host trays in production", hosts_prod,
                   *p.host_rack_production});
  if (separate_host_rack() && p.rack_pair)
    out.push_back({"rack pair", "compute rack rated + host rack in production",
                   rack_rated + hosts_prod, *p.rack_pair});
  if (p.server) {
    PartCounts one;
    one.xpus = s.compute_tray.xpus;
    one.compute_trays = 1;
    one.hosts = separate_host_rack() ? 0 : s.host_parts_per_compute_tray();
    out.push_back({"server", "XPUs at rated TDP, server overhead, host",
                   sheet(one, Operating::rated()).input, *p.server});
  }
  return out;
}

Normalised normalise(const PowerModel& m, TokensPerSecond per_xpu, Activity a) {
  Normalised n;
  n.per_rated_tdp = per_xpu / m.xpu().tdp();
  n.per_measured = per_xpu / m.xpu().at(a);
  n.per_it = per_xpu / m.it_per_xpu(Operating::at(a));
  const AllIn all_in = m.all_in();
  n.per_all_in = per_xpu / all_in.per_xpu;
  n.all_in_computed = all_in.computed;
  return n;
}

}  // namespace racktwin::power
