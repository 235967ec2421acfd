#pragma once
// Internal to sim/ (not part of the public API; it includes SimGrid): the state of one point of a
// simulation, and the stages simulate() (sim/simulate.cpp) runs the batch through, in order:
//
//   prepare          sim/prepare.cpp    validate each PointSpec, plan memory, build the step
//                                       models, requests or request graph, deployment, failures,
//                                       replica engines and router: one Point per spec
//   build_platform   sim/platform.cpp   SimGrid hosts, links and routes from each deployment
//   spawn_actors     sim/platform.cpp   the actors of every point
//   (run)                               the SimGrid engine runs the actors:
//                    sim/frontend.cpp   frontend: load generator and router
//                    sim/replica.cpp    replica: one ReplicaEngine in simulated time
//                    sim/mover.cpp      mover: KV transfers between replicas and host DRAM
//   collect          sim/collect.cpp    metrics per point, then evaluate() (sim/evaluate.hpp)
//
// Points share nothing, so each point's results are the same as if it ran alone. The actors of
// one point share its Point without a lock: SimGrid runs one actor at a time, and an actor gives
// the others their turn only where it waits, sleeps, yields or calls into SimGrid (a
// notification, a transfer), never in the middle of a change to the Point.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <simgrid/s4u.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "core/catalog.hpp"
#include "core/perf/step.hpp"
#include "sim/deployment.hpp"
#include "sim/prefix_cache.hpp"
#include "sim/replica_engine.hpp"
#include "sim/router.hpp"
#include "sim/serving.hpp"

namespace racktwin::sim::detail {

namespace sg4 = simgrid::s4u;

// Completed requests over the whole batch, reported to SimOptions::progress.
struct Progress {
  const std::function<void(double)>* report = nullptr;
  std::int64_t done = 0, total = 0, next = 0;
  void complete() {
    ++done;
    if (*report && done >= next && total > 0) {
      next = done + std::max<std::int64_t>(1, total / 1000);
      (*report)(static_cast<double>(done) / static_cast<double>(total));
    }
  }
};

struct Point {
  PointSpec spec;
  Progress* progress = nullptr;
  std::vector<Request> requests;
  // Trace replay and agentic sessions: the dependency graph (its requests live in `requests`).
  RequestGraph graph;
  bool has_graph = false;
  std::vector<double> ready;  // latest predecessor finish (+ delay) seen so far
  std::unique_ptr<perf::StepModel> model;
  double kv_capacity = 0;  // tokens per replica (the memory planner's kv_tokens)
  // Disaggregated serving with a prefill layout of its own (PointSpec::prefill_pool): the prefill
  // replicas' step model, KV capacity and weights; null, 0, 0 otherwise.
  std::unique_ptr<perf::StepModel> prefill_model;
  double prefill_kv_capacity = 0;
  double prefill_weight_bytes = 0;
  std::vector<std::unique_ptr<ReplicaEngine>> engines;
  std::unique_ptr<Router> router;  // the spec's policy over the entry pool
  std::vector<std::deque<Request*>> inbox;
  std::vector<sg4::ConditionVariablePtr> wake;
  std::vector<int> in_flight;
  std::deque<Request*> done;
  sg4::ConditionVariablePtr done_cv;
  // Where the replicas run, and the SimGrid side of it.
  std::shared_ptr<const Deployment> deployment;
  int prefill = 0;  // disaggregated: the first `prefill` replicas form the prefill pool
  int total = 0;    // replicas of both pools
  double kv_bytes_per_token = 0;  // one copy of a sequence's KV in a replica
  sg4::Host* frontend_host = nullptr;
  std::vector<sg4::Host*> replica_hosts;
  std::vector<sg4::Host*> pool_hosts;
  std::vector<sg4::Mailbox*> kv_mailbox;       // per decode replica: KV transfers to it
  std::vector<sg4::Mailbox*> offload_mailbox;  // per replica: loads from and writes to host DRAM
  // KV offload: one host DRAM tier per host pool, shared by its replicas.
  std::vector<std::unique_ptr<PrefixCache>> host_tiers;
  double block_bytes = 0;  // one cache block of one sequence's KV
  // One SimGrid communication. The KV of the prompts that leave one prefill host for one decode
  // replica at one instant goes as one: links share bandwidth max-min fairly (CM02, no TCP window,
  // simulate.cpp), so k transfers that start together on one route end together, as their sum
  // does; only a shorter prompt's alone would have ended sooner.
  struct Transfer {
    std::vector<Request*> requests{};  // delivered to the mover's replica on arrival (none: a write)
    sg4::Host* from = nullptr;
    sg4::Host* to = nullptr;
    double bytes = 0;
    bool stop = false;  // the run is over
  };
  std::deque<Transfer> transfers;  // stable addresses: mailboxes carry pointers to them
  std::int64_t kv_transfers = 0, kv_prompts_sent = 0;  // prefill to decode, over the whole run
  // Failures: per replica, the spans it is out of service (sorted, disjoint; `to` infinite when
  // never repaired), whether it serves now, and what the failures cost.
  struct Outage {
    double from = 0, to = 0;
  };
  std::vector<std::vector<Outage>> outages;
  // Spans in which a replica serves with part of its scale-up bandwidth (a failed switch tray),
  // timed by a step model of the slowed system.
  struct Slowdown {
    double from = 0, to = 0;
    const perf::StepModel* model = nullptr;
  };
  std::vector<std::vector<Slowdown>> slowdowns;
  std::vector<std::unique_ptr<perf::StepModel>> slow_models;
  std::vector<char> up;
  bool revived = false;     // a replica came back: the frontend re-routes parked requests
  double weight_bytes = 0;  // a replica's weights, reloaded from its host after a repair
  std::int64_t retried = 0;
  double down_s = 0, recovered_s = 0;
  int recoveries = 0;
  bool stop = false;
  double end = 0;  // last finish (logical time)
  std::string error;

