#include "rehearse/engine.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <random>
#include <unordered_map>

#include "core/error.hpp"
#include "sim/serving.hpp"
#include "topology/queries.hpp"

namespace racktwin::rehearse {
namespace {

using topology::PartId;
using topology::PartKind;
constexpr std::size_t kClasses = kAllPartClasses.size();

[[noreturn]] void throw_input(std::string message) {
  throw InputError({Diagnostic{{}, "", std::move(message), {}}});
}


// ---- The event queue -------------------------------------------------------------------------

enum class EvType { fail, restarted, rescheduled, swap_done, feed_done, replenished };

struct Ev {
  double t = 0;
  std::uint64_t seq = 0;
  EvType type = EvType::fail;
  int a = 0, b = 0;  // fail: instance; restarted/rescheduled: domain, count; swap/feed: request;
                     // replenished: class
  int pool = 0;      // restarted/rescheduled: the pool of the replicas
  bool operator>(const Ev& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Queue {
 public:
  void push(double t, EvType type, int a, int b = 0, int pool = 0) {
    q_.push(Ev{t, seq_++, type, a, b, pool});
  }
  bool empty() const { return q_.empty(); }
  Ev pop() {
    Ev e = q_.top();
    q_.pop();
    return e;
  }
  double next_time() const { return q_.top().t; }

 private:
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> q_;
  std::uint64_t seq_ = 0;
};

// ---- Time to failure -------------------------------------------------------------------------

class Clocks {
 public:
  explicit Clocks(const EngineInput& in) {
    for (std::size_t c = 0; c < kClasses; ++c) {
      const auto& fc = in.classes[c];
      rng_[c].seed(sim::stream_seed(in.seed, "failures/" + to_string(fc.part)));
      rate_[c] = fc.rate.value / 3600.0;  // per part-second
      shape_[c] = fc.shape.value;
      scale_[c] = rate_[c] > 0 ? (1.0 / rate_[c]) / std::tgamma(1.0 + 1.0 / shape_[c]) : 0;
    }
  }
  // Exponential classes run one clock per domain for all their parts (the superposition of their
  // Poisson processes, thinned by the parts out of service); Weibull ones one clock per part.
  bool pooled(std::size_t c) const { return shape_[c] == 1.0; }
  // Seconds until the next failure of one of `parts` parts of class c put in service now (a pooled
  // clock), or of one part; infinity when the class never fails.
  double draw(std::size_t c, std::size_t parts = 1) {
    if (rate_[c] <= 0 || parts == 0) return std::numeric_limits<double>::infinity();
    if (pooled(c))
      return std::exponential_distribution<double>(rate_[c] * static_cast<double>(parts))(rng_[c]);
    return std::weibull_distribution<double>(shape_[c], scale_[c])(rng_[c]);
  }
  // Which of `parts` parts a pooled clock's failure hits.
  std::size_t pick(std::size_t c, std::size_t parts) {
    return std::uniform_int_distribution<std::size_t>(0, parts - 1)(rng_[c]);
  }

 private:
  std::array<std::mt19937_64, kClasses> rng_;
  std::array<double, kClasses> rate_{}, shape_{}, scale_{};
};

// ---- One domain's state ----------------------------------------------------------------------

struct Domain {
  std::vector<PartId> failed;         // hardware down, waiting for a swap or the feed repair
  topology::Impact impact;            // of `failed`
  std::vector<int> replica_of;        // by XPU ordinal: its replica in the current placement, -1
  std::vector<int> pool_of;           // by replica: its pool
  // By pool: replicas placed, and of those re-forming (pending) or restarting.
  std::vector<int> placed, pending, restarting;
  int capacity(std::size_t p) const { return std::max(0, placed[p] - pending[p] - restarting[p]); }
};

// Replicas of each pool on `block` healthy domains for `units` units, first fit; empty when they
// do not fit.
std::vector<std::vector<int>> pack(const topology::Topology& t,
                                   const std::vector<Surrogate::Pool>& pools, int block, int units) {
  std::vector<std::vector<int>> targets(static_cast<std::size_t>(block),
                                        std::vector<int>(pools.size(), 0));
  std::vector<std::vector<char>> taken(static_cast<std::size_t>(block),
                                       std::vector<char>(t.xpus().size(), 0));
  for (std::size_t p = 0; p < pools.size(); ++p) {
    int need = units * pools[p].replicas;
    for (int j = 0; j < block && need > 0; ++j) {
      const auto got = topology::place_free(t, pools[p].xpus, need, taken[static_cast<std::size_t>(j)]);
      targets[static_cast<std::size_t>(j)][p] = static_cast<int>(got.size());
      need -= static_cast<int>(got.size());
    }
    if (need > 0) return {};
  }
  return targets;
}

struct Instance {
  int domain = 0;
  std::uint8_t cls = 0;
  bool pooled = false;  // the clock of every part of the class in the domain; `unit` is drawn
  PartId unit{};
};

struct SwapRequest {
  int domain = 0;
  PartId part{};
  std::size_t cls = 0;
  std::size_t event = 0;  // index into outcome.events
  double queued = 0, spare_at = 0;
};

// ---- The rehearsal -------------------------------------------------------------------------------

class Engine {
 public:
  explicit Engine(const EngineInput& in)
      : in_(in), t_(*in.domain), clocks_(in), pools_(in.surrogate.unit()) {
    const int horizon_bins = static_cast<int>(std::ceil(in.horizon.value() / in.sample_every.value()));
    out_.samples.resize(static_cast<std::size_t>(std::max(1, horizon_bins)));
    for (std::size_t i = 0; i < out_.samples.size(); ++i) {
      out_.samples[i].t_s = static_cast<double>(i) * in.sample_every.value();
      out_.samples[i].min_replicas_up = std::numeric_limits<double>::infinity();
    }
    for (std::size_t c = 0; c < kClasses; ++c) units_[c] = units_of(t_, in.classes[c].part);
    spares_.fill(0);
    for (std::size_t c = 0; c < kClasses; ++c) {
      const auto& s = in.repair.spares[c];
      const double units = static_cast<double>(units_[c].size()) * in.domains;
      spares_[c] = s.share ? static_cast<int>(std::ceil(s.value * units - 1e-9))
                           : static_cast<int>(s.value);
      out_.classes[c].spares_at_start = out_.classes[c].min_spares = spares_[c];
    }
    technicians_free_ = in.repair.technicians;
  }

  EngineOutcome run() {
    setup_domains();
    setup_clocks();
    while (!queue_.empty() && queue_.next_time() < in_.horizon.value()) {
      const Ev e = queue_.pop();
      advance(e.t);
      handle(e);
    }
    advance(in_.horizon.value());
    finish();
    return std::move(out_);
  }

 private:
  // ---- setup

  void setup_domains() {
    const int xpus = static_cast<int>(t_.xpus().size());
    out_.xpus_total = xpus * in_.domains;
    domains_.resize(static_cast<std::size_t>(in_.domains));
    healthy_ = topology::assess(t_, {});
    if (in_.serving) packing_ = pack_units(t_, in_.surrogate);
    pool_up_.assign(pools_.size(), 0);
    for (std::size_t i = 0; i < domains_.size(); ++i) {
      Domain& d = domains_[i];
      d.impact = healthy_;
      d.placed.assign(pools_.size(), 0);
      d.pending = d.restarting = d.placed;
      if (!in_.serving) continue;
      place(d, static_cast<int>(i));
      for (std::size_t p = 0; p < pools_.size(); ++p) pool_up_[p] += d.placed[p];
    }
    out_.replicas_total = static_cast<int>(std::floor(pool_units() + 1e-9));
    up_ = units_up();
    out_.min_replicas_up = std::numeric_limits<double>::infinity();
    if (!in_.serving) setup_jobs(xpus);
  }

  void setup_jobs(int xpus_per_domain) {
    const int size = in_.job_xpus;
    if (size < 1 || size > out_.xpus_total)
      throw_input("a job of " + std::to_string(size) + " XPUs does not fit a deployment of " +
                       std::to_string(out_.xpus_total) + " XPUs");
    const int jobs = out_.xpus_total / size;
    job_back_.assign(static_cast<std::size_t>(jobs), 0.0);
    out_.jobs.job_xpus = size;
    out_.jobs.jobs = jobs;
    xpus_per_domain_ = xpus_per_domain;
  }

  void setup_clocks() {
    for (int d = 0; d < in_.domains; ++d)
      for (std::size_t c = 0; c < kClasses; ++c) {
        const auto cls = static_cast<std::uint8_t>(c);
        if (clocks_.pooled(c)) {
          instances_.push_back(Instance{d, cls, true, {}});
          schedule_failure(instances_.size() - 1, 0.0);
          continue;
        }
        for (PartId u : units_[c]) {
          instances_.push_back(Instance{d, cls, false, u});
          schedule_failure(instances_.size() - 1, 0.0);
        }
      }
  }

  void schedule_failure(std::size_t inst, double from) {
    const Instance& i = instances_[inst];
    const double dt = clocks_.draw(i.cls, i.pooled ? units_[i.cls].size() : 1);
    if (from + dt < in_.horizon.value()) queue_.push(from + dt, EvType::fail, static_cast<int>(inst));
  }

  // ---- placement and capacity

  // Each pool's replicas on the domain's in-service XPUs, in pool order (the prefill pool first),
  // up to the domain's targets. With pools of a domain's own groups, the most whole groups its
  // survivors hold come first, then each pool up to its target on what they leave.
  void place(Domain& d, int index) {
    const auto& targets = packing_.of_domain(index);
    d.replica_of.assign(t_.xpus().size(), -1);
    d.pool_of.clear();
    std::fill(d.placed.begin(), d.placed.end(), 0);
    std::vector<char> taken(t_.xpus().size(), 0);
    if (pools_.size() > 1 && packing_.block == 1) {
      int m = packing_.units_per_block;
      while (m > 0 && !holds(d, m)) --m;
      std::vector<int> whole(pools_.size());
      for (std::size_t p = 0; p < pools_.size(); ++p) whole[p] = m * pools_[p].replicas;
      place_pools(d, whole, taken);
    }
    place_pools(d, targets, taken);
  }

  // Whether the domain's survivors hold `m` whole groups.
  bool holds(const Domain& d, int m) const {
    std::vector<char> taken(t_.xpus().size(), 0);
    for (std::size_t p = 0; p < pools_.size(); ++p) {
      const int need = m * pools_[p].replicas;
      if (static_cast<int>(topology::place_free(t_, pools_[p].xpus, need, taken, &d.impact).size()) < need)
        return false;
    }
    return true;
  }

  // Each pool's replicas up to `upto` (placed ones included) on the XPUs not `taken`.
  void place_pools(Domain& d, const std::vector<int>& upto, std::vector<char>& taken) {
    for (std::size_t p = 0; p < pools_.size(); ++p) {
      const auto got =
          topology::place_free(t_, pools_[p].xpus, upto[p] - d.placed[p], taken, &d.impact);
      for (const auto& r : got) {
        for (PartId x : r.xpus)
          d.replica_of[static_cast<std::size_t>(t_.ordinal(x))] = static_cast<int>(d.pool_of.size());
        d.pool_of.push_back(static_cast<int>(p));
      }
      d.placed[p] += static_cast<int>(got.size());
    }
  }

  // The units the site's pools make: the scarcer pool's replicas in service over a unit's share
  // of them, a fraction of a group where a pool is short (the site's pools serve together, so its
  // throughput follows the pool that binds).
  double pool_units() const {
    double units = std::numeric_limits<double>::infinity();
    for (std::size_t p = 0; p < pools_.size(); ++p)
      units = std::min(units, static_cast<double>(pool_up_[p]) / pools_[p].replicas);
    return units;
  }

  // The site's units in service: at most the whole units placed healthy (replicas beyond them are
  // slack that covers a failure).
  double units_up() const {
    return std::min(pool_units(), static_cast<double>(out_.replicas_total));
  }

  // Applies a change to a domain and keeps the site's totals in step.
  template <class F>
  void change(Domain& d, const F& f) {
    std::vector<int> before(pools_.size());
    for (std::size_t p = 0; p < pools_.size(); ++p) before[p] = d.capacity(p);
    f();
    for (std::size_t p = 0; p < pools_.size(); ++p) pool_up_[p] += d.capacity(p) - before[p];
    up_ = units_up();
  }

  // Re-places a domain's replicas after its failures changed; the replicas that this adds to
  // those serving before (`serving_now`, by pool) re-form for the reschedule time.
  void replace_after(Domain& d, int index, const std::vector<int>& serving_now) {
    place(d, index);
    for (std::size_t p = 0; p < pools_.size(); ++p) {
      const int back =
          std::max(0, d.placed[p] - d.pending[p] - d.restarting[p] - std::max(0, serving_now[p]));
      d.pending[p] += back;
      if (back > 0)
        queue_.push(now_ + in_.repair.reschedule.value, EvType::rescheduled, index, back,
                    static_cast<int>(p));
    }
  }

  // ---- integration of the state between events

  void advance(double to) {
    while (now_ < to) {
      const std::size_t bin = std::min(out_.samples.size() - 1,
                                       static_cast<std::size_t>(now_ / in_.sample_every.value()));
      const double bin_end = std::min(to, (static_cast<double>(bin) + 1) * in_.sample_every.value());
      const double dt = std::max(bin_end - now_, 0.0);
      accumulate(out_.samples[bin], dt);
      now_ = bin_end > now_ ? bin_end : to;
    }
  }

  void accumulate(Sample& s, double dt) {
    const double n = up_;
    if (dt > 0) time_at_[up_] += dt;
    s.replicas_up += n * dt;
    s.parts_down += parts_down_ * dt;
    s.min_replicas_up = std::min(s.min_replicas_up, n);
    out_.min_replicas_up = std::min(out_.min_replicas_up, n);
    if (!in_.serving) return;
    const auto& sg = in_.surrogate;
    const double offered = in_.offered_replicas * sg.tps_at_target;
    const bool meets = n + 1e-9 >= in_.offered_replicas;
    const double served = meets ? offered : std::min(offered, n * sg.tps_saturated);
    s.attainment += meets ? dt : 0;
    s.served_tps += served * dt;
    s.lost_tps += (offered - served) * dt;
    out_.tokens_offered += offered * dt;
    out_.tokens_served += served * dt;
    out_.tokens_late += meets ? 0 : served * dt;
    out_.tokens_lost += (offered - served) * dt;
  }

  // ---- events

  void handle(const Ev& e) {
    switch (e.type) {
      case EvType::fail: fail(static_cast<std::size_t>(e.a)); break;
      case EvType::restarted:
        change(dom(e.a), [&] { dom(e.a).restarting[static_cast<std::size_t>(e.pool)] -= e.b; });
        break;
      case EvType::rescheduled:
        change(dom(e.a), [&] { dom(e.a).pending[static_cast<std::size_t>(e.pool)] -= e.b; });
        break;
      case EvType::swap_done:
        ++technicians_free_;
        repaired(static_cast<std::size_t>(e.a));
        dispatch();
        break;
      case EvType::feed_done: repaired(static_cast<std::size_t>(e.a)); break;
      case EvType::replenished: replenished(static_cast<std::size_t>(e.a)); break;
    }
  }

  Domain& dom(int d) { return domains_[static_cast<std::size_t>(d)]; }

  void fail(std::size_t inst) {
    Instance i = instances_[inst];
    if (i.pooled) {  // the pool's next failure, then the part this one hits
      schedule_failure(inst, now_);
      i.unit = units_[i.cls][clocks_.pick(i.cls, units_[i.cls].size())];
    }
    Domain& d = dom(i.domain);
    const auto& fc = in_.classes[i.cls];
    if (d.impact.is_down(i.unit)) {  // a part already out of service does not fail again
      if (!i.pooled) schedule_failure(inst, now_);
      return;
    }
    ++out_.classes[i.cls].failures;
    ++out_.samples[std::min(out_.samples.size() - 1, static_cast<std::size_t>(now_ / in_.sample_every.value()))].failures;
    FailureEvent ev{now_, i.domain, t_.part(i.unit).name, fc.part};
    if (!in_.serving) {
      interrupt_jobs(i, ev);
      if (!i.pooled) schedule_failure(inst, now_);  // replaced by a hot spare at once for the job
      out_.events.push_back(std::move(ev));
      return;
    }
    if (fc.tier == RepairTier::restart) {
      restart(i, d, ev);
      if (!i.pooled) schedule_failure(inst, now_ + in_.repair.restart.value);
      out_.events.push_back(std::move(ev));
      return;
    }
    take_down(i, d, ev);
    out_.events.push_back(std::move(ev));
    request_repair(i, inst, out_.events.size() - 1);
  }

  void restart(const Instance& i, Domain& d, FailureEvent& ev) {
    const int r = d.replica_of[static_cast<std::size_t>(t_.ordinal(i.unit))];
    ev.xpus_out = 0;
    ev.replicas_hit = r >= 0 ? 1 : 0;
    ev.recovered_s = in_.repair.restart.value;
    if (r < 0) return;
    const int pool = d.pool_of[static_cast<std::size_t>(r)];
    change(d, [&] { ++d.restarting[static_cast<std::size_t>(pool)]; });
    queue_.push(now_ + in_.repair.restart.value, EvType::restarted, i.domain, 1, pool);
  }

  // What fails with `unit` (topology::dependents), once per part.
  const topology::Dependents& descendants(PartId unit) {
    auto it = descendants_.find(unit);
    if (it != descendants_.end()) return it->second;
    return descendants_.emplace(unit, topology::dependents(t_, unit)).first->second;
  }

  // The impact of one more failed part. When nothing that goes down with it carries traffic
  // between other parts, the survivors' connectivity and bandwidth are unchanged: its XPUs are
  // lost and nothing else moves, so the full assessment is not needed.
  void add_failure(Domain& d, PartId unit) {
    d.failed.push_back(unit);
    const topology::Dependents& down = descendants(unit);
    if (down.transit) {
      d.impact = topology::assess(t_, d.failed);
      return;
    }
    mark_lost(d.impact, down);
  }

  // The impact of the failures left after a repair: the same argument, from the healthy domain
  // one failure at a time, when none of them carries traffic between other parts; else the full
  // assessment.
  topology::Impact remaining_impact(const Domain& d) {
    const bool transit = std::any_of(d.failed.begin(), d.failed.end(),
                                     [&](PartId p) { return descendants(p).transit; });
    if (transit) return topology::assess(t_, d.failed);
    topology::Impact im = healthy_;
    for (PartId p : d.failed) mark_lost(im, descendants(p));
    return im;
  }

  void mark_lost(topology::Impact& im, const topology::Dependents& down) const {
    for (PartId v : down.parts) {
      im.down[v] = true;
      if (t_.part(v).kind != PartKind::xpu) continue;
      auto& state = im.state[static_cast<std::size_t>(t_.ordinal(v))];
      if (state == topology::Effect::lost) continue;
      if (state == topology::Effect::cut_off) --im.cut_off;
      if (state == topology::Effect::slowed) --im.slowed;
      state = topology::Effect::lost;
      ++im.lost;
    }
  }

  void take_down(const Instance& i, Domain& d, FailureEvent& ev) {
    ++parts_down_;
    const int out_before = d.impact.lost + d.impact.cut_off;
    add_failure(d, i.unit);
    ev.xpus_out = d.impact.lost + d.impact.cut_off - out_before;
    // Replicas with an XPU now out of service go down at once; the survivors are placed again.
    std::vector<char> hit(d.pool_of.size(), 0);
    for (std::size_t x = 0; x < d.replica_of.size(); ++x)
      if (d.replica_of[x] >= 0 && !d.impact.in_service(static_cast<int>(x)))
        hit[static_cast<std::size_t>(d.replica_of[x])] = 1;
    std::vector<int> serving_now(pools_.size());
    for (std::size_t p = 0; p < pools_.size(); ++p) serving_now[p] = d.capacity(p);
    for (std::size_t r = 0; r < hit.size(); ++r)
      if (hit[r]) {
        --serving_now[static_cast<std::size_t>(d.pool_of[r])];
        ++ev.replicas_hit;
      }
    change(d, [&] { replace_after(d, i.domain, serving_now); });
  }

  void request_repair(const Instance& i, std::size_t inst, std::size_t event) {
    const auto& fc = in_.classes[i.cls];
    requests_.push_back(SwapRequest{i.domain, i.unit, i.cls, event, now_, now_});
    const int req = static_cast<int>(requests_.size() - 1);
    request_instance_.push_back(inst);
    if (fc.tier == RepairTier::facility) {
      queue_.push(now_ + in_.repair.feed_repair.value, EvType::feed_done, req);
      return;
    }
    queue_.push(now_ + in_.repair.vendor_return.value, EvType::replenished, static_cast<int>(i.cls));
    auto& tally = out_.classes[i.cls];
    if (spares_[i.cls] > 0) {
      --spares_[i.cls];
      tally.min_spares = std::min(tally.min_spares, spares_[i.cls]);
      ready_.push_back(req);
      dispatch();
    } else {
      tally.min_spares = std::min(tally.min_spares, 0);
      waiting_spare_[i.cls].push_back(req);
    }
  }

  void replenished(std::size_t cls) {
    if (waiting_spare_[cls].empty()) {
      ++spares_[cls];
      return;
    }
    const int req = waiting_spare_[cls].front();
    waiting_spare_[cls].pop_front();
    requests_[static_cast<std::size_t>(req)].spare_at = now_;
    ready_.push_back(req);
    dispatch();
  }

  void dispatch() {
    while (technicians_free_ > 0 && !ready_.empty()) {
      const int req = ready_.front();
      ready_.pop_front();
      --technicians_free_;
      auto& r = requests_[static_cast<std::size_t>(req)];
      auto& ev = out_.events[r.event];
      ev.waited_spare_s = r.spare_at - r.queued;
      ev.waited_technician_s = now_ - r.spare_at;
      ++out_.classes[r.cls].spares_used;
      const double end = now_ + in_.repair.swap.value;
      technician_busy_s_ += std::min(end, in_.horizon.value()) - now_;
      queue_.push(end, EvType::swap_done, req);
    }
  }

  void repaired(std::size_t req) {
    const SwapRequest& r = requests_[req];
    Domain& d = dom(r.domain);
    auto it = std::find(d.failed.begin(), d.failed.end(), r.part);
    if (it != d.failed.end()) d.failed.erase(it);
    --parts_down_;
    d.impact = remaining_impact(d);
    change(d, [&] {
      std::vector<int> serving_now(pools_.size());
      for (std::size_t p = 0; p < pools_.size(); ++p) serving_now[p] = d.capacity(p);
      replace_after(d, r.domain, serving_now);
    });
    auto& ev = out_.events[r.event];
    ev.recovered_s = now_ + in_.repair.reschedule.value - ev.t_s;
    if (ev.t_s + ev.recovered_s > in_.horizon.value()) ev.recovered_s = -1;
    if (!instances_[request_instance_[req]].pooled) schedule_failure(request_instance_[req], now_);
    ++repairs_done_;
  }

  // ---- jobs

  // XPU ordinals (in the domain) whose service the failure of `unit` touches in any way.
  const std::vector<int>& blast(PartId unit) {
    auto it = blast_.find(unit);
    if (it != blast_.end()) return it->second;
    std::vector<int> xs;
    const topology::Dependents& down = descendants(unit);
    if (down.transit) {
      const PartId one[] = {unit};
      for (const auto& a : topology::assess(t_, one).affected) xs.push_back(t_.ordinal(a.xpu));
    } else {  // its own XPUs, and no other (topology::Dependents)
      for (PartId v : down.parts)
        if (t_.part(v).kind == PartKind::xpu) xs.push_back(t_.ordinal(v));
      std::sort(xs.begin(), xs.end());
    }
    return blast_.emplace(unit, std::move(xs)).first->second;
  }

  void interrupt_jobs(const Instance& i, FailureEvent& ev) {
    const auto& xs = blast(i.unit);
    ev.xpus_out = static_cast<int>(xs.size());
    const int size = in_.job_xpus;
    int last = -1;
    for (int x : xs) {
      const int global = i.domain * xpus_per_domain_ + x;
      const int job = global / size;
      if (job == last || job >= out_.jobs.jobs) continue;
      last = job;
      double& back = job_back_[static_cast<std::size_t>(job)];
      if (back > now_) continue;  // restarting: not running, not interrupted again
      back = now_ + in_.repair.restart.value;
      job_down_s_ += std::min(back, in_.horizon.value()) - now_;
      ++out_.jobs.interruptions;
      ++out_.classes[i.cls].interruptions;
      ++ev.replicas_hit;
    }
    ev.recovered_s = in_.repair.restart.value;
  }

  // ---- the end

  void finish() {
    const double horizon = in_.horizon.value();
    const double total = out_.replicas_total;
    double avail = 0, attain = 0;
    for (auto& s : out_.samples) {
      const double w = std::min(in_.sample_every.value(), horizon - s.t_s);
      avail += s.replicas_up;
      attain += s.attainment;
      s.replicas_up /= w;
      s.attainment /= w;
      s.served_tps /= w;
      s.lost_tps /= w;
      s.parts_down /= w;
      if (!std::isfinite(s.min_replicas_up)) s.min_replicas_up = s.replicas_up;
      if (in_.serving) {
        const double load = in_.offered_replicas * in_.surrogate.tps_at_target;
        const double per_replica = s.replicas_up > 0 ? load / s.replicas_up : INFINITY;
        if (per_replica <= in_.surrogate.tps_saturated) {
          const auto p = latency_at(in_.surrogate, per_replica);
          s.ttft_p99_s = p.ttft_p99_s;
          s.tpot_p99_s = p.tpot_p99_s;
        } else {
          s.ttft_p99_s = s.tpot_p99_s = std::numeric_limits<double>::quiet_NaN();  // queues grow
        }
      }
    }
    out_.availability = total > 0 ? avail / (total * horizon) : 0;
    out_.attainment = in_.serving ? attain / horizon : 0;
    out_.offered_replicas = in_.offered_replicas;
    if (!std::isfinite(out_.min_replicas_up)) out_.min_replicas_up = total;
    const int techs = in_.repair.technicians;
    out_.technician_utilisation = techs > 0 ? technician_busy_s_ / (techs * horizon) : 0;
    out_.swaps_unfinished = static_cast<int>(requests_.size()) - repairs_done_;
    out_.time_at_replicas.assign(time_at_.begin(), time_at_.end());
    if (!in_.serving) {
      auto& j = out_.jobs;
      j.running_s = j.jobs * horizon - job_down_s_;
      j.mttf_s = j.interruptions > 0 ? j.running_s / static_cast<double>(j.interruptions) : 0;
    }
  }

  const EngineInput& in_;
  const topology::Topology& t_;
  Clocks clocks_;
  std::vector<Surrogate::Pool> pools_;
  UnitPacking packing_;
  std::vector<int> pool_up_;  // by pool: replicas in service on the site
  Queue queue_;
  EngineOutcome out_;
  std::array<std::vector<PartId>, kClasses> units_;
  std::vector<Instance> instances_;
  std::vector<Domain> domains_;
  double now_ = 0;
  double up_ = 0;  // units in service (units_up)
  int parts_down_ = 0;
  // Repairs.
  std::array<int, kClasses> spares_{};
  std::array<std::deque<int>, kClasses> waiting_spare_;
  std::deque<int> ready_;
  std::vector<SwapRequest> requests_;
  std::vector<std::size_t> request_instance_;
  int technicians_free_ = 0, repairs_done_ = 0;
  double technician_busy_s_ = 0;
  // Jobs.
  std::vector<double> job_back_;
  double job_down_s_ = 0;
  int xpus_per_domain_ = 0;
  std::unordered_map<PartId, std::vector<int>> blast_;
  std::map<double, double> time_at_;
  topology::Impact healthy_;
  std::unordered_map<PartId, topology::Dependents> descendants_;
};

}  // namespace

std::vector<Surrogate::Pool> Surrogate::unit() const {
  return pools.empty() ? std::vector<Pool>{{replica_xpus, 1}} : pools;
}

int Surrogate::unit_xpus() const {
  int n = 0;
  for (const auto& p : unit()) n += p.xpus * p.replicas;
  return n;
}

int Surrogate::unit_replicas() const {
  int n = 0;
  for (const auto& p : unit()) n += p.replicas;
  return n;
}

UnitPacking pack_units(const topology::Topology& t, const Surrogate& s) {
  const auto pools = s.unit();
  const int domain = static_cast<int>(t.xpus().size());
  for (const auto& p : pools)
    if (p.xpus < 1 || p.xpus > domain || p.replicas < 1)
      throw_input("a replica of " + std::to_string(p.xpus) +
                  " XPUs does not fit a scale-up domain of " + std::to_string(domain) + " XPUs");
  UnitPacking out;
  if (pools.size() == 1) {  // as many replicas as fit a domain
    const int fit = static_cast<int>(topology::place(t, pools[0].xpus).replicas.size());
    out.targets = {{fit}};
    out.units_per_block = fit / pools[0].replicas;
    return out;
  }
  // The fewest domains that hold one unit (a replica never spans domains here).
  constexpr int kMostDomainsPerUnit = 16;
  for (int block = 1; block <= kMostDomainsPerUnit; ++block) {
    auto one = pack(t, pools, block, 1);
    if (one.empty()) continue;
    out.block = block;
    out.units_per_block = 1;
    out.targets = std::move(one);
    // As many units as the block holds: each pool bounds them by its replicas per domain.
    const int most = block * domain / s.unit_xpus();
    for (int m = 2; m <= most; ++m) {
      auto more = pack(t, pools, block, m);
      if (more.empty()) break;
      out.units_per_block = m;
      out.targets = std::move(more);
    }
    return out;
  }
  throw_input("a serving group of " + std::to_string(s.unit_xpus()) + " XPUs does not fit " +
              std::to_string(kMostDomainsPerUnit) + " scale-up domains of " +
              std::to_string(domain) + " XPUs");
}

int units_placed(const topology::Topology& t, const Surrogate& s, int domains) {
  const UnitPacking k = pack_units(t, s);
  const auto pools = s.unit();
  int units = std::numeric_limits<int>::max();
  for (std::size_t p = 0; p < pools.size(); ++p) {
    long replicas = 0;
    for (int d = 0; d < domains; ++d) replicas += k.of_domain(d)[p];
    units = std::min(units, static_cast<int>(replicas / pools[p].replicas));
  }
  return units;
}

Surrogate::Point latency_at(const Surrogate& s, double tps) {
  if (s.curve.empty()) return {tps, 0, 0};
  if (tps <= s.curve.front().tps) return s.curve.front();
  for (std::size_t i = 1; i < s.curve.size(); ++i) {
    const auto& a = s.curve[i - 1];
    const auto& b = s.curve[i];
    if (tps <= b.tps) {
      const double w = b.tps > a.tps ? (tps - a.tps) / (b.tps - a.tps) : 1.0;
      return {tps, a.ttft_p99_s + w * (b.ttft_p99_s - a.ttft_p99_s),
              a.tpot_p99_s + w * (b.tpot_p99_s - a.tpot_p99_s)};
    }
  }
  return s.curve.back();
}

AtLoad at_load(const EngineOutcome& o, const Surrogate& s, double offered) {
  double total = 0, met = 0, lost = 0;
  for (const auto& [n, t] : o.time_at_replicas) {
    total += t;
    if (n + 1e-9 >= offered) met += t;
    lost += t * std::max(0.0, offered * s.tps_at_target - n * s.tps_saturated);
  }
  AtLoad a;
  if (total <= 0) return a;
  a.attainment = met / total;
  const double tokens = offered * s.tps_at_target * total;
  a.tokens_lost_share = tokens > 0 ? lost / tokens : 0;
  return a;
}

std::vector<PartId> units_of(const topology::Topology& t, PartClass c) {
  std::vector<PartKind> kinds;
  switch (c) {
    case PartClass::xpu:
    case PartClass::hbm:
    case PartClass::software:
    case PartClass::link: return t.xpus();
    case PartClass::compute_tray:
    case PartClass::psu: kinds = {PartKind::compute_tray}; break;
    case PartClass::switch_tray: kinds = {PartKind::switch_tray, PartKind::onboard_switch}; break;
    case PartClass::host:
    case PartClass::cpu_dram: kinds = {PartKind::host}; break;
    case PartClass::power_feed: kinds = {PartKind::power_feed}; break;
  }
  std::vector<PartId> out;
  for (auto [v, end] = boost::vertices(t.graph()); v != end; ++v)
    if (std::find(kinds.begin(), kinds.end(), t.part(*v).kind) != kinds.end()) out.push_back(*v);
  return out;
}

EngineOutcome run_engine(const EngineInput& in) {
  if (in.domain == nullptr) throw_input("no domain topology to rehearse");
  if (in.classes.size() != kClasses) throw_input("every part class needs a failure process");
  if (!(in.horizon.value() > 0) || !(in.sample_every.value() > 0))
    throw_input("the horizon and the sample step must be positive");
  return Engine(in).run();
}

}  // namespace racktwin::rehearse
