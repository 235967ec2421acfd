#pragma once
// Queries on a built topology: what a set of failed parts takes out of service, paths and
// bandwidth between XPUs, bisection bandwidth, and placement of model replicas.
//
// Failure semantics (docs/topology.md):
//   lost     the XPU is down: it failed, or a part it depends on did (its tray, rack, power feed,
//            rack pair, or its host);
//   cut_off  the XPU works but can no longer reach the main island of its scale-up domain (the
//            connected piece holding most of the domain's working XPUs);
//   slowed   the XPU serves, with part of its scale-up, domain or scale-out bandwidth gone (a dead
//            Chana tray takes its share of every rack XPU's scale-up bandwidth, no XPU).
// Bandwidths are per direction. Max-flows treat XPUs as endpoints only: traffic never transits an
// XPU, as in a switched fabric (and as MI full meshes are rated per peer).

#include <span>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace racktwin::topology {

enum class Effect { none, slowed, cut_off, lost };
std::string to_string(Effect e);

struct XpuImpact {
  PartId xpu{};
  Effect effect = Effect::none;
  std::string cause;  // the failed part behind it ("several failures" when more than one is)
  std::string how;  // e.g. "loses power", "loses its host hostrack3/katsu5", "7/8 of scale-up left"
  double scale_up_fraction = 1.0;   // of the XPU's scale-up injection bandwidth still usable
  double domain_fraction = 1.0;     // of its bandwidth out of the rack into a multi-rack domain
  double scale_out_fraction = 1.0;  // of its scale-out bandwidth
};

struct Impact {
  std::vector<PartId> failed;  // as given, without repeats
  std::vector<bool> down;      // by part: failed, or depends on a failed part along support edges
  std::vector<Effect> state;   // by XPU ordinal (Topology::xpus())
  std::vector<XpuImpact> affected;  // XPUs with an effect, in XPU order

  int total_xpus = 0;
  int lost = 0;
  int cut_off = 0;
  int slowed = 0;
  // Sum over XPUs of scale-up injection bandwidth: of every XPU before, of in-service XPUs after.
  BytesPerSecond scale_up_before;
  BytesPerSecond scale_up_after;

  // XPUs still serving (slowed ones included).
  int in_service() const { return total_xpus - lost - cut_off; }
  bool in_service(int ordinal) const {
    return state[static_cast<std::size_t>(ordinal)] == Effect::none ||
           state[static_cast<std::size_t>(ordinal)] == Effect::slowed;
  }
  bool is_down(PartId v) const { return down[v]; }
};

// What the failure of every part in `failed` does to every XPU. No failures: nothing affected.
Impact assess(const Topology& t, std::span<const PartId> failed);

// What fails with `unit` along support edges (itself first), and whether any of it carries network
// traffic between other parts (a switch tray, an onboard switch, a spine plane, the scale-out
// network). When nothing does, the failure of `unit` takes out exactly the XPUs among `parts` and
// changes no other XPU's connectivity or bandwidth, alone or beside other failures: a caller may
// update an Impact by marking them lost instead of assessing again.
struct Dependents {
  std::vector<PartId> parts;
  bool transit = false;
};
Dependents dependents(const Topology& t, PartId unit);

enum class Network { scale_up, scale_out };

struct Path {
  bool reachable = false;
  Network network = Network::scale_up;  // scale_up within a domain, scale_out across domains
  std::vector<PartId> route;            // a shortest route, both XPUs included
  int switch_hops = 0;                  // switches (and aggregate planes) traversed on it
  BytesPerSecond bandwidth;             // max-flow between the two XPUs on that network
  Seconds latency;  // catalog latency of the tier with that many switch hops (scale-out latency)
};

// Route and bandwidth between two XPUs; `failures` removes what they took down. Throws InputError
// when a or b is not an XPU or a == b.
Path path(const Topology& t, PartId a, PartId b, const Impact* failures = nullptr);

// Max-flow from the XPUs of `from` to those of `to` on one network, per direction.
BytesPerSecond cut_bandwidth(const Topology& t, std::span<const PartId> from,
                             std::span<const PartId> to, Network net,
                             const Impact* failures = nullptr);

// Bisection bandwidth of a domain: the cut between the first and second half of its XPUs in build
// order (racks 0..R/2-1 against the rest; for one rack or server, trays likewise), which for these
// hierarchical fabrics is the narrowest balanced cut.
BytesPerSecond bisection(const Topology& t, int domain, const Impact* failures = nullptr);
// The same across domains over the scale-out network: domains 0..N/2-1 against the rest (N >= 2).
BytesPerSecond scale_out_bisection(const Topology& t);

// The smallest unit a replica fits in; `domains`: whole scale-up domains joined over scale-out.
enum class Scope { tray, rack, domain, domains };
std::string to_string(Scope s);

struct Replica {
  std::vector<PartId> xpus;
};

struct Placement {
  int replica_xpus = 0;
  Scope scope = Scope::tray;      // the smallest unit a replica fits in
  std::vector<Replica> replicas;  // packed unit by unit, in XPU order
  std::vector<PartId> leftover;   // in-service XPUs no replica uses
  int out_of_service = 0;         // lost or cut-off XPUs, not placeable
};

// Packs replicas of `replica_xpus` XPUs onto the in-service XPUs: each replica within one tray if
// it fits, else within one rack (racks inside a domain), else within one domain, else (a whole
// number of domains) across consecutive domains; units are filled in order and what does not make
// a whole replica is left over. Throws InputError when the size is not positive, or exceeds a
// scale-up domain without being a multiple of it.
Placement place(const Topology& t, int replica_xpus, const Impact* failures = nullptr);

// At most `most` replicas of `replica_xpus` XPUs packed as place() packs them on the in-service
// XPUs (of `failures`) not yet `taken` (by XPU ordinal); marks the XPUs of those it returns as
// taken. Pools of several replica sizes are placed one after the other this way, each on the XPUs
// the ones before it left.
std::vector<Replica> place_free(const Topology& t, int replica_xpus, int most,
                                std::vector<char>& taken, const Impact* failures = nullptr);

}  // namespace racktwin::topology
