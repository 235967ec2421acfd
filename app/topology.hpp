#pragma once
// The physical twin of a catalog system, as `racktwin topology` and the GUI show it: the report
// (parts, links, bandwidth, power budget), the list of parts, the path between two XPUs, the
// GraphViz graph, and what failing a set of parts takes out.
//
// Contract: pure functions of the catalog and the request. A deployment the topology builder
// rejects (domains out of range) throws InputError; an unknown system, part name or missing power
// figure is returned as a Problem. The values carry every figure the front ends show; to_json
// gives the `racktwin topology --json` documents.

#include <optional>
#include <string>
#include <vector>

#include "app/json.hpp"
#include "app/problem.hpp"
#include "core/catalog.hpp"
#include "power/power_model.hpp"
#include "topology/queries.hpp"

namespace racktwin::app {

struct TopologyRequest {
  std::string system;  // catalog system id
  int domains = 1;     // scale-up domains joined by the scale-out network
  double pue = 1.10;   // facility PUE for the power summary
};

// The route and bandwidth between two XPUs.
struct PathView {
  std::string from, to;  // XPU names
  bool reachable = false;
  topology::Network network = topology::Network::scale_up;
  int switch_hops = 0;
  BytesPerSecond bandwidth;  // max-flow, per direction
  Seconds latency;
  std::vector<std::string> route;  // part names, both XPUs included
};
Json to_json(const PathView& p);

// The parts of one kind in the deployment.
struct PartKindCount {
  topology::PartKind kind = topology::PartKind::xpu;
  std::string label;  // what the system calls it, e.g. "Chana", "Katsu host tray"
  int count = 0;
  std::string example;  // the first part's name
  int uplinks = 0;      // switch trays: how many join the rack to the second tier
};

// The network links (or support edges) of one kind.
struct LinkKindCount {
  topology::LinkKind kind = topology::LinkKind::contains;
  std::string label;  // e.g. "scale-up link"
  int count = 0;
  std::vector<BytesPerSecond> bandwidths;  // distinct, ascending; empty for support edges
};

// A representative XPU pair (same tray, same rack, other rack, other domain) and its path.
struct SamplePath {
  std::string pair;  // "same tray", "same rack", "same domain, other rack", "other domain"
  PathView path;
};

// The power budget of the system and of the whole deployment.
struct PowerSummary {
  double pue = 1.0;
  power::Conversion conversion;
  Watts xpu_idle, xpu_tdp;                     // XPU at no activity; at full activity (P_max)
  std::optional<Watts> xpu_measured_sustained;  // measured at load, where published
  power::PowerSheet compute_rack;                 // rated
  std::optional<power::PowerSheet> host_rack;     // rated; when hosts sit in their own rack
  std::vector<power::BudgetCheck> budget_checks;  // empty when no rack figure is published
  double budget_tolerance = power::kBudgetTolerance;
  power::AllIn all_in;
  double all_in_gap = 0;       // |computed / published - 1| of the all-in figure (0 when computed)
  Watts it_provisioned;        // the deployment's IT power, XPUs at TDP
  Watts it_full_activity;      // the same with XPUs fully busy
  Watts facility_provisioned;  // it_provisioned x PUE
};

struct TopologyReport {
  std::string system, name;
  int domains = 1;
  int domain_xpus = 0;
  int xpus = 0;
  std::vector<PartKindCount> parts;  // in PartKind order
  std::vector<LinkKindCount> links;  // in LinkKind order
  BytesPerSecond bisection;          // of domain 0, per direction
  BytesPerSecond bisection_per_xpu;  // across the cut, per XPU of one half
  // With two domains or more: domains 0..scale_out_split_last against the rest.
  std::optional<BytesPerSecond> scale_out_bisection;
  int scale_out_split_last = 0;
  std::vector<SamplePath> paths;
  PowerSummary power;
};
Json to_json(const TopologyReport& r);

struct PartEntry {
  std::string name;
  topology::PartKind kind = topology::PartKind::xpu;
  int domain = -1;
};
struct PartList {
  std::vector<PartEntry> parts;  // in build order
};
Json to_json(const PartList& l);

struct FailureRequest {
  TopologyRequest topology;
  std::vector<std::string> failed;  // part names
  int place_xpus = 0;               // > 0: pack replicas of this size before and after
};

struct FailedPart {
  std::string name;
  topology::PartKind kind = topology::PartKind::xpu;
};

// A run of affected XPUs (in XPU order) that share effect, cause and how.
struct AffectedGroup {
  topology::Effect effect = topology::Effect::none;
  std::string cause, how;
  std::vector<std::string> xpus;
};

struct DomainBisection {
  int domain = 0;
  BytesPerSecond before, after;
};

struct PlacementView {
  int replica_xpus = 0;
  topology::Scope scope = topology::Scope::tray;
  std::vector<std::vector<std::string>> replicas;  // XPU names of each replica
  std::vector<std::string> leftover;               // in-service XPUs no replica uses
  int out_of_service = 0;
  int placed_xpus() const { return static_cast<int>(replicas.size()) * replica_xpus; }
};

struct FailureAssessment {
  std::string system;
  int domains = 1;
  int domain_xpus = 0;
  std::vector<FailedPart> failed;  // as given, without repeats
  int xpus = 0, lost = 0, cut_off = 0, slowed = 0, in_service = 0;
  BytesPerSecond scale_up_before, scale_up_after;  // summed injection bandwidth
  double scale_up_left = 1.0;                      // after / before
  std::vector<DomainBisection> bisection;          // every domain
  std::vector<AffectedGroup> affected;
  std::optional<PlacementView> placement_before, placement_after;  // with place_xpus > 0
};
Json to_json(const FailureAssessment& a);

// The racks of the first rack (pair) of a system as the GUI draws them: the compute rack's trays and
// switch trays, and the host rack's trays when hosts sit in a rack of their own, in the topology's
// build order (not physical U positions), each with its rated power.
struct ElevationSlot {
  std::string name;   // part name, e.g. "rack0/vindaloo3"
  topology::PartKind kind = topology::PartKind::compute_tray;
  std::string label;  // "vindaloo3", "chana1 (uplink)", ...
  int xpus = 0;       // XPUs in the tray
  Watts rated;        // XPUs at TDP and the tray's overhead (and in-tray hosts); switch or host tray
};
struct RackElevation {
  std::string system, name;
  std::vector<ElevationSlot> compute;  // compute trays, then switch trays
  std::vector<ElevationSlot> host;     // empty when hosts sit inside the compute trays or servers
  std::string note;                    // what the drawing leaves out
};
Result<RackElevation> rack_elevation(const Catalog& cat, const std::string& system);

// The whole scale-up domain (domain 0) of a system as the GUI draws it: every compute rack with its
// trays and switch trays (servers with their on-board switch and host CPUs), every host rack with its
// host trays, and the planes of the second switch tier joining the racks, from the topology graph
// in build order. Jalapeno: 16 compute racks, 16 host racks, the spine planes; an NVL72: one rack;
// an HGX server: one server.
struct ElevationRack {
  std::string name;  // "rack3", "hostrack3"
  topology::PartKind kind = topology::PartKind::compute_rack;
  int rack = -1;  // the compute rack (a host rack: the compute rack it is paired with, -1 if none)
  std::vector<ElevationSlot> rack_slots;
};
struct DomainElevation {
  std::string system, name;
  int domain_xpus = 0;
  std::vector<ElevationRack> compute, host;
  std::vector<ElevationSlot> spines;  // empty for a domain of one rack or server
  std::string note;
  // Every slot, in the order slot_effects returns them: compute racks, host racks, spines.
  std::vector<const ElevationSlot*> every_slot() const;
};
Result<DomainElevation> domain_elevation(const Catalog& cat, const std::string& system);

// What failing one slot's part does to every slot of the elevation: the worst effect on its XPUs
// (none for a switch or host tray unless it is the part failed: then lost), from the assessment.
std::vector<topology::Effect> slot_effects(const RackElevation& e, const FailureAssessment& a);
std::vector<topology::Effect> slot_effects(const DomainElevation& e, const FailureAssessment& a);

Result<TopologyReport> topology_report(const Catalog& cat, const TopologyRequest& req);
Result<PartList> topology_parts(const Catalog& cat, const TopologyRequest& req);
// Problem::Input::part when either name is not a part of the deployment.
Result<PathView> topology_path(const Catalog& cat, const TopologyRequest& req,
                               const std::string& from, const std::string& to);
// The GraphViz text of topology::to_dot().
Result<std::string> topology_dot(const Catalog& cat, const TopologyRequest& req);
Result<FailureAssessment> assess_failure(const Catalog& cat, const FailureRequest& req);

}  // namespace racktwin::app
