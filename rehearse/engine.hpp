#pragma once
// Failures and repairs of a deployment over a long horizon, as a discrete-event model.
//
// Every part of every class (XPU, HBM, tray, switch, host, feed, ...) of each scale-up domain fails
// at the class's rate: exponential (the parts of a class in a domain share one clock, the
// superposition of their Poisson processes; a failure drawn for a part out of service is dropped,
// which thins it to the parts in service) or Weibull with mean 1 / rate (one clock per part, drawn
// again when the part is back in service). A failure takes out what
// topology::assess says the failed unit takes out in its domain; the domain's replicas are placed
// again on the survivors with topology::place (N of M: what a domain still serves). Repairs run as
// queues: a restart (the replica back on the same parts), a technician's swap from the site's
// spares pool (technicians limited, spares replenished after the vendor return time), or the
// facility's repair of a feed.
//
// Serving: the offered load needs `offered_replicas` replicas at the service target. While fewer
// serve, the target is missed and, beyond the replicas' saturation throughput, tokens are lost. The
// per-replica figures (throughput at the target and at saturation, latency by load) are the
// surrogate taken from the simulation (app/rehearse.hpp says where).
//
// Jobs: the deployment is cut into training-like jobs of a size; a failure of any part a job's
// XPUs depend on (any effect, slowed included) interrupts the job, which restarts after the restart
// time on hot spares. Interruptions are counted by class; MTTF is job running time / interruptions.
//
// Contract: pure and deterministic. Randomness comes from the seed split into one named stream per
// part class ("failures/<class>"); the same inputs give the same outcome bit for bit. No I/O.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/rehearsal.hpp"
#include "topology/topology.hpp"

namespace racktwin::rehearse {

// Serving figures per unit at the rehearsal's workload, from the simulation. The unit is one
// replica of `replica_xpus` XPUs, or with `pools` one serving group of a disaggregated point: each
// pool's replicas (its prefill replicas and its decode replicas, of their own sizes). A group
// serves only with all of its pools: the site's units up are the fewest that any pool's replicas
// in service make whole (with no spare replica in either pool, a failed replica of either costs a
// group until the survivors re-form).
struct Surrogate {
  struct Pool {
    int xpus = 8;      // per replica
    int replicas = 1;  // per unit
  };
  int replica_xpus = 8;
  std::vector<Pool> pools;    // empty: one replica of replica_xpus per unit; else prefill, decode
  double tps_at_target = 0;   // total tok/s per unit at the service target
  double tps_saturated = 0;   // the most tok/s per unit the sweep reaches (>= tps_at_target)
  // Latency by load: points (tok/s per unit, TTFT p99 s, TPOT p99 s), throughput increasing.
  struct Point {
    double tps = 0, ttft_p99_s = 0, tpot_p99_s = 0;
  };
  std::vector<Point> curve;

