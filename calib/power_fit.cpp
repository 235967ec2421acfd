#include "calib/power_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "power/xpu_power.hpp"

namespace racktwin::calib {
namespace {

// A point's XPU power as a line in the busy share: P(b) = at0 + b x slope.
struct PowerLine {
  double at0 = 0, slope = 0;
  double at(double b) const { return at0 + b * slope; }
};

// The point's window activity as evaluate() takes it (sim/evaluate.cpp): rounding above 1 clamped.
power::Activity activity_of(const sim::PointResult& r) {
  return {std::min(1.0, r.compute_activity), std::min(1.0, r.memory_activity),
          std::min(1.0, r.link_activity), std::min(1.0, r.busy_activity)};
}

PowerLine line_of(const power::XpuPower& x, const sim::PointResult& r) {
  const power::PowerShares& s = x.shares();
  const power::XpuPower none(x.idle(), x.tdp(), {0.0, s.memory, s.link});
  const power::XpuPower all(x.idle(), x.tdp(), {1.0, s.memory, s.link});
  const power::Activity a = activity_of(r);
  const double p0 = none.at(a).value();
  return {p0, all.at(a).value() - p0};
}

std::string point_text(const sim::PointResult& r) {
  const sim::PointSpec& s = r.spec;
  std::string out = (s.model ? s.model->id : std::string("?")) + " " + s.workload_id + " " +
                    s.layout.label() + " " + sim::serving_mode(s).label();
  if (auto c = sim::clients_of(s.arrivals))
    out += " at " + std::to_string(*c) + (*c == 1 ? " client" : " clients");
  return out;
}

// The interval of b in [0, 1] where every line stays at or below `most`; empty when lo > hi.
std::pair<double, double> feasible(const std::vector<PowerLine>& lines, double most) {
  double lo = 0.0, hi = 1.0;
  for (const auto& l : lines) {
    if (l.slope > 0)
      hi = std::min(hi, (most - l.at0) / l.slope);
    else if (l.slope < 0)
      lo = std::max(lo, (most - l.at0) / l.slope);
    else if (l.at0 > most)
      return {1.0, 0.0};
  }
  return {lo, hi};
}

PowerFit fit_one(const std::string& id, const std::vector<const sim::PointResult*>& points) {
  const System& sys = *points.front()->spec.system;
  PowerFit f;
  f.system = id;
  f.measured_w = sys.chip->sustained_power->value();
  f.sweep_points = static_cast<int>(points.size());
  auto xpu = power::XpuPower::of(sys);
  if (!xpu) {
    f.error = xpu.error();
    return f;
  }
  std::vector<PowerLine> lines;
  for (const auto* r : points) lines.push_back(line_of(*xpu, *r));
  const auto [lo, hi] = feasible(lines, f.measured_w);
  auto highest = [&](double b) {
    std::size_t k = 0;
    for (std::size_t i = 1; i < lines.size(); ++i)
      if (lines[i].at(b) > lines[k].at(b)) k = i;
    return k;
  };
  if (lo > hi || hi < 0.0) {
    const std::size_t k = highest(std::clamp(lo, 0.0, 1.0));
    f.highest_w = lines[k].at(std::clamp(lo, 0.0, 1.0));
    f.highest_at = point_text(*points[k]);
    f.error =
        "at every busy share from 0 to 1 some sweep point draws more than the measured sustained "
        "power";
    return f;
  }
  // Rounded down to the 1e-6 the calibration file keeps, so the written share still holds.
  f.busy_share = std::max(lo, std::floor(hi * 1e6) / 1e6);
  const std::size_t k = highest(f.busy_share);
  f.highest_w = lines[k].at(f.busy_share);
  f.highest_at = point_text(*points[k]);
  if (hi >= 1.0)
    f.error =
        "even at a busy share of 1 no sweep point draws the measured sustained power: the "
        "simulated activities are too low to reproduce it";
  return f;
}

}  // namespace

std::vector<PowerFit> fit_power(const std::vector<sim::PointResult>& results) {
  std::map<std::string, std::vector<const sim::PointResult*>> by_system;
  for (const auto& r : results) {
    const System* s = r.spec.system;
    if (s == nullptr || s->chip == nullptr || !s->chip->sustained_power) continue;
    auto& points = by_system[s->id];
    if (r.error.empty()) points.push_back(&r);
  }
  std::vector<PowerFit> out;
  for (const auto& [id, points] : by_system) {
    if (!points.empty()) {
      out.push_back(fit_one(id, points));
      continue;
    }
    PowerFit none;
    none.system = id;
    for (const auto& r : results)
      if (r.spec.system != nullptr && r.spec.system->id == id)
        none.measured_w = r.spec.system->chip->sustained_power->value();
    none.error = "no sweep point of the system ran";
    out.push_back(std::move(none));
  }
  return out;
}

}  // namespace racktwin::calib
