// The replica actor: one ReplicaEngine in simulated time. It loops: admit what has arrived, plan
// the next iteration(s), wait until the plan's end (or until an arrival cuts a fused stretch, or
// the replica fails), commit the iterations, hand finished requests back to the frontend. Times
// are the engine's exact sums of iteration times; SimGrid only wakes the actor at them.

#include <algorithm>
#include <limits>
#include <utility>

#include "sim/point_state.hpp"

namespace racktwin::sim::detail {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

class ReplicaActor {
 public:
  ReplicaActor(Point* p, int k)
      : p_(p),
        k_(static_cast<std::size_t>(k)),
        own_(sg4::Mutex::create()),
        lock_(*own_),
        e_(*p->engines[k_]),
        inbox_(p->inbox[k_]),
        wake_(p->wake[k_]),
        outages_(p->outages[k_]),
        decode_pool_(p->prefill > 0 && k >= p->prefill),
        offload_(!p->host_tiers.empty()),
        here_(p->replica_hosts[k_]),
        pool_index_(static_cast<std::size_t>(p->deployment->sites[k_].pool)),
        pool_(offload_ ? p->pool_hosts[pool_index_] : nullptr) {}

  // Serves until the run is over, the replica fails for good, or the engine fails (the point's
  // error, and the frontend is woken to end the point).
  void run() {
    try {
      while (true) {
        if (!e_.busy() && inbox_.empty()) {
          if (!wait_idle()) break;
        } else if (!step()) {
          break;
        }
      }
    } catch (const std::exception& ex) {
      p_->error = ex.what();
      p_->done_cv->notify_all();
    }
    if (offload_) move({.stop = true});
  }

 private:
  // Sleeps until simulated time t, letting the point's other actors run meanwhile.
  void sleep_until(double t) { sg4::this_actor::sleep_until(t); }

  // Hands a transfer between this replica and its host DRAM pool to the pool's mover.
  void move(Point::Transfer t) {
    p_->transfers.push_back(std::move(t));
    p_->offload_mailbox[k_]->put_init(&p_->transfers.back(), 0)->detach();
  }

  // The earliest time a request in the inbox may be admitted (infinite when it is empty).
  double earliest() const {
    double t = kNever;
    for (const Request* r : inbox_) t = std::min(t, r->ready);
    return t;
  }

  // Admits the requests of the inbox that have reached the replica by `now`, in order; the others
  // (still in the front end) stay.
  void drain() {
    for (std::size_t i = 0, count = inbox_.size(); i < count; ++i) {
      Request* r = inbox_.front();
      inbox_.pop_front();
      if (r->ready > now_) {
        inbox_.push_back(r);
        continue;
      }
      if (decode_pool_) {
        e_.admit_prefilled(r);
      } else if (offload_ && !r->load_checked) {
        // Blocks the host tier holds are loaded over the host link before it is admitted.
        const int n = e_.plan_load(r);
        if (n > 0)
          move({{r}, pool_, here_, n * p_->block_bytes});
        else
          e_.admit(r);
      } else {
        e_.admit(r);
      }
    }
  }

  // KV offload: the blocks the engine evicted to the host tier go over the host link.
  void write_back() {
    if (!offload_) return;
    if (const int n = e_.take_offloaded(); n > 0)
      move({{}, here_, pool_, n * p_->block_bytes});
  }

  // Hands requests back to the frontend (finished, prefilled, or lost).
  void hand_back(const std::vector<Request*>& requests) {
    for (Request* r : requests) p_->done.push_back(r);
  }

  // The start of the next span out of service (infinite when there is none).
  double outage_at() const {
    return next_outage_ < outages_.size() ? outages_[next_outage_].from : kNever;
  }

  // Going down at time t: the replica hands back every request it holds or was sent (the frontend
  // restarts them elsewhere), waits for the repair, reloads its weights from its host over the
  // host link, and serves again with a cold cache. False when it is never repaired.
  bool go_down(double t) {
    const Point::Outage o = outages_[next_outage_++];
    p_->up[k_] = 0;
    std::vector<Request*> lost = e_.fail();
    for (Request* r : inbox_) {
      r->failed = true;
      lost.push_back(r);
    }
    inbox_.clear();
    hand_back(lost);
    p_->done_cv->notify_one();
    if (o.to == kNever) return false;
    sg4::this_actor::sleep_until(o.to);
    sg4::Comm::sendto(p_->pool_hosts[pool_index_], here_,
                      static_cast<std::uint64_t>(p_->weights_of(k_)));
    now_ = sg4::Engine::get_clock();
    p_->down_s += now_ - t;
    p_->recovered_s += now_ - t;
    p_->recoveries += 1;
    p_->up[k_] = 1;
    p_->revived = true;
    p_->done_cv->notify_one();
    return true;
  }

