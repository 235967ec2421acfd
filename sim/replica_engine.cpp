#include "sim/replica_engine.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace racktwin::sim {

ReplicaEngine::ReplicaEngine(const perf::StepModel& model, double kv_capacity_tokens,
                             EngineParams params)
    : model_(&model),
      kv_capacity_(kv_capacity_tokens),
      params_(params),
      window_(model.window()),
      cache_(params.block_tokens),
      ranks_(model.layout().dp_attention ? std::max(1, model.layout().tp) : 1) {}

void ReplicaEngine::admit(Request* r) {
  r->target = r->isl;
  r->prefilled = 0;
  r->kv_tokens = 0;
  r->context = 0;
  r->cached_blocks = 0;
  waiting_.push_back(r);
}

void ReplicaEngine::admit_prefilled(Request* r) {
  r->target = r->isl + r->generated;
  r->prefilled = r->target;
  r->kv_tokens = 0;
  r->context = 0;
  r->cached_blocks = 0;
  r->kv_arrived = true;
  waiting_.push_back(r);
}

std::vector<Request*> ReplicaEngine::fail() {
  std::vector<Request*> lost;
  for (const Running& s : running_) {
    settle(s.r, decoded_);
    lost.push_back(s.r);
  }
  lost.insert(lost.end(), waiting_.begin(), waiting_.end());
  running_.clear();
  ends_.clear();
  grown_ = 0;
  waiting_.clear();
  cache_ = PrefixCache(params_.block_tokens);
  kv_used_ = context_sum_ = reserved_ = credit_ = 0;
  held_.clear();
  offloaded_ = 0;
  boundaries_.clear();
  durations_.clear();
  compute_activity_.clear();
  memory_activity_.clear();
  link_activity_.clear();
  chunks_.clear();
  for (Request* r : lost) lose_progress(*r);
  return lost;
}

void ReplicaEngine::hold(Request* r) {
  const double tokens = r->isl + r->generated;
  if (!held_.emplace(r, tokens).second) return;
  make_room(tokens);
  kv_used_ += tokens;
  stats_.max_kv_used = std::max(stats_.max_kv_used, kv_used_);
}

bool ReplicaEngine::release_held(Request* r) {
  const auto it = held_.find(r);
  if (it == held_.end()) return false;
  kv_used_ -= it->second;
  held_.erase(it);
  return true;
}

void lose_progress(Request& r) {
  r.generated = r.prefilled = r.target = r.kv_tokens = r.context = r.cached_blocks = 0;
  r.reserved = 0;
  r.grown = 0;
  r.kv_arrived = r.load_checked = false;
  r.loaded_blocks = 0;
  r.first_token = -1;  // the client sees a new stream when the request is restarted
  r.failed = true;
}

void ReplicaEngine::make_room(double tokens) {
  const double over = kv_used_ + tokens - kv_capacity_;
  if (over <= 0) return;
  const int evicted =
      cache_.evict(static_cast<int>(std::ceil(over / block())), host_ ? &evicted_ : nullptr);
  kv_used_ -= evicted * block();
  if (host_ != nullptr && !evicted_.empty()) {
    // Written back to host DRAM rather than dropped.
    host_->store(evicted_, host_capacity_);
    offloaded_ += static_cast<int>(evicted_.size());
    stats_.offloaded_blocks += static_cast<std::int64_t>(evicted_.size());
    evicted_.clear();
  }
}

int ReplicaEngine::plan_load(Request* r) {
  r->load_checked = true;
  r->loaded_blocks = 0;
  if (host_ == nullptr || !params_.prefix_cache || r->blocks.empty()) return 0;
  const int limit = (r->isl - 1) / params_.block_tokens;  // one prompt token is always computed
  const int in_hbm = std::min(cache_.match(r->blocks), limit);
  const int n = std::min(host_->match(r->blocks, in_hbm), limit - in_hbm);
  if (n <= 0) return 0;
  r->loaded_blocks = in_hbm + n;
  // Read now: the blocks become the host tier's most recently used.
  host_->store({r->blocks.begin() + in_hbm, r->blocks.begin() + in_hbm + n}, host_capacity_);
  return n;
}

