// The frontend actor of a point: the load generator and the router. It issues the point's
// requests (closed loop, open loop, or as a request graph releases them), sends each to a replica
// by the point's Router, and takes back what the replicas hand back: finished requests, prefilled
// ones bound for the decode pool, and requests a failed replica lost.

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "sim/point_state.hpp"

namespace racktwin::sim::detail {
namespace {

class FrontEnd {
 public:
  explicit FrontEnd(Point* p)
      : p_(p),
        own_(sg4::Mutex::create()),
        lock_(*own_),
        n_(static_cast<int>(p->requests.size())),
        front_end_(p->spec.efficiency.request_latency.value()) {}

  // Issues every request, waits for all of them to finish (or for an error), then stops the
  // point's other actors.
  void run() {
    if (p_->has_graph)
      replay_graph();
    else if (std::holds_alternative<OpenLoop>(p_->spec.arrivals))
      open_loop();
    else
      start_clients();
    while (running()) {
      wait_for_returns();
      take_returns();
    }
    stop();
  }

 private:
  // Every request finished, or the run failed, or it is stranded.
  bool running() const { return completed_ < n_ && p_->error.empty() && !stranded_; }

  // Sends a request, at the current time, to a replica in service by the router's policy; parks it
  // when every replica of the entry pool is down. When none of them will ever come back, the run
  // is stranded: it ends now, and the requests left unfinished make the point's error.
  void route(Request* r) {
    const int k = p_->router->pick(*r);
    if (k < 0) {
      parked_.push_back(r);
      stranded_ = stranded_ || !any_comes_back(0, p_->prefill > 0 ? p_->prefill : p_->total);
      return;
    }
    r->replica = k;
    p_->in_flight[static_cast<std::size_t>(k)] += 1;
    p_->inbox[static_cast<std::size_t>(k)].push_back(r);
    p_->wake[static_cast<std::size_t>(k)]->notify_one();
  }

  // A client's request reaches its replica after the front end's latency (HTTP, tokenization,
  // routing); the replica admits it from then on. Its TTFT and E2E count from `at`.
  void issue_index(std::size_t index, int client, double at) {
    Request* r = &p_->requests[index];
    r->client = client;
    r->arrival = at;
    r->ready = at + front_end_;
    route(r);
  }
  void issue(int client, double at) { issue_index(static_cast<std::size_t>(next_++), client, at); }

  // Whether replica k went out of service at or after time t (the KV it held then is gone, even
  // when it serves again now).
  bool went_down_since(int k, double t) const {
    const double now = sg4::Engine::get_clock();
    for (const Point::Outage& o : p_->outages[static_cast<std::size_t>(k)])
      if (o.from >= t && o.from <= now) return true;
    return false;
  }

  // Whether a replica of the pool [from, to), every one down now, has an outage that ends.
  bool any_comes_back(int from, int to) const {
    const double now = sg4::Engine::get_clock();
    for (int k = from; k < to; ++k) {
      bool down_for_good = false;
      for (const Point::Outage& o : p_->outages[static_cast<std::size_t>(k)])
        down_for_good = down_for_good || (o.from <= now && std::isinf(o.to));
      if (!down_for_good) return true;
    }
    return false;
  }

  // Blocks until a replica hands something back, revives, or the run fails or is stranded.
  void wait_for_returns() {
    while (p_->done.empty() && !p_->revived && p_->error.empty() && !stranded_)
      p_->done_cv->wait(lock_);
  }

  // Re-routes the parked requests when a replica came back, then takes every request the
  // replicas handed back.
  void take_returns() {
    if (p_->revived) {
      p_->revived = false;
      std::deque<Request*> waiting;
      waiting.swap(parked_);
      for (Request* r : waiting) {
        r->ready = sg4::Engine::get_clock();
        route(r);
      }
      std::deque<Request*> prefilled;
      prefilled.swap(parked_prefilled_);
      for (Request* r : prefilled) send_to_decode(r);
    }
    while (!p_->done.empty()) {
      Request* r = p_->done.front();
      p_->done.pop_front();
      p_->in_flight[static_cast<std::size_t>(r->replica)] -= 1;
      if (r->failed)
        restart(r);
      else if (r->finish < 0)
        send_to_decode(r);
      else
        finish(r);
    }
    send_transfers();
  }

