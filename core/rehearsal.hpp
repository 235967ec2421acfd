#pragma once
// What operations asks the twin: a deployment of one system (N scale-up domains) run for a horizon
// of days to a year while its parts fail at field rates and are repaired by restarts, technicians
// and a spares pool; how much capacity, how many tokens and how much of the service target that
// costs. Parsed once from YAML by scenarios/ (rehearsal_loader.hpp) and validated there; every
// value below is already checked. The format is documented in docs/failures.md.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/plan.hpp"

namespace racktwin {

// What fails. Each class attaches to one kind of part in the topology (its "unit"), and what the
// failure takes out is what topology::assess says that unit takes out.
enum class PartClass {
  xpu,           // the accelerator die, its SRAM, system processor, thermal interface (unit: XPU)
  hbm,           // its HBM stacks (unit: XPU)
  software,      // driver, runtime, collective library, serving engine (unit: XPU; restart only)
  link,          // a cable or transceiver of the XPU's fabric attachment (unit: XPU)
  compute_tray,  // the tray's board, chassis, IO expansion (unit: compute tray)
  psu,           // the tray's power supply (unit: compute tray)
  switch_tray,   // a scale-up switch tray (Chana, NVLink switch tray, HGX baseboard NVSwitches)
  host,          // the host tray or server host: NIC, SSD, BMC, unplanned host maintenance
  cpu_dram,      // the host's CPUs and system memory (unit: host)
  power_feed,    // a rack's power feed (unit: feed; takes the rack)
};
inline constexpr std::array kAllPartClasses{
    PartClass::xpu,          PartClass::hbm, PartClass::software,    PartClass::link,
    PartClass::compute_tray, PartClass::psu, PartClass::switch_tray, PartClass::host,
    PartClass::cpu_dram,     PartClass::power_feed};
std::string to_string(PartClass c);
std::optional<PartClass> part_class_from_string(std::string_view s);
std::vector<std::string> part_class_names();

// How a failure of the class is mended.
//   restart  the replica (or job) restarts on the same parts after the restart time; nothing is
//            replaced (software, transient faults);
//   swap     a technician swaps the field-replaceable unit from the spares pool (the part stays
//            down until then); the pool is replenished after the vendor return time;
//   facility the site's electricians restore the feed (no technician of the pool, no spare).
enum class RepairTier { restart, swap, facility };
std::string to_string(RepairTier t);
std::optional<RepairTier> repair_tier_from_string(std::string_view s);

// The time-to-failure of one part of the class: exponential (shape 1) or Weibull with the same
// mean, 1 / rate.
struct FailureClass {
  PartClass part = PartClass::xpu;
  Figure rate;                 // failures per part-hour
  Figure shape;                // Weibull shape; 1: exponential
  RepairTier tier = RepairTier::swap;
  std::string field_category;  // what the field data calls it (Llama 3's categories)
};

struct RepairModel {
  Figure restart;        // s: a replica or job back on the same parts after a restart
  Figure reschedule;     // s: replicas re-formed on the survivors after a hardware failure
  Figure swap;           // s: a technician's swap of a field-replaceable unit
  Figure vendor_return;  // s: a spare used is back in the pool after this
  Figure feed_repair;    // s: a power feed restored
  int technicians = 4;   // per site, working in parallel
  FigureOrigin technicians_origin;
  // Spares per site for each swapped class: a count, or a share of the class's units (rounded up).
  struct Spares {
    double value = 0.01;
    bool share = true;
    FigureOrigin origin;
  };
  std::array<Spares, kAllPartClasses.size()> spares{};
};

// Where serving capacity per replica comes from: simulated sweeps of a scenario read at the
// service target (as the planner does), or given.
struct RehearsalServing {
  std::string scenario;  // resolved relative to the rehearsal file; empty when given
  std::string workload, model;
  std::optional<Seconds> tpot_p50, tpot_p99, ttft_p99;  // the service target
  // Given instead of simulated: output tok/s per replica at the target and the replica's XPUs.
  std::optional<Figure> tps_per_replica;
  int replica_xpus = 0;
  SourceLocation where;
};

// A training-like job: one failure of any part its XPUs depend on interrupts it.
struct RehearsalJobs {
  std::vector<int> sizes;  // XPUs per job; the deployment is cut into as many jobs as fit
  int replications = 1;    // independent runs (seed streams "replication/<i>"), averaged
  SourceLocation where;
};

struct Rehearsal {
  std::string file, text, name, description;
  std::string system;
  int domains = 1;
  Seconds horizon{30 * 86400.0};
  std::uint64_t seed = 1;
  Seconds sample_every{3600.0};  // the time series' step
  std::optional<RehearsalServing> serving;  // serving rehearsal
  std::optional<RehearsalJobs> jobs;        // training-like jobs (field validation)
  // Serving: racks of the site held as spare capacity; the offered load is what the other racks'
  // replicas serve at the target. The search finds the fewest spare racks for the goal.
  int spare_racks = 0;
  double attainment_goal = 0.999;
  std::vector<FailureClass> classes;  // one per PartClass, in kAllPartClasses order
  // Every class's rate times this (a fleet younger or older, a cluster of another vintage); the
  // rates in `classes` are already multiplied.
  std::optional<Figure> rate_scale;
  RepairModel repair;
};

}  // namespace racktwin
