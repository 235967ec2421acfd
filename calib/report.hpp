#pragma once
// The calibration file `racktwin calibrate` writes (scenarios/catalog/calibration.yaml, format in
// docs/catalog.md): each fitted system's parameters with their residuals, and each family's pooled
// parameters for its members without points.

#include <string>
#include <vector>

#include "calib/calibrate.hpp"
#include "calib/predict.hpp"
#include "core/catalog.hpp"

namespace racktwin::calib {

struct Calibration {
  CalibrationRecord record;
  std::vector<CalibratedEfficiency> systems;
  std::vector<CalibratedEfficiency> families;
};

// Assembles the calibration from a fit and the predictions of the fitted points with the fitted
// parameters over the full sweeps (`final`, one per input point; points of systems not fitted are
// ignored). Families are the catalog's efficiency priors that list systems: each with at least one
// fitted member gets pool_family() of its members' fits. The record's median and max come from
// `final`. A system's power fit without an error goes with its entry.
Calibration assemble(const Catalog& cat, const FitReport& fit, const std::vector<Prediction>& final,
                     CalibrationRecord record);

// The calibration as YAML text, numbers written to round-trip.
std::string calibration_yaml(const Calibration& c);

}  // namespace racktwin::calib
