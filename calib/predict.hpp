#pragma once
// Predicting published reference points with the serving simulation, through the same sweep code
// `racktwin run` uses (sim/sweep.hpp).
//
// Points that share a system, a model and a workload share one sweep: the default sweep's layouts
// (sim::sweep_layouts: the compute tray, 8 XPUs, the smaller powers of two and, for an MoE model,
// the wide expert-parallel replicas within the domain), at every concurrency of the options, in
// every serving mode the system supports (aggregated, and the options' disaggregated modes when its
// serving stack offers disaggregation). An aggregated configuration within one scale-up domain
// runs only up to the concurrency the system's single-node benchmark sweeps reached
// (ServingStack::benchmark_concurrency), and a disaggregated one up to what its multi-node sweeps
// reached where its decode pool holds that many (ServingStack::MultiNode), as the measurements
// did. Where the catalog lists the multi-node deployments the published benchmarks ran for the
// point's system, model, precision and shape (scenarios/catalog/multinode.yaml), those replace
// the generic disaggregated modes, each at the clients it ran. A point's metric is then read
// off the sweep's summary or its Pareto envelope, as InferenceX reads its published curves
// (docs/validation.md).
//
// Contract: planning and evaluation never simulate and never print; the caller simulates the
// plan's points (in this process with sim::simulate, or in worker processes: app/sim_job.hpp)
// and hands the results back in the same order.

#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog.hpp"
#include "core/reference.hpp"
#include "sim/sweep.hpp"

