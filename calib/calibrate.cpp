#include "calib/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace racktwin::calib {

const std::vector<ParamRule>& param_rules() {
  // Bounds are what a real serving stack can plausibly reach; sigma is the prior's width in
  // ln(theta + offset): 0.3 is a factor of about 1.35, 1.0 a factor of e.
  static const std::vector<ParamRule> rules{
      {"mfu", 0.10, 0.95, 0.4, 0.0},
      {"mbu", 0.30, 0.95, 0.3, 0.0},
      {"attn_eff", 0.20, 0.95, 0.3, 0.0},
      {"comm_eff", 0.10, 0.95, 0.4, 0.0},
      {"alpha", 0.1e-6, 50e-6, 1.0, 0.0},
      {"overlap", 0.0, 0.90, 1.0, 0.05},
      {"layer_overhead", 0.2e-6, 50e-6, 1.0, 0.0},
      {"step_overhead", 10e-6, 5e-3, 1.0, 0.0},
      // The offset of 1 us makes 0 (a C++ runtime that hides the host work) reachable.
      {"seq_overhead", 0.0, 300e-6, 1.0, 1e-6},
      {"moe_imbalance", 1.0, 3.0, 0.2, 0.0},
      {"dequant_eff", 0.20, 1.0, 0.3, 0.0, true},
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
  std::vector<bool> held;              // refining parameters held at the prior (ParamRule)
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
  // The cut's results at x, in the order of `cut` (empty when not simulated there): the full
  // sweeps at x take them rather than simulate them again.
  std::vector<sim::PointResult> at_x;
  // Its objective over the full sweeps agreed with its objective over the cut: its fit stands,
  // and later rounds (for the systems that disagreed) leave it as it is.
  bool settled = false;
  // The parameters whose full sweeps scored best so far, that objective, the cut objective at
  // them, and those sweeps' results of this system (plan spec index, result); the objective over
  // the last full sweeps.
  std::vector<double> best_x;
  double best_full = std::numeric_limits<double>::infinity(), best_cut = 0, last_full = 0;
  std::vector<std::pair<std::size_t, sim::PointResult>> best_results;
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

sim::CurveValue curve_of(Metric m) {
  return m == Metric::output_tps_per_xpu_at       ? sim::CurveValue::output_tps_per_xpu
         : m == Metric::total_tps_per_allin_mw_at ? sim::CurveValue::total_tps_per_allin_mw
                                                  : sim::CurveValue::total_tps_per_xpu;
}

// The point's closed-loop clients; 0 for arrivals without clients.
int point_clients(const sim::PointSpec& s) {
  return sim::clients_of(s.arrivals).value_or(0);
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
      const int clients = point_clients(s);
      if (layout_mode(s) == label && clients * 2 >= c && clients <= 2 * c) cut.insert(i);
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
      add_near(layout_mode(s), point_clients(s));
    }
    return;
  }
  std::map<std::string, std::pair<double, int>> best;  // layout -> (score, concurrency)
  for (std::size_t i = g.begin; i < g.end; ++i) {
    auto v = score(p.metric, results[i]);
    if (!v) continue;
    const std::string label = layout_mode(results[i].spec);
    auto it = best.find(label);
    if (it == best.end() || *v > it->second.first)
      best[label] = {*v, point_clients(results[i].spec)};
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

// The group of sweeps that predicts planned point `i` (a point that can be predicted).
const PredictionPlan::Group& point_group(const PredictionPlan& plan, std::size_t i) {
  return plan.groups[static_cast<std::size_t>(plan.group_of[i])];
}

// Every name in options.params must be an efficiency parameter with a rule.
std::expected<void, std::string> check_params(const FitOptions& options) {
  for (const auto& name : options.params)
    if (rule_of(name) == nullptr)
      return std::unexpected("unknown efficiency parameter '" + name + "'" +
                             did_you_mean(name, perf::efficiency_parameter_names()));
  return {};
}

// The points of the systems to fit, and the index of each in the input.
struct Selection {
  std::vector<ReferencePoint> points;
  std::vector<std::size_t> input_index;
};

// The points of options.systems (every point when it is empty); each system asked for must have
// one, and there must be at least one.
std::expected<Selection, std::string> select_points(const std::vector<ReferencePoint>& all_points,
                                                    const FitOptions& options) {
  Selection sel;
  for (std::size_t i = 0; i < all_points.size(); ++i) {
    const auto& p = all_points[i];
    if (!options.systems.empty() && std::find(options.systems.begin(), options.systems.end(),
                                              p.system) == options.systems.end())
      continue;
    sel.points.push_back(p);
    sel.input_index.push_back(i);
  }
  for (const auto& s : options.systems)
    if (std::none_of(sel.points.begin(), sel.points.end(),
                     [&](const ReferencePoint& p) { return p.system == s; }))
      return std::unexpected("system '" + s + "' has no point in the file");
  if (sel.points.empty()) return std::unexpected(std::string("no point to fit"));
  return sel;
}

// A system's fit at its catalog prior: the parameters `params` in x, each prior value clamped into
// its bounds, and the bounds in x.
std::expected<State, std::string> initial_state(const Catalog& cat, const std::string& id,
                                                const std::vector<std::string>& params) {
  State s;
  s.id = id;
  const EfficiencyPrior* prior = cat.efficiency_prior_for(s.id);
  if (prior == nullptr)
    return std::unexpected("no efficiency prior for " + s.id +
                           " and no 'default' prior in the catalog");
  s.prior_id = prior->id;
  s.prior = prior->values;
  for (const auto& name : params) {
    const ParamRule* r = rule_of(name);
    s.rules.push_back(r);
    const double theta = std::clamp(*perf::efficiency_parameter(s.prior, name), r->lo, r->hi);
    s.x0.push_back(to_x(*r, theta));
    s.lo.push_back(to_x(*r, r->lo));
    s.hi.push_back(to_x(*r, r->hi));
    s.held.push_back(r->refining);
  }
  s.x = s.x0;
  return s;
}

// The systems being fitted, in the order they first appear in the points, and where each is.
struct Systems {
  std::vector<State> states;
  std::map<std::string, std::size_t> index;  // system id -> its state
};

// Whether a point's weight variant has a GEMM that dequantises on its system's chip.
bool point_dequantises(const Catalog& cat, const ReferencePoint& p) {
  const System* sys = cat.find_system(p.system);
  const Model* model = cat.find_model(p.model);
  if (sys == nullptr || model == nullptr) return false;
  return perf::variant_dequantises(
      *model, *sys, cat, p.workload.precision.value_or(perf::best_precision(*model, *sys, cat)));
}

// The parameters fitted for the system with points `of`: `params` less dequant_eff where none of
// them runs a dequantising GEMM (no point could move it; its prior stands).
std::vector<std::string> params_for(const Catalog& cat, const std::vector<ReferencePoint>& points,
                                    const std::vector<std::size_t>& of,
                                    const std::vector<std::string>& params) {
  const bool deq = std::any_of(of.begin(), of.end(),
                               [&](std::size_t i) { return point_dequantises(cat, points[i]); });
  std::vector<std::string> out;
  for (const auto& name : params)
    if (deq || name != "dequant_eff") out.push_back(name);
  return out;
}

std::expected<Systems, std::string> make_systems(const Catalog& cat,
                                                 const std::vector<ReferencePoint>& points,
                                                 const std::vector<std::string>& params) {
  std::vector<std::pair<std::string, std::vector<std::size_t>>> by_system;  // in first-seen order
  for (std::size_t i = 0; i < points.size(); ++i) {
    auto it = std::find_if(by_system.begin(), by_system.end(),
                           [&](const auto& e) { return e.first == points[i].system; });
    if (it == by_system.end()) it = by_system.insert(by_system.end(), {points[i].system, {}});
    it->second.push_back(i);
  }
  Systems sys;
  for (auto& [id, of] : by_system) {
    auto s = initial_state(cat, id, params_for(cat, points, of, params));
    if (!s) return std::unexpected(s.error());
    s->points = std::move(of);
    sys.index.emplace(id, sys.states.size());
    sys.states.push_back(std::move(*s));
  }
  return sys;
}

// The sweeps that predict every point, each system at its prior; fails when a point cannot be
// predicted.
std::expected<PredictionPlan, std::string> plan_sweeps(const Catalog& cat,
                                                       const std::vector<ReferencePoint>& points,
                                                       const Systems& sys,
                                                       const PredictOptions& predict) {
  PredictOptions po = predict;
  po.efficiency = [&](const System& system) -> std::optional<perf::Efficiency> {
    auto it = sys.index.find(system.id);
    if (it == sys.index.end()) return std::nullopt;
    return sys.states[it->second].prior;
  };
  PredictionPlan plan = plan_predictions(cat, points, po);
  for (std::size_t i = 0; i < points.size(); ++i)
    if (plan.group_of[i] < 0)
      return std::unexpected("point '" + points[i].id + "' cannot be predicted: " + plan.errors[i]);
  return plan;
}

// The damped Gauss-Newton step from s.x on the current Jacobian: solves
// (J'J + lambda diag(J'J)) d = -J'f over the parameters not held, caps each component of d at 1 in
// x and keeps the candidate within the bounds.
std::vector<double> lm_candidate(const State& s) {
  const std::size_t n = s.x.size();
  std::vector<std::vector<double>> a(n, std::vector<double>(n, 0.0));
  std::vector<double> b(n, 0.0);
  for (std::size_t r = 0; r < s.f.size(); ++r)
    for (std::size_t i = 0; i < n; ++i) {
      if (s.held[i]) continue;
      b[i] -= s.J[r][i] * s.f[r];
      for (std::size_t j = 0; j < n; ++j)
        if (!s.held[j]) a[i][j] += s.J[r][i] * s.J[r][j];
    }
  for (std::size_t i = 0; i < n; ++i) a[i][i] += s.held[i] ? 1.0 : s.lambda * a[i][i] + 1e-9;
  const auto d = solve(a, b);
  std::vector<double> xc = s.x;
  for (std::size_t i = 0; i < n; ++i)
    xc[i] = std::clamp(s.x[i] + std::clamp(d[i], -1.0, 1.0), s.lo[i], s.hi[i]);
  return xc;
}

// The largest change of one parameter from `from` to `to`, in x.
double largest_move(const std::vector<double>& from, const std::vector<double>& to) {
  double moved = 0;
  for (std::size_t i = 0; i < from.size(); ++i) moved = std::max(moved, std::fabs(to[i] - from[i]));
  return moved;
}

// Broyden: J += (df - J dx) dx' / (dx' dx) on the point rows, for the step from s.x to x whose
// residuals are fc; the prior rows are exact.
void broyden_update(State& s, const std::vector<double>& x, const std::vector<double>& fc) {
  std::vector<double> dx(s.x.size());
  double dx2 = 0;
  for (std::size_t k = 0; k < dx.size(); ++k) {
    dx[k] = x[k] - s.x[k];
    dx2 += dx[k] * dx[k];
  }
  const std::size_t rows = s.points.size();
  for (std::size_t row = 0; row < rows && dx2 > 0; ++row) {
    double jdx = 0;
    for (std::size_t k = 0; k < dx.size(); ++k) jdx += s.J[row][k] * dx[k];
    const double u = (fc[row] - s.f[row] - jdx) / dx2;
    for (std::size_t k = 0; k < dx.size(); ++k) s.J[row][k] += u * dx[k];
  }
}

// Moves to the step x (residuals fc) when it lowers the objective and relaxes the damping, else
// stays and damps harder; decides whether the system is done or needs a finite-difference
// Jacobian next. True when it moved.
bool accept_or_reject(State& s, const std::vector<double>& x, const std::vector<double>& fc) {
  const double c = cost_of(fc);
  if (c < s.cost) {
    const double gain = s.cost - c;
    s.x = x;
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
    return true;
  }
  s.lambda *= 4;
  s.rejects += 1;
  if (s.rejects >= 2 && s.since_fd > 0) s.refresh = true;
  if (s.lambda > 1e4) s.done = true;
  return false;
}

// Prompts and warm-up prompts per client of the closed-loop points in the screening sweeps at the
// priors (InferenceX runs 10 and the twin 10 and 2). They only rank a sweep's layouts and loads for
// the first cuts; on the shipped points they chose nearly the same cuts as full-length sweeps, and
// the fit ended with the same parameters but for one system's, in their third or fourth digit.
constexpr int kScreenPromptsPerClient = 4;
constexpr int kScreenWarmupPerClient = 1;

// The fit of every system at once: each evaluation simulates the candidates of every system that
// is still moving as one batch, through options.simulate.
class Fitter {
 public:
  Fitter(const PredictionPlan& plan, const std::vector<ReferencePoint>& points,
         const FitOptions& options, Systems& systems)
      : plan_(plan), points_(points), options_(options), systems_(systems) {}

  // Rounds of choosing the cut and fitting on it, until the full sweeps at the fitted parameters
  // agree with the cut or options.rounds have run; returns those full sweeps.
  std::expected<std::vector<sim::PointResult>, std::string> run();
  int simulated_points() const { return simulated_points_; }  // over the whole fit

 private:
  // A parameter set x of one system to simulate on the system's cut.
  struct Candidate {
    std::size_t state;
    std::vector<double> x;
  };
  // What one system asks of an optimiser step, at candidates[first...].
  struct Request {
    std::size_t state, first;
    std::vector<double> x;      // candidate (a step)
    std::vector<double> steps;  // non-empty: a finite-difference refresh at the current x
  };

  void say(const std::string& line) const {
    if (options_.progress) options_.progress(line);
  }
  std::vector<double> residuals(const State& s, const std::vector<double>& x,
                                const std::vector<sim::PointResult>& results) const;
  // The residuals of each candidate, and its cut's results.
  struct Evaluated {
    std::vector<std::vector<double>> f;
    std::vector<std::vector<sim::PointResult>> results;
  };
  std::expected<Evaluated, std::string> evaluate(const std::vector<Candidate>& cands);
  std::vector<double> add_fd(std::size_t si, const std::vector<double>& x,
                             std::vector<Candidate>& cands, bool with_base) const;
  void take_fd(State& s, const std::vector<std::vector<double>>& f, std::size_t first,
               const std::vector<double>& steps, bool with_base) const;
  void take_fd(State& s, Evaluated& e, std::size_t first, const std::vector<double>& steps,
               bool with_base) const;
  // Every point of the plan at its system's current parameters; with `previous` (the last full
  // sweeps) only the points of systems not settled are simulated again.
  // `screen`: the closed-loop points run kScreenPromptsPerClient prompts per client, enough to
  // rank layouts and loads for a first cut (never a prediction).
  std::expected<std::vector<sim::PointResult>, std::string> full_sweeps(
      const std::string& why, const std::vector<sim::PointResult>* previous = nullptr,
      bool screen = false);
  void choose_cuts(const std::vector<sim::PointResult>& results);
  void keep_best(std::vector<sim::PointResult>& results);
  std::expected<void, std::string> start_round(int round,
                                              const std::vector<sim::PointResult>& full);
  std::expected<bool, std::string> step(int round, int it);
  bool release_held();
  void propose(std::size_t si, std::vector<Request>& reqs, std::vector<Candidate>& cands);
  void apply(const Request& r, Evaluated& e);
  bool agrees(const std::vector<sim::PointResult>& results);

  const PredictionPlan& plan_;
  const std::vector<ReferencePoint>& points_;
  const FitOptions& options_;
  Systems& systems_;
  int simulated_points_ = 0;
};

std::expected<std::vector<sim::PointResult>, std::string> Fitter::run() {
  // The sweeps at the priors only choose the first cuts: every prediction and every objective
  // comes from sweeps at full length (the cuts' and the full sweeps at the fitted parameters).
  auto results = full_sweeps("at the priors, screening", nullptr, true);
  if (!results) return results;
  for (int round = 0;; ++round) {
    choose_cuts(*results);
    if (auto first = start_round(round, *results); !first)
      return std::unexpected(first.error());
    // The first round fits every parameter but the refining ones, then frees those where a
    // system has them and goes on from there (ParamRule::refining).
    const int stages = round == 0 ? 2 : 1;
    for (int stage = 0, it = 0; stage < stages; ++stage) {
      if (stage == 1 && !release_held()) break;
      for (int k = 0; k < options_.max_iterations; ++k, ++it) {
        auto stepped = step(round, it);
        if (!stepped) return std::unexpected(stepped.error());
        if (!*stepped) break;
      }
    }
    // The full sweeps at the fitted parameters: the final predictions, or, where a system's
    // objective over them is clearly above its objective over the cut (a layout or load outside
    // the cut now decides a point), the next round's cut.
    results = full_sweeps("at the fitted parameters", &*results);
    if (!results) return results;
    if (agrees(*results)) break;
    if (round + 1 >= options_.rounds) {
      keep_best(*results);
      break;
    }
  }
  return results;
}

// Frees the refining parameters of every system that holds some and restarts its optimiser there
// on a fresh Jacobian; every other system stops where the first stage left it. False when no system
// held any.
bool Fitter::release_held() {
  int freed = 0;
  for (auto& s : systems_.states) {
    const bool holds = std::find(s.held.begin(), s.held.end(), true) != s.held.end();
    if (!holds || s.settled) {
      s.done = true;
      continue;
    }
    std::fill(s.held.begin(), s.held.end(), false);
    s.done = false;
    s.refresh = true;
    s.lambda = 1e-2;
    freed += 1;
  }
  if (freed > 0)
    say("round 1: the refining parameters freed for " + std::to_string(freed) +
        (freed == 1 ? " system" : " systems"));
  return freed > 0;
}

// After the last round, a system that still disagrees takes back the parameters of the round
// whose full sweeps scored best, with those sweeps' results: a cut that missed the layout now
// deciding a point must not leave the system worse over the full sweeps than an earlier round.
void Fitter::keep_best(std::vector<sim::PointResult>& results) {
  for (auto& s : systems_.states) {
    if (s.settled || !(s.best_full < s.last_full)) continue;
    say("  " + s.id + ": keeps the parameters whose full sweeps scored best (objective " +
        std::to_string(s.best_full) + " against " + std::to_string(s.last_full) + " at the last)");
    s.x = s.best_x;
    s.cost = s.best_cut;
    s.at_x.clear();
    for (auto& [i, r] : s.best_results) results[i] = std::move(r);
  }
}

// Residuals of one system at x, from the results of its cut: its points, then its priors.
std::vector<double> Fitter::residuals(const State& s, const std::vector<double>& x,
                                      const std::vector<sim::PointResult>& results) const {
  const SweepTables tables(results);
  std::vector<double> f;
  for (std::size_t i : s.points) {
    auto v = metric_value(points_[i], point_group(plan_, i).workload_id, tables);
    // A point the candidate cannot predict (a curve that no longer reaches `at`) weighs as a
    // factor-of-four miss.
    const double r = v && *v > 0 ? std::log(*v / points_[i].value) : std::log(4.0);
    f.push_back(r / options_.data_sigma);
  }
  for (std::size_t k = 0; k < x.size(); ++k) f.push_back((x[k] - s.x0[k]) / s.rules[k]->sigma);
  return f;
}

// Simulates each (system, x) candidate on the system's cut, in one batch, and returns the
// residuals of each.
std::expected<Fitter::Evaluated, std::string> Fitter::evaluate(
    const std::vector<Candidate>& cands) {
  std::vector<sim::PointSpec> batch;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (const auto& c : cands) {
    const State& s = systems_.states[c.state];
    const perf::Efficiency e = efficiency_at(s, c.x);
    const std::size_t begin = batch.size();
    for (std::size_t i : s.cut) {
      batch.push_back(plan_.specs[i]);
      batch.back().efficiency = e;
    }
    ranges.emplace_back(begin, batch.size());
  }
  auto results = options_.simulate(batch);
  if (!results) return std::unexpected(results.error());
  simulated_points_ += static_cast<int>(batch.size());
  Evaluated out;
  for (std::size_t k = 0; k < cands.size(); ++k) {
    std::vector<sim::PointResult> part(
        std::make_move_iterator(results->begin() + static_cast<std::ptrdiff_t>(ranges[k].first)),
        std::make_move_iterator(results->begin() + static_cast<std::ptrdiff_t>(ranges[k].second)));
    out.f.push_back(residuals(systems_.states[cands[k].state], cands[k].x, part));
    out.results.push_back(std::move(part));
  }
  return out;
}

// Finite differences: the candidates x (`with_base`) and x plus a step along every parameter
// (minus at the upper bound), appended to `cands`; the steps are returned. Without the base, the
// residuals at x are the system's current ones (s.f, simulated at s.x on the same cut: the same
// seeds give the same results, so simulating x again would add nothing).
std::vector<double> Fitter::add_fd(std::size_t si, const std::vector<double>& x,
                                   std::vector<Candidate>& cands, bool with_base) const {
  const State& s = systems_.states[si];
  std::vector<double> steps;
  if (with_base) cands.push_back({si, x});
  for (std::size_t k = 0; k < x.size(); ++k) {
    std::vector<double> xp = x;
    const double h = xp[k] + options_.step <= s.hi[k] ? options_.step : -options_.step;
    xp[k] += h;
    cands.push_back({si, xp});
    steps.push_back(h);
  }
  return steps;
}

// Residuals and Jacobian from the evaluations of add_fd's candidates starting at `first`.
void Fitter::take_fd(State& s, const std::vector<std::vector<double>>& f, std::size_t first,
                     const std::vector<double>& steps, bool with_base) const {
  if (with_base) s.f = f[first++];
  s.J.assign(s.f.size(), std::vector<double>(steps.size(), 0.0));
  for (std::size_t k = 0; k < steps.size(); ++k)
    for (std::size_t r = 0; r < s.f.size(); ++r)
      s.J[r][k] = (f[first + k][r] - s.f[r]) / steps[k];
  s.cost = cost_of(s.f);
  s.refresh = false;
  s.since_fd = 0;
  s.rejects = 0;
}

// The same, keeping the base's results as the cut's results at x.
void Fitter::take_fd(State& s, Evaluated& e, std::size_t first, const std::vector<double>& steps,
                     bool with_base) const {
  if (with_base) s.at_x = std::move(e.results[first]);
  take_fd(s, e.f, first, steps, with_base);
}

// The full sweeps of every system at its current parameters.
std::expected<std::vector<sim::PointResult>, std::string> Fitter::full_sweeps(
    const std::string& why, const std::vector<sim::PointResult>* previous, bool screen) {
  // A settled system's parameters no longer move: its sweeps in `previous` stand as they are.
  // A cut's points at x were simulated while fitting: their results stand (same seeds, same
  // results).
  std::map<std::size_t, const sim::PointResult*> known;
  if (!screen)
    for (const auto& s : systems_.states)
      if (!s.settled && s.at_x.size() == s.cut.size())
        for (std::size_t k = 0; k < s.cut.size(); ++k) known[s.cut[k]] = &s.at_x[k];
  std::vector<sim::PointSpec> batch;
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < plan_.specs.size(); ++i) {
    const State& s = systems_.states[systems_.index.at(plan_.specs[i].system->id)];
    if (previous != nullptr && s.settled) continue;
    if (known.contains(i)) continue;
    batch.push_back(plan_.specs[i]);
    batch.back().efficiency = efficiency_at(s, s.x);
    if (screen && std::holds_alternative<sim::ClosedLoop>(batch.back().arrivals)) {
      auto& w = batch.back().workload;
      w.prompts_per_client = std::min(w.prompts_per_client, kScreenPromptsPerClient);
      w.warmup_per_client = std::min(w.warmup_per_client, kScreenWarmupPerClient);
    }
    at.push_back(i);
  }
  say("simulating the full sweeps " + why + " (" + std::to_string(batch.size()) + " points" +
      (known.empty() ? "" : "; " + std::to_string(known.size()) + " more simulated while fitting") +
      ")");
  simulated_points_ += static_cast<int>(batch.size());
  auto simulated = options_.simulate(batch);
  if (!simulated) return simulated;
  std::vector<sim::PointResult> results =
      previous != nullptr ? *previous : std::vector<sim::PointResult>(plan_.specs.size());
  for (const auto& [i, r] : known) results[i] = *r;
  for (std::size_t k = 0; k < at.size(); ++k) results[at[k]] = std::move((*simulated)[k]);
  return results;
}

// The full sweeps at the current parameters choose the cut of each system not settled; its
// optimiser restarts.
void Fitter::choose_cuts(const std::vector<sim::PointResult>& results) {
  for (auto& s : systems_.states) {
    if (s.settled) continue;
    std::set<std::size_t> cut;
    for (std::size_t i : s.points)
      choose_cut(points_[i], point_group(plan_, i), results, options_.layouts_per_point, cut);
    s.cut.assign(cut.begin(), cut.end());
    s.at_x.clear();
    say("  " + s.id + ": " + std::to_string(s.cut.size()) + " sweep points decide its " +
        std::to_string(s.points.size()) + " points");
    s.done = false;
    s.lambda = 1e-2;
  }
}

// The residuals and finite-difference Jacobian of every system on its new cut, in one batch.
// After the first round the cut's points at x are those of the full sweeps `full` just simulated
// there (the first round's come from screening sweeps, at another length, and are simulated).
std::expected<void, std::string> Fitter::start_round(int round,
                                                     const std::vector<sim::PointResult>& full) {
  auto& states = systems_.states;
  const bool base = round == 0;
  std::vector<Candidate> cands;
  std::vector<std::vector<double>> steps(states.size());
  for (std::size_t si = 0; si < states.size(); ++si) {
    State& s = states[si];
    if (s.settled) continue;
    if (!base) {
      s.at_x.clear();
      for (std::size_t i : s.cut) s.at_x.push_back(full[i]);
      s.f = residuals(s, s.x, s.at_x);
    }
    steps[si] = add_fd(si, s.x, cands, base);
  }
  auto first = evaluate(cands);
  if (!first) return std::unexpected(first.error());
  for (std::size_t si = 0, at = 0; si < states.size(); ++si) {
    if (states[si].settled) continue;
    take_fd(states[si], *first, at, steps[si], base);
    at += (base ? 1 : 0) + steps[si].size();
    // The objective at the prior, on the cut chosen at the prior.
    if (round == 0) states[si].cost_prior = states[si].cost;
  }
  return {};
}

// One Levenberg-Marquardt step of every system not done, evaluated as one batch; false when no
// system asks for anything. The Jacobian is carried by Broyden updates between finite-difference
// refreshes, so a step costs one evaluation per system.
std::expected<bool, std::string> Fitter::step(int round, int it) {
  std::vector<Request> reqs;
  std::vector<Candidate> cands;
  for (std::size_t si = 0; si < systems_.states.size(); ++si) propose(si, reqs, cands);
  if (reqs.empty()) return false;
  say("round " + std::to_string(round + 1) + ", step " + std::to_string(it + 1) + ": " +
      std::to_string(reqs.size()) + " systems, " + std::to_string(cands.size()) +
      " parameter sets");
  auto f = evaluate(cands);
  if (!f) return std::unexpected(f.error());
  for (const auto& r : reqs) apply(r, *f);
  double total = 0;
  int done = 0, fitting = 0;
  for (const auto& s : systems_.states) {
    if (s.settled) continue;
    total += s.cost;
    fitting += 1;
    done += s.done ? 1 : 0;
  }
  std::ostringstream objective;
  objective.setf(std::ios::fixed);
  objective.precision(3);
  objective << total;
  say("  objective " + objective.str() + " over the cuts of " + std::to_string(fitting) +
      " systems, " + std::to_string(done) + " of them done");
  return true;
}

// What system `si` asks of a step: a candidate step, or a finite-difference refresh at its
// current x; nothing once it is done (which a converged step on an exact Jacobian makes it).
void Fitter::propose(std::size_t si, std::vector<Request>& reqs, std::vector<Candidate>& cands) {
  State& s = systems_.states[si];
  if (s.done) return;
  if (!s.refresh) {
    std::vector<double> xc = lm_candidate(s);
    if (largest_move(s.x, xc) >= 1e-3) {
      reqs.push_back({si, cands.size(), xc, {}});
      cands.push_back({si, xc});
      return;
    }
    if (s.since_fd == 0) {  // converged on an exact Jacobian
      s.done = true;
      return;
    }
    s.refresh = true;  // converged on an updated one: check with an exact one
  }
  Request r{si, cands.size(), s.x, {}};
  r.steps = add_fd(si, s.x, cands, false);
  reqs.push_back(std::move(r));
}

// Takes the evaluations `f` of one request: a fresh Jacobian, or a step accepted or rejected.
void Fitter::apply(const Request& r, Evaluated& e) {
  State& s = systems_.states[r.state];
  s.iterations += 1;
  if (!r.steps.empty()) {
    take_fd(s, e, r.first, r.steps, false);
    return;
  }
  const auto& fc = e.f[r.first];
  broyden_update(s, r.x, fc);
  if (accept_or_reject(s, r.x, fc)) s.at_x = std::move(e.results[r.first]);
}

// Whether every system's objective over the full sweeps is close to its objective over the cut;
// each system that disagrees is reported, each that agrees is settled.
bool Fitter::agrees(const std::vector<sim::PointResult>& results) {
  bool agree = true;
  for (auto& s : systems_.states) {
    if (s.settled) continue;
    const double full = cost_of(residuals(s, s.x, results));
    s.last_full = full;
    if (full < s.best_full) {
      s.best_full = full;
      s.best_cut = s.cost;
      s.best_x = s.x;
      s.best_results.clear();
      for (std::size_t i = 0; i < results.size(); ++i)
        if (results[i].spec.system->id == s.id) s.best_results.emplace_back(i, results[i]);
    }
    if (full > 1.05 * s.cost + 0.5) {
      agree = false;
      say("  " + s.id + ": the full sweeps disagree with the cut (objective " +
          std::to_string(full) + " against " + std::to_string(s.cost) + ")");
    } else {
      s.settled = true;
      s.done = true;
    }
  }
  return agree;
}

// Every input point predicted over the full sweeps `results`; points of systems not fitted have
// no prediction and the error "not fitted".
std::vector<Prediction> final_predictions(const std::vector<ReferencePoint>& all_points,
                                          const Selection& sel, const PredictionPlan& plan,
                                          const std::vector<sim::PointResult>& results) {
  const SweepTables tables(results);
  std::vector<Prediction> out(all_points.size());
  for (std::size_t i = 0; i < all_points.size(); ++i) {
    out[i].point = &all_points[i];
    out[i].error = "not fitted";
  }
  for (std::size_t j = 0; j < sel.points.size(); ++j) {
    Prediction& p = out[sel.input_index[j]];
    auto v = metric_value(sel.points[j], point_group(plan, j).workload_id, tables);
    if (v) {
      p.predicted = *v;
      p.error.clear();
      p.error_pct = 100.0 * (*v - sel.points[j].value) / sel.points[j].value;
    } else {
      p.error = v.error();
    }
  }
  return out;
}

// Pinned: within 1% of a bound, with the objective still falling beyond it by more than 0.05 per
// unit of x (a parameter resting at a bound the points are all but indifferent to, such as a zero
// request_latency on a throughput-only system, is not pinned).
bool pinned(const State& s, std::size_t k) {
  const ParamRule& r = *s.rules[k];
  const double theta = to_theta(r, s.x[k]);
  double slope = 0;  // d objective / d x_k
  for (std::size_t row = 0; row < s.f.size() && row < s.J.size(); ++row)
    slope += 2 * s.f[row] * s.J[row][k];
  const bool low = theta <= r.lo + 0.01 * std::max(r.lo, 1e-12) && slope > 0.05;
  const bool high = theta >= r.hi * 0.99 && slope < -0.05;
  return low || high;
}

// One system's fit as reported; its points are indices into the input.
SystemFit system_fit(const State& s, const std::vector<std::size_t>& input_index) {
  SystemFit fit;
  fit.system = s.id;
  fit.prior_id = s.prior_id;
  fit.prior = s.prior;
  fit.fitted = efficiency_at(s, s.x);
  for (std::size_t k = 0; k < s.rules.size(); ++k) {
    fit.params.push_back(s.rules[k]->name);
    if (pinned(s, k)) fit.pinned.push_back(s.rules[k]->name);
    double precision = 0;
    for (const auto& row : s.J) precision += k < row.size() ? row[k] * row[k] : 0.0;
    fit.precision.push_back(precision);
  }
  for (std::size_t i : s.points) fit.points.push_back(input_index[i]);
  fit.cost_prior = s.cost_prior;
  fit.cost_fitted = s.cost;
  fit.iterations = s.iterations;
  return fit;
}

}  // namespace