  std::vector<Pool> unit() const;  // `pools`, or the one replica
  int unit_xpus() const;
  int unit_replicas() const;
  bool grouped() const { return pools.size() > 1; }
};

// Latency at a load per unit, interpolated on the curve (held flat beyond its ends).
Surrogate::Point latency_at(const Surrogate& s, double tps_per_unit);

// How a site's domains hold units: `block` consecutive domains (one when a unit fits a domain)
// hold `units_per_block` units, the replicas of each pool packed first fit in pool order (the
// prefill pool first), each on the XPUs the ones before it left (topology::place_free);
// targets[j][p] is the replicas of pool p that the j-th domain of a block holds. Domains past the
// last whole block take the first targets of a block: their replicas join the site's pools (a
// prefill replica in one domain feeds a decode replica in another over the scale-out network). A
// domain re-forms on its survivors the most whole groups they hold, then each pool up to its
// targets. A replay deploys its slice the same way (sim::deploy_in_domains).
struct UnitPacking {
  int block = 1;
  int units_per_block = 0;
  std::vector<std::vector<int>> targets;
  const std::vector<int>& of_domain(int d) const {
    return targets[static_cast<std::size_t>(d % block)];
  }
};

// Throws InputError when a replica of a pool does not fit a domain, or a unit cannot be packed
// on a few domains.
UnitPacking pack_units(const topology::Topology& domain, const Surrogate& s);

// Units placed on `domains` healthy domains.
int units_placed(const topology::Topology& domain, const Surrogate& s, int domains);

struct EngineInput {
  const topology::Topology* domain = nullptr;  // one scale-up domain of the system
  int domains = 1;
  Seconds horizon{86400.0};
  Seconds sample_every{3600.0};
  std::uint64_t seed = 1;
  std::vector<FailureClass> classes;  // in kAllPartClasses order
  RepairModel repair;
  // Serving: the units (Surrogate) and the load in units at the target.
  Surrogate surrogate;
  double offered_replicas = 0;
  bool serving = true;
  // Jobs (serving == false): XPUs per job.
  int job_xpus = 0;
};

struct FailureEvent {
  double t_s = 0;
  int domain = 0;
  std::string part;  // the unit that failed, e.g. "rack3/vindaloo5/xpu2"
  PartClass cls = PartClass::xpu;
  int xpus_out = 0;      // XPUs the failure took out of service (lost or cut off)
  int replicas_hit = 0;  // serving: replicas (of any pool) that went down with it; jobs: jobs
                         // interrupted
  double recovered_s = -1;  // time from the failure to the capacity it took serving again; -1: not
                            // within the horizon
  double waited_spare_s = 0, waited_technician_s = 0;  // of a swap, before the technician began
};

struct Sample {
  double t_s = 0;              // start of the interval
  double replicas_up = 0;      // time-averaged over the interval
  double min_replicas_up = 0;  // the fewest at any moment of it
  double attainment = 0;       // share of the interval with enough replicas for the target
  double served_tps = 0, lost_tps = 0;  // time-averaged, site-wide
  double ttft_p99_s = 0, tpot_p99_s = 0;  // at the interval's mean load per serving replica
  int failures = 0;          // failures of parts in service that began in the interval
  double parts_down = 0;     // time-averaged parts out of service awaiting their repair
};

struct ClassTally {
  int failures = 0;       // failures of parts in service
  int interruptions = 0;  // jobs: jobs this class interrupted
  int spares_used = 0;
  int spares_at_start = 0;
  int min_spares = 0;  // the fewest in the pool at any moment
};

struct JobTally {
  int job_xpus = 0, jobs = 0;
  std::int64_t interruptions = 0;
  double running_s = 0;  // summed over jobs
  double mttf_s = 0;     // running_s / interruptions (0 when none)
};

// Serving counts (replicas_total, replicas up, offered, time at replicas, samples) are in units:
// replicas, or a disaggregated point's groups (Surrogate).
struct EngineOutcome {
  int replicas_total = 0;  // placed on the whole deployment with nothing failed
  int xpus_total = 0;
  double offered_replicas = 0;
  double availability = 0;  // time-averaged replicas up / replicas_total
  double attainment = 0;    // share of the horizon with replicas up >= offered
  double min_replicas_up = 0;
  double tokens_offered = 0, tokens_served = 0, tokens_late = 0, tokens_lost = 0;
  double technician_utilisation = 0;  // busy technician-time / (technicians x horizon)
  int swaps_unfinished = 0;           // swaps still queued or under way at the end
  // Time spent with each number of replicas up (count, seconds), counts increasing: attainment and
  // tokens lost at any other load follow from it without another run. A disaggregated point's
  // count is fractional while a pool is short of a whole group's replicas.
  std::vector<std::pair<double, double>> time_at_replicas;
  std::vector<FailureEvent> events;   // in time order
  std::vector<Sample> samples;
  std::array<ClassTally, kAllPartClasses.size()> classes{};
  JobTally jobs;
};

// Attainment and the share of the offered tokens lost had the load been `offered_replicas`, read
// off the outcome's time at each number of replicas up (the same failures and repairs).
struct AtLoad {
  double attainment = 0, tokens_lost_share = 0;
};
AtLoad at_load(const EngineOutcome& o, const Surrogate& s, double offered_replicas);

// Throws InputError when the input cannot be rehearsed (no domain topology, a replica larger than
// a domain, a job larger than the deployment).
EngineOutcome run_engine(const EngineInput& in);

// The units of a class in one domain's topology (XPUs, compute trays, switch trays, hosts, feeds).
std::vector<topology::PartId> units_of(const topology::Topology& t, PartClass c);

}  // namespace racktwin::rehearse
