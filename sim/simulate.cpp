// The SimGrid side of the serving simulation: one full zone holding, per point, a host per replica
// and one for the load generator; one actor per replica and one for the load generator and router.
// Control messages (a request to a replica, a completion back) are condition-variable wake-ups at
// no cost: they stand for HTTP calls, not for data flows. Times are kept by the replica engines as
// exact sums of iteration times; SimGrid orders the events and wakes actors at those times.

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <simgrid/s4u.hpp>

#include "core/perf/memory.hpp"
#include "power/power_model.hpp"
#include "sim/deployment.hpp"
#include "sim/evaluate.hpp"
#include "sim/router.hpp"
#include "sim/serving.hpp"

namespace racktwin::sim {
namespace {

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
  double kv_capacity = 0;
  std::vector<std::unique_ptr<ReplicaEngine>> engines;
  std::unique_ptr<Router> router;  // the spec's policy over the entry pool
  std::vector<std::deque<Request*>> inbox;
  std::vector<sg4::ConditionVariablePtr> wake;
  std::vector<int> in_flight;
  std::deque<Request*> done;
  sg4::ConditionVariablePtr done_cv;
  sg4::MutexPtr mutex;
  // Where the replicas run, and the SimGrid side of it.
  std::shared_ptr<const Deployment> deployment;
  int prefill = 0;  // disaggregated: the first `prefill` replicas form the prefill pool
  int total = 0;    // replicas of both pools
  double kv_bytes_per_token = 0;  // one copy of a sequence's KV in a replica
  std::vector<sg4::Host*> replica_hosts;
  std::vector<sg4::Host*> pool_hosts;
  std::vector<sg4::Mailbox*> kv_mailbox;       // per decode replica: KV transfers to it
  std::vector<sg4::Mailbox*> offload_mailbox;  // per replica: loads from and writes to host DRAM
  // KV offload: one host DRAM tier per host pool, shared by its replicas.
  std::vector<std::unique_ptr<PrefixCache>> host_tiers;
  double block_bytes = 0;  // one cache block of one sequence's KV
  struct Transfer {
    Request* r =
        nullptr;  // delivered to the mover's replica on arrival; nullptr: nothing to deliver
    sg4::Host* from = nullptr;
    sg4::Host* to = nullptr;
    double bytes = 0;
    bool stop = false;  // the run is over
  };
  std::deque<Transfer> transfers;  // stable addresses: mailboxes carry pointers to them
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
};

void frontend(Point* p) {
  std::unique_lock lock(*p->mutex);
  const int n = static_cast<int>(p->requests.size());
  int next = 0, completed = 0;
  std::deque<Request*> parked;  // requests waiting for a replica to come back into service
  // Sends a request, at the current time, to a replica in service by the router's policy; parks it
  // when every replica of the entry pool is down.
  auto route = [&](Request* r) {
    const int k = p->router->pick(*r);
    if (k < 0) {
      parked.push_back(r);
      return;
    }
    r->replica = k;
    p->in_flight[static_cast<std::size_t>(k)] += 1;
    p->inbox[static_cast<std::size_t>(k)].push_back(r);
    p->wake[static_cast<std::size_t>(k)]->notify_one();
  };
  // A client's request reaches its replica after the front end's latency (HTTP, tokenization,
  // routing); the replica admits it from then on. Its TTFT and E2E count from `at`.
  const double front_end = p->spec.efficiency.request_latency.value();
  auto issue_index = [&](std::size_t index, int client, double at) {
    Request* r = &p->requests[index];
    r->client = client;
    r->arrival = at;
    r->ready = at + front_end;
    route(r);
  };
  auto issue = [&](int client, double at) {
    issue_index(static_cast<std::size_t>(next++), client, at);
  };
  // Trace replay: requests wait in a queue ordered by their arrival time (then by index).
  std::set<std::pair<double, std::size_t>> scheduled;
  auto collect = [&] {
    if (p->revived) {
      p->revived = false;
      std::deque<Request*> waiting;
      waiting.swap(parked);
      for (Request* r : waiting) {
        r->ready = sg4::Engine::get_clock();
        route(r);
      }
    }
    while (!p->done.empty()) {
      Request* r = p->done.front();
      p->done.pop_front();
      p->in_flight[static_cast<std::size_t>(r->replica)] -= 1;
      if (r->failed) {
        // Its replica failed: restart it now on one in service.
        r->failed = false;
        r->ready = sg4::Engine::get_clock();
        p->retried += 1;
        route(r);
        continue;
      }
      if (r->finish < 0) {
        // Prefilled and first token out: its KV goes to the least busy decode replica.
        const int from = r->replica;
        r->replica = least_outstanding(p->up, p->in_flight, p->prefill, p->total);
        p->in_flight[static_cast<std::size_t>(r->replica)] += 1;
        p->transfers.push_back({r, p->replica_hosts[static_cast<std::size_t>(from)],
                                p->replica_hosts[static_cast<std::size_t>(r->replica)],
                                p->kv_bytes_per_token * (r->isl + r->generated)});
        p->kv_mailbox[static_cast<std::size_t>(r->replica)]
            ->put_init(&p->transfers.back(), 0)
            ->detach();
        continue;
      }
      ++completed;
      p->progress->complete();
      p->end = std::max(p->end, r->finish);
      if (p->spec.kind == WorkloadKind::inferencex && next < n)
        issue(r->client, r->finish);  // closed loop: the client sends its next prompt at once
      if (p->has_graph) {
        // Release the requests that waited for this one.
        for (int d : p->graph.dependents[static_cast<std::size_t>(r->id)]) {
          const auto k = static_cast<std::size_t>(d);
          const double dl = p->graph.delay[k];
          p->ready[k] = std::max(
              p->ready[k], dl >= 0 ? r->finish + dl : std::max(r->finish, p->graph.release[k]));
          if (--p->graph.pending[k] == 0) scheduled.emplace(p->ready[k], k);
        }
      }
    }
  };
  if (p->has_graph) {
    // Requests that wait for nothing arrive at their release time; the others when released.
    for (int i = 0; i < n; ++i)
      if (p->graph.pending[static_cast<std::size_t>(i)] == 0)
        scheduled.emplace(p->graph.release[static_cast<std::size_t>(i)],
                          static_cast<std::size_t>(i));
    while (completed < n && p->error.empty()) {
      if (!scheduled.empty()) {
        const auto [at, index] = *scheduled.begin();
        if (p->done.empty() && !p->revived &&
            p->done_cv->wait_until(lock, at) == std::cv_status::no_timeout) {
          collect();
          continue;
        }
        collect();
        if (scheduled.empty() || scheduled.begin()->second != index)
          continue;  // an earlier turn came in
        scheduled.erase(scheduled.begin());
        issue_index(index, static_cast<int>(index), at);
      } else {
        while (p->done.empty() && !p->revived && p->error.empty()) p->done_cv->wait(lock);
        collect();
      }
    }
  } else if (p->spec.kind == WorkloadKind::poisson) {
    // Open loop: each request arrives at its pre-drawn time, whatever is in flight.
    while (next < n && p->error.empty()) {
      const double at = p->requests[static_cast<std::size_t>(next)].arrival;
      lock.unlock();
      sg4::this_actor::sleep_until(at);
      lock.lock();
      collect();
      issue(next, at);
    }
  } else {
    const int clients = std::min(p->spec.concurrency, n);
    for (int c = 0; c < clients; ++c) issue(c, 0.0);
  }
  while (completed < n && p->error.empty()) {
    while (p->done.empty() && !p->revived && p->error.empty()) p->done_cv->wait(lock);
    collect();
  }
  p->stop = true;
  for (auto& w : p->wake) w->notify_all();
  for (int k = p->prefill; k < p->total && p->prefill > 0; ++k) {
    p->transfers.push_back({.stop = true});
    p->kv_mailbox[static_cast<std::size_t>(k)]->put_init(&p->transfers.back(), 0)->detach();
  }
}

// KV transfers for one replica, taken from mailbox `mb`: prompt KV into a decode replica from a
// prefill replica, or blocks between a replica and its host DRAM pool. Each is a SimGrid
// communication over the generated platform, so concurrent transfers share links. Transfers run
// side by side; a request waiting for one joins the replica's inbox when it has arrived.
void mover(Point* p, int k, sg4::Mailbox* mb) {
  Point::Transfer* incoming = nullptr;
  std::vector<sg4::CommPtr> comms{mb->get_async<Point::Transfer>(&incoming)};
  std::vector<Point::Transfer*> moving{nullptr};
  while (true) {
    const auto i = static_cast<std::size_t>(sg4::Comm::wait_any(comms));
    if (i == 0) {
      if (incoming->stop) {
        // The run is over; writes to host DRAM may still be on their way.
        for (std::size_t c = 1; c < comms.size(); ++c) comms[c]->wait();
        break;
      }
      comms.push_back(sg4::Comm::sendto_async(incoming->from, incoming->to,
                                              static_cast<std::uint64_t>(incoming->bytes)));
      moving.push_back(incoming);
      comms[0] = mb->get_async<Point::Transfer>(&incoming);
      continue;
    }
    Request* r = moving[i]->r;
    comms.erase(comms.begin() + static_cast<std::ptrdiff_t>(i));
    moving.erase(moving.begin() + static_cast<std::ptrdiff_t>(i));
    if (r == nullptr) continue;  // a write to host DRAM: nobody waits for it
    std::unique_lock lock(*p->mutex);
    if (!p->up[static_cast<std::size_t>(k)]) {
      // The replica failed while the transfer ran: back to the frontend, to restart elsewhere.
      r->failed = true;
      r->first_token = -1;
      p->done.push_back(r);
      p->done_cv->notify_one();
      continue;
    }
    r->ready = sg4::Engine::get_clock();
    p->inbox[static_cast<std::size_t>(k)].push_back(r);
    p->wake[static_cast<std::size_t>(k)]->notify_one();
  }
}

void replica(Point* p, int k) {
  std::unique_lock lock(*p->mutex);
  ReplicaEngine& e = *p->engines[static_cast<std::size_t>(k)];
  auto& inbox = p->inbox[static_cast<std::size_t>(k)];
  auto& wake = p->wake[static_cast<std::size_t>(k)];
  double now = 0.0;  // logical time: the last boundary or the arrival that woke an idle replica
  std::vector<Request*> finished;
  const bool decode_pool = p->prefill > 0 && k >= p->prefill;
  const bool offload = !p->host_tiers.empty();
  sg4::Host* here = p->replica_hosts[static_cast<std::size_t>(k)];
  const auto pool_index =
      static_cast<std::size_t>(p->deployment->sites[static_cast<std::size_t>(k)].pool);
  sg4::Host* pool = offload ? p->pool_hosts[pool_index] : nullptr;
  auto move = [&](Point::Transfer t) {
    p->transfers.push_back(t);
    p->offload_mailbox[static_cast<std::size_t>(k)]->put_init(&p->transfers.back(), 0)->detach();
  };
  // The earliest time a request in the inbox may be admitted (infinite when it is empty).
  auto earliest = [&] {
    double t = std::numeric_limits<double>::infinity();
    for (const Request* r : inbox) t = std::min(t, r->ready);
    return t;
  };
  // Admits the requests of the inbox that have reached the replica by `now`, in order; the others
  // (still in the front end) stay.
  auto drain = [&] {
    for (std::size_t i = 0, count = inbox.size(); i < count; ++i) {
      Request* r = inbox.front();
      inbox.pop_front();
      if (r->ready > now) {
        inbox.push_back(r);
        continue;
      }
      if (decode_pool) {
        e.admit_prefilled(r);
      } else if (offload && !r->load_checked) {
        // Blocks the host tier holds are loaded over the host link before it is admitted.
        const int n = e.plan_load(r);
        if (n > 0)
          move({r, pool, here, n * p->block_bytes});
        else
          e.admit(r);
      } else {
        e.admit(r);
      }
    }
  };
  auto write_back = [&] {
    if (!offload) return;
    if (const int n = e.take_offloaded(); n > 0) move({nullptr, here, pool, n * p->block_bytes});
  };
  // Failures: the next span out of service, and going down at time t. The replica hands back
  // every request it holds or was sent (the frontend restarts them elsewhere), waits for the
  // repair, reloads its weights from its host over the host link, and serves again with a cold
  // cache. False when it is never repaired.
  const auto& outages = p->outages[static_cast<std::size_t>(k)];
  std::size_t next_outage = 0;
  const double never = std::numeric_limits<double>::infinity();
  auto outage_at = [&] { return next_outage < outages.size() ? outages[next_outage].from : never; };
  auto go_down = [&](double t) {
    const Point::Outage o = outages[next_outage++];
    p->up[static_cast<std::size_t>(k)] = 0;
    std::vector<Request*> lost = e.fail();
    for (Request* r : inbox) {
      r->failed = true;
      lost.push_back(r);
    }
    inbox.clear();
    for (Request* r : lost) p->done.push_back(r);
    p->done_cv->notify_one();
    if (o.to == never) return false;
    lock.unlock();
    sg4::this_actor::sleep_until(o.to);
    sg4::Comm::sendto(p->pool_hosts[pool_index], here, static_cast<std::uint64_t>(p->weight_bytes));
    lock.lock();
    now = sg4::Engine::get_clock();
    p->down_s += now - t;
    p->recovered_s += now - t;
    p->recoveries += 1;
    p->up[static_cast<std::size_t>(k)] = 1;
    p->revived = true;
    p->done_cv->notify_one();
    return true;
  };
  try {
    while (true) {
      if (!e.busy() && inbox.empty()) {
        if (p->stop || !p->error.empty()) break;
        if (const double cut = outage_at(); cut < never) {
          if (wake->wait_until(lock, cut) == std::cv_status::timeout) {
            if (!go_down(cut)) break;
            continue;
          }
        } else {
          wake->wait(lock);
        }
        if (!inbox.empty()) now = std::max(now, earliest());
        continue;
      }
      // Idle with requests still in the front end: the replica's time moves to the first one.
      if (!e.busy()) now = std::max(now, earliest());
      drain();
      if (!e.busy()) continue;  // every admitted request went to a load from host DRAM
      // The step model for now: the slowed one inside a slowdown span.
      const perf::StepModel* model = p->model.get();
      for (const auto& sl : p->slowdowns[static_cast<std::size_t>(k)])
        if (now >= sl.from && now < sl.to) model = sl.model;
      e.set_model(*model);
      const std::vector<double> b = e.plan(now);
      std::size_t j = b.size();
      if (const double cut = outage_at(); cut <= b.back()) {
        // It fails during this plan: the iterations that end before the failure count.
        const auto before =
            static_cast<std::size_t>(std::lower_bound(b.begin(), b.end(), cut) - b.begin());
        lock.unlock();
        sg4::this_actor::sleep_until(cut);
        lock.lock();
        if (before > 0) {
          finished.clear();
          e.apply(before, finished);
          for (Request* r : finished) p->done.push_back(r);
        }
        if (!go_down(cut)) break;
        continue;
      }
      if (b.size() == 1) {
        lock.unlock();
        sg4::this_actor::sleep_until(b[0]);
        lock.lock();
      } else {
        // A fused stretch: stop at the first boundary after an arrival, if one comes (or is
        // already on its way through the front end).
        while (true) {
          if (earliest() >= b.back() && wake->wait_until(lock, b.back()) == std::cv_status::timeout)
            break;
          if (inbox.empty()) continue;
          const double ta = earliest();
          if (ta >= b.back()) continue;
          j = static_cast<std::size_t>(std::lower_bound(b.begin(), b.end(), ta) - b.begin()) + 1;
          j = std::min(j, b.size());
          lock.unlock();
          sg4::this_actor::sleep_until(b[j - 1]);
          lock.lock();
          break;
        }
      }
      now = b[j - 1];
      finished.clear();
      e.apply(j, finished);
      write_back();
      for (Request* r : finished) p->done.push_back(r);
      if (!finished.empty()) {
        p->done_cv->notify_one();
        // Let the load generator answer at this instant, so that a follow-up request joins the
        // next iteration rather than the one after.
        lock.unlock();
        sg4::this_actor::yield();
        lock.lock();
      }
    }
  } catch (const std::exception& ex) {
    p->error = ex.what();
    p->done_cv->notify_all();
  }
  if (offload) move({.stop = true});
}

bool& engine_used() {
  static bool used = false;
  return used;
}

}  // namespace

