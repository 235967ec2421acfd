#include "sim/router.hpp"

#include <utility>

namespace racktwin::sim {

int least_outstanding(const std::vector<char>& up, const std::vector<int>& in_flight, int from,
                      int to) {
  int best = -1;
  for (int c = from; c < to; ++c)
    if (up[static_cast<std::size_t>(c)] &&
        (best < 0 ||
         in_flight[static_cast<std::size_t>(c)] < in_flight[static_cast<std::size_t>(best)]))
      best = c;
  return best;
}

namespace {

// The replica with the fewest requests in flight.
class LeastOutstandingRouter final : public Router {
 public:
  using Router::Router;
  int pick(const Request&) override { return least_outstanding(); }
};

// Replicas in turn, 0, 1, ..., skipping those out of service, regardless of load.
class RoundRobinRouter final : public Router {
 public:
  using Router::Router;
  int pick(const Request&) override {
    if (least_outstanding() < 0) return -1;  // every replica is down: the turn stays
    while (!up(turn_)) turn_ = (turn_ + 1) % pool_;
    const int k = turn_;
    turn_ = (turn_ + 1) % pool_;
    return k;
  }

 private:
  int turn_ = 0;  // the next replica in turn
};

// Every request of a session goes to the replica its session last went to while that replica
// serves; the session's first request, a request without a session, and one whose replica is down
// go to the least outstanding replica, which the session keeps from then on.
class SessionAffinityRouter final : public Router {
 public:
  SessionAffinityRouter(ReplicaView view, int pool, std::vector<int> session, int sessions)
      : Router(view, pool),
        session_(std::move(session)),
        replica_(static_cast<std::size_t>(sessions), -1) {}

  int pick(const Request& r) override {
    const int idle = least_outstanding();
    if (idle < 0) return -1;
    const int sess = session_.empty() ? -1 : session_[static_cast<std::size_t>(r.id)];
    if (sess < 0) return idle;
    int& sticky = replica_[static_cast<std::size_t>(sess)];
    sticky = sticky >= 0 && up(sticky) ? sticky : idle;
    return sticky;
  }

 private:
  std::vector<int> session_;  // by request id; empty: no sessions
  std::vector<int> replica_;  // by session: its replica, -1 before its first request
};

// The replica whose HBM prefix cache holds the longest run of the request's leading blocks (ties
// to the fewest in flight, then the lowest index), unless that replica is far busier than the
// least busy one (more than 8 requests and 50% more in flight): then the least outstanding one,
// as for a request no replica holds a block of.
class PrefixAwareRouter final : public Router {
 public:
  using Router::Router;
  int pick(const Request& r) override {
    const int idle = least_outstanding();
    if (idle < 0 || r.blocks.empty()) return idle;
    int best = -1, longest = 0;
    for (int c = 0; c < pool_; ++c) {
      if (!up(c)) continue;
      const int m = view_.engines[static_cast<std::size_t>(c)]->cached_prefix(r);
      if (m > longest || (m == longest && m > 0 && in_flight(c) < in_flight(best))) {
        best = c;
        longest = m;
      }
    }
    const double busy = best < 0 ? 0 : in_flight(best);
    const double least = in_flight(idle);
    return best >= 0 && !(busy > least + 8 && busy > 1.5 * least) ? best : idle;
  }
};

}  // namespace

std::unique_ptr<Router> make_router(RouterPolicy policy, ReplicaView view, int pool,
                                    std::vector<int> session, int sessions) {
  switch (policy) {
    case RouterPolicy::round_robin:
      return std::make_unique<RoundRobinRouter>(view, pool);
    case RouterPolicy::session_affinity:
      return std::make_unique<SessionAffinityRouter>(view, pool, std::move(session), sessions);
    case RouterPolicy::prefix_aware:
      return std::make_unique<PrefixAwareRouter>(view, pool);
    case RouterPolicy::least_outstanding:
      break;
  }
  return std::make_unique<LeastOutstandingRouter>(view, pool);
}

}  // namespace racktwin::sim
