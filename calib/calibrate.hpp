#pragma once
// Fitting each system's efficiency parameters to published reference points (docs/model.md
// section 13, docs/validation.md).
//
// For every system with points, the fit minimises
//
//   sum over its points  (ln(predicted / published) / data_sigma)^2
// + sum over its fitted parameters  ((ln(theta + offset) - ln(theta_prior + offset)) / sigma)^2
//
// by Levenberg-Marquardt in the log parameters, within bounds. Predictions come from the sweeps of
// calib/predict.hpp (the code path of `racktwin run`), simulated by the caller's simulate function
// (worker processes: app/sim_job.hpp): each optimiser step evaluates the candidate and its
// finite-difference perturbations of every system as one batch. To keep a step cheap the sweeps are
// cut to the layouts and concurrencies that decide each point under the current parameters (the
// best layouts of a peak or minimum metric, the envelope points around an `at`); after each round
// the full sweeps are simulated with the fitted parameters, and for each system whose objective
// over them disagrees with its objective over the cut the cut is chosen afresh and its fit goes on;
// a system that agrees is settled and left as it is.
//
// One parameter set per system; a system's points never change another system's parameters.

#include <expected>
#include <functional>
#include <string>
#include <vector>

#include "calib/power_fit.hpp"
#include "calib/predict.hpp"
#include "core/catalog.hpp"
#include "core/reference.hpp"

namespace racktwin::calib {

// How one parameter is fitted: in x = ln(theta + offset), within [lo, hi] (theta units), pulled
// toward the prior with a standard deviation `sigma` in x. A `refining` parameter is held at its
// prior while the first round fits the others, then fitted with them from where they ended: it
// refines their fit (dequant_eff, a kernel class's rate relative to the native GEMMs') and cannot
// trade against them on the way from the prior, so the fit over every parameter ends no worse
// than the fit without it.
struct ParamRule {
  std::string name;
  double lo = 0, hi = 0;
  double sigma = 0.5;
  double offset = 0;
  bool refining = false;
};
// The rules of every efficiency parameter (bounds and prior widths documented in docs/model.md).
const std::vector<ParamRule>& param_rules();

struct FitOptions {
  // dequant_eff is fitted only for systems with a point whose GEMMs dequantise (params_for).
  std::vector<std::string> params{
      "mfu",           "mbu",          "comm_eff",    "alpha",          "layer_overhead",
      "step_overhead", "seq_overhead", "dequant_eff", "request_latency"};
  std::vector<std::string> systems;  // empty: every system that has points
  double data_sigma = 0.05;          // log error that weighs as much as one prior sigma
  int max_iterations = 12;           // optimiser steps per round (per stage of the first)
  int rounds = 3;  // at most: cut, fit, simulate the full sweeps; again while they disagree
  int layouts_per_point = 3;  // layouts kept per peak / minimum point
  // Simulates a batch of points and returns their results in order (required).
  std::function<std::expected<std::vector<sim::PointResult>, std::string>(
      const std::vector<sim::PointSpec>&)>
      simulate;
  double step = 0.04;      // finite-difference step in x
  PredictOptions predict;  // seed, concurrencies, serving modes of the sweeps
  // Called with a line of progress now and then; the library never prints.
  std::function<void(const std::string&)> progress;
};

struct SystemFit {
  std::string system;
  std::string prior_id;
  perf::Efficiency prior, fitted;
  std::vector<std::string> params;         // fitted parameters
  std::vector<std::string> pinned;         // fitted parameters that ended within 1% of a bound
  // By fitted parameter, how sharply the points and the prior fix it: the diagonal of J^T J of the
  // objective's residuals in x (the points' and the prior's), its precision about the fit. Empty:
  // every parameter weighs alike in pool_family.
  std::vector<double> precision;
  std::vector<std::size_t> points;         // indices into the input points
  double cost_prior = 0, cost_fitted = 0;  // objective at the prior and at the fit (cut sweeps)
  int iterations = 0;
};

struct FitReport {
  std::vector<SystemFit> systems;
  int simulated_points = 0;  // sweep points simulated over the whole fit
  // Every input point predicted over the full sweeps with the fitted parameters (points of
  // systems not fitted: no prediction, error "not fitted"); `point` refers to the input vector.
  std::vector<Prediction> final;
  // Each fitted system whose chip has a measured sustained power: its busy share fitted to it over
  // the same full sweeps (calib/power_fit.hpp).
  std::vector<PowerFit> power;
};

std::expected<FitReport, std::string> calibrate(const Catalog& cat,
                                                const std::vector<ReferencePoint>& points,
                                                const FitOptions& options);

// A family's pooled parameters for its members without points: per parameter, the mean in the
// fit's x = ln(theta + offset) over the fitted members, each weighted by its precision about that
// parameter (SystemFit::precision): a member whose points pin a parameter speaks for it, one whose
// points barely move it (its value near the prior, held by the prior's pull alone) weighs as the
// prior does. Parameters no member fitted keep the prior's values.
perf::Efficiency pool_family(const perf::Efficiency& prior, const std::vector<SystemFit>& members);
// Each member's share of the pool's weight for the parameter `name`, in the members' order: its
// precision about it over the sum of theirs (a member without precisions weighs 1, one that did
// not fit the parameter 0). All zero when no member fitted it.
std::vector<double> pool_weights(const std::string& name, const std::vector<SystemFit>& members);

}  // namespace racktwin::calib
