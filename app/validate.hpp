#pragma once
// The use cases `racktwin validate FILE...` and `racktwin calibrate FILE...`: predicting published
// points through the sweep code of `racktwin run` (calib/predict.hpp), simulated in worker
// processes, and fitting each system's efficiency parameters to them (calib/calibrate.hpp).
//
// Contract: never prints; progress lines go to the request's callback. A calibration writes its
// file through a temporary file renamed into place, so a failed write leaves the old one.

#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/json.hpp"
#include "app/run.hpp"
#include "app/sim_job.hpp"
#include "calib/calibrate.hpp"
#include "calib/crossval.hpp"
#include "calib/predict.hpp"
#include "calib/report.hpp"
#include "core/catalog.hpp"
#include "core/reference.hpp"

namespace racktwin::app {

// What the sweeps behind a prediction try, where the command line narrows it: the replica sizes
// whose layouts are tried and the client counts (empty: calib::PredictOptions' defaults, as
// `racktwin run`). A smaller sweep is quicker and may miss the peak a published point reports.
struct SweepChoice {
  std::vector<int> replica_xpus;
  std::vector<int> concurrency;
  // Serving modes every sweep runs, as labels (parse_serving_mode); empty: aggregated, 1p1d and
  // 2p1d. Labels are checked where they are read (the command line).
  std::vector<std::string> serving;
  void apply(calib::PredictOptions& opt) const;
  // "" at the defaults, else what differs, e.g. "clients 1,16; replicas of 8 XPUs".
  std::string describe() const;
};

struct ValidateRequest {
  std::vector<std::string> points_files;  // read as one (load_points_files)
  std::optional<std::uint64_t> seed;      // unset: calib::PredictOptions' default
  SweepChoice sweep;
  JobOptions job;
};

struct Validation {
  std::shared_ptr<const PointsFile> points;
  std::uint64_t seed = 0;
  std::string sweep;                           // SweepChoice::describe
  std::map<std::string, std::string> origins;  // system: where its efficiencies come from
  std::vector<calib::Prediction> predictions;  // point by point, pointing into `points`
  calib::ErrorSummary summary;
  std::vector<calib::PowerCheck> power;  // sweeps of chips with a measured sustained power
  // Systems of the points whose chip has no measured sustained power: their XPU power rests on the
  // catalog's assumed shares alone.
  std::vector<std::string> power_unmeasured;
  // 0: every point predicted; 1: some could not be; 2: some points are invalid.
  int exit_code() const;
  Json to_json() const;
};

std::expected<Validation, Failure> validate_points(const Catalog& cat, const ValidateRequest& rq);

// The systems of `ids` whose chip has no measured sustained power: their XPU power rests on the
// catalog's assumed shares alone (docs/model.md section 13.3).
std::vector<std::string> power_unmeasured(const Catalog& cat, const std::vector<std::string>& ids);

struct CalibrateRequest {
  std::vector<std::string> points_files;     // read as one (load_points_files)
  std::vector<std::string> systems, params;  // empty: every system with points, the defaults
  std::string out;  // calibration file; empty: calibration.yaml in the catalog directory
  int iterations = 0, rounds = 0;  // 0: calib::FitOptions' defaults
  SweepChoice sweep;
  std::string command;  // recorded in the file
  JobOptions job;
  std::function<void(const std::string&)> progress;
};

struct Calibration {
  std::shared_ptr<const PointsFile> points;
  calib::FitReport fit;
  calib::Calibration file;
  std::string written;              // the path written
  std::vector<std::string> params;  // the parameters fitted
  // Per pooled family: the catalog systems without points of their own that use it.
  std::map<std::string, std::vector<std::string>> family_users;
  // The fitted systems whose chip has no measured sustained power (power_unmeasured()).
  std::vector<std::string> power_unmeasured;
};

std::expected<Calibration, Failure> calibrate_points(const Catalog& cat,
                                                     const CalibrateRequest& rq);

struct CrossvalRequest {
  std::vector<std::string> points_files;  // read as one (load_points_files)
  std::vector<calib::HoldOut> by;         // empty: system, model and shape
  std::vector<std::string> params;        // empty: calib::FitOptions' defaults
  int iterations = 0, rounds = 0;         // 0: calib::FitOptions' defaults
  SweepChoice sweep;
  JobOptions job;
  std::function<void(const std::string&)> progress;
};

struct CrossValidations {
  std::shared_ptr<const PointsFile> points;
  std::vector<calib::CrossValidation> runs;  // one per `by`, in the request's order
};

// Never writes the calibration file: every fit stays in memory.
std::expected<CrossValidations, Failure> crossval_points(const Catalog& cat,
                                                         const CrossvalRequest& rq);

// Where the efficiencies of the points' systems come from: "system origin, ...".
std::string efficiency_origins(const Catalog& cat, const std::vector<ReferencePoint>& points);
std::string efficiency_origins(const std::map<std::string, std::string>& origins);

}  // namespace racktwin::app