Stats Stats::of(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto q = [&](double f) {
    // Linear interpolation between closest ranks (numpy's default).
    const double pos = f * static_cast<double>(v.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.median = q(0.5);
  s.p90 = q(0.9);
  s.p99 = q(0.99);
  s.min = v.front();
  s.max = v.back();
  s.percentiles.reserve(101);
  for (int k = 0; k <= 100; ++k) s.percentiles.push_back(q(k / 100.0));
  return s;
}

std::expected<std::vector<PointResult>, std::string> simulate(const Catalog& catalog,
                                                              const std::vector<PointSpec>& specs,
                                                              const SimOptions& options) {
  if (engine_used())
    return std::unexpected("a process runs one simulation: SimGrid keeps one engine per process");
  engine_used() = true;

  std::vector<std::unique_ptr<Point>> points;
  std::vector<PointResult> results(specs.size());
  Progress progress{&options.progress};
  std::map<std::tuple<std::string, int, int>, std::shared_ptr<const Deployment>> deployments;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const PointSpec& s = specs[i];
    results[i].spec = s;
    results[i].xpus = s.layout.xpus() * (s.replicas + s.prefill_replicas);
    // The replica must hold the workload's longest request.
    double min_tokens = static_cast<double>(s.workload.isl + s.workload.osl);
    if (s.kind == WorkloadKind::agentic) min_tokens = s.agentic.max_context;
    if (s.kind == WorkloadKind::trace && s.trace.requests) {
      min_tokens = 0;
      for (const auto& q : *s.trace.requests)
        min_tokens = std::max<double>(min_tokens, q.input_length + q.output_length);
    }
    if (s.prefill_replicas > 0 && !s.system->serving.disaggregation) {
      results[i].error = s.system->id + "'s serving stack (" + s.system->serving.engine +
                         ") has no prefill/decode disaggregation";
      points.push_back(nullptr);
      continue;
    }
    // Speculative decoding (MTP): drafted tokens per step and the mean tokens a step emits.
    perf::Speculation spec;
    if (s.workload.mtp) {
      if (!s.system->serving.mtp) {
        results[i].error = s.system->id + "'s serving stack (" + s.system->serving.engine +
                           ") has no speculative decoding; set mtp: false";
        points.push_back(nullptr);
        continue;
      }
      spec.draft_tokens = s.workload.mtp_draft_tokens;
      spec.acceptance =
          s.workload.mtp_acceptance.value_or(default_mtp_acceptance(spec.draft_tokens));
    }
    const perf::MemoryPlan plan =
        perf::plan_memory(*s.model, *s.system, catalog, s.layout, s.precision, s.memory, min_tokens,
                          spec.draft_tokens);
    if (!plan.fits) {
      results[i].error = plan.reason;
      points.push_back(nullptr);
      continue;
    }
    auto sm = perf::StepModel::create(*s.model, *s.system, catalog, s.layout, s.precision,
                                      s.efficiency, spec, s.memory);
    if (!sm) {
      results[i].error = sm.error();
      points.push_back(nullptr);
      continue;
    }
    auto p = std::make_unique<Point>();
    p->spec = s;
    p->model = std::make_unique<perf::StepModel>(*sm);
    p->kv_capacity = plan.kv_tokens;
    p->progress = &progress;
    if (s.kind == WorkloadKind::trace || s.kind == WorkloadKind::agentic) {
      p->graph = s.kind == WorkloadKind::trace
                     ? trace_graph(s.trace)
                     : agentic_graph(s.agentic, s.concurrency, stream_seed(s.seed, "workload"));
      p->has_graph = true;
      p->requests = std::move(p->graph.requests);
      // A waiting request's arrival comes from its predecessors (its own release time counts only
      // when it has no delay: see collect()).
      p->ready.assign(p->graph.release.size(), 0.0);
      for (std::size_t k = 0; k < p->ready.size(); ++k)
        p->ready[k] = p->graph.pending[k] > 0 ? 0.0 : p->graph.release[k];
    } else {
      p->requests =
          s.kind == WorkloadKind::poisson
              ? poisson_requests(s.workload, s.rate, stream_seed(s.seed, "workload"))
              : inferencex_requests(s.workload, s.concurrency, stream_seed(s.seed, "workload"));
    }
    // Where the replicas run: placed on the system's topology (one deployment per shape).
    const int total = s.replicas + s.prefill_replicas;
    auto& placed = deployments[{s.system->id, s.layout.xpus(), total}];
    if (!placed) {
      auto d = deploy(*s.system, s.layout.xpus(), total);
      if (!d) {
        results[i].error = d.error();
        points.push_back(nullptr);
        continue;
      }
      placed = std::make_shared<const Deployment>(std::move(*d));
    }
    p->deployment = placed;
    p->prefill = s.prefill_replicas;
    p->total = total;
    // One copy of a sequence's KV: GQA shards its KV heads over the TP ranks (replicating them
    // when there are fewer heads than ranks); an MLA latent is whole on a rank; stages split
    // layers.
    const auto& att = s.model->attention;
    const double shards = att.kind == AttentionKind::gqa && !s.layout.dp_attention
                              ? std::min(s.layout.tp, att.kv_heads)
                              : 1;
    p->kv_bytes_per_token = sm->kv_bytes_per_token_per_xpu().value() * shards * s.layout.pp;
    results[i].domains = placed->domains;
    p->weight_bytes = sm->weights_per_xpu().value() * s.layout.xpus();
    p->outages.assign(static_cast<std::size_t>(total), {});
    p->up.assign(static_cast<std::size_t>(total), 1);
    p->slowdowns.assign(static_cast<std::size_t>(total), {});
    std::map<double, const perf::StepModel*> slowed;  // step models by scale-up fraction
    if (!s.failures.empty() && s.prefill_replicas > 0) {
      results[i].error = "failures with disaggregated serving are not simulated yet";
      points.push_back(nullptr);
      continue;
    }
    std::string failure_error;
    for (const FailureSpec& f : s.failures) {
      topology::PartKind kind = topology::PartKind::xpu;
      for (topology::PartKind q : topology::kAllPartKinds)
        if (topology::to_string(q) == f.part) kind = q;
      auto impact = failure_impact(*placed, kind, f.index);
      if (!impact) {
        failure_error = impact.error();
        break;
      }
      const double to = f.repair_s ? f.at_s + *f.repair_s : std::numeric_limits<double>::infinity();
      for (int k = 0; k < total; ++k) {
        const ReplicaImpact& ri = (*impact)[static_cast<std::size_t>(k)];
        if (ri.down) {
          p->outages[static_cast<std::size_t>(k)].push_back({f.at_s, to});
        } else if (ri.scale_up_fraction < 1.0) {
          auto& m = slowed[ri.scale_up_fraction];
          if (m == nullptr) {
            System slow = *s.system;
            for (auto& tier : slow.scale_up)
              tier.bandwidth_per_xpu =
                  BytesPerSecond(tier.bandwidth_per_xpu.value() * ri.scale_up_fraction);
            auto sm_slow = perf::StepModel::create(*s.model, slow, catalog, s.layout, s.precision,
                                                   s.efficiency, spec, s.memory);
            if (!sm_slow) {
              failure_error = sm_slow.error();
              break;
            }
            p->slow_models.push_back(std::make_unique<perf::StepModel>(*sm_slow));
            m = p->slow_models.back().get();
          }
          p->slowdowns[static_cast<std::size_t>(k)].push_back({f.at_s, to, m});
        }
      }
      if (!failure_error.empty()) break;
    }
    if (!failure_error.empty()) {
      results[i].error = "failure: " + failure_error;
      points.push_back(nullptr);
      continue;
    }
    // Overlapping spans of one replica merge into one.
    for (auto& spans : p->outages) {
      std::sort(spans.begin(), spans.end(),
                [](const Point::Outage& a, const Point::Outage& b) { return a.from < b.from; });
      std::vector<Point::Outage> merged;
      for (const auto& o : spans) {
        if (!merged.empty() && o.from <= merged.back().to)
          merged.back().to = std::max(merged.back().to, o.to);
        else
          merged.push_back(o);
      }
      spans = merged;
    }
    EngineParams ep = s.engine;
    ep.fuse = options.fuse;
    ep.max_batched_tokens = s.memory.max_batched_tokens;  // the planner sized the workspace for it
    ep.tokens_per_step = spec.acceptance;
    for (int k = 0; k < total; ++k) {
      EngineParams role = ep;
      role.prefill_only = k < s.prefill_replicas;
      p->engines.push_back(std::make_unique<ReplicaEngine>(*p->model, plan.kv_tokens, role));
    }
    // KV offload: a host DRAM tier per host pool, in blocks of one sequence's KV.
    p->block_bytes = p->kv_bytes_per_token * ep.block_tokens;
    if (s.host_offload > 0 && ep.prefix_cache) {
      int capacity = 0;
      for (const HostPool& pool : placed->pools) {
        p->host_tiers.push_back(std::make_unique<PrefixCache>(ep.block_tokens));
        capacity = static_cast<int>(
            std::min(2e9, std::floor(pool.dram_bytes * s.host_offload / p->block_bytes)));
        for (int k : pool.replicas)
          p->engines[static_cast<std::size_t>(k)]->set_host_tier(p->host_tiers.back().get(),
                                                                 capacity);
      }
      results[i].host_tier_blocks = capacity;
    }
    results[i].kv_capacity_tokens = plan.kv_tokens;
    // Requests enter the prefill pool when serving is disaggregated, else any replica.
    p->router =
        make_router(s.router, {p->up, p->in_flight, p->engines},
                    p->prefill > 0 ? p->prefill : p->total, p->graph.session, p->graph.sessions);
    progress.total += static_cast<std::int64_t>(p->requests.size());
    points.push_back(std::move(p));
  }

  // Network model: CM02, max-min fair sharing of link bandwidth with the links' own latency, no TCP
  // corrections (LV08's latency x13 and bandwidth x0.97 factors and window bound are fitted to
  // wide-area TCP, not to scale-up fabrics).
  int argc = 4;
  char arg0[] = "racktwin";
  char arg1[] = "--log=root.thresh:critical";
  char arg2[] = "--cfg=network/model:CM02";
  char arg3[] = "--cfg=network/TCP-gamma:0";
  char* argv[] = {arg0, arg1, arg2, arg3, nullptr};
  sg4::Engine engine(&argc, argv);
  // The platform, per point: a host for the load generator, one per replica (its XPUs) and one
  // per host DRAM pool. Each replica has its own links: into the scale-up fabric within its rack,
  // out of the rack (multi-rack domains), to the scale-out network, and to its host pool, each
  // with the summed bandwidth of its XPUs' links in the topology graph and half the tier's
  // latency (a route crosses two). Switches are taken as non-blocking: a transfer between two
  // replicas is limited by their own links. Control messages (requests, completions) use a
  // zero-latency link: they stand for HTTP calls, not data flows.
  auto* root = sg4::create_full_zone("racktwin");
  using sg4::LinkInRoute;
  std::vector<std::vector<sg4::Host*>> hosts(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    Point* p = points[i].get();
    if (p == nullptr) continue;
    const std::string prefix = "point" + std::to_string(i);
    const Deployment& d = *p->deployment;
    sg4::Host* front = root->create_host(prefix + "/frontend", 1e9);
    hosts[i].push_back(front);
    auto* control = root->create_link(prefix + "/control", 1e15)->seal();
    std::vector<sg4::Host*>& pools = p->pool_hosts;
    for (std::size_t j = 0; j < d.pools.size(); ++j)
      pools.push_back(root->create_host(prefix + "/pool" + std::to_string(j), 1e9));
    struct Ports {
      sg4::Link *fabric, *uplink, *scale_out;
    };
    std::vector<Ports> ports;
    auto duplex = [&](const std::string& name, double bw, double latency) {
      return root->create_split_duplex_link(name, std::max(bw, 1.0))
          ->set_latency(latency / 2)
          ->seal();
    };
    for (int k = 0; k < p->total; ++k) {
      const Site& site = d.sites[static_cast<std::size_t>(k)];
      const std::string name = prefix + "/replica" + std::to_string(k);
      sg4::Host* h = root->create_host(name, 1e9);
      hosts[i].push_back(h);
      p->replica_hosts.push_back(h);
      root->add_route(front->get_netpoint(), h->get_netpoint(), nullptr, nullptr,
                      {LinkInRoute(control)});
      auto* host_link = duplex(name + "/host", site.host_link_bw, 0.0);
      root->add_route(h->get_netpoint(), pools[static_cast<std::size_t>(site.pool)]->get_netpoint(),
                      nullptr, nullptr, {LinkInRoute(host_link, LinkInRoute::Direction::UP)});
      ports.push_back({duplex(name + "/fabric", site.fabric_bw, d.rack_latency_s),
                       duplex(name + "/uplink", site.uplink_bw, d.domain_latency_s),
                       duplex(name + "/scale-out", site.scale_out_bw, d.scale_out_latency_s)});
    }
    // Prefill to decode replicas (disaggregated serving): within a rack over the fabric, across
    // racks of a domain through the uplinks, across domains over the scale-out network.
    for (int a = 0; a < p->prefill; ++a) {
      for (int b = p->prefill; b < p->total; ++b) {
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
        root->add_route(p->replica_hosts[static_cast<std::size_t>(a)]->get_netpoint(),
                        p->replica_hosts[static_cast<std::size_t>(b)]->get_netpoint(), nullptr,
                        nullptr,
                        {LinkInRoute(la, LinkInRoute::Direction::UP),
                         LinkInRoute(lb, LinkInRoute::Direction::DOWN)});
      }
    }
  }
  root->seal();
  for (std::size_t i = 0; i < points.size(); ++i) {
    Point* p = points[i].get();
    if (p == nullptr) continue;
    p->mutex = sg4::Mutex::create();
    p->done_cv = sg4::ConditionVariable::create();
    p->inbox.resize(static_cast<std::size_t>(p->total));
    p->in_flight.assign(static_cast<std::size_t>(p->total), 0);
    for (int k = 0; k < p->total; ++k) {
      p->wake.push_back(sg4::ConditionVariable::create());
      sg4::Host* h = hosts[i][static_cast<std::size_t>(k) + 1];
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
    sg4::Actor::create("frontend", hosts[i][0], [p] { frontend(p); });
  }
  engine.run();
  if (options.progress) options.progress(1.0);

  PowerModels power_models;
  for (std::size_t i = 0; i < points.size(); ++i) {
    Point* p = points[i].get();
    if (p == nullptr) continue;
    PointResult& r = results[i];
    if (!p->error.empty()) {
      r.error = p->error;
      continue;
    }
    std::vector<double> ttft, tpot, e2e, norm;
    double first = -1, last = 0, in_tok = 0, out_tok = 0, e2e_sum = 0, transfer_s = 0,
           transfer_bytes = 0, transferred = 0;
    for (const Request& q : p->requests) {
      if (q.finish >= 0) r.completed += 1;
      if (q.warmup || q.finish < 0) continue;
      r.requests += 1;
      first = first < 0 ? q.arrival : std::min(first, q.arrival);
      last = std::max(last, q.finish);
      in_tok += q.isl;
      out_tok += q.osl;
      ttft.push_back(q.first_token - q.arrival);
      e2e.push_back(q.finish - q.arrival);
      e2e_sum += q.finish - q.arrival;
      norm.push_back((q.finish - q.arrival) / q.osl);
      if (q.osl > 1) tpot.push_back((q.finish - q.first_token) / (q.osl - 1));
      if (p->prefill > 0 && q.osl > 1) {
        transfer_s += q.ready - q.first_token;  // sent at the first token, received when ready
        transfer_bytes += p->kv_bytes_per_token * (q.isl + 1);
        transferred += 1;
      }
    }
    r.duration_s = last - std::max(0.0, first);
    r.input_tokens = in_tok;
    r.output_tokens = out_tok;
    if (transferred > 0) {
      r.kv_transfer_s = transfer_s / transferred;
      r.kv_transfer_bytes = transfer_bytes / transferred;
    }
    r.ttft = Stats::of(ttft);
    r.tpot = Stats::of(tpot);
    r.e2e = Stats::of(e2e);
    const Stats n = Stats::of(norm);
    r.e2e_norm_interactivity = n.p90 > 0 ? 1.0 / n.p90 : 0.0;
    r.interactivity = r.tpot.median > 0 ? 1.0 / r.tpot.median : 0.0;
    if (r.duration_s > 0) {
      r.total_tps_per_xpu = (in_tok + out_tok) / r.duration_s / r.xpus;
      r.output_tps_per_xpu = out_tok / r.duration_s / r.xpus;
      r.input_tps_per_xpu = in_tok / r.duration_s / r.xpus;
      r.mean_concurrency = e2e_sum / r.duration_s;
    }
    double hit = 0, prompt = 0, offload_hit = 0, offloaded = 0;
    for (const auto& e : p->engines) {
      const EngineStats& s = e->stats();
      hit += s.prefix_hit_tokens;
      offload_hit += s.offload_hit_tokens;
      offloaded += static_cast<double>(s.offloaded_blocks);
      prompt += s.prompt_tokens;
      r.iterations += s.iterations;
      r.plans += s.plans;
      r.preemptions += s.preemptions;
      r.max_kv_used = std::max(r.max_kv_used, s.max_kv_used);
      r.iteration_compute_s += s.breakdown_s[0];
      r.iteration_memory_s += s.breakdown_s[1];
      r.iteration_communication_s += s.breakdown_s[2];
      r.iteration_overhead_s += s.breakdown_s[3];
    }
    if (r.iterations > 0) {
      const double n_it = static_cast<double>(r.iterations);
      r.iteration_compute_s /= n_it;
      r.iteration_memory_s /= n_it;
      r.iteration_communication_s /= n_it;
      r.iteration_overhead_s /= n_it;
    }
    r.prefix_hit_rate = prompt > 0 ? hit / prompt : 0.0;
    r.offload_hit_rate = prompt > 0 ? offload_hit / prompt : 0.0;
    r.retried_requests = p->retried;
    r.replica_down_s = p->down_s;
    for (const auto& spans : p->outages)  // spans never repaired count to the end of the run
      for (const auto& o : spans)
        if (std::isinf(o.to) && o.from < p->end) r.replica_down_s += p->end - o.from;
    r.recovery_s = p->recoveries > 0 ? p->recovered_s / p->recoveries : 0.0;
    r.offloaded_bytes = offloaded * p->block_bytes;
    // One-second series: tokens from the replica engines, completions from the requests.
    std::size_t seconds = static_cast<std::size_t>(std::floor(p->end)) + 1;
    for (const auto& e : p->engines) seconds = std::max(seconds, e->stats().seconds.size());
    r.timeseries.assign(seconds, {});
    std::vector<double> comp_s(seconds, 0.0), mem_s(seconds, 0.0);
    for (const auto& e : p->engines) {
      const auto& bins = e->stats().seconds;
      for (std::size_t t = 0; t < bins.size(); ++t) {
        r.timeseries[t].output_tokens += bins[t].output_tokens;
        r.timeseries[t].prefill_tokens += bins[t].prefill_tokens;
        comp_s[t] += bins[t].compute_s;
        mem_s[t] += bins[t].memory_s;
      }
    }
    for (const Request& q : p->requests)
      if (q.finish >= 0)
        r.timeseries[static_cast<std::size_t>(std::floor(q.finish))].completed += 1;
    // Activity over the measured window, to the second (the seconds it spans), averaged over the
    // replicas: the same stretch of time the throughput is measured over. XPU power is linear in
    // activity, so the power at the mean activity is the mean power.
    {
      const auto from = static_cast<std::size_t>(std::max(0.0, std::floor(std::max(0.0, first))));
      const auto to = std::min(seconds - 1, static_cast<std::size_t>(std::floor(last)));
      double c = 0, m = 0;
      for (std::size_t t = from; t <= to; ++t) {
        c += comp_s[t];
        m += mem_s[t];
      }
      const double span =
          static_cast<double>(to - from + 1) * static_cast<double>(p->spec.replicas);
      r.compute_activity = std::min(1.0, c / span);
      r.memory_activity = std::min(1.0, m / span);
    }
    const double reps = static_cast<double>(p->spec.replicas);
    for (std::size_t t = 0; t < seconds; ++t) {
      r.timeseries[t].compute_activity = comp_s[t] / reps;
      r.timeseries[t].memory_activity = mem_s[t] / reps;
    }
    if (const auto& pm = power_models.of(p->spec))
      evaluate(r, *pm);
    else
      r.error = pm.error();
  }
  return results;
}

}  // namespace racktwin::sim
