#include "sim/replica_engine.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace racktwin::sim {

ReplicaEngine::ReplicaEngine(const perf::StepModel& model, double kv_capacity_tokens,
                             EngineParams params)
    : model_(&model), kv_capacity_(kv_capacity_tokens), params_(params), window_(model.window()) {}

void ReplicaEngine::admit(Request* r) {
  r->target = r->isl;
  r->prefilled = 0;
  r->kv_tokens = 0;
  waiting_.push_back(r);
}

void ReplicaEngine::preempt_newest() {
  Request* r = running_.back();
  running_.pop_back();
  kv_used_ -= r->kv_tokens;
  context_sum_ -= r->kv_tokens;
  r->kv_tokens = 0;
  reserved_ -= r->reserved;
  r->reserved = 0;
  r->prefilled = 0;
  r->target = r->isl + r->generated;  // recompute the prompt and what was generated
  r->preemptions += 1;
  stats_.preemptions += 1;
  // Back to the head of the queue, behind a partly prefilled prompt (which holds KV and must finish
  // first, or the two could block each other).
  auto at = waiting_.begin();
  if (!waiting_.empty() && waiting_.front()->prefilled > 0) ++at;
  waiting_.insert(at, r);
}

void ReplicaEngine::add_iteration(double& clock, const perf::IterationShape& s) {
  const perf::Breakdown b = model_->step(s);
  const double t = b.total.value();
  double c = 0, m = 0;
  for (const auto& p : b.parts) {
    c += p.compute.value();
    m += p.memory.value();
  }
  durations_.push_back(t);
  compute_activity_.push_back(t > 0 ? std::min(1.0, c / t) : 0.0);
  memory_activity_.push_back(t > 0 ? std::min(1.0, m / t) : 0.0);
  clock += t;
  boundaries_.push_back(clock);
}

const std::vector<double>& ReplicaEngine::plan(double now) {
  boundaries_.clear();
  durations_.clear();
  compute_activity_.clear();
  memory_activity_.clear();
  chunks_.clear();
  if (!busy()) return boundaries_;
  stats_.plans += 1;

  // Room for one more KV entry per decoding sequence, preempting the newest if needed.
  bool preempted = false;
  while (!running_.empty() && kv_used_ + static_cast<double>(running_.size()) > kv_capacity_) {
    preempt_newest();
    preempted = true;
  }

  // Prefill chunks from the queue, FIFO, within the token budget, the sequence limit and the cache.
  const double n = static_cast<double>(running_.size());
  int budget = params_.max_batched_tokens - static_cast<int>(running_.size());
  int seqs = static_cast<int>(running_.size());
  double kv = kv_used_ + n;
  double reserved = reserved_;
  for (Request* r : waiting_) {
    if (budget <= 0 || seqs >= params_.max_seqs) break;
    if (r->prefilled == 0) {  // a new admission
      const double need = r->target + params_.reserve_output_ratio * (r->osl - r->generated);
      if (preempted || reserved + need > kv_capacity_) break;
      reserved += need;
    }
    const int remaining = r->target - r->prefilled;
    int chunk = std::min(remaining, budget);
    chunk = static_cast<int>(std::min<double>(chunk, kv_capacity_ - kv));
    if (chunk <= 0) break;
    chunks_.push_back({r, chunk});
    budget -= chunk;
    kv += chunk;
    seqs += 1;
    if (chunk < remaining) break;  // one partly prefilled prompt at a time
  }
  if (chunks_.empty() && running_.empty())
    throw std::runtime_error("replica cannot make progress: the first queued request (" +
                             std::to_string(waiting_.front()->target) +
                             " prompt tokens) does not fit the KV cache of " +
                             std::to_string(static_cast<long long>(kv_capacity_)) + " tokens");

  double clock = now;
  if (!chunks_.empty()) {
    perf::IterationShape s = perf::IterationShape::decode(n, context_sum_);
    for (const auto& c : chunks_)
      s.add_prefill_chunk(c.tokens, c.r->prefilled, c.r->prefilled + c.tokens == c.r->target,
                          window_);
    add_iteration(clock, s);
    return boundaries_;
  }
  // Pure decode: fuse up to the next sequence to finish or the cache to fill.
  std::size_t k = 1;
  if (params_.fuse) {
    int next_finish = running_.front()->osl - running_.front()->generated;
    for (const Request* r : running_) next_finish = std::min(next_finish, r->osl - r->generated);
    const double room = std::floor((kv_capacity_ - kv_used_) / n);
    k = static_cast<std::size_t>(std::max(1.0, std::min<double>(next_finish, room)));
  }
  for (std::size_t i = 0; i < k; ++i)
    add_iteration(clock,
                  perf::IterationShape::decode(n, context_sum_ + static_cast<double>(i) * n));
  return boundaries_;
}