void ReplicaEngine::release(Request* r) {
  kv_used_ -= r->kv_tokens;
  r->kv_tokens = 0;
  if (r->cached_blocks > 0) cache_.unpin(r->blocks, r->cached_blocks);
  r->cached_blocks = 0;
  reserved_ -= r->reserved;
  grown_ -= r->grown;
  r->reserved = 0;
  r->grown = 0;
}

void ReplicaEngine::join(Request* r) {
  r->joined = decoded_;
  r->ends = decoded_ + (r->osl - r->generated);
  r->serial = serial_++;
  ends_.emplace(r->ends, r->serial, r);
  running_.push_back({r->serial, r});
}

void ReplicaEngine::settle(Request* r, std::int64_t at) {
  const int t = static_cast<int>(at - r->joined);
  r->generated += t;
  r->kv_tokens += t;
  r->context += t;
  r->grown += t;
  r->joined = at;
}

void ReplicaEngine::preempt_newest() {
  Request* r = running_.back().r;
  running_.pop_back();
  ends_.erase({r->ends, r->serial, r});
  settle(r, decoded_);
  context_sum_ -= r->context;
  r->context = 0;
  release(r);
  r->prefilled = 0;
  r->target = r->isl + r->generated;  // recompute the prompt and what was generated
  r->preemptions += 1;
  stats_.preemptions += 1;
  // Back to the head of the queue, behind the partly prefilled prompts (which hold KV and must
  // finish first, or they could block each other): at most one per scheduling rank.
  auto at = waiting_.begin();
  for (int i = 0; i < ranks_ && at != waiting_.end() && (*at)->prefilled > 0 &&
                  (ranks_ == 1 || !(*at)->kv_arrived);
       ++i)
    ++at;
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
  link_activity_.push_back(t > 0 ? std::min(1.0, b.comm_raw.value() / t) : 0.0);
  breakdown_.push_back(
      {b.compute.value(), b.memory.value(), b.communication.value(), b.overhead.value(),
       b.roofline.value()});
  clock += t;
  boundaries_.push_back(clock);
}

bool ReplicaEngine::admit_prompt(Request* r, double& reserved) {
  int matched = 0, loaded = 0;
  if (params_.prefix_cache && !r->blocks.empty()) {
    // At least one prompt token is computed, to sample the next token.
    const int limit = (r->target - 1) / params_.block_tokens;
    matched = std::min(cache_.match(r->blocks), limit);
    // Blocks loaded from the host tier extend the match (those HBM still holds count as HBM's).
    loaded = std::max(0, std::min(r->loaded_blocks, limit) - matched);
  }
  // A prefill replica keeps no output: it reserves the prompt alone.
  const double out = params_.prefill_only ? 1.0 : r->osl - r->generated;
  const double need =
      r->target - (matched + loaded) * block() + params_.reserve_output_ratio * out;
  const double incoming = loaded * block();  // loaded blocks become pinned cache entries
  if (reserved + need + pinned_kv() + incoming > kv_capacity_ ||
      kv_used_ - evictable_kv() + incoming > kv_capacity_)
    return false;
  reserved += need;
  r->reserved = need;
  reserved_ += need;
  stats_.prompt_tokens += r->target;
  if (matched > 0) cache_.pin(r->blocks, matched);
  if (loaded > 0) {
    make_room(incoming);
    kv_used_ += cache_.insert_pinned(r->blocks, matched, matched + loaded) * block();
    stats_.max_kv_used = std::max(stats_.max_kv_used, kv_used_);
    stats_.offload_hit_tokens += incoming;
  }
  r->loaded_blocks = 0;
  if (matched + loaded > 0) {
    r->cached_blocks = matched + loaded;
    r->prefilled = r->cached_blocks * params_.block_tokens;
    r->context = r->prefilled;
    stats_.prefix_hit_tokens += r->prefilled;
  }
  return true;
}