  // Idle and nothing sent: waits for a request, or fails at the next outage. False when the
  // replica stops: the run is over, or it failed for good.
  bool wait_idle() {
    if (p_->stop || !p_->error.empty()) return false;
    if (const double cut = outage_at(); cut < kNever) {
      if (wake_->wait_until(lock_, cut) == std::cv_status::timeout) return go_down(cut);
    } else {
      wake_->wait(lock_);
    }
    if (!inbox_.empty()) now_ = std::max(now_, earliest());
    return true;
  }

  // Disaggregated prefill pool: the KV it holds for prompts waiting for a decode replica leaves no
  // room for the next prompt. Waits until one leaves (the frontend wakes it), a request arrives,
  // or the replica fails; false when it stops.
  bool wait_for_room() {
    if (!wait_idle()) return false;
    now_ = std::max(now_, sg4::Engine::get_clock());
    return true;
  }

  // One plan: admit what has arrived, plan the next iteration(s) with the step model for now, and
  // run them. False when the replica failed during the plan for good.
  bool step() {
    // Idle with requests still in the front end: the replica's time moves to the first one.
    if (!e_.busy()) now_ = std::max(now_, earliest());
    drain();
    if (!e_.busy()) return true;  // every admitted request went to a load from host DRAM
    // The step model for now: the slowed one inside a slowdown span.
    const perf::StepModel* model = &p_->model_of(k_);
    for (const auto& sl : p_->slowdowns[k_])
      if (now_ >= sl.from && now_ < sl.to) model = sl.model;
    e_.set_model(*model);
    const std::vector<double> b = e_.plan(now_);
    if (b.empty()) return wait_for_room();
    if (const double cut = outage_at(); cut <= b.back()) return fail_during(b, cut);
    commit(b, wait_for(b));
    return true;
  }

  // How many iterations of plan `b` (their end times) run: all of them, unless an arrival comes
  // during a fused stretch (or is already on its way through the front end): then up to the first
  // boundary after it. Returns once simulated time reached the last of them.
  std::size_t wait_for(const std::vector<double>& b) {
    if (b.size() == 1) {
      sleep_until(b[0]);
      return 1;
    }
    while (true) {
      if (earliest() >= b.back() && wake_->wait_until(lock_, b.back()) == std::cv_status::timeout)
        return b.size();
      if (inbox_.empty()) continue;
      const double ta = earliest();
      if (ta >= b.back()) continue;
      std::size_t j =
          static_cast<std::size_t>(std::lower_bound(b.begin(), b.end(), ta) - b.begin()) + 1;
      j = std::min(j, b.size());
      sleep_until(b[j - 1]);
      return j;
    }
  }

  // Commits the first j iterations of plan `b` and hands back the requests that finished (or,
  // in the prefill pool, got their first token).
  void commit(const std::vector<double>& b, std::size_t j) {
    now_ = b[j - 1];
    finished_.clear();
    e_.apply(j, finished_);
    write_back();
    hand_back(finished_);
    if (!finished_.empty()) {
      p_->done_cv->notify_one();
      // Let the load generator answer at this instant, so that a follow-up request joins the
      // next iteration rather than the one after.
      sg4::this_actor::yield();
    }
  }

  // The replica fails at `cut`, during plan `b`: the iterations that end before the failure
  // count, then it goes down. False when it is never repaired.
  bool fail_during(const std::vector<double>& b, double cut) {
    const auto before =
        static_cast<std::size_t>(std::lower_bound(b.begin(), b.end(), cut) - b.begin());
    sleep_until(cut);
    if (before > 0) {
      finished_.clear();
      e_.apply(before, finished_);
      hand_back(finished_);
    }
    return go_down(cut);
  }

  Point* p_;
  const std::size_t k_;                // this replica's index in the point
  // The actor's own lock, for its condition variable: SimGrid runs one actor at a time, so the
  // point's state needs no lock of its own (point_state.hpp).
  sg4::MutexPtr own_;
  std::unique_lock<sg4::Mutex> lock_;
  ReplicaEngine& e_;
  std::deque<Request*>& inbox_;  // sent by the frontend or a mover, not yet admitted
  sg4::ConditionVariablePtr& wake_;
  const std::vector<Point::Outage>& outages_;
  std::size_t next_outage_ = 0;  // index of the next span out of service in outages_
  const bool decode_pool_;       // disaggregated serving: admits prefilled requests
  const bool offload_;           // KV offload to a host DRAM tier
  sg4::Host* const here_;
  const std::size_t pool_index_;  // its host DRAM pool
  sg4::Host* const pool_;         // the pool's host (with KV offload)
  double now_ = 0.0;  // logical time: the last boundary or the arrival that woke an idle replica
  std::vector<Request*> finished_;
};

}  // namespace

void replica(Point* p, int k) {
  ReplicaActor(p, k).run();
}

}  // namespace racktwin::sim::detail