void ReplicaEngine::apply(std::size_t j, std::vector<Request*>& finished) {
  if (j == 0 || j > boundaries_.size())
    throw std::logic_error("apply: no such iteration in the plan");
  if (!chunks_.empty() && j != 1)
    throw std::logic_error("apply: a prefill plan holds one iteration");
  const double end = boundaries_[j - 1];
  int prefill_tokens = 0, completing = 0;
  for (const auto& c : chunks_) {
    prefill_tokens += c.tokens;
    completing += c.r->prefilled + c.tokens == c.r->target ? 1 : 0;
  }
  const double decoding = static_cast<double>(running_.size());
  for (std::size_t i = 0; i < j; ++i) {
    stats_.busy_s += durations_[i];
    stats_.compute_s += durations_[i] * compute_activity_[i];
    stats_.memory_s += durations_[i] * memory_activity_[i];
    const auto second = static_cast<std::size_t>(std::max(0.0, std::floor(boundaries_[i])));
    if (stats_.seconds.size() <= second) stats_.seconds.resize(second + 1);
    SecondBin& bin = stats_.seconds[second];
    bin.output_tokens += decoding + completing;
    bin.prefill_tokens += prefill_tokens;
    bin.compute_s += durations_[i] * compute_activity_[i];
    bin.memory_s += durations_[i] * memory_activity_[i];
  }
  stats_.iterations += static_cast<std::int64_t>(j);

  // Decode: every running sequence gains j tokens.
  const int steps = static_cast<int>(j);
  for (Request* r : running_) {
    r->generated += steps;
    r->kv_tokens += steps;
  }
  kv_used_ += static_cast<double>(steps) * static_cast<double>(running_.size());
  context_sum_ += static_cast<double>(steps) * static_cast<double>(running_.size());
  stats_.max_kv_used = std::max(stats_.max_kv_used, kv_used_);
  auto done = [&](Request* r) {
    r->finish = end;
    reserved_ -= r->reserved;
    r->reserved = 0;
    kv_used_ -= r->kv_tokens;
    context_sum_ -= r->kv_tokens;
    r->kv_tokens = 0;
    finished.push_back(r);
  };
  std::vector<Request*> still;
  still.reserve(running_.size());
  for (Request* r : running_) {
    if (r->generated >= r->osl)
      done(r);
    else
      still.push_back(r);
  }
  running_.swap(still);

  // Prefill chunks: a prompt that completes samples its next token and starts decoding.
  for (const auto& c : chunks_) {
    Request* r = c.r;
    if (r->prefilled == 0 && r->reserved == 0) {
      r->reserved = r->target + params_.reserve_output_ratio * (r->osl - r->generated);
      reserved_ += r->reserved;
    }
    r->prefilled += c.tokens;
    r->kv_tokens += c.tokens;
    kv_used_ += c.tokens;
    stats_.max_kv_used = std::max(stats_.max_kv_used, kv_used_);
    if (r->prefilled < r->target) continue;
    waiting_.pop_front();  // chunks are taken from the front, in order
    r->generated += 1;
    if (r->first_token < 0) r->first_token = end;
    if (r->generated >= r->osl) {
      done(r);
    } else {
      context_sum_ += r->kv_tokens;
      running_.push_back(r);
    }
  }
  chunks_.clear();
  boundaries_.clear();
}

}  // namespace racktwin::sim
