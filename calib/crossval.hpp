#pragma once
// Cross-validation of the calibration (docs/validation.md, "Cross-validation"): the points are
// split into folds by system, by model or by workload shape; each fold's points are predicted
// with parameters fitted without them.
//
// - By system: one fit of every system (a system's points never change another system's
//   parameters, calib/calibrate.hpp), then each system predicted with its family's pool of the
//   other members' fits, or its prior when no other member has points, as the catalog gives a
//   system without points of its own.
// - By model, by shape: one fit per fold on the other folds' points; a held-out point's system
//   takes its own fit when it has training points, else its family's pool, else its prior.
//
// Contract: never prints; simulation goes through FitOptions::simulate.

#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calib/calibrate.hpp"

namespace racktwin::calib {

enum class HoldOut { system, model, shape };
std::optional<HoldOut> parse_hold_out(std::string_view name);  // "system", "model", "shape"
std::string to_string(HoldOut h);

// The fold a point belongs to: its system id, its model id, or "<isl>/<osl>".
std::string fold_key(const ReferencePoint& p, HoldOut by);

struct Fold {
  std::string held_out;            // the fold's key
  std::vector<std::size_t> train;  // indices into the points, in order
  std::vector<std::size_t> test;
};
// One fold per distinct key, in the order the keys first appear.
std::vector<Fold> make_folds(const std::vector<ReferencePoint>& points, HoldOut by);

// What a system without points of its own in `fits` gets: the pool of its family's members in
// `fits` other than `exclude` (calib::pool_family), else its catalog prior. A system with a fit
// (and not excluded) gets that fit. `origin` says which: "fitted", "family <id> (a, b)" or
// "prior <id>".
struct HeldOutEfficiency {
  perf::Efficiency values;
  std::string origin;
};
std::optional<HeldOutEfficiency> held_out_efficiency(const Catalog& cat, const std::string& system,
                                                     const std::vector<SystemFit>& fits,
                                                     const std::string& exclude);

// Whether the training points (`train`, indices into `points`) hold one that differs from `p` in
// what the fold holds out alone: the same metric, the same system, model and shape but for the
// held-out one, and the same precision unless the model is held out (a model's precisions are its
// own). Only such a point tests the held-out dimension by itself; any
// other also crosses a system, a model or a shape the fit never saw with it.
bool differs_alone(const std::vector<ReferencePoint>& points, const std::vector<std::size_t>& train,
                   const ReferencePoint& p, HoldOut by);

struct FoldResult {
  std::string held_out;
  int train_points = 0;
  std::vector<Prediction> predictions;  // the held-out points; `point` into CrossValidation::points
  std::vector<std::string> origins;     // per prediction: where its system's parameters came from
  std::vector<bool> alone;              // per prediction: differs_alone
  ErrorSummary summary;
};

struct CrossValidation {
  HoldOut by = HoldOut::system;
  std::vector<ReferencePoint> points;  // a copy of the input; the predictions point into it
  std::vector<FoldResult> folds;
  ErrorSummary pooled;        // over every held-out prediction
  ErrorSummary pooled_alone;  // over those that differ from a training point in the fold alone
  int simulated_points = 0;
};

// `options` as for calibrate (simulate required); its predict options also predict the held-out
// points. At least two folds are needed.
std::expected<CrossValidation, std::string> cross_validate(const Catalog& cat,
                                                           const std::vector<ReferencePoint>& points,
                                                           HoldOut by, const FitOptions& options);

}  // namespace racktwin::calib