perf::IterationShape ReplicaEngine::plan_prefill(bool preempted) {
  const double n = static_cast<double>(running_.size());
  perf::IterationShape shape = perf::IterationShape::decode(n, context_sum_);
  // Each rank's tokens left this iteration: its slice of the budget less its decode sequences
  // (spread evenly over the ranks).
  const int slice = std::max(1, params_.max_batched_tokens / ranks_);
  const int decoding = static_cast<int>(running_.size());
  std::vector<int>& left = rank_left_;
  std::vector<double>& rank_tokens = rank_tokens_;
  std::vector<double>& rank_attended = rank_attended_;
  left.assign(static_cast<std::size_t>(ranks_), 0);
  rank_tokens.assign(left.size(), 0.0);
  rank_attended.assign(left.size(), 0.0);
  for (int i = 0; i < ranks_; ++i)
    left[static_cast<std::size_t>(i)] =
        slice - decoding / ranks_ - (i < decoding % ranks_ ? 1 : 0);
  // Prefill chunks from the queue, FIFO, within the ranks' budgets, the sequence limit and the
  // cache.
  int seqs = decoding;
  double planned = n * gained(1);  // KV tokens this iteration adds
  double reserved = reservations();
  for (Request* r : waiting_) {
    const auto rank = static_cast<std::size_t>(
        std::max_element(left.begin(), left.end()) - left.begin());  // the most room left
    if (left[rank] <= 0 || seqs >= params_.max_seqs || r->kv_arrived) break;
    // A new admission reuses the cached prefix and reserves the rest.
    if (r->reserved == 0 && (preempted || !admit_prompt(r, reserved))) break;
    const int remaining = r->target - r->prefilled;
    const double room = kv_capacity_ - (kv_used_ - evictable_kv()) - planned;
    const int chunk =
        static_cast<int>(std::min<double>(std::min(remaining, left[rank]), std::floor(room)));
    if (chunk <= 0) break;
    chunks_.push_back({r, chunk});
    const double prior = r->prefilled;
    shape.add_prefill_chunk(chunk, prior, chunk == remaining, window_);
    rank_tokens[rank] += chunk;
    rank_attended[rank] += chunk * prior + chunk * (chunk + 1.0) / 2;
    // A prompt that does not finish fills its rank: one partly prefilled prompt per rank.
    left[rank] = chunk < remaining ? 0 : left[rank] - chunk;
    planned += chunk;
    seqs += 1;
  }
  if (ranks_ > 1 && shape.prefill_tokens > 0) {
    shape.prefill_rank_token_share =
        *std::max_element(rank_tokens.begin(), rank_tokens.end()) / shape.prefill_tokens;
    shape.prefill_rank_attended_share =
        *std::max_element(rank_attended.begin(), rank_attended.end()) / shape.prefill_attended;
  }
  return shape;
}

