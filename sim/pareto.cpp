#include <algorithm>

#include "sim/serving.hpp"

namespace racktwin::sim {

std::vector<CurvePoint> pareto_envelope(std::vector<CurvePoint> points) {
  // By decreasing interactivity (ties: higher value first); keep a point when its value beats every
  // point of higher interactivity.
  std::sort(points.begin(), points.end(), [](const CurvePoint& a, const CurvePoint& b) {
    if (a.interactivity != b.interactivity) return a.interactivity > b.interactivity;
    if (a.value != b.value) return a.value > b.value;
    return a.index < b.index;
  });
  std::vector<CurvePoint> env;
  double best = -1.0;
  for (const auto& p : points) {
    if (p.interactivity <= 0 || p.value <= best) continue;
    env.push_back(p);
    best = p.value;
  }
  std::reverse(env.begin(), env.end());
  return env;
}

std::optional<double> value_at(const std::vector<CurvePoint>& env, double x) {
  if (env.empty() || x < env.front().interactivity || x > env.back().interactivity)
    return std::nullopt;
  for (std::size_t i = 0; i + 1 < env.size(); ++i) {
    const auto& a = env[i];
    const auto& b = env[i + 1];
    if (x >= a.interactivity && x <= b.interactivity) {
      const double f = (x - a.interactivity) / (b.interactivity - a.interactivity);
      return a.value + f * (b.value - a.value);
    }
  }
  return env.back().value;  // x equals the last interactivity
}

}  // namespace racktwin::sim
