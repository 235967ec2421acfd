#include "calib/crossval.hpp"

#include <algorithm>
#include <map>

namespace racktwin::calib {

std::optional<HoldOut> parse_hold_out(std::string_view name) {
  if (name == "system") return HoldOut::system;
  if (name == "model") return HoldOut::model;
  if (name == "shape") return HoldOut::shape;
  return std::nullopt;
}

std::string to_string(HoldOut h) {
  switch (h) {
    case HoldOut::system:
      return "system";
    case HoldOut::model:
      return "model";
    case HoldOut::shape:
      return "shape";
  }
  return "?";
}

std::string fold_key(const ReferencePoint& p, HoldOut by) {
  switch (by) {
    case HoldOut::system:
      return p.system;
    case HoldOut::model:
      return p.model;
    case HoldOut::shape:
      return std::to_string(p.workload.isl) + "/" + std::to_string(p.workload.osl);
  }
  return "";
}

std::vector<Fold> make_folds(const std::vector<ReferencePoint>& points, HoldOut by) {
  std::vector<Fold> folds;
  std::map<std::string, std::size_t> index;
  for (const auto& p : points) {
    const std::string key = fold_key(p, by);
    if (index.emplace(key, folds.size()).second) folds.push_back(Fold{key, {}, {}});
  }
  for (auto& f : folds)
    for (std::size_t i = 0; i < points.size(); ++i)
      (fold_key(points[i], by) == f.held_out ? f.test : f.train).push_back(i);
  return folds;
}

std::optional<HeldOutEfficiency> held_out_efficiency(const Catalog& cat, const std::string& system,
                                                     const std::vector<SystemFit>& fits,
                                                     const std::string& exclude) {
  if (system != exclude)
    for (const auto& f : fits)
      if (f.system == system) return HeldOutEfficiency{f.fitted, "fitted"};
  const EfficiencyPrior* prior = cat.efficiency_prior_for(system);
  if (prior == nullptr) return std::nullopt;
  std::vector<SystemFit> members;
  std::string names;
  for (const auto& f : fits) {
    const EfficiencyPrior* p = cat.efficiency_prior_for(f.system);
    if (f.system == exclude || f.system == system || p == nullptr || p->id != prior->id) continue;
    members.push_back(f);
    names += (names.empty() ? "" : ", ") + f.system;
  }
  if (members.empty()) return HeldOutEfficiency{prior->values, "prior " + prior->id};
  return HeldOutEfficiency{pool_family(prior->values, members),
                           "family " + prior->id + " (" + names + ")"};
}

bool differs_alone(const std::vector<ReferencePoint>& points, const std::vector<std::size_t>& train,
                   const ReferencePoint& p, HoldOut by) {
  const HoldOut all[] = {HoldOut::system, HoldOut::model, HoldOut::shape};
  return std::any_of(train.begin(), train.end(), [&](std::size_t i) {
    const ReferencePoint& t = points[i];
    if (t.metric != p.metric) return false;
    // A model's weights come in its own precisions: they differ with the model, not beside it.
    if (by != HoldOut::model && t.workload.precision != p.workload.precision) return false;
    return std::all_of(std::begin(all), std::end(all), [&](HoldOut d) {
      return (fold_key(t, d) == fold_key(p, d)) == (d != by);
    });
  });
}

namespace {

// Predicts the points `test` (indices into cv.points) with `efficiency_of` and appends the fold.
std::expected<void, std::string> predict_fold(
    const Catalog& cat, CrossValidation& cv, const Fold& fold, const FitOptions& options,
    const std::vector<SystemFit>& fits, const std::string& exclude_of_system) {
  std::vector<ReferencePoint> test;
  for (std::size_t i : fold.test) test.push_back(cv.points[i]);
  std::map<std::string, HeldOutEfficiency> chosen;
  for (const auto& p : test) {
    if (chosen.contains(p.system)) continue;
    auto e = held_out_efficiency(cat, p.system, fits, exclude_of_system);
    if (!e) return std::unexpected("no efficiency prior for " + p.system);
    chosen.emplace(p.system, std::move(*e));
  }
  PredictOptions po = options.predict;
  po.efficiency = [&chosen](const System& s) -> std::optional<perf::Efficiency> {
    auto it = chosen.find(s.id);
    if (it == chosen.end()) return std::nullopt;
    return it->second.values;
  };
  const PredictionPlan plan = plan_predictions(cat, test, po);
  auto results = options.simulate(plan.specs);
  if (!results) return std::unexpected(results.error());
  cv.simulated_points += static_cast<int>(plan.specs.size());
  FoldResult fr;
  fr.held_out = fold.held_out;
  fr.train_points = static_cast<int>(fold.train.size());
  fr.predictions = predictions(test, plan, *results);
  for (std::size_t k = 0; k < fr.predictions.size(); ++k) {
    fr.predictions[k].point = &cv.points[fold.test[k]];
    fr.origins.push_back(chosen.at(test[k].system).origin);
    fr.alone.push_back(differs_alone(cv.points, fold.train, test[k], cv.by));
  }
  fr.summary = summarise_errors(fr.predictions);
  cv.folds.push_back(std::move(fr));
  return {};
}

}  // namespace

std::expected<CrossValidation, std::string> cross_validate(const Catalog& cat,
                                                           const std::vector<ReferencePoint>& points,
                                                           HoldOut by, const FitOptions& options) {
  CrossValidation cv;
  cv.by = by;
  cv.points = points;
  const auto folds = make_folds(cv.points, by);
  if (folds.size() < 2)
    return std::unexpected("cross-validation by " + to_string(by) +
                           " needs points of at least two " + to_string(by) +
                           "s; these have one");
  cv.folds.reserve(folds.size());
  if (by == HoldOut::system) {
    // Systems are fitted independently: one fit serves every fold.
    auto fit = calibrate(cat, cv.points, options);
    if (!fit) return std::unexpected(fit.error());
    cv.simulated_points += fit->simulated_points;
    for (const auto& f : folds)
      if (auto r = predict_fold(cat, cv, f, options, fit->systems, f.held_out); !r)
        return std::unexpected(r.error());
  } else {
    for (const auto& f : folds) {
      std::vector<ReferencePoint> train;
      for (std::size_t i : f.train) train.push_back(cv.points[i]);
      auto fit = calibrate(cat, train, options);
      if (!fit) return std::unexpected("fold " + f.held_out + ": " + fit.error());
      cv.simulated_points += fit->simulated_points;
      if (auto r = predict_fold(cat, cv, f, options, fit->systems, ""); !r)
        return std::unexpected(r.error());
    }
  }
  std::vector<Prediction> all, alone;
  for (const auto& f : cv.folds) {
    all.insert(all.end(), f.predictions.begin(), f.predictions.end());
    for (std::size_t k = 0; k < f.predictions.size(); ++k)
      if (f.alone[k]) alone.push_back(f.predictions[k]);
  }
  cv.pooled = summarise_errors(all);
  cv.pooled_alone = summarise_errors(alone);
  return cv;
}

}  // namespace racktwin::calib
