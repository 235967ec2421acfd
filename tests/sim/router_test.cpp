// The front end's routing policies on their own, without SimGrid: each picks from a view of the
// replicas (in service, requests in flight, prefix caches) as docs/simulation.md section 5 says.

#include "sim/router.hpp"

#include <gtest/gtest.h>

#include "sim/serving.hpp"
#include "test_support.hpp"

namespace racktwin::sim {
namespace {

using test::shipped_catalog;

// Three replicas in service, none busy, with engines of a small model.
struct Replicas {
  perf::StepModel model;
  std::vector<char> up{1, 1, 1};
  std::vector<int> in_flight{0, 0, 0};
  std::vector<std::unique_ptr<ReplicaEngine>> engines;

  Replicas() : model(step_model()) {
    for (int k = 0; k < 3; ++k)
      engines.push_back(std::make_unique<ReplicaEngine>(model, 1e6, EngineParams{}));
  }
  ReplicaView view() const { return {up, in_flight, engines}; }

  static perf::StepModel step_model() {
    const Catalog& c = shipped_catalog();
    const Model& m = *c.find_model("llama-3.3-70b");
    const System& s = *c.find_system("h200-hgx");
    return *perf::StepModel::create(m, s, c, *parse_layout("tp8"), perf::best_precision(m, s, c),
                                    c.efficiency_prior_for("h200-hgx")->values);
  }
};

Request request(std::int64_t id, std::vector<std::uint64_t> blocks = {}) {
  Request r;
  r.id = id;
  r.isl = 512 * static_cast<int>(std::max<std::size_t>(1, blocks.size()));
  r.osl = 4;
  r.blocks = std::move(blocks);
  return r;
}

TEST(Router_LeastOutstanding, FewestInFlight_TiesToTheLowest_SkipsDown) {
  Replicas x;
  auto router = make_router(RouterPolicy::least_outstanding, x.view(), 3, {}, 0);
  const Request r = request(0);
  EXPECT_EQ(router->pick(r), 0);
  x.in_flight = {2, 1, 1};
  EXPECT_EQ(router->pick(r), 1);
  x.up[1] = 0;
  EXPECT_EQ(router->pick(r), 2);
  x.up = {0, 0, 0};
  EXPECT_EQ(router->pick(r), -1);
}

TEST(Router_RoundRobin, InTurnRegardlessOfLoad_SkipsDown) {
  Replicas x;
  auto router = make_router(RouterPolicy::round_robin, x.view(), 3, {}, 0);
  const Request r = request(0);
  x.in_flight = {5, 0, 0};
  EXPECT_EQ(router->pick(r), 0);
  EXPECT_EQ(router->pick(r), 1);
  x.up[2] = 0;
  EXPECT_EQ(router->pick(r), 0);
  x.up = {0, 0, 0};
  EXPECT_EQ(router->pick(r), -1);  // the turn stays
  x.up = {1, 1, 1};
  EXPECT_EQ(router->pick(r), 1);
}

TEST(Router_SessionAffinity, KeepsASessionOnItsReplica_MovesItWhenThatOneIsDown) {
  Replicas x;
  // Requests 0 and 1 belong to session 0, request 2 to none.
  auto router = make_router(RouterPolicy::session_affinity, x.view(), 3, {0, 0, -1}, 1);
  x.in_flight = {1, 0, 1};
  EXPECT_EQ(router->pick(request(0)), 1);
  x.in_flight = {0, 9, 0};
  EXPECT_EQ(router->pick(request(1)), 1);  // whatever its load
  EXPECT_EQ(router->pick(request(2)), 0);  // no session: least outstanding
  x.up[1] = 0;
  EXPECT_EQ(router->pick(request(1)), 0);
  x.up[1] = 1;
  EXPECT_EQ(router->pick(request(1)), 0);  // the session stays where it moved
}

TEST(Router_PrefixAware, LongestCachedPrefix_UnlessFarBusier) {
  Replicas x;
  // Replica 2 serves a request of blocks {7, 8} to the end, so its prefix cache holds them.
  Request first = request(0, {7, 8});
  ReplicaEngine& e = *x.engines[2];
  e.admit(&first);
  std::vector<Request*> finished;
  for (double now = 0; finished.empty();) {
    const std::vector<double> b = e.plan(now);
    ASSERT_FALSE(b.empty());
    e.apply(b.size(), finished);
    now = b.back();
  }
  auto router = make_router(RouterPolicy::prefix_aware, x.view(), 3, {}, 0);
  x.in_flight = {0, 0, 3};
  EXPECT_EQ(router->pick(request(1, {7, 8, 9})), 2);
  EXPECT_EQ(router->pick(request(2, {5})), 0);  // cached nowhere: least outstanding
  EXPECT_EQ(router->pick(request(3)), 0);       // no blocks
  x.in_flight = {0, 0, 9};                      // more than 8 and 50% more than the least busy
  EXPECT_EQ(router->pick(request(4, {7, 8, 9})), 0);
  x.up[2] = 0;
  x.in_flight = {0, 0, 0};
  EXPECT_EQ(router->pick(request(5, {7, 8, 9})), 0);
}

}  // namespace
}  // namespace racktwin::sim
