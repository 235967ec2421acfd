#pragma once
// Where a point's replicas run: replicas placed on a topology of the point's system (packed by
// tray, rack and domain, as topology::place does), with the bandwidths the serving simulation's
// SimGrid platform gives each replica, and the host DRAM pools that KV offload uses. Pure: no
// SimGrid here (sim/platform.cpp turns a Deployment into a platform), so tests read it directly.

#include <expected>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/catalog.hpp"
#include "topology/queries.hpp"
#include "topology/topology.hpp"

namespace racktwin::sim {

// One replica's place in the deployment.
struct Site {
  std::vector<int> xpus;  // XPU ordinals in the topology (Topology::xpus())
  int domain = 0;
  int rack = 0;  // compute rack of its first XPU
  int pool = 0;  // index of its host DRAM pool in Deployment::pools
  // Sums over its XPUs, bytes/s per direction.
  double fabric_bw = 0;     // scale-up injection bandwidth (links to switches or mesh peers)
  double uplink_bw = 0;     // of which into switch trays that leave the rack (multi-rack domains)
  double scale_out_bw = 0;  // scale-out NICs
  double host_link_bw = 0;  // links to the host parts serving its XPUs
};

// Host parts whose DRAM a set of replicas share: the host parts serving one replica, joined with
// those of every replica sharing one of them (a Katsu tray serves the 8 XPUs of its Vindaloo tray;
// a Grace CPU two GPUs; a server's host CPUs its 8 GPUs).
struct HostPool {
  std::vector<std::string> parts;  // host part names
  double dram_bytes = 0;           // their DRAM together
  std::vector<int> replicas;       // replicas (indices into Deployment::sites) it serves
};

struct Deployment {
  std::shared_ptr<const topology::Topology> topology;  // what the replicas are placed on
  int domains = 0;                                     // scale-up domains built
  int replica_xpus = 0;                                // XPUs per replica
  std::vector<Site> sites;
  std::vector<HostPool> pools;
  double rack_latency_s = 0;       // one transfer across the scale-up fabric within a rack
  double domain_latency_s = 0;     // one transfer across racks of a domain (the widest tier)
  double scale_out_latency_s = 0;  // one transfer across the scale-out network
};

// The topologies a batch of points has built, by system and number of domains: a batch builds
// each once (a 2,048-XPU domain's graph costs more to build than most points cost to simulate).
// Keyed by the System object, which must outlive the cache.
class TopologyCache {
 public:
  std::shared_ptr<const topology::Topology> get(const System& system, int domains);

 private:
  std::map<std::pair<const System*, int>, std::shared_ptr<const topology::Topology>> built_;
};

// Places `replicas` replicas of `replica_xpus` XPUs each on as few scale-up domains of `system` as
// hold them, in placement order. Fails (with the reason) when the replica does not fit a domain or
// the deployment would exceed topology::kMaxDeploymentXpus. The topologies come from `cache`.
std::expected<Deployment, std::string> deploy(const System& system, int replica_xpus, int replicas,
                                              TopologyCache& cache);
// The same with topologies of its own.
std::expected<Deployment, std::string> deploy(const System& system, int replica_xpus, int replicas);

// The same on a given topology (its domains must hold the replicas).
std::expected<Deployment, std::string> deploy(std::shared_ptr<const topology::Topology> t,
                                              int replica_xpus, int replicas);

// Replicas of one size, placed together (a pool of disaggregated serving).
struct ReplicaGroup {
  int xpus = 1;      // per replica
  int replicas = 1;  // of this size
};
// Pools of different replica sizes: each group's replicas, in order, on the XPUs the groups before
// it left free (sites in group order), on as few scale-up domains as hold them all. A replica
// larger than a domain is not placed beside replicas of another size. One group, or groups of one
// size larger than a domain (whole domains each, the groups in order), is the deployment above.
std::expected<Deployment, std::string> deploy(const System& system,
                                              const std::vector<ReplicaGroup>& groups,
                                              TopologyCache& cache);
std::expected<Deployment, std::string> deploy(std::shared_ptr<const topology::Topology> t,
                                              const std::vector<ReplicaGroup>& groups);

// Pools placed domain by domain: in each domain of `t`, per_domain[d][p] replicas of pool p's
// size (pool_xpus[p]), the pools in order, each on the XPUs the ones before it left
// (topology::place_free); sites pool by pool (every replica of pool 0 first), domains in order
// within a pool. What a site rehearsal packs on each domain (rehearse::pack_units).
std::expected<Deployment, std::string> deploy_in_domains(
    std::shared_ptr<const topology::Topology> t, const std::vector<int>& pool_xpus,
    const std::vector<std::vector<int>>& per_domain);

// What a failed part does to each replica, from topology::assess: a replica with a lost or
// cut-off XPU is down; otherwise it keeps the smallest scale-up fraction of its XPUs.
struct ReplicaImpact {
  bool down = false;
  double scale_up_fraction = 1.0;
};

// The `index`-th part (in build order) of kind `kind` of the deployment's topology, failed:
// its effect on every replica. Fails when the topology has no such part.
std::expected<std::vector<ReplicaImpact>, std::string> failure_impact(const Deployment& d,
                                                                      topology::PartKind kind,
                                                                      int index);

}  // namespace racktwin::sim