  // The KV of the prompts taken back at this instant leaves: one transfer per prefill host and
  // decode replica (Point::Transfer), in the order their first prompt was taken back.
  void send_transfers() {
    for (Point::Transfer& t : leaving_) {
      const int to = t.requests.front()->replica;
      p_->kv_transfers += 1;
      p_->kv_prompts_sent += static_cast<std::int64_t>(t.requests.size());
      p_->transfers.push_back(std::move(t));
      p_->kv_mailbox[static_cast<std::size_t>(to)]->put_init(&p_->transfers.back(), 0)->detach();
    }
    leaving_.clear();
  }

  // Adds request r's KV, from prefill replica `from` to decode replica r->replica, to the
  // transfer from the one's host to the other that leaves at this instant.
  void join_transfer(int from, Request* r) {
    sg4::Host* src = p_->replica_hosts[static_cast<std::size_t>(from)];
    sg4::Host* dst = p_->replica_hosts[static_cast<std::size_t>(r->replica)];
    auto t = std::find_if(leaving_.begin(), leaving_.end(), [&](const Point::Transfer& x) {
      return x.from == src && x.requests.front()->replica == r->replica;
    });
    if (t == leaving_.end()) t = leaving_.insert(leaving_.end(), {{}, src, dst, 0.0});
    t->requests.push_back(r);
    t->bytes += p_->kv_bytes_per_token * (r->isl + r->generated);
  }

  // A prompt that waited for a decode replica leaves its prefill replica `k`: the KV it held there
  // is freed (sent on, or lost), and the replica may start the prompts that waited for room.
  void release_held(int k, Request* r) {
    if (p_->engines[static_cast<std::size_t>(k)]->release_held(r))
      p_->wake[static_cast<std::size_t>(k)]->notify_one();
  }

  // Its replica failed: restart it now on one in service.
  void restart(Request* r) {
    r->failed = false;
    r->ready = sg4::Engine::get_clock();
    p_->retried += 1;
    route(r);
  }

  // Prefilled and first token out: its KV goes to the least busy decode replica in service. With
  // every decode replica down it waits (its KV held where it was prefilled) for one to come back;
  // when none will, the run is stranded.
  void send_to_decode(Request* r) {
    const int to = least_outstanding(p_->up, p_->in_flight, p_->prefill, p_->total);
    if (to < 0) {
      // Its KV stays on the prefill replica that made it, unless that replica went down since.
      if (!went_down_since(r->replica, r->first_token))
        p_->engines[static_cast<std::size_t>(r->replica)]->hold(r);
      parked_prefilled_.push_back(r);
      stranded_ = stranded_ || !any_comes_back(p_->prefill, p_->total);
      return;
    }
    const int from = r->replica;
    release_held(from, r);
    if (went_down_since(from, r->first_token)) {  // it waited, and its KV went down with `from`
      lose_progress(*r);
      restart(r);
      return;
    }
    r->replica = to;
    p_->in_flight[static_cast<std::size_t>(r->replica)] += 1;
    join_transfer(from, r);
  }

  // Finished: counted, followed by the client's next prompt in the closed loop, and releasing the
  // requests of a graph that waited for it.
  void finish(const Request* r) {
    ++completed_;
    p_->progress->complete();
    p_->end = std::max(p_->end, r->finish);
    if (std::holds_alternative<ClosedLoop>(p_->spec.arrivals) && next_ < n_)
      issue(r->client, r->finish);  // closed loop: the client sends its next prompt at once
    if (p_->has_graph) release_dependents(*r);
  }

