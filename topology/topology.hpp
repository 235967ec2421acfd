#pragma once
// The physical twin of a catalog system: every part (XPU, tray, switch, host, rack, feed, ...) is
// a vertex of a Boost.Graph, and every relation between two parts an edge.
//
// Edges are directed. Support edges run from a part to what depends on it:
//   contains  rack -> tray, tray -> XPU, rack pair -> rack, ...
//   powers    power feed -> rack
//   hosts     host (Katsu tray, Grace CPU, server host) -> each XPU it serves
// Network links (scale_up, uplink, scale_out, host_link) are stored as two arcs, one each way, the
// second flagged `mirror`; bandwidths are per direction. A part fails with everything reachable
// from it along support edges; the network is what carries XPU traffic.
//
// Part names are stable and readable: "rack3", "rack3/vindaloo5", "rack3/vindaloo5/xpu2",
// "rack3/chana0", "rack3/feed", "hostrack3/katsu5", "pair3", "domain0/spine1", "scaleout".
// Racks are numbered across the whole deployment; trays, switches and XPUs within their parent.
// Names are documented in docs/topology.md; Topology::part_names() lists them all.
//
// Knows nothing of SimGrid. Pure: building and queries do no I/O.

#include <boost/graph/adjacency_list.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/catalog.hpp"
#include "core/units.hpp"

namespace racktwin::topology {

enum class PartKind {
  xpu,
  compute_tray,    // Vindaloo, an NVL72 compute tray, an HGX/MI server
  switch_tray,     // Chana, an NVLink switch tray
  onboard_switch,  // the NVSwitch chips of an HGX baseboard (one vertex per server)
  host,            // a Katsu host tray, a Grace/Vera CPU, a server's host CPUs
  compute_rack,
  host_rack,
  rack_pair,
  power_feed,
  spine,      // one plane of the second switch tier joining racks into a domain (aggregate)
  scale_out,  // the scale-out network joining domains (aggregate, non-blocking)
};
inline constexpr PartKind kAllPartKinds[] = {
    PartKind::xpu,        PartKind::compute_tray, PartKind::switch_tray, PartKind::onboard_switch,
    PartKind::host,       PartKind::compute_rack, PartKind::host_rack,   PartKind::rack_pair,
    PartKind::power_feed, PartKind::spine,        PartKind::scale_out};
std::string to_string(PartKind k);

enum class LinkKind { contains, powers, hosts, scale_up, uplink, scale_out, host_link };
inline constexpr LinkKind kAllLinkKinds[] = {
    LinkKind::contains, LinkKind::powers,    LinkKind::hosts,    LinkKind::scale_up,
    LinkKind::uplink,   LinkKind::scale_out, LinkKind::host_link};
std::string to_string(LinkKind k);
bool is_support(LinkKind k);  // contains, powers, hosts
bool is_network(LinkKind k);  // the others

struct Part {
  PartKind kind = PartKind::xpu;
  std::string name;
  int domain = -1;      // scale-up domain, -1 when the part serves several or none
  int rack = -1;        // compute rack (or the compute rack a host rack is paired with), -1 if none
  int tray = -1;        // compute tray index within its rack, -1 if none
  int index = 0;        // position within its parent (XPU in tray, switch tray in rack, ...)
  bool uplink = false;  // switch trays: joins the rack to the domain's second tier
};

struct Link {
  LinkKind kind = LinkKind::contains;
  BytesPerSecond bandwidth;  // network links: per direction; zero for support edges
  bool mirror = false;       // the second arc of a network link
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Part, Link>;
using PartId = Graph::vertex_descriptor;

class Topology {
 public:
  const System& system() const { return *system_; }
  int domains() const { return domains_; }
  const Graph& graph() const { return graph_; }
  const Part& part(PartId v) const { return graph_[v]; }

  // The part with this name, if any.
  std::optional<PartId> find(std::string_view name) const;
  // The part with this name; throws InputError naming the nearest part when there is none.
  PartId at(std::string_view name, std::string_view what = "part") const;
  // Every part name, in build order (racks, their trays and XPUs, ...).
  std::vector<std::string> part_names() const;

  // Every XPU, ordered by domain, rack, tray and position; an XPU's ordinal is its index here.
  const std::vector<PartId>& xpus() const { return xpus_; }
  // The XPUs of one domain, in the same order.
  std::vector<PartId> domain_xpus(int domain) const;
  // The ordinal of an XPU in xpus().
  int ordinal(PartId xpu) const { return ordinal_.at(xpu); }

  // Parts of each kind, and links of each kind (a network link counts once).
  std::map<PartKind, int> part_counts() const;
  std::map<LinkKind, int> link_counts() const;

 private:
  friend class Builder;
  const System* system_ = nullptr;
  int domains_ = 0;
  Graph graph_;
  std::vector<PartId> xpus_;
  std::unordered_map<PartId, int> ordinal_;
  std::unordered_map<std::string, PartId> by_name_;
};

// The most XPUs a deployment may hold (keeps the graph within memory and queries fast).
inline constexpr int kMaxDeploymentXpus = 1 << 17;

// N scale-up domains of `system` joined by its scale-out network. The system must outlive the
// topology. Throws InputError when N < 1, the deployment exceeds kMaxDeploymentXpus, or the
// catalog cannot describe the system's wiring (e.g. a multi-rack domain without uplink trays).
Topology build(const System& system, int domains = 1);

// Lower-case name stem of a part kind for this system: "vindaloo", "chana", "katsu", "tray",
// "server", "nvswitch", "grace", "host", ...
std::string stem(const System& s, PartKind k);

}  // namespace racktwin::topology
