#pragma once
// Internal to sim/ (not part of the public API): the routing policies of a point's front end
// (RouterPolicy, docs/simulation.md section 5), one class per policy, chosen once per point by
// make_router(). Plain C++ with no SimGrid: a router reads the replicas' state through a
// ReplicaView and keeps only its own state (the round-robin turn, each session's replica).
//
// Contract:
// - Router::pick() returns the replica of the entry pool [0, pool) a request goes to when it is
//   sent now, or -1 when no replica of the pool is in service (the caller parks the request).
// - pick() may update the router's own state, so it is called once per request sent, in the order
//   the requests are sent; the same calls give the same picks.
// - It never picks a replica out of service.

#include <memory>
#include <vector>

#include "core/scenario.hpp"
#include "sim/replica_engine.hpp"

namespace racktwin::sim {

// What a router sees of a point's replicas, read at each pick: whether each serves now (non-zero:
// in service), the requests each has in flight (sent and not yet seen finished by the front end),
// and their engines (the prefix caches). Indexed by replica; the vectors outlive the router.
struct ReplicaView {
  const std::vector<char>& up;
  const std::vector<int>& in_flight;
  const std::vector<std::unique_ptr<ReplicaEngine>>& engines;
};

// The replica in [from, to) with the fewest requests in flight among those in service (ties to the
// lowest index); -1 when every one is down.
int least_outstanding(const std::vector<char>& up, const std::vector<int>& in_flight, int from,
                      int to);

class Router {
 public:
  Router(ReplicaView view, int pool) : view_(view), pool_(pool) {}
  virtual ~Router() = default;
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // The replica of [0, pool) that `r` goes to now; -1 when none is in service.
  virtual int pick(const Request& r) = 0;

 protected:
  // The least outstanding replica of the pool (ties to the lowest index); -1 when all are down.
  int least_outstanding() const {
    return sim::least_outstanding(view_.up, view_.in_flight, 0, pool_);
  }
  bool up(int k) const { return view_.up[static_cast<std::size_t>(k)] != 0; }
  int in_flight(int k) const { return view_.in_flight[static_cast<std::size_t>(k)]; }

  ReplicaView view_;
  int pool_;  // replicas requests enter: the prefill pool when disaggregated, else all
};

// The router of `policy` over the entry pool [0, pool). `session` gives each request's session by
// request id (-1: none), or is empty when the workload has no sessions; `sessions` is their count.
std::unique_ptr<Router> make_router(RouterPolicy policy, ReplicaView view, int pool,
                                    std::vector<int> session, int sessions);

}  // namespace racktwin::sim