const std::vector<double>& ReplicaEngine::plan(double now) {
  boundaries_.clear();
  durations_.clear();
  compute_activity_.clear();
  memory_activity_.clear();
  link_activity_.clear();
  breakdown_.clear();
  chunks_.clear();
  if (!busy()) return boundaries_;

  // Room for one more KV entry per decoding sequence: evict cached blocks first, then preempt the
  // newest sequence if even that is not enough.
  bool preempted = false;
  while (!running_.empty() &&
         kv_used_ - evictable_kv() + static_cast<double>(running_.size()) * gained(1) >
             kv_capacity_) {
    preempt_newest();
    preempted = true;
  }
  // Requests whose KV arrived from a prefill replica join the decode batch, FIFO, while their
  // reservations and their KV (plus one step of every decoding sequence) fit.
  while (!preempted && !waiting_.empty() && waiting_.front()->kv_arrived &&
         static_cast<int>(running_.size()) < params_.max_seqs) {
    Request* r = waiting_.front();
    const double need = r->target + params_.reserve_output_ratio * (r->osl - r->generated);
    const double step = static_cast<double>(running_.size() + 1) * gained(1);
    if (reservations() + need + pinned_kv() > kv_capacity_ ||
        kv_used_ - evictable_kv() + r->target + step > kv_capacity_)
      break;
    waiting_.pop_front();
    r->kv_arrived = false;
    r->reserved = need;
    reserved_ += need;
    make_room(r->target);
    r->kv_tokens = r->target;
    r->context = r->target;
    kv_used_ += r->target;
    context_sum_ += r->target;
    stats_.max_kv_used = std::max(stats_.max_kv_used, kv_used_);
    join(r);
  }
  const double n = static_cast<double>(running_.size());
  make_room(n * gained(1));

  const perf::IterationShape prefill = plan_prefill(preempted);
  // Prompts' KV held for a decode replica fills the cache: nothing runs until one leaves.
  if (chunks_.empty() && running_.empty() && !held_.empty()) return boundaries_;
  stats_.plans += 1;  // a plan that runs something (or cannot: the errors below)
  if (chunks_.empty() && running_.empty() && waiting_.front()->kv_arrived)
    throw std::runtime_error("decode replica cannot make progress: a transferred request's " +
                             std::to_string(waiting_.front()->target) +
                             " KV tokens do not fit the KV cache of " +
                             std::to_string(static_cast<long long>(kv_capacity_)) + " tokens");
  if (chunks_.empty() && running_.empty())
    throw std::runtime_error("replica cannot make progress: the first queued request (" +
                             std::to_string(waiting_.front()->target) +
                             " prompt tokens) does not fit the KV cache of " +
                             std::to_string(static_cast<long long>(kv_capacity_)) + " tokens");

  double clock = now;
  if (!chunks_.empty()) {
    add_iteration(clock, prefill);
    return boundaries_;
  }
  // Pure decode: fuse up to the step in which the next sequence finishes or the cache fills.
  std::size_t k = 1;
  if (params_.fuse) {
    const auto next_finish = static_cast<int>(std::get<0>(*ends_.begin()) - decoded_);
    const double room = std::floor((kv_capacity_ - (kv_used_ - evictable_kv())) / n);
    // Steps while every sequence still has tokens to go and the cache holds what they add.
    while (gained(k) < next_finish && gained(k + 1) <= room) ++k;
  }
  for (std::size_t i = 0; i < k; ++i)
    add_iteration(
        clock, perf::IterationShape::decode(n, context_sum_ + static_cast<double>(gained(i)) * n));
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
  // Decode: every running sequence gains the tokens of j steps (one per step without
  // speculation), up to its output length, and those that reach it (the first of ends_) leave the
  // batch, in start order; only the plan's last step can reach a sequence's end. The others are
  // brought up to date when they leave (settle), so a step costs the same at any batch size. A
  // reservation never falls below what the sequence holds: below a ratio of 1 it grows with the
  // tokens generated, by the share of each that was not reserved at admission (at 0, the current
  // context exactly), so new prompts are admitted on what the cache really holds.
  const int steps = gained(j);
  const std::int64_t to = decoded_ + steps;
  std::int64_t gain = static_cast<std::int64_t>(running_.size()) * steps;
  ending_.clear();
  while (!ends_.empty() && std::get<0>(*ends_.begin()) <= to) {
    Request* r = std::get<2>(*ends_.begin());
    ends_.erase(ends_.begin());
    gain -= to - r->ends;
    settle(r, r->ends);
    ending_.push_back(r);
  }
  if (!ending_.empty()) {
    std::sort(ending_.begin(), ending_.end(),
              [](const Request* a, const Request* b) { return a->serial < b->serial; });
    // Both in start order: one pass from the first that ends, never reading a request.
    auto out = std::lower_bound(running_.begin(), running_.end(), ending_.front()->serial,
                                [](const Running& s, std::int64_t v) { return s.serial < v; });
    std::size_t next = 0;
    for (auto in = out; in != running_.end(); ++in) {
      if (next < ending_.size() && in->serial == ending_[next]->serial)
        ++next;
      else
        *out++ = *in;
    }
    running_.erase(out, running_.end());
  }
  decoded_ = to;
  grown_ += gain;
  const auto added = static_cast<double>(gain);
  double binned = 0;
  for (std::size_t i = 0; i < j; ++i) {
    const double decoded =
        i + 1 < j ? decoding * static_cast<double>(gained(i + 1) - gained(i)) : added - binned;
    binned += decoded;
    const auto second = static_cast<std::size_t>(std::max(0.0, std::floor(boundaries_[i])));
    if (stats_.seconds.size() <= second) stats_.seconds.resize(second + 1);
    SecondBin& bin = stats_.seconds[second];
    bin.output_tokens += decoded + completing;
    bin.prefill_tokens += prefill_tokens;
    bin.compute_s += durations_[i] * compute_activity_[i];
    bin.memory_s += durations_[i] * memory_activity_[i];
    bin.link_s += durations_[i] * link_activity_[i];
    bin.busy_s += durations_[i];
    for (std::size_t k = 0; k < breakdown_[i].size(); ++k)
      stats_.breakdown_s[k] += breakdown_[i][k];
  }
  stats_.iterations += static_cast<std::int64_t>(j);
  if (running_.size() + ending_.size() > 0)
    credit_ = credit_ + static_cast<double>(j) * params_.tokens_per_step - steps;
  make_room(added);
  kv_used_ += added;
  context_sum_ += added;
  stats_.max_kv_used = std::max(stats_.max_kv_used, kv_used_);
  auto done = [&](Request* r) {
    r->finish = end;
    context_sum_ -= r->context;
    r->context = 0;
    release(r);
    finished.push_back(r);
  };
  for (Request* r : ending_) done(r);

  // Prefill chunks: a prompt that completes samples its next token and starts decoding; its full
  // blocks move from its private KV into the prefix cache (pinned while it runs).
  for (const auto& c : chunks_) {
    Request* r = c.r;
    make_room(c.tokens);
    r->prefilled += c.tokens;
    r->kv_tokens += c.tokens;
    r->context += c.tokens;
    kv_used_ += c.tokens;
    stats_.max_kv_used = std::max(stats_.max_kv_used, kv_used_);
    if (r->prefilled < r->target) continue;
    if (params_.prefix_cache && !r->blocks.empty()) {
      const int full =
          std::min(static_cast<int>(r->blocks.size()), r->target / params_.block_tokens);
      if (full > r->cached_blocks) {
        const int inserted = cache_.insert_pinned(r->blocks, r->cached_blocks, full);
        const double moved = (full - r->cached_blocks) * block();
        r->kv_tokens -= static_cast<int>(moved);
        kv_used_ +=
            inserted * block() - moved;  // blocks another request cached meanwhile are shared
        r->cached_blocks = full;
      }
    }
    r->generated += 1;
    if (r->first_token < 0) r->first_token = end;
    if (r->generated >= r->osl || params_.prefill_only) {
      context_sum_ += r->context;  // done() takes it off, as for a decoding sequence
      done(r);
      // Prefill pool: on to a decode replica (its KV leaves with it), not finished yet.
      if (r->generated < r->osl) r->finish = -1;
    } else {
      context_sum_ += r->context;
      join(r);
    }
  }
  // The chunks were the queue's first prompts: those that completed leave it, the partly
  // prefilled ones keep their places at its head.
  const auto head = waiting_.begin() + static_cast<std::ptrdiff_t>(chunks_.size());
  waiting_.erase(std::remove_if(waiting_.begin(), head,
                                [](const Request* r) { return r->prefilled >= r->target; }),
                 head);
  chunks_.clear();
  boundaries_.clear();
}

}  // namespace racktwin::sim