  // A dependent's arrival is the latest finish of what it waits for, plus its delay when it has
  // one, else no earlier than its release time; it is scheduled when the last of them finished.
  void release_dependents(const Request& r) {
    for (int d : p_->graph.dependents[static_cast<std::size_t>(r.id)]) {
      const auto k = static_cast<std::size_t>(d);
      const double dl = p_->graph.delay[k];
      p_->ready[k] = std::max(p_->ready[k],
                              dl >= 0 ? r.finish + dl : std::max(r.finish, p_->graph.release[k]));
      if (--p_->graph.pending[k] == 0) scheduled_.emplace(p_->ready[k], k);
    }
  }

  // Trace replay and agentic sessions: requests that wait for nothing arrive at their release
  // time, the others when released, in order of arrival time (then index). Returns when every
  // request finished or the run failed.
  void replay_graph() {
    for (int i = 0; i < n_; ++i)
      if (p_->graph.pending[static_cast<std::size_t>(i)] == 0)
        scheduled_.emplace(p_->graph.release[static_cast<std::size_t>(i)],
                           static_cast<std::size_t>(i));
    while (running()) {
      if (scheduled_.empty()) {
        wait_for_returns();
        take_returns();
        continue;
      }
      const auto [at, index] = *scheduled_.begin();
      if (p_->done.empty() && !p_->revived &&
          p_->done_cv->wait_until(lock_, at) == std::cv_status::no_timeout) {
        take_returns();
        continue;
      }
      take_returns();
      if (scheduled_.empty() || scheduled_.begin()->second != index)
        continue;  // an earlier turn came in
      scheduled_.erase(scheduled_.begin());
      issue_index(index, static_cast<int>(index), at);
    }
  }

  // Open loop: each request arrives at its pre-drawn time, whatever is in flight.
  void open_loop() {
    while (next_ < n_ && running()) {
      const double at = p_->requests[static_cast<std::size_t>(next_)].arrival;
      sg4::this_actor::sleep_until(at);
      take_returns();
      issue(next_, at);
    }
  }

  // Closed loop: every client sends its first prompt at time 0 (finish() sends the next ones).
  void start_clients() {
    const int clients = std::min(std::get<ClosedLoop>(p_->spec.arrivals).clients, n_);
    for (int c = 0; c < clients; ++c) issue(c, 0.0);
  }

  // The run is over: the replicas stop once idle, and so do the KV receivers of the decode pool.
  void stop() {
    p_->stop = true;
    for (auto& w : p_->wake) w->notify_all();
    for (int k = p_->prefill; k < p_->total && p_->prefill > 0; ++k) {
      p_->transfers.push_back({.stop = true});
      p_->kv_mailbox[static_cast<std::size_t>(k)]->put_init(&p_->transfers.back(), 0)->detach();
    }
  }

  Point* p_;
  sg4::MutexPtr own_;  // the actor's own lock, for its condition variable (as the replicas')
  std::unique_lock<sg4::Mutex> lock_;
  const int n_;                        // the point's requests
  const double front_end_;             // the serving front end's latency, s
  int next_ = 0;                       // next request to issue (closed and open loop)
  int completed_ = 0;
  std::deque<Request*> parked_;  // requests waiting for a replica to come back into service
  // Disaggregated serving: prefilled requests waiting for a decode replica to come back.
  std::deque<Request*> parked_prefilled_;
  bool stranded_ = false;  // parked requests, and no replica of the entry pool ever comes back
  // Request graphs: released requests by arrival time (then index), not yet issued.
  std::set<std::pair<double, std::size_t>> scheduled_;
  std::vector<Point::Transfer> leaving_;  // KV transfers that leave at this instant
};

}  // namespace

void frontend(Point* p) {
  FrontEnd(p).run();
}

}  // namespace racktwin::sim::detail
