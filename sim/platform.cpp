// Build platform and spawn actors, the SimGrid stages of simulate(): the platform of every point
// in one full zone, then each point's actors on their hosts. Hosts, links, mailboxes and actors are
// created point by point in a fixed order, so the same batch gives the same simulation.

#include <algorithm>
#include <string>

#include "sim/point_state.hpp"

namespace racktwin::sim::detail {
namespace {

using sg4::LinkInRoute;

// A replica's links toward other replicas: into the scale-up fabric within its rack, out of the
// rack (multi-rack domains), and to the scale-out network.
struct Ports {
  sg4::Link *fabric, *uplink, *scale_out;
};

// A split-duplex link of `bw` bytes/s per direction (at least 1) with half of `latency` seconds:
// a route between two replicas crosses two such links.
sg4::Link* duplex(sg4::NetZone* root, const std::string& name, double bw, double latency) {
  return root->create_split_duplex_link(name, std::max(bw, 1.0))->set_latency(latency / 2)->seal();
}

// Prefill to decode replicas (disaggregated serving): within a rack over the fabric, across racks
// of a domain through the uplinks, across domains over the scale-out network.
void route_kv_transfers(sg4::NetZone* root, const Point& p, const std::vector<Ports>& ports) {
  const Deployment& d = *p.deployment;
  for (int a = 0; a < p.prefill; ++a) {
    for (int b = p.prefill; b < p.total; ++b) {
      const Site& sa = d.sites[static_cast<std::size_t>(a)];
      const Site& sb = d.sites[static_cast<std::size_t>(b)];
      const auto pa = ports[static_cast<std::size_t>(a)], pb = ports[static_cast<std::size_t>(b)];
      sg4::Link* la = pa.scale_out;
      sg4::Link* lb = pb.scale_out;
      if (sa.domain == sb.domain) {
        const bool same_rack = sa.rack == sb.rack || sa.uplink_bw <= 0 || sb.uplink_bw <= 0;
        la = same_rack ? pa.fabric : pa.uplink;
        lb = same_rack ? pb.fabric : pb.uplink;
      }
      root->add_route(p.replica_hosts[static_cast<std::size_t>(a)]->get_netpoint(),
                      p.replica_hosts[static_cast<std::size_t>(b)]->get_netpoint(), nullptr,
                      nullptr,
                      {LinkInRoute(la, LinkInRoute::Direction::UP),
                       LinkInRoute(lb, LinkInRoute::Direction::DOWN)});
    }
  }
}

// The platform of point `i` (docs/simulation.md section 2): a host for the load generator, one per
// replica (its XPUs) and one per host DRAM pool. Each replica has its own links: into the scale-up
// fabric within its rack, out of the rack (multi-rack domains), to the scale-out network, and to
// its host pool, each with the summed bandwidth of its XPUs' links in the topology graph and half
// the tier's latency (a route crosses two). Switches are taken as non-blocking: a transfer between
// two replicas is limited by their own links. Control messages (requests, completions) use a
// zero-latency link: they stand for HTTP calls, not data flows.
void build_point_platform(sg4::NetZone* root, std::size_t i, Point& p) {
  const std::string prefix = "point" + std::to_string(i);
  const Deployment& d = *p.deployment;
  sg4::Host* front = root->create_host(prefix + "/frontend", 1e9);
  p.frontend_host = front;
  auto* control = root->create_link(prefix + "/control", 1e15)->seal();
  for (std::size_t j = 0; j < d.pools.size(); ++j)
    p.pool_hosts.push_back(root->create_host(prefix + "/pool" + std::to_string(j), 1e9));
  std::vector<Ports> ports;
  for (int k = 0; k < p.total; ++k) {
    const Site& site = d.sites[static_cast<std::size_t>(k)];
    const std::string name = prefix + "/replica" + std::to_string(k);
    sg4::Host* h = root->create_host(name, 1e9);
    p.replica_hosts.push_back(h);
    root->add_route(front->get_netpoint(), h->get_netpoint(), nullptr, nullptr,
                    {LinkInRoute(control)});
    auto* host_link = duplex(root, name + "/host", site.host_link_bw, 0.0);
    root->add_route(h->get_netpoint(),
                    p.pool_hosts[static_cast<std::size_t>(site.pool)]->get_netpoint(), nullptr,
                    nullptr, {LinkInRoute(host_link, LinkInRoute::Direction::UP)});
    ports.push_back({duplex(root, name + "/fabric", site.fabric_bw, d.rack_latency_s),
                     duplex(root, name + "/uplink", site.uplink_bw, d.domain_latency_s),
                     duplex(root, name + "/scale-out", site.scale_out_bw, d.scale_out_latency_s)});
  }
  route_kv_transfers(root, p, ports);
}

// Point `i`'s synchronisation objects, mailboxes and actors: per replica its actor, with
// disaggregated serving a KV receiver on each decode replica, with KV offload a mover on its host
// pool; then the frontend.
void spawn_point(std::size_t i, Point* p) {
  p->done_cv = sg4::ConditionVariable::create();
  p->inbox.resize(static_cast<std::size_t>(p->total));
  p->in_flight.assign(static_cast<std::size_t>(p->total), 0);
  for (int k = 0; k < p->total; ++k) {
    p->wake.push_back(sg4::ConditionVariable::create());
    sg4::Host* h = p->replica_hosts[static_cast<std::size_t>(k)];
    sg4::Actor::create("replica", h, [p, k] { replica(p, k); });
    const std::string name = "point" + std::to_string(i) + "/replica" + std::to_string(k);
    p->kv_mailbox.push_back(sg4::Mailbox::by_name(name + "/kv"));
    p->offload_mailbox.push_back(sg4::Mailbox::by_name(name + "/offload"));
    if (k >= p->prefill && p->prefill > 0) {
      sg4::Mailbox* mb = p->kv_mailbox.back();
      sg4::Actor::create("kv-receiver", h, [p, k, mb] { mover(p, k, mb); });
    }
    if (!p->host_tiers.empty()) {
      // On the pool's host: the replica reaches it over its host link.
      sg4::Mailbox* mb = p->offload_mailbox.back();
      const auto pool =
          static_cast<std::size_t>(p->deployment->sites[static_cast<std::size_t>(k)].pool);
      sg4::Actor::create("offload", p->pool_hosts[pool], [p, k, mb] { mover(p, k, mb); });
    }
  }
  sg4::Actor::create("frontend", p->frontend_host, [p] { frontend(p); });
}

}  // namespace

void build_platform(const Points& points) {
  auto* root = sg4::create_full_zone("racktwin");
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i] != nullptr) build_point_platform(root, i, *points[i]);
  root->seal();
}

void spawn_actors(const Points& points) {
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i] != nullptr) spawn_point(i, points[i].get());
}

}  // namespace racktwin::sim::detail