  bool own_prefill_layout(std::size_t k) const {
    return prefill_model != nullptr && k < static_cast<std::size_t>(prefill);
  }
  // Replica k's step model (outside any slowdown) and its weights in bytes.
  const perf::StepModel& model_of(std::size_t k) const {
    return own_prefill_layout(k) ? *prefill_model : *model;
  }
  double weights_of(std::size_t k) const {
    return own_prefill_layout(k) ? prefill_weight_bytes : weight_bytes;
  }
};

// One Point per spec, in order; null where the point does not run (its result says why).
using Points = std::vector<std::unique_ptr<Point>>;

// Placed replicas by (system id, XPUs per replica, replicas, XPUs per prefill replica of a
// layout of its own, such prefill replicas): a run places each shape once, on topologies it builds
// once per system and domain count.
struct Deployments {
  std::map<std::tuple<std::string, int, int, int, int>, std::shared_ptr<const Deployment>> placed;
  TopologyCache topologies;
};

// Prepare: a Point for every spec that can run, and each result's spec and the sizes known before
// simulating (xpus, domains, KV and host tier capacity); a point that cannot run is null and its
// result carries the reason in `error`. Adds the points' requests to progress.total. No SimGrid.
Points prepare(const Catalog& catalog, const std::vector<PointSpec>& specs,
               const SimOptions& options, Progress& progress, std::vector<PointResult>& results);

// Build platform: the hosts, links and routes of every point in one full zone, sealed. Needs the
// SimGrid engine; sets each Point's hosts.
void build_platform(const Points& points);

// Spawn actors: each point's synchronisation objects, mailboxes and actors (replicas, KV movers,
// frontend), after build_platform().
void spawn_actors(const Points& points);

// Collect: each point's metrics from its requests and engines into its result, then evaluate()
// (power and the normalisations); a point that failed in the run gets its error instead.
void collect(const Points& points, std::vector<PointResult>& results);

// The actors. frontend: issues a point's requests, routes them and receives them back. replica:
// replica k's engine in simulated time. mover: the KV transfers taken from mailbox `mb` for
// replica k.
void frontend(Point* p);
void replica(Point* p, int k);
void mover(Point* p, int k, sg4::Mailbox* mb);

}  // namespace racktwin::sim::detail
