// Collect, the last stage of simulate(): each point's metrics (docs/simulation.md section 6) from
// its requests, its replica engines and its failures, then evaluate() for power and the
// normalisations (sim/evaluate.hpp). Sums run over requests and engines in index order, so the
// same run gives the same bytes.

#include <algorithm>
#include <cmath>

#include "sim/evaluate.hpp"
#include "sim/point_state.hpp"

namespace racktwin::sim::detail {
namespace {

// Overload (queue_metrics): fewer measured requests say nothing; a point is overloaded when more
// than kOverloadGrowth of its arrivals stay in flight, and the requests in flight rise over the
// arrivals by more than kOverloadRise times their scatter about the trend.
constexpr double kMinQueueRequests = 20, kOverloadGrowth = 0.02, kOverloadRise = 3;

// The measured window: the first measured arrival and the last measured finish, s (first is -1
// when no measured request finished).
struct Window {
  double first = -1, last = 0;
};

// Latencies, tokens, throughput and KV transfers of the measured (not warm-up, finished)
// requests; completions of all of them.
Window request_metrics(const Point& p, PointResult& r) {
  std::vector<double> ttft, tpot, e2e, norm;
  double first = -1, last = 0, in_tok = 0, out_tok = 0, e2e_sum = 0, transfer_s = 0,
         transfer_bytes = 0, transferred = 0;
  for (const Request& q : p.requests) {
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
    if (p.prefill > 0 && q.osl > 1) {
      transfer_s += q.ready - q.first_token;  // sent at the first token, received when ready
      transfer_bytes += p.kv_bytes_per_token * (q.isl + 1);
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
  if (p.kv_transfers > 0)
    r.kv_prompts_per_transfer =
        static_cast<double>(p.kv_prompts_sent) / static_cast<double>(p.kv_transfers);
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
  return {first, last};
}

// What the replica engines did: iterations and their mean breakdown, preemptions, KV high-water
// mark, prefix and host-tier hits, KV written to host DRAM.
void engine_metrics(const Point& p, PointResult& r) {
  double hit = 0, prompt = 0, offload_hit = 0, offloaded = 0;
  for (const auto& e : p.engines) {
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
    r.iteration_roofline_s += s.breakdown_s[4];
  }
  if (r.iterations > 0) {
    const double n_it = static_cast<double>(r.iterations);
    r.iteration_compute_s /= n_it;
    r.iteration_memory_s /= n_it;
    r.iteration_communication_s /= n_it;
    r.iteration_overhead_s /= n_it;
    r.iteration_roofline_s /= n_it;
  }
  r.prefix_hit_rate = prompt > 0 ? hit / prompt : 0.0;
  r.offload_hit_rate = prompt > 0 ? offload_hit / prompt : 0.0;
  r.offloaded_bytes = offloaded * p.block_bytes;
}

// Queue growth of an open loop or a trace replay, from the requests in flight (arrived, not
// finished; warm-up included) seen by each measured arrival: the least-squares slope of that count
// against time as a share of the arrival rate, its rise over the arrivals and the scatter about the
// line. Arrivals above what the replicas serve grow the count by offered - served per second (the
// batch first, then the queue before it), a share 1 - served/offered of the arrivals; below
// capacity it does not grow. A closed loop cannot overload: its clients wait for their answers.
void queue_metrics(const Point& p, PointResult& r) {
  if (clients_of(p.spec.arrivals)) return;
  std::vector<double> arrived, finished, at;
  for (const Request& q : p.requests) {
    arrived.push_back(q.arrival);
    if (q.finish >= 0) finished.push_back(q.finish);
    if (!q.warmup && q.finish >= 0) at.push_back(q.arrival);
  }
  std::ranges::sort(arrived);
  std::ranges::sort(finished);
  std::ranges::sort(at);
  const double n = static_cast<double>(at.size());
  if (n < kMinQueueRequests || at.back() <= at.front()) return;
  std::vector<double> in_flight;
  for (const double t : at)
    in_flight.push_back(static_cast<double>(std::ranges::lower_bound(arrived, t) - arrived.begin()) -
                        static_cast<double>(std::ranges::lower_bound(finished, t) - finished.begin()));
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < at.size(); ++i) {
    sx += at[i], sy += in_flight[i], sxx += at[i] * at[i], sxy += at[i] * in_flight[i];
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx), intercept = (sy - slope * sx) / n;
  double residual = 0;
  for (std::size_t i = 0; i < at.size(); ++i)
    residual += std::pow(in_flight[i] - intercept - slope * at[i], 2);
  const double span = at.back() - at.front();
  r.queue_growth = std::min(1.0, slope / ((n - 1) / span));  // a share: noise can pass 1
  r.queue_rise = slope * span;
  r.queue_scatter = std::sqrt(residual / n);
  r.overloaded = r.queue_growth > kOverloadGrowth && r.queue_rise > kOverloadRise * r.queue_scatter;
}

// Failures: requests restarted, time out of service (spans never repaired count to the end of the
// run), mean recovery time.
void failure_metrics(const Point& p, PointResult& r) {
  r.retried_requests = p.retried;
  r.replica_down_s = p.down_s;
  for (const auto& spans : p.outages)
    for (const auto& o : spans)
      if (std::isinf(o.to) && o.from < p.end) r.replica_down_s += p.end - o.from;
  r.recovery_s = p.recoveries > 0 ? p.recovered_s / p.recoveries : 0.0;
}

// The one-second series: tokens and activity from the replica engines (activity as the mean over
// the replicas of both pools, weighted by their XPUs), completions from the requests; and the
// activity over the measured window, to the second (the seconds it spans), averaged over the
// replicas: the same stretch of time the throughput is measured over. XPU power is linear in activity, so the power at the mean activity
// is the mean power.
// The series row of a time in seconds. A run's span is bounded by the scenario's limits.span before
// it starts; the clamp keeps any time past that from an out-of-range conversion.
std::size_t second_of(double t) {
  constexpr double kMaxRow = 1e9;
  return static_cast<std::size_t>(std::clamp(std::floor(t), 0.0, kMaxRow));
}

void timeseries(const Point& p, const Window& w, PointResult& r) {
  std::size_t seconds = second_of(p.end) + 1;
  for (const auto& e : p.engines) seconds = std::max(seconds, e->stats().seconds.size());
  r.timeseries.assign(seconds, {});
  // Activity-weighted time, summed over the replicas of both pools, each weighted by its XPUs
  // over the XPUs of a replica of the point's layout (1 when every replica has that layout).
  std::vector<SecondBin> active(seconds);
  double replicas = 0;  // the weights' sum: replicas of the point's layout serving as many XPUs
  for (std::size_t k = 0; k < p.engines.size(); ++k) {
    const double weight = static_cast<double>(p.deployment->sites[k].xpus.size()) /
                          static_cast<double>(p.spec.layout.xpus());
    replicas += weight;
    const auto& bins = p.engines[k]->stats().seconds;
    for (std::size_t t = 0; t < bins.size(); ++t) {
      r.timeseries[t].output_tokens += bins[t].output_tokens;
      r.timeseries[t].prefill_tokens += bins[t].prefill_tokens;
      active[t].compute_s += weight * bins[t].compute_s;
      active[t].memory_s += weight * bins[t].memory_s;
      active[t].link_s += weight * bins[t].link_s;
      active[t].busy_s += weight * bins[t].busy_s;
    }
  }
  for (const Request& q : p.requests)
    if (q.finish >= 0) r.timeseries[std::min(seconds - 1, second_of(q.finish))].completed += 1;
  const auto from = second_of(w.first);
  const auto to = std::min(seconds - 1, second_of(w.last));
  SecondBin window;
  for (std::size_t t = from; t <= to; ++t) {
    window.compute_s += active[t].compute_s;
    window.memory_s += active[t].memory_s;
    window.link_s += active[t].link_s;
    window.busy_s += active[t].busy_s;
  }
  const double span = static_cast<double>(to - from + 1) * replicas;
  r.compute_activity = std::min(1.0, window.compute_s / span);
  r.memory_activity = std::min(1.0, window.memory_s / span);
  r.link_activity = std::min(1.0, window.link_s / span);
  r.busy_activity = std::min(1.0, window.busy_s / span);
  for (std::size_t t = 0; t < seconds; ++t) {
    r.timeseries[t].compute_activity = active[t].compute_s / replicas;
    r.timeseries[t].memory_activity = active[t].memory_s / replicas;
    r.timeseries[t].link_activity = active[t].link_s / replicas;
    r.timeseries[t].busy_activity = active[t].busy_s / replicas;
  }
}

// Requests left unserved when the engine ran out of events: every replica that could take them is
// down for good (a failure without a repair). The point's figures would hold only what came before.
std::string unserved(const Point& p) {
  std::size_t left = 0;
  for (const Request& q : p.requests) left += q.finish < 0 ? 1 : 0;
  if (left == 0) return {};
  return std::to_string(left) + " of " + std::to_string(p.requests.size()) +
         " requests were never served: every replica that could serve them failed and none came "
         "back (give the failure a 'repair' time, or more replicas)";
}

void collect_point(const Point& p, PointResult& r, PowerModels& power_models) {
  if (!p.error.empty()) {
    r.error = p.error;
    return;
  }
  if (r.error = unserved(p); !r.error.empty()) return;
  const Window w = request_metrics(p, r);
  engine_metrics(p, r);
  failure_metrics(p, r);
  queue_metrics(p, r);
  timeseries(p, w, r);
  if (const auto& pm = power_models.of(p.spec))
    evaluate(r, *pm);
  else
    r.error = pm.error();
}

}  // namespace

void collect(const Points& points, std::vector<PointResult>& results) {
  PowerModels power_models;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i] != nullptr) collect_point(*points[i], results[i], power_models);
}

}  // namespace racktwin::sim::detail