perf::Efficiency pool_family(const perf::Efficiency& prior, const std::vector<SystemFit>& members) {
  perf::Efficiency out = prior;
  for (const auto& r : param_rules()) {
    const auto w = pool_weights(r.name, members);
    double x = 0, weights = 0;
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (w[i] <= 0) continue;
      x += w[i] * to_x(r, *perf::efficiency_parameter(members[i].fitted, r.name));
      weights += w[i];
    }
    if (weights > 0) perf::set_efficiency_parameter(out, r.name, to_theta(r, x / weights));
  }
  return out;
}

std::vector<double> pool_weights(const std::string& name, const std::vector<SystemFit>& members) {
  std::vector<double> w(members.size(), 0.0);
  double sum = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto& m = members[i];
    const auto at = std::find(m.params.begin(), m.params.end(), name);
    if (at == m.params.end()) continue;
    const auto k = static_cast<std::size_t>(at - m.params.begin());
    w[i] = k < m.precision.size() && m.precision[k] > 0 ? m.precision[k] : 1.0;
    sum += w[i];
  }
  if (sum > 0)
    for (double& v : w) v /= sum;
  return w;
}

std::expected<FitReport, std::string> calibrate(const Catalog& cat,
                                                const std::vector<ReferencePoint>& all_points,
                                                const FitOptions& options) {
  if (auto checked = check_params(options); !checked) return std::unexpected(checked.error());
  auto sel = select_points(all_points, options);
  if (!sel) return std::unexpected(sel.error());
  auto systems = make_systems(cat, sel->points, options.params);
  if (!systems) return std::unexpected(systems.error());
  const auto plan = plan_sweeps(cat, sel->points, *systems, options.predict);
  if (!plan) return std::unexpected(plan.error());
  if (!options.simulate) return std::unexpected("calibrate needs a simulate function");

  Fitter fitter(*plan, sel->points, options, *systems);
  auto results = fitter.run();
  if (!results) return std::unexpected(results.error());
  FitReport report;
  report.simulated_points = fitter.simulated_points();
  report.final = final_predictions(all_points, *sel, *plan, *results);
  report.power = fit_power(*results);
  for (const auto& s : systems->states) report.systems.push_back(system_fit(s, sel->input_index));
  return report;
}

}  // namespace racktwin::calib