namespace racktwin::calib {

struct PredictOptions {
  std::uint64_t seed = 20260801;  // master seed of every sweep
  std::vector<int> concurrency{1,  2,   4,   8,   16,  32,
                               64, 128, 256, 512, 1024};  // InferenceX closed-loop clients
  // Each disaggregated configuration also runs at the clients that fill its decode pool (the
  // sequences its max_seqs and KV cache hold, times its decode replicas), up to the system's
  // multi-node benchmark concurrency (ServingStack::MultiNode::concurrency), where that is beyond
  // `concurrency`: the multi-node benchmarks ran each configuration so. Off: `concurrency` alone,
  // as when the command line narrows the client counts.
  bool multinode_concurrency = true;
  // Serving modes: every sweep runs aggregated (unless `aggregated` is off), and also in these
  // disaggregated modes on systems whose serving stack offers disaggregation
  // (System::serving.disaggregation).
  bool aggregated = true;
  // Where the catalog lists the multi-node deployments a system's published benchmarks ran for the
  // point's model, precision and shape (Catalog::multinode_recipes), the sweep runs those, each at
  // its own client counts, in place of `disaggregated`. Off: `disaggregated` everywhere, as when
  // the command line names the serving modes or the client counts.
  bool recipes = true;
  std::vector<ServingMode> disaggregated{ServingMode{1, 1, std::nullopt},
                                         ServingMode{2, 1, std::nullopt}};
  // Replica sizes (XPUs) whose valid layouts the sweeps try; empty: the default sweep's, as
  // `racktwin run` takes them (sim::sweep_layouts).
  std::vector<int> replica_xpus;
  // Efficiency of a system; unset: the catalog's (Catalog::efficiency_for).
  std::function<std::optional<perf::Efficiency>(const System&)> efficiency;
};

// The sweeps that predict a list of points.
struct PredictionPlan {
  std::vector<sim::PointSpec> specs;  // every sweep point, group after group
  struct Group {
    std::string system, model, workload_id;
    std::size_t begin = 0, end = 0;  // its specs
  };
  std::vector<Group> groups;
  std::vector<int> group_of;        // per input point: its group, or -1 when it cannot run
  std::vector<std::string> errors;  // per input point: why it cannot run (empty when it can)
};

PredictionPlan plan_predictions(const Catalog& cat, const std::vector<ReferencePoint>& points,
                                const PredictOptions& options);

// Whether a point's workload describes a run's: the same lengths, range ratio and MTP, and the
// same weight precision, where a point or run without one means the system's best (`best`).
bool describes(const InferenceXWorkload& point, const InferenceXWorkload& run,
               const std::string& best);

// The workload id a sweep gives a point's workload, e.g. "isl8192-osl1024-rr0.8-fp4".
std::string workload_id(const InferenceXWorkload& w);

// A metric read off simulated results: `results` may hold any sweeps; only those of the point's
// system, model and workload id count. Fails with the reason when the sweep has no usable point or
// the curve does not reach the interactivity `at`.
std::expected<double, std::string> metric_value(const ReferencePoint& point,
                                                const std::string& workload_id,
                                                const std::vector<sim::PointResult>& results);

// The same on results already summarised (sim::summarise, sim::envelopes for each curve value).
struct SweepTables {
  std::map<sim::SummaryKey, sim::SweepSummary> summary;
  std::map<sim::CurveKey, std::vector<sim::CurvePoint>> total, output, allin;
  explicit SweepTables(const std::vector<sim::PointResult>& results);
};
std::expected<double, std::string> metric_value(const ReferencePoint& point,
                                                const std::string& workload_id,
                                                const SweepTables& tables);

struct Prediction {
  const ReferencePoint* point = nullptr;
  std::optional<double> predicted;
  std::string error;     // why there is no prediction
  double error_pct = 0;  // 100 x (predicted - published) / published
  // The sweep point a peak or minimum is read from, e.g. "tp8-ep8-dpa 1p1d at 8192 clients";
  // empty for a value interpolated on the envelope (the *_at metrics) or without a prediction.
  std::string decided_by;
};

// How a sweep point ranks for a peak or minimum metric, the higher the better; none for a failed
// point, a point without the figure (no TPOT), or a metric interpolated on an envelope.
std::optional<double> score(Metric m, const sim::PointResult& r);

// A sweep point's layout and serving mode, e.g. "tp8-ep8-dpa 1p1d".
std::string layout_mode(const sim::PointSpec& s);

// Predictions of every point once the plan's specs have been simulated.
std::vector<Prediction> predictions(const std::vector<ReferencePoint>& points,
                                    const PredictionPlan& plan,
                                    const std::vector<sim::PointResult>& results);

// The XPU power of a sweep set beside the chip's measured sustained power, for every group whose
// chip has one (catalog chip sustained_power): the power at the group's peak-throughput point and
// the highest over its points. The measured figure is a bound ("at most"), so the check holds when
// the highest stays at or below it; the peak's ratio shows how close the twin comes to it.
struct PowerCheck {
  std::string system, model, workload_id;
  double measured_w = 0;
  double peak_w = 0;    // XPU power at the point of most total tok/s per XPU
  double peak_tps = 0;  // that point's total tok/s per XPU
  std::string peak_layout;
  double highest_w = 0;       // the most any point of the sweep draws
  double busy_share = 0;      // the system's power.xpu_busy_share the sweep ran with
  bool share_fitted = false;  // fitted to the measured power by racktwin calibrate
  // At or below the measured figure to the 0.1 W the check prints: a share fitted to the figure
  // (calib/power_fit.hpp) holds it although the sweeps rerun at the file's rounded parameters.
  bool holds() const { return highest_w <= measured_w + 0.05; }
  double peak_ratio() const { return measured_w > 0 ? peak_w / measured_w : 0.0; }
};
std::vector<PowerCheck> power_checks(const PredictionPlan& plan,
                                     const std::vector<sim::PointResult>& results);

// Median and maximum of |error_pct| over the points that have a prediction.
struct ErrorSummary {
  int predicted = 0, failed = 0;
  double median_abs_pct = 0, max_abs_pct = 0;
};
ErrorSummary summarise_errors(const std::vector<Prediction>& p);

}  // namespace racktwin::calib
