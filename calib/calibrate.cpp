#include "calib/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace racktwin::calib {

const std::vector<ParamRule>& param_rules() {
  // Bounds are what a real serving stack can plausibly reach; sigma is the prior's width in
  // ln(theta + offset): 0.3 is a factor of about 1.35, 1.0 a factor of e.
  static const std::vector<ParamRule> rules{
      {"mfu", 0.10, 0.95, 0.4, 0.0},
      {"mbu", 0.30, 0.95, 0.3, 0.0},
      {"comm_eff", 0.10, 0.95, 0.4, 0.0},
      {"alpha", 0.1e-6, 50e-6, 1.0, 0.0},
      {"overlap", 0.0, 0.90, 1.0, 0.05},
      {"layer_overhead", 0.2e-6, 50e-6, 1.0, 0.0},
      {"step_overhead", 10e-6, 5e-3, 1.0, 0.0},
      {"moe_imbalance", 1.0, 3.0, 0.2, 0.0},
      // The prior is 0: the offset of 20 ms makes 0 representable and a few hundred ms about two
      // sigma away.
      {"request_latency", 0.0, 2.0, 1.5, 0.02},
  };
  return rules;
}

namespace {

const ParamRule* rule_of(const std::string& name) {
  for (const auto& r : param_rules())
    if (r.name == name) return &r;
  return nullptr;
}

// One system's fit in progress.
struct State {
  std::string id;
  std::string prior_id;
  perf::Efficiency prior;
  std::vector<const ParamRule*> rules;
  std::vector<std::size_t> points;  // indices into the planned points
  std::vector<double> x0, x, lo, hi;
  std::vector<double> f;               // residuals at x: points, then priors
  std::vector<std::vector<double>> J;  // d f / d x, row per residual
  double cost = 0, cost_prior = 0;
  double lambda = 1e-2;
  bool done = false;
  bool refresh = false;  // the next step recomputes the Jacobian by finite differences
  int since_fd = 0;      // accepted steps since the last finite-difference Jacobian
  int rejects = 0;       // rejected steps in a row
  int iterations = 0;
  std::vector<std::size_t> cut;  // plan spec indices simulated while fitting
};

double to_x(const ParamRule& r, double theta) {
  return std::log(theta + r.offset);
}
double to_theta(const ParamRule& r, double x) {
  return std::clamp(std::exp(x) - r.offset, r.lo, r.hi);
}

perf::Efficiency efficiency_at(const State& s, const std::vector<double>& x) {
  perf::Efficiency e = s.prior;
  for (std::size_t k = 0; k < s.rules.size(); ++k)
    perf::set_efficiency_parameter(e, s.rules[k]->name, to_theta(*s.rules[k], x[k]));
  return e;
}

double cost_of(const std::vector<double>& f) {
  double c = 0;
  for (double v : f) c += v * v;
  return c;
}

// Solves A d = b (k x k, k small) by Gaussian elimination with partial pivoting.
std::vector<double> solve(std::vector<std::vector<double>> a, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
    std::swap(a[c], a[piv]);
    std::swap(b[c], b[piv]);
    if (std::fabs(a[c][c]) < 1e-300) return std::vector<double>(n, 0.0);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> d(n, 0.0);
  for (std::size_t c = n; c-- > 0;) {
    double s = b[c];
    for (std::size_t k = c + 1; k < n; ++k) s -= a[c][k] * d[k];
    d[c] = s / a[c][c];
  }
  return d;
}

// The score a sweep point gets for a peak or minimum metric (higher is better); nullopt when the
// point does not count.
std::optional<double> score(Metric m, const sim::PointResult& r) {
  if (!r.error.empty()) return std::nullopt;
  switch (m) {
    case Metric::peak_mixed_tps_per_kw_rated:
      return r.tps_per_rated_kw;
    case Metric::peak_total_tps_per_xpu:
      return r.total_tps_per_xpu;
    case Metric::min_e2e_latency_s:
      return -r.e2e.median;
    case Metric::min_tbt_ms:
    case Metric::max_interactivity_tok_s_user:
      if (r.tpot.median <= 0) return std::nullopt;
      return -r.tpot.median;
    default:
      return std::nullopt;
  }
}

sim::CurveValue curve_of(Metric m) {
  return m == Metric::output_tps_per_xpu_at       ? sim::CurveValue::output_tps_per_xpu
         : m == Metric::total_tps_per_allin_mw_at ? sim::CurveValue::total_tps_per_allin_mw
                                                  : sim::CurveValue::total_tps_per_xpu;
}

std::string layout_mode(const sim::PointSpec& s) {
  return s.layout.label() + " " + ServingMode{s.prefill_replicas, s.replicas}.label();
}

// The sweep points that decide one reference point under the results: for a peak or minimum, the
// `layouts` best (layout, serving mode) pairs and the best of each mode, each at its best
// concurrency and the two next to it; for a value at an
// interactivity, the envelope points around it with their neighbouring concurrencies.
void choose_cut(const ReferencePoint& p, const PredictionPlan::Group& g,
                const std::vector<sim::PointResult>& results, int layouts,
                std::set<std::size_t>& cut) {
  // The group's points of one layout and serving mode ("tp8 1p1d") within a factor of two of a
  // concurrency.
  auto add_near = [&](const std::string& label, int c) {
    for (std::size_t i = g.begin; i < g.end; ++i) {
      const auto& s = results[i].spec;
      if (layout_mode(s) == label && s.concurrency * 2 >= c && s.concurrency <= 2 * c)
        cut.insert(i);
    }
  };
  if (metric_needs_at(p.metric)) {
    const std::vector<sim::PointResult> group(
        results.begin() + static_cast<std::ptrdiff_t>(g.begin),
        results.begin() + static_cast<std::ptrdiff_t>(g.end));
    const auto envs = sim::envelopes(group, curve_of(p.metric));
    if (envs.empty()) return;
    const auto& env = envs.begin()->second;
    std::size_t j = 0;
    while (j < env.size() && env[j].interactivity < *p.at) ++j;
    const std::size_t from = j >= 2 ? j - 2 : 0, to = std::min(env.size(), j + 2);
    for (std::size_t k = from; k < to; ++k) {
      const auto& s = group[env[k].index].spec;
      add_near(layout_mode(s), s.concurrency);
    }
    return;
  }
  std::map<std::string, std::pair<double, int>> best;  // layout -> (score, concurrency)
  for (std::size_t i = g.begin; i < g.end; ++i) {
    auto v = score(p.metric, results[i]);
    if (!v) continue;
    const std::string label = layout_mode(results[i].spec);
    auto it = best.find(label);
    if (it == best.end() || *v > it->second.first) best[label] = {*v, results[i].spec.concurrency};
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> order(best.begin(), best.end());
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  // The best few, and the best of each serving mode (so that a mode overtaking another as the
  // parameters move is in the cut).
  std::set<std::string> modes_seen;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::string mode = order[k].first.substr(order[k].first.find(' ') + 1);
    if (k < static_cast<std::size_t>(layouts) || modes_seen.insert(mode).second)
      add_near(order[k].first, order[k].second.second);
    modes_seen.insert(mode);
  }
}

}  // namespace

