#include "plan/uncertainty.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "sim/serving.hpp"

namespace racktwin::plan {
namespace {

void scale_supply(Generation& g, double k) {
  for (auto& [q, n] : g.supply) n *= k;
}

// The fleet's generations carry the plan's figures; a unit's throughput scales with its
// perf_per_watt and with the throughput scale.
bool set_generation_figure(const std::string& name, double value, Plan& p,
                           std::vector<UnitModel>& units) {
  for (std::size_t g = 0; g < units.size(); ++g) {
    UnitModel& u = units[g];
    const std::string prefix = u.generation.id + ".";
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string field = name.substr(prefix.size());
    auto plan_gen = std::find_if(p.generations.begin(), p.generations.end(),
                                 [&](const Generation& x) { return x.id == u.generation.id; });
    if (field == "perf_per_watt") {
      const double base = u.generation.perf_per_watt ? u.generation.perf_per_watt->value : 1.0;
      u.tps_per_xpu *= value / base;
      u.generation.perf_per_watt = Figure{value, {}};
    } else if (field == "throughput") {
      u.tps_per_xpu *= value;
    } else if (field == "supply") {
      scale_supply(u.generation, value);
      if (plan_gen != p.generations.end()) scale_supply(*plan_gen, value);
    } else if (field == "capex_per_unit") {
      u.capex_per_unit = value;
    } else if (field == "cost_per_xpu_hour") {
      u.cost_per_xpu_s = value;
    }
    return true;
  }
  return false;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(std::floor(at));
  const std::size_t j = std::min(i + 1, v.size() - 1);
  return v[i] + (v[j] - v[i]) * (at - static_cast<double>(i));
}

Band band_of(const std::vector<double>& v) {
  return {percentile(v, 0.1), percentile(v, 0.5), percentile(v, 0.9)};
}

}  // namespace

void set_figure(const std::string& name, double value, Plan& p, std::vector<UnitModel>& units) {
  if (set_generation_figure(name, value, p, units)) return;
  if (Figure* f = plan_figure(p, name)) f->value = value;
}

double triangular(double low, double mode, double high, double u) {
  if (!(high > low)) return mode;
  const double f = (mode - low) / (high - low);
  if (u < f) return low + std::sqrt(u * (high - low) * (mode - low));
  return high - std::sqrt((1 - u) * (high - low) * (high - mode));
}

Sensitivity sensitivity(const Plan& p, const std::vector<UnitModel>& units) {
  Sensitivity s;
  const auto final_of = [&](const Plan& pp, const std::vector<UnitModel>& uu) {
    const Rollout r = roll_out(pp, uu, "plan");
    return r.quarters.empty() ? QuarterRow{} : r.quarters.back();
  };
  const QuarterRow base = final_of(p, units);
  s.usd_per_mtok = base.usd_per_mtok;
  s.tps = base.total.tps;
  for (const auto& f : p.uncertainty.figures) {
    Swing w{f.name, f.low, f.high};
    for (const bool high : {false, true}) {
      Plan pp = p;
      auto uu = units;
      set_figure(f.name, high ? f.high : f.low, pp, uu);
      const QuarterRow q = final_of(pp, uu);
      (high ? w.usd_per_mtok_high : w.usd_per_mtok_low) = q.usd_per_mtok;
      (high ? w.tps_high : w.tps_low) = q.total.tps;
    }
    s.by_cost.push_back(w);
  }
  s.by_tokens = s.by_cost;
  std::stable_sort(s.by_cost.begin(), s.by_cost.end(), [](const Swing& a, const Swing& b) {
    return std::fabs(a.usd_per_mtok_high - a.usd_per_mtok_low) >
           std::fabs(b.usd_per_mtok_high - b.usd_per_mtok_low);
  });
  std::stable_sort(s.by_tokens.begin(), s.by_tokens.end(), [](const Swing& a, const Swing& b) {
    return std::fabs(a.tps_high - a.tps_low) > std::fabs(b.tps_high - b.tps_low);
  });
  return s;
}

MonteCarlo monte_carlo(const Plan& p, const std::vector<UnitModel>& units) {
  MonteCarlo mc;
  if (p.uncertainty.figures.empty()) return mc;
  mc.draws = p.uncertainty.draws;
  const int n = p.last.index() - p.first.index() + 1;
  std::vector<std::vector<double>> tps(n), usd(n);
  for (int d = 0; d < mc.draws; ++d) {
    Plan pp = p;
    auto uu = units;
    for (const auto& f : p.uncertainty.figures) {
      std::mt19937_64 rng(sim::stream_seed(p.uncertainty.seed, "draw" + std::to_string(d) + "/" + f.name));
      const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
      const double mode = find_figure(p, f.name)->base.value_or(f.low);
      set_figure(f.name, triangular(f.low, mode, f.high, u), pp, uu);
    }
    const Rollout r = roll_out(pp, uu, "plan");
    for (int q = 0; q < n; ++q) {
      tps[q].push_back(r.quarters[q].total.tps);
      usd[q].push_back(r.quarters[q].usd_per_mtok);
    }
  }
  for (int q = 0; q < n; ++q)
    mc.quarters.push_back({Quarter::of_index(p.first.index() + q), band_of(tps[q]), band_of(usd[q])});
  return mc;
}

}  // namespace racktwin::plan
