#include "plan/rollout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/enum_names.hpp"

namespace racktwin::plan {
namespace {

constexpr EnumWords<Binding, 3> kBindings{"power,supply,deployment"};
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSecondsPerYear = kHoursPerYear * 3600.0;
constexpr double kSecondsPerQuarter = kWeeksPerQuarter * 7 * 86400.0;

// The value of a step function of quarters: the latest key at or before q (0 before the first).
template <class V>
double step_value(const std::map<Quarter, V>& m, Quarter q) {
  auto it = m.upper_bound(q);
  if (it == m.begin()) return 0;
  --it;
  if constexpr (std::is_same_v<V, double>)
    return it->second;
  else
    return it->second.value();
}

bool in_window(const Generation& g, Quarter q) {
  return !(g.from && q < *g.from) && !(g.until && *g.until < q);
}

double deliveries(const Generation& g, Quarter q) {
  return in_window(g, q) ? step_value(g.supply, q) : 0.0;
}

// Units installed at one site of one generation in one quarter, with what they cost to buy.
struct Cohort {
  std::size_t site = 0, gen = 0;
  int quarter = 0;  // index from the plan's first quarter
  double units = 0;
  double unit_capex = 0, facility_capex = 0;  // $ spent on them
};

struct State {
  std::vector<double> ready;                    // by generation
  std::vector<std::vector<double>> units;       // [site][generation]
  std::vector<double> it_installed;             // by site
  std::vector<Cohort> cohorts;
  double capex_cumulative = 0;
};

// Units of g ready to install in quarter `qi`: those delivered dock_to_rack earlier.
void receive(const Plan& p, const std::vector<UnitModel>& units, int qi, State& st) {
  const double lag = p.dock_to_rack.value / kSecondsPerQuarter;
  const int whole = static_cast<int>(std::floor(lag));
  const double frac = lag - whole;
  const Quarter q = Quarter::of_index(p.first.index() + qi);
  for (std::size_t g = 0; g < units.size(); ++g) {
    const Generation& gen = units[g].generation;
    if (gen.unlimited_supply) {
      st.ready[g] = in_window(gen, q) ? kInf : 0.0;
      continue;
    }
    const Quarter a = Quarter::of_index(q.index() - whole);
    const Quarter b = Quarter::of_index(q.index() - whole - 1);
    st.ready[g] += deliveries(gen, a) * (1 - frac) + deliveries(gen, b) * frac;
  }
}

// The newest generation with units ready (else the newest in its window): the unit the quarter's
// capacities are counted in.
std::size_t reference_generation(const std::vector<UnitModel>& units, const State& st) {
  for (std::size_t g = units.size(); g-- > 0;)
    if (st.ready[g] >= 1) return g;
  return units.size() - 1;
}

void count_capacities(const Plan& p, const std::vector<UnitModel>& units, Quarter q,
                      const State& st, QuarterRow& row) {
  const UnitModel& ref = units[reference_generation(units, st)];
  for (std::size_t s = 0; s < p.sites.size(); ++s) {
    const PlanSite& site = p.sites[s];
    const double energised = step_value(site.ramp, q);
    row.energised_w += energised;
    row.room_units += std::max(0.0, energised / site.pue.value - st.it_installed[s]) /
                      ref.it_power.value();
    if (energised > 0) row.crew_units += site.commission_per_week * kWeeksPerQuarter / ref.racks;
  }
  for (double r : st.ready) row.ready_units += r;
  const double least = std::min({row.room_units, row.ready_units, row.crew_units});
  row.binding = least == row.room_units    ? Binding::power
                : least == row.ready_units ? Binding::supply
                                           : Binding::deployment;
}

// Installs site by site, newest generation first; returns the units added [site][generation].
std::vector<std::vector<double>> install(const Plan& p, const std::vector<UnitModel>& units,
                                         int qi, State& st, QuarterRow& row) {
  const Quarter q = Quarter::of_index(p.first.index() + qi);
  std::vector<std::vector<double>> added(p.sites.size(), std::vector<double>(units.size(), 0.0));
  for (std::size_t s = 0; s < p.sites.size(); ++s) {
    const PlanSite& site = p.sites[s];
    const double energised = step_value(site.ramp, q);
    double room = std::max(0.0, energised / site.pue.value - st.it_installed[s]);
    double crews = energised > 0 ? site.commission_per_week * kWeeksPerQuarter : 0.0;
    SiteQuarter sq{site.id, energised, site.pue.value, Binding::supply, {}};
    for (std::size_t g = units.size(); g-- > 0;) {
      const UnitModel& u = units[g];
      const double n = std::floor(
          std::min({st.ready[g], room / u.it_power.value(), crews / u.racks}) + 1e-9);
      if (n < 1) continue;
      st.ready[g] -= n;
      room -= n * u.it_power.value();
      crews -= n * u.racks;
      st.units[s][g] += n;
      st.it_installed[s] += n * u.it_power.value();
      added[s][g] = n;
      const double fac_w = n * u.it_power.value() * site.pue.value;
      st.cohorts.push_back({s, g, qi, n, u.capex_per_unit ? n * *u.capex_per_unit : 0.0,
                            u.capex_per_unit ? fac_w * p.costs.facility_capex.value : 0.0});
    }
    double smallest_unit = kInf, fewest_racks = kInf;
    for (std::size_t g = 0; g < units.size(); ++g)
      if (st.ready[g] >= 1) {
        smallest_unit = std::min(smallest_unit, units[g].it_power.value());
        fewest_racks = std::min<double>(fewest_racks, units[g].racks);
      }
    sq.binding = crews < fewest_racks   ? Binding::deployment
                 : room < smallest_unit ? Binding::power
                                        : Binding::supply;
    row.sites.push_back(std::move(sq));
  }
  return added;
}

// What one generation at one site costs per year now: capital charges of its young cohorts,
// maintenance, electricity; or its owned all-in cost per XPU-hour.
struct YearCost {
  double capital = 0, maintenance = 0, electricity = 0, owned = 0;
  double total() const { return capital + maintenance + electricity + owned; }
  double running() const { return maintenance + electricity + owned; }
};

YearCost cost_per_year(const Plan& p, const UnitModel& u, std::size_t s, std::size_t g, int qi,
                       const State& st) {
  YearCost y;
  const double units = st.units[s][g];
  if (u.cost_per_xpu_s) {
    y.owned = units * u.xpus * *u.cost_per_xpu_s * kSecondsPerYear;
    return y;
  }
  const PlanCosts& c = p.costs;
  y.electricity = units * u.operating_it_power.value() * p.sites[s].pue.value * kSecondsPerYear *
                  c.electricity_price.value;
  for (const Cohort& k : st.cohorts) {
    if (k.site != s || k.gen != g) continue;
    const double age_years = (qi - k.quarter) / 4.0;
    if (age_years < c.depreciation_years.value)
      y.capital += annuity(k.unit_capex, c.financing_rate.value, c.depreciation_years.value);
    if (age_years < c.facility_years.value)
      y.capital += annuity(k.facility_capex, c.financing_rate.value, c.facility_years.value);
    y.maintenance += c.maintenance.value * k.unit_capex;
  }
  return y;
}

Installed installed_of(const Plan& p, const UnitModel& u, std::size_t s, std::size_t g, int qi,
                       const State& st, double added, const YearCost& cost) {
  Installed in;
  in.units = st.units[s][g];
  in.added = added;
  in.racks = in.units * u.racks;
  in.xpus = in.units * u.xpus;
  if (u.domain_xpus > 0) {
    in.domains_whole = std::floor(in.xpus / u.domain_xpus);
    in.domains_partial = std::fmod(in.xpus, u.domain_xpus) > 0 ? 1 : 0;
  }
  in.it_w = in.units * u.it_power.value();
  in.facility_w = in.it_w * p.sites[s].pue.value;
  in.tps = in.xpus * u.tps_per_xpu;
  for (const Cohort& k : st.cohorts)
    if (k.site == s && k.gen == g && k.quarter == qi) in.capex += k.unit_capex + k.facility_capex;
  in.tco_per_year = cost.total();
  return in;
}

void add_to(Installed& sum, const Installed& x) {
  sum.units += x.units;
  sum.added += x.added;
  sum.racks += x.racks;
  sum.xpus += x.xpus;
  sum.domains_whole += x.domains_whole;
  sum.domains_partial += x.domains_partial;
  sum.it_w += x.it_w;
  sum.facility_w += x.facility_w;
  sum.tps += x.tps;
  sum.capex += x.capex;
  sum.tco_per_year += x.tco_per_year;
}

// Prices that recover the TCO from the tokens, blended and split by the output price ratio.
void price(const Plan& p, const std::vector<UnitModel>& units, QuarterRow& row) {
  const double tokens_per_year = row.total.tps * p.costs.utilisation.value * kSecondsPerYear;
  if (row.total.facility_w > 0) row.tps_per_facility_mw = row.total.tps / row.total.facility_w * 1e6;
  if (tokens_per_year <= 0) return;
  double out_tps = 0;
  for (std::size_t g = 0; g < units.size(); ++g)
    out_tps += row.generations[g].installed.tps * units[g].output_share;
  const double out_share = out_tps / row.total.tps;
  const double k = p.costs.output_price_ratio.value;
  row.usd_per_mtok = row.total.tco_per_year / tokens_per_year * 1e6;
  row.usd_per_mtok_input = row.usd_per_mtok / ((1 - out_share) + k * out_share);
  row.usd_per_mtok_output = k * row.usd_per_mtok_input;
  row.tokens_per_usd = tokens_per_year / row.total.tco_per_year;
}

QuarterRow plan_quarter(const Plan& p, const std::vector<UnitModel>& units, int qi, State& st) {
  QuarterRow row;
  row.quarter = Quarter::of_index(p.first.index() + qi);
  receive(p, units, qi, st);
  count_capacities(p, units, row.quarter, st, row);
  const auto added = install(p, units, qi, st, row);
  for (std::size_t g = 0; g < units.size(); ++g) {
    row.generations.push_back({units[g].generation.id, {}});
    for (auto& site : row.sites) site.generations.push_back({units[g].generation.id, {}});
  }
  double running = 0;
  for (std::size_t s = 0; s < p.sites.size(); ++s)
    for (std::size_t g = 0; g < units.size(); ++g) {
      const YearCost cost = cost_per_year(p, units[g], s, g, qi, st);
      const Installed in = installed_of(p, units[g], s, g, qi, st, added[s][g], cost);
      add_to(row.sites[s].installed, in);
      row.sites[s].generations[g].installed = in;
      add_to(row.generations[g].installed, in);
      add_to(row.total, in);
      running += cost.running();
    }
  st.capex_cumulative += row.total.capex;
  row.capex_cumulative = st.capex_cumulative;
  row.opex = running / 4.0;
  price(p, units, row);
  return row;
}

}  // namespace

std::string to_string(Binding b) {
  return std::string(kBindings.name(b));
}

double annuity(double amount, double rate, double years) {
  if (amount == 0) return 0;
  if (rate <= 0) return amount / years;
  return amount * rate / (1 - std::pow(1 + rate, -years));
}

double usd_per_mtok(double usd_per_xpu_hour, double tps_per_xpu) {
  return usd_per_xpu_hour / (tps_per_xpu * 3600.0) * 1e6;
}

Rollout roll_out(const Plan& p, const std::vector<UnitModel>& units, std::string fleet) {
  Rollout r;
  r.fleet = std::move(fleet);
  if (units.empty()) return r;
  State st;
  st.ready.assign(units.size(), 0.0);
  st.units.assign(p.sites.size(), std::vector<double>(units.size(), 0.0));
  st.it_installed.assign(p.sites.size(), 0.0);
  const int n = p.last.index() - p.first.index() + 1;
  for (int qi = 0; qi < n; ++qi) r.quarters.push_back(plan_quarter(p, units, qi, st));
  return r;
}

}  // namespace racktwin::plan
