#pragma once
// `racktwin rehearse FILE --replay EVENT`: one failure of a serving rehearsal replayed request by
// request. The rehearsal's event model integrates a horizon of failures with a per-replica
// surrogate; the replay runs the serving simulation (SimGrid) through one of them, on a slice of
// the site around the failed part, twice with the same arrivals: with the failure and without it.
// What it adds to the surrogate: the requests restarted, the dip in served tokens and the time the
// survivors take to drain what the failure left, latency percentiles through the window.
//
// The slice (docs/failures.md section 3.7):
// - whole racks of the site's deployment, at least kMinSliceReplicas replicas and four times the
//   replicas the failure took down, the failed part's rack renamed as the slice's first rack;
// - the chosen point of the serving sweep (layout, precision, efficiencies, engine) on those
//   replicas, with Poisson arrivals at the site's offered load per replica (the closed loop of
//   the sweep cannot hold its load through a failure: it would slow its own clients);
// - the failure kLeadSeconds after the first arrival; repaired after the rehearsal's recovery
//   time when that falls inside the window, else down to its end.
// The survivors of the slice absorb the failed replicas' load alone, where the site spreads it
// over every replica: the replay's latency through the failure is an upper bound.
//
// Contract: deterministic (the point's seed is the stream "replay/<event>" of the rehearsal's);
// never prints; fails with the reason when the rehearsal cannot be replayed.

#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "app/rehearse.hpp"
#include "app/sim_job.hpp"
#include "sim/serving.hpp"

namespace racktwin::app {

inline constexpr int kMinSliceReplicas = 16;
inline constexpr double kLeadSeconds = 120;     // arrivals before the failure
inline constexpr double kWarmupSeconds = 60;    // of which warm-up (left out of the metrics)
inline constexpr double kWindowSeconds = 600;   // arrivals after the failure, at most
inline constexpr double kMinWindowSeconds = 120;
inline constexpr int kMaxReplayRequests = 2'000'000;  // per run; a longer window is cut short

// "worst": the failure that took the most replicas down (the earliest of those); else the failure's
// number, 1-based in time order (the rows of --events).
std::expected<std::size_t, std::string> replay_event_index(const RehearsalOutcome& o,
                                                           const std::string& which);

struct ReplayOutcome {
  std::size_t event = 0;  // index into the rehearsal's events
  rehearse::FailureEvent failure;
  std::string slice_part;  // the failed part as named in the slice
  // A disaggregated point's slice: replicas of each pool (prefill, decode) per domain, the failed
  // domain's layout first (sim::PointSpec::placement); empty for whole racks of an aggregated one.
  std::vector<std::vector<int>> slice_placement;
  int slice_racks = 0, slice_replicas = 0, site_replicas = 0;
  int replicas_down = 0;  // in the slice (topology::assess on the slice's deployment)
  int units_left = 0;     // the slice's units (replicas or groups) the survivors make whole
  std::string unit = "replica";  // what the load is per (RehearsalOutcome::unit)
  int replicas_slowed = 0;
  double load_tps_per_replica = 0;  // the site's offered load per unit: replica or group (tok/s)
  double rate_req_s = 0;   // Poisson arrivals
  double window_s = 0;     // arrivals after the failure
  int requests = 0;        // per run
  std::optional<double> repair_s;  // from the failure; none: down to the end of the window
  sim::PointResult without, with;
  // Output tokens per second, 10-second trailing means, from the end of the warm-up to the end of
  // the window (x: s after the failure).
  std::vector<std::pair<double, double>> served_without, served_with;
  double lowest_share = 1;  // the lowest 10-s mean with the failure over the same without it
  std::optional<double> back_within_5pct_s;  // from the failure; none: not within the window
  // The surrogate's latency at the slice's load per replica before the failure and on the
  // survivors after it.
  rehearse::Surrogate::Point surrogate_before, surrogate_after;

  // What was replayed and what it showed, one sentence a line, for the CLI and the GUI;
  // `failures`: the rehearsal's number of failures.
  std::vector<std::string> summary(std::size_t failures) const;
  std::vector<std::vector<std::string>> table() const;  // first row the header
  Json to_json() const;
};

std::expected<ReplayOutcome, std::string> replay_failure(const Catalog& cat,
                                                         const RehearsalOutcome& o,
                                                         const std::string& which,
                                                         const JobOptions& job);

// The throughput-through-the-failure chart of a replay.
charts::NamedChart replay_chart(const RehearsalOutcome& o, const ReplayOutcome& r);

}  // namespace racktwin::app