perf::Efficiency pool_family(const perf::Efficiency& prior, const std::vector<SystemFit>& members) {
  perf::Efficiency out = prior;
  for (const auto& r : param_rules()) {
    double sum = 0;
    int n = 0;
    for (const auto& m : members) {
      if (std::find(m.params.begin(), m.params.end(), r.name) == m.params.end()) continue;
      sum += to_x(r, *perf::efficiency_parameter(m.fitted, r.name));
      n += 1;
    }
    if (n > 0) perf::set_efficiency_parameter(out, r.name, to_theta(r, sum / n));
  }
  return out;
}

std::expected<FitReport, std::string> calibrate(const Catalog& cat,
                                                const std::vector<ReferencePoint>& all_points,
                                                const FitOptions& options) {
  for (const auto& name : options.params)
    if (rule_of(name) == nullptr)
      return std::unexpected("unknown efficiency parameter '" + name + "'" +
                             did_you_mean(name, perf::efficiency_parameter_names()));
  // The points of the systems to fit.
  std::vector<ReferencePoint> points;
  std::vector<std::size_t> input_index;
  for (std::size_t i = 0; i < all_points.size(); ++i) {
    const auto& p = all_points[i];
    if (!options.systems.empty() && std::find(options.systems.begin(), options.systems.end(),
                                              p.system) == options.systems.end())
      continue;
    points.push_back(p);
    input_index.push_back(i);
  }
  for (const auto& s : options.systems)
    if (std::none_of(points.begin(), points.end(),
                     [&](const ReferencePoint& p) { return p.system == s; }))
      return std::unexpected("system '" + s + "' has no point in the file");
  if (points.empty()) return std::unexpected(std::string("no point to fit"));

  // Systems, in the order they first appear.
  std::vector<State> states;
  std::map<std::string, std::size_t> state_of;
  for (std::size_t i = 0; i < points.size(); ++i) {
    auto [it, inserted] = state_of.emplace(points[i].system, states.size());
    if (inserted) {
      State s;
      s.id = points[i].system;
      const EfficiencyPrior* prior = cat.efficiency_prior_for(s.id);
      if (prior == nullptr)
        return std::unexpected("no efficiency prior for " + s.id +
                               " and no 'default' prior in the catalog");
      s.prior_id = prior->id;
      s.prior = prior->values;
      for (const auto& name : options.params) {
        const ParamRule* r = rule_of(name);
        s.rules.push_back(r);
        const double theta = std::clamp(*perf::efficiency_parameter(s.prior, name), r->lo, r->hi);
        s.x0.push_back(to_x(*r, theta));
        s.lo.push_back(to_x(*r, r->lo));
        s.hi.push_back(to_x(*r, r->hi));
      }
      s.x = s.x0;
      states.push_back(std::move(s));
    }
    states[it->second].points.push_back(i);
  }

  PredictOptions po = options.predict;
  po.efficiency = [&](const System& sys) -> std::optional<perf::Efficiency> {
    auto it = state_of.find(sys.id);
    if (it == state_of.end()) return std::nullopt;
    return states[it->second].prior;
  };
  const PredictionPlan plan = plan_predictions(cat, points, po);
  for (std::size_t i = 0; i < points.size(); ++i)
    if (plan.group_of[i] < 0)
      return std::unexpected("point '" + points[i].id + "' cannot be predicted: " + plan.errors[i]);

  FitReport report;
  auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };

  // Residuals of one system at x, from the results of its cut.
  auto residuals = [&](const State& s, const std::vector<double>& x,
                       const std::vector<sim::PointResult>& results) {
    const SweepTables tables(results);
    std::vector<double> f;
    for (std::size_t i : s.points) {
      const auto& g = plan.groups[static_cast<std::size_t>(plan.group_of[i])];
      auto v = metric_value(points[i], g.workload_id, tables);
      // A point the candidate cannot predict (a curve that no longer reaches `at`) weighs as a
      // factor-of-four miss.
      const double r = v && *v > 0 ? std::log(*v / points[i].value) : std::log(4.0);
      f.push_back(r / options.data_sigma);
    }
    for (std::size_t k = 0; k < x.size(); ++k) f.push_back((x[k] - s.x0[k]) / s.rules[k]->sigma);
    return f;
  };

  // Simulates each (system, x) candidate on the system's cut, in one batch, and returns the
  // residuals of each.
  struct Candidate {
    std::size_t state;
    std::vector<double> x;
  };
  auto evaluate = [&](const std::vector<Candidate>& cands)
      -> std::expected<std::vector<std::vector<double>>, std::string> {
    std::vector<sim::PointSpec> batch;
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    for (const auto& c : cands) {
      const State& s = states[c.state];
      const perf::Efficiency e = efficiency_at(s, c.x);
      const std::size_t begin = batch.size();
      for (std::size_t i : s.cut) {
        batch.push_back(plan.specs[i]);
        batch.back().efficiency = e;
      }
      ranges.emplace_back(begin, batch.size());
    }
    auto results = options.simulate(batch);
    if (!results) return std::unexpected(results.error());
    report.simulated_points += static_cast<int>(batch.size());
    std::vector<std::vector<double>> out;
    for (std::size_t k = 0; k < cands.size(); ++k) {
      const std::vector<sim::PointResult> part(
          results->begin() + static_cast<std::ptrdiff_t>(ranges[k].first),
          results->begin() + static_cast<std::ptrdiff_t>(ranges[k].second));
      out.push_back(residuals(states[cands[k].state], cands[k].x, part));
    }
    return out;
  };

  // Finite differences: the candidates x and x plus a step along every parameter (minus at the
  // upper bound), appended to `cands`; the steps are returned.
  auto add_fd = [&](std::size_t si, const std::vector<double>& x, std::vector<Candidate>& cands) {
    const State& s = states[si];
    std::vector<double> steps;
    cands.push_back({si, x});
    for (std::size_t k = 0; k < x.size(); ++k) {
      std::vector<double> xp = x;
      const double h = xp[k] + options.step <= s.hi[k] ? options.step : -options.step;
      xp[k] += h;
      cands.push_back({si, xp});
      steps.push_back(h);
    }
    return steps;
  };
  // Residuals and Jacobian from the evaluations of add_fd's candidates starting at `first`.
  auto take_fd = [&](State& s, const std::vector<std::vector<double>>& f, std::size_t first,
                     const std::vector<double>& steps) {
    s.f = f[first];
    s.J.assign(s.f.size(), std::vector<double>(steps.size(), 0.0));
    for (std::size_t k = 0; k < steps.size(); ++k)
      for (std::size_t r = 0; r < s.f.size(); ++r)
        s.J[r][k] = (f[first + 1 + k][r] - s.f[r]) / steps[k];
    s.cost = cost_of(s.f);
    s.refresh = false;
    s.since_fd = 0;
    s.rejects = 0;
  };

  // The full sweeps of every system at its current parameters.
  auto full_sweeps =
      [&](const std::string& why) -> std::expected<std::vector<sim::PointResult>, std::string> {
    std::vector<sim::PointSpec> full = plan.specs;
    for (auto& spec : full) {
      const State& s = states[state_of.at(spec.system->id)];
      spec.efficiency = efficiency_at(s, s.x);
    }
    say("simulating the full sweeps " + why + " (" + std::to_string(full.size()) + " points)");
    report.simulated_points += static_cast<int>(full.size());
    return options.simulate(full);
  };
  if (!options.simulate) return std::unexpected("calibrate needs a simulate function");
  auto results = full_sweeps("at the priors");
  if (!results) return std::unexpected(results.error());
  for (int round = 0;; ++round) {
    // The full sweeps at the current parameters choose the cut.
    for (auto& s : states) {
      std::set<std::size_t> cut;
      for (std::size_t i : s.points)
        choose_cut(points[i], plan.groups[static_cast<std::size_t>(plan.group_of[i])], *results,
                   options.layouts_per_point, cut);
      s.cut.assign(cut.begin(), cut.end());
      say("  " + s.id + ": " + std::to_string(s.cut.size()) + " sweep points decide its " +
          std::to_string(s.points.size()) + " points");
      s.done = false;
      s.lambda = 1e-2;
    }
    std::vector<Candidate> cands;
    std::vector<std::vector<double>> steps;
    for (std::size_t si = 0; si < states.size(); ++si)
      steps.push_back(add_fd(si, states[si].x, cands));
    auto first = evaluate(cands);
    if (!first) return std::unexpected(first.error());
    for (std::size_t si = 0, at = 0; si < states.size(); ++si) {
      take_fd(states[si], *first, at, steps[si]);
      at += 1 + steps[si].size();
      // The objective at the prior, on the cut chosen at the prior.
      if (round == 0) states[si].cost_prior = states[si].cost;
    }
    // Levenberg-Marquardt steps; the Jacobian is carried by Broyden updates between
    // finite-difference refreshes, so a step costs one evaluation per system.
    for (int it = 0; it < options.max_iterations; ++it) {
      struct Request {
        std::size_t state, first;
        std::vector<double> x;      // candidate (a step)
        std::vector<double> steps;  // non-empty: a finite-difference refresh at the current x
      };
      std::vector<Request> reqs;
      cands.clear();
      for (std::size_t si = 0; si < states.size(); ++si) {
        State& s = states[si];
        if (s.done) continue;
        if (!s.refresh) {
          const std::size_t n = s.x.size();
          std::vector<std::vector<double>> a(n, std::vector<double>(n, 0.0));
          std::vector<double> b(n, 0.0);
          for (std::size_t r = 0; r < s.f.size(); ++r)
            for (std::size_t i = 0; i < n; ++i) {
              b[i] -= s.J[r][i] * s.f[r];
              for (std::size_t j = 0; j < n; ++j) a[i][j] += s.J[r][i] * s.J[r][j];
            }
          for (std::size_t i = 0; i < n; ++i) a[i][i] += s.lambda * a[i][i] + 1e-9;
          const auto d = solve(a, b);
          std::vector<double> xc = s.x;
          double moved = 0;
          for (std::size_t i = 0; i < n; ++i) {
            xc[i] = std::clamp(s.x[i] + std::clamp(d[i], -1.0, 1.0), s.lo[i], s.hi[i]);
            moved = std::max(moved, std::fabs(xc[i] - s.x[i]));
          }
          if (moved >= 1e-3) {
            reqs.push_back({si, cands.size(), xc, {}});
            cands.push_back({si, xc});
            continue;
          }
          if (s.since_fd == 0) {  // converged on an exact Jacobian
            s.done = true;
            continue;
          }
          s.refresh = true;  // converged on an updated one: check with an exact one
        }
        Request r{si, cands.size(), s.x, {}};
        r.steps = add_fd(si, s.x, cands);
        reqs.push_back(std::move(r));
      }
      if (reqs.empty()) break;
      say("round " + std::to_string(round + 1) + ", step " + std::to_string(it + 1) + ": " +
          std::to_string(reqs.size()) + " systems, " + std::to_string(cands.size()) +
          " parameter sets");
      auto f = evaluate(cands);
      if (!f) return std::unexpected(f.error());
      for (const auto& r : reqs) {
        State& s = states[r.state];
        s.iterations += 1;
        if (!r.steps.empty()) {
          take_fd(s, *f, r.first, r.steps);
          continue;
        }
        const auto& fc = (*f)[r.first];
        // Broyden: J += (df - J dx) dx' / (dx' dx) on the point rows; the prior rows are exact.
        std::vector<double> dx(s.x.size());
        double dx2 = 0;
        for (std::size_t k = 0; k < dx.size(); ++k) {
          dx[k] = r.x[k] - s.x[k];
          dx2 += dx[k] * dx[k];
        }
        const std::size_t rows = s.points.size();
        for (std::size_t row = 0; row < rows && dx2 > 0; ++row) {
          double jdx = 0;
          for (std::size_t k = 0; k < dx.size(); ++k) jdx += s.J[row][k] * dx[k];
          const double u = (fc[row] - s.f[row] - jdx) / dx2;
          for (std::size_t k = 0; k < dx.size(); ++k) s.J[row][k] += u * dx[k];
        }
        const double c = cost_of(fc);
        if (c < s.cost) {
          const double gain = s.cost - c;
          s.x = r.x;
          s.f = fc;
          s.cost = c;
          s.lambda = std::max(1e-4, s.lambda * 0.3);
          s.since_fd += 1;
          s.rejects = 0;
          if (gain < 1e-3 * std::max(1.0, c)) {
            if (s.since_fd <= 1)
              s.done = true;  // one step past an exact Jacobian gained nothing
            else
              s.refresh = true;
          }
        } else {
          s.lambda *= 4;
          s.rejects += 1;
          if (s.rejects >= 2 && s.since_fd > 0) s.refresh = true;
          if (s.lambda > 1e4) s.done = true;
        }
      }
    }
    // The full sweeps at the fitted parameters: the final predictions, or, where a system's
    // objective over them is clearly above its objective over the cut (a layout or load outside
    // the cut now decides a point), the next round's cut.
    results = full_sweeps("at the fitted parameters");
    if (!results) return std::unexpected(results.error());
    bool agree = true;
    for (const auto& s : states) {
      const double full = cost_of(residuals(s, s.x, *results));
      if (full > 1.05 * s.cost + 0.5) {
        agree = false;
        say("  " + s.id + ": the full sweeps disagree with the cut (objective " +
            std::to_string(full) + " against " + std::to_string(s.cost) + ")");
      }
    }
    if (agree || round + 1 >= options.rounds) break;
  }
  {
    const SweepTables tables(*results);
    report.final.resize(all_points.size());
    for (std::size_t i = 0; i < all_points.size(); ++i) {
      report.final[i].point = &all_points[i];
      report.final[i].error = "not fitted";
    }
    for (std::size_t j = 0; j < points.size(); ++j) {
      Prediction& p = report.final[input_index[j]];
      const auto& g = plan.groups[static_cast<std::size_t>(plan.group_of[j])];
      auto v = metric_value(points[j], g.workload_id, tables);
      if (v) {
        p.predicted = *v;
        p.error.clear();
        p.error_pct = 100.0 * (*v - points[j].value) / points[j].value;
      } else {
        p.error = v.error();
      }
    }
  }

  for (const auto& s : states) {
    SystemFit fit;
    fit.system = s.id;
    fit.prior_id = s.prior_id;
    fit.prior = s.prior;
    fit.fitted = efficiency_at(s, s.x);
    for (std::size_t k = 0; k < s.rules.size(); ++k) {
      const ParamRule& r = *s.rules[k];
      fit.params.push_back(r.name);
      // Pinned: within 1% of a bound, with the objective still falling beyond it by more than
      // 0.05 per unit of x (a parameter resting at a bound the points are all but indifferent
      // to, such as a zero request_latency on a throughput-only system, is not pinned).
      const double theta = to_theta(r, s.x[k]);
      double slope = 0;  // d objective / d x_k
      for (std::size_t row = 0; row < s.f.size() && row < s.J.size(); ++row)
        slope += 2 * s.f[row] * s.J[row][k];
      const bool low = theta <= r.lo + 0.01 * std::max(r.lo, 1e-12) && slope > 0.05;
      const bool high = theta >= r.hi * 0.99 && slope < -0.05;
      if (low || high) fit.pinned.push_back(r.name);
    }
    for (std::size_t i : s.points) fit.points.push_back(input_index[i]);
    fit.cost_prior = s.cost_prior;
    fit.cost_fitted = s.cost;
    fit.iterations = s.iterations;
    report.systems.push_back(std::move(fit));
  }
  return report;
}

}  // namespace racktwin::calib
