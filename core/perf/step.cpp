#include "core/perf/step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace racktwin::perf {
namespace {

constexpr double kActBytes = 2.0;  // activations and collectives move BF16 values

const NumberFormat* find_format(const Catalog& c, const std::string& id) {
  auto it = c.formats.find(id);
  return it == c.formats.end() ? nullptr : &it->second;
}

// Peak FLOP/s for a GEMM whose weights are stored in `f`: the format's class if the chip has it,
// else BF16 (weights are dequantised, W4A16/W8A16 style), else the widest class the chip has.
double peak_for(const Chip& chip, const NumberFormat* f) {
  const ComputeClass want = f != nullptr ? f->compute : ComputeClass::bf16;
  if (auto it = chip.dense_peak.find(want); it != chip.dense_peak.end()) return it->second.value();
  if (auto it = chip.dense_peak.find(ComputeClass::bf16); it != chip.dense_peak.end()) return it->second.value();
  return chip.dense_peak.rbegin()->second.value();
}

double bytes_per_element(const NumberFormat* f) { return f != nullptr ? f->bits_per_element / 8.0 : 2.0; }

double ceil_log2(double p) { return p <= 1.0 ? 0.0 : std::ceil(std::log2(p) - 1e-9); }

struct Tier {
  double latency = 0;    // s per step
  double bandwidth = 0;  // bytes/s per XPU per direction
};

// The network tier that a group of `p` XPUs packed contiguously spans.
Tier tier_for(const System& s, int p) {
  for (const auto& t : s.scale_up) {
    if (t.xpus >= p) {
      double bw = t.bandwidth_per_xpu.value();
      // In a full mesh a group of p XPUs reaches its peers over p-1 of the tier's links only.
      if (s.topology == ScaleUpTopology::full_mesh && t.xpus > 1)
        bw *= static_cast<double>(std::max(1, p - 1)) / static_cast<double>(t.xpus - 1);
      return {t.latency.value(), bw};
    }
  }
  return {s.scale_out_latency.value(), s.scale_out_bandwidth_per_xpu.value()};
}

std::string join_keys(const std::map<std::string, WeightVariant>& m) {
  std::string s;
  for (const auto& [k, _] : m) s += (s.empty() ? "" : ", ") + k;
  return s;
}

}  // namespace

double expected_distinct_experts(double experts, double top_k, double tokens) {
  if (experts <= 0 || tokens <= 0) return 0.0;
  return experts * (1.0 - std::pow(1.0 - std::min(top_k, experts) / experts, tokens));
}

std::string to_string(Bound b) {
  switch (b) {
    case Bound::compute: return "compute";
    case Bound::memory: return "memory";
    case Bound::communication: return "communication";
    case Bound::overhead: return "overhead";
  }
  return "?";
}

IterationShape IterationShape::decode(double seqs, double total_context) {
  IterationShape s;
  s.decode_seqs = seqs;
  s.decode_context = total_context;
  return s;
}

IterationShape& IterationShape::add_prefill_chunk(double tokens, double prior, bool completes, int window) {
  if (prefill_window_attended < 0) prefill_window_attended = 0;
  prefill_chunks += 1;
  prefill_tokens += tokens;
  // Query i (1-based) of the chunk attends to prior + i positions.
  prefill_attended += tokens * prior + tokens * (tokens + 1) / 2;
  if (window > 0) {
    const double w = window;
    // Sum over i = 1..tokens of min(prior + i, w).
    const double full_from = std::max(0.0, w - prior);  // queries with i >= full_from see w
    const double n_part = std::clamp(std::floor(full_from), 0.0, tokens);
    const double part = n_part * prior + n_part * (n_part + 1) / 2;
    prefill_window_attended += part + (tokens - n_part) * w;
  } else {
    prefill_window_attended += tokens * prior + tokens * (tokens + 1) / 2;
  }
  if (completes) prefill_completions += 1;
  return *this;
}

std::expected<StepModel, std::string> StepModel::create(const Model& model, const System& system,
                                                        const Catalog& catalog, const Layout& layout,
                                                        const std::string& precision, const Efficiency& eff,
                                                        const Speculation& spec, const MemoryParams& mem) {
  if (system.chip == nullptr) return std::unexpected("system " + system.id + " has no chip");
  const Chip& chip = *system.chip;
  auto vit = model.variants.find(precision);
  if (vit == model.variants.end())
    return std::unexpected(model.id + " has no '" + precision + "' weight variant (it has " +
                           join_keys(model.variants) + ")");
  const WeightVariant& v = vit->second;
  const int tp = layout.tp, ep = layout.ep, pp = layout.pp;
  if (tp < 1 || ep < 1 || pp < 1) return std::unexpected("tp, ep and pp must be at least 1");
  const int xpus = layout.xpus();
  if (xpus > system.domain_xpus)
    return std::unexpected("replica of " + std::to_string(xpus) + " XPUs exceeds the scale-up domain of " +
                           std::to_string(system.domain_xpus));
  if (pp > model.layers)
    return std::unexpected("pp " + std::to_string(pp) + " exceeds the " + std::to_string(model.layers) + " layers");
  if (layout.dp_attention && tp == 1) return std::unexpected("dp_attention needs tp > 1");
  const auto& a = model.attention;
  if (!layout.dp_attention) {
    if (a.q_heads % tp != 0)
      return std::unexpected(std::to_string(a.q_heads) + " attention heads are not divisible by tp " +
                             std::to_string(tp));
    if (a.kind == AttentionKind::gqa && a.kv_heads % tp != 0 && tp % a.kv_heads != 0)
      return std::unexpected(std::to_string(a.kv_heads) + " KV heads and tp " + std::to_string(tp) +
                             " do not divide one another");
  }
  if (model.dense_layers > 0 && model.dense_ffn && *model.dense_ffn % tp != 0)
    return std::unexpected("dense FFN width " + std::to_string(*model.dense_ffn) + " is not divisible by tp " +
                           std::to_string(tp));
  if (!model.moe && ep > 1) return std::unexpected("ep > 1 on a dense model");
  if (model.moe) {
    if (tp % ep != 0)
      return std::unexpected("ep " + std::to_string(ep) + " does not divide tp " + std::to_string(tp) +
                             " (experts are spread within a pipeline stage)");
    if (model.moe->routed_experts % ep != 0)
      return std::unexpected(std::to_string(model.moe->routed_experts) + " experts are not divisible by ep " +
                             std::to_string(ep));
    if (model.moe->expert_ffn % (tp / ep) != 0)
      return std::unexpected("expert FFN width " + std::to_string(model.moe->expert_ffn) +
                             " is not divisible by tp/ep " + std::to_string(tp / ep));
    if (layout.dp_attention && ep != 1 && ep != tp)
      return std::unexpected("with dp_attention, ep must be 1 or equal to tp");
  }
  if (spec.draft_tokens < 0 || spec.acceptance < 1.0 || spec.acceptance > spec.draft_tokens + 1.0)
    return std::unexpected("speculation acceptance must lie in [1, draft_tokens + 1]");

  auto fmt = [&](const std::string& id) { return id.empty() ? nullptr : find_format(catalog, id); };
  for (const std::string* id : {&v.attention, &v.dense_ffn, &v.routed_experts, &v.shared_experts, &v.embeddings,
                                &v.lm_head, &v.kv_cache})
    if (!id->empty() && fmt(*id) == nullptr) return std::unexpected("unknown number format '" + *id + "'");

  StepModel m;
  m.layout_ = layout;
  m.precision_ = precision;
  m.eff_ = eff;
  m.spec_ = spec;
  m.mem_ = mem;
  m.moe_ = model.is_moe();
  m.mla_ = a.kind == AttentionKind::mla;
  m.window_ = a.sliding_window.value_or(0);
  m.layers_ = model.layers;
  m.dense_layers_ = model.dense_layers;
  m.moe_layers_ = model.layers - model.dense_layers;
  m.sliding_layers_ = m.window_ > 0 ? std::ceil(model.layers / 2.0) : 0.0;  // layers 0, 2, 4, ...
  m.tp_ = tp;
  m.ep_ = ep;
  m.pp_ = pp;
  m.dpa_ = layout.dp_attention;
  const double h = model.hidden;
  m.hidden_ = h;

  const double mfu = eff.mfu, bf16_peak = peak_for(chip, nullptr);
  m.rate_attn_proj_ = peak_for(chip, fmt(v.attention)) * mfu;
  m.rate_attn_core_ = bf16_peak * mfu;
  m.rate_dense_ = peak_for(chip, fmt(v.dense_ffn)) * mfu;
  m.rate_expert_ = peak_for(chip, fmt(v.routed_experts)) * mfu;
  m.rate_shared_ = peak_for(chip, fmt(v.shared_experts)) * mfu;
  m.rate_head_ = peak_for(chip, fmt(v.lm_head)) * mfu;
  m.hbm_rate_ = chip.hbm_bandwidth.value() * eff.mbu;

  // Attention.
  const double b_attn = bytes_per_element(fmt(v.attention));
  const double b_kv = bytes_per_element(fmt(v.kv_cache));
  double params = 0, replicated = 0;
  if (a.kind == AttentionKind::gqa) {
    const double hq = a.q_heads, hkv = a.kv_heads, d = a.head_dim;
    params = h * hq * d + 2 * h * hkv * d + hq * d * h;
    m.attn_core_flops_decode_ = m.attn_core_flops_prefill_ = 4 * hq * d;
    m.kv_bytes_layer_ = 2 * hkv * d * b_kv;
    m.kv_share_rank_ = m.dpa_ ? 1.0 : 1.0 / std::min<double>(tp, hkv);
  } else {
    const double H = a.q_heads, qr = a.q_lora_rank, kvr = a.kv_lora_rank, nope = a.qk_nope_head_dim,
                 rope = a.qk_rope_head_dim, vd = a.v_head_dim;
    const double q_a = qr > 0 ? h * qr : 0.0;
    const double q_b = qr > 0 ? qr * H * (nope + rope) : h * H * (nope + rope);
    const double kv_a = h * (kvr + rope), kv_b = kvr * H * (nope + vd), o = H * vd * h;
    params = q_a + q_b + kv_a + kv_b + o;
    replicated = q_a + kv_a;  // the down-projections are not split by heads
    // Absorbed decode: scores against the latent (kvr + rope) and values from the latent (kvr).
    m.attn_core_flops_decode_ = 2 * H * (kvr + rope) + 2 * H * kvr;
    // Prefill decompresses K and V per token (kv_b, counted in params) and attends per head.
    m.attn_core_flops_prefill_ = 2 * H * (nope + rope) + 2 * H * vd;
    m.kv_bytes_layer_ = (kvr + rope) * b_kv;
    m.kv_share_rank_ = 1.0;  // the latent is replicated on every TP rank
  }
  const double params_rank = m.dpa_ ? params : replicated + (params - replicated) / tp;
  m.attn_proj_flops_decode_ = m.attn_proj_flops_prefill_ = 2 * params_rank;
  m.attn_weight_bytes_rank_ = params_rank * b_attn;
  if (!m.dpa_) {
    m.attn_core_flops_decode_ /= tp;
    m.attn_core_flops_prefill_ /= tp;
  }
  const double full_layers_stage = std::ceil((model.layers - m.sliding_layers_) / pp);
  m.kv_bytes_per_token_rank_ = m.kv_bytes_layer_ * m.kv_share_rank_ * full_layers_stage;

  // Dense FFN (SwiGLU: gate, up and down projections).
  if (model.dense_ffn) {
    const double F = *model.dense_ffn;
    m.dense_flops_per_token_ = 2 * 3 * h * F / tp;
    m.dense_bytes_rank_ = 3 * h * F * bytes_per_element(fmt(v.dense_ffn)) / tp;
  }
  // MoE.
  if (model.moe) {
    const auto& e = *model.moe;
    const double Fe = e.expert_ffn;
    m.experts_ = e.routed_experts;
    m.top_k_ = e.top_k;
    m.expert_flops_ = 2 * 3 * h * Fe;  // per token-expert row, whole expert
    m.expert_bytes_rank_ = 3 * h * Fe * bytes_per_element(fmt(v.routed_experts)) / (static_cast<double>(tp) / ep);
    // Shared experts: split over the TP group, or with DP attention replicated on every rank, each
    // rank passing its own tokens through them.
    const double shared_split = m.dpa_ ? 1.0 : tp;
    m.shared_flops_ = 2 * 3 * h * Fe * e.shared_experts / shared_split;
    m.shared_bytes_rank_ = 3 * h * Fe * e.shared_experts * bytes_per_element(fmt(v.shared_experts)) / shared_split;
    m.router_flops_ = 2 * h * e.routed_experts;
    m.router_bytes_ = h * e.routed_experts * 2.0;
  }
  // LM head, vocabulary-parallel over the TP group.
  m.head_flops_ = 2 * h * model.vocab / tp;
  m.head_bytes_rank_ = h * model.vocab * bytes_per_element(fmt(v.lm_head)) / tp;
  m.emb_bytes_rank_ = h * model.vocab * bytes_per_element(fmt(v.embeddings)) / tp;
  m.tied_ = model.tied_embeddings;

  // Communication tiers.
  const Tier tpt = tier_for(system, tp);
  m.tp_steps_ = ceil_log2(tp);
  m.tp_step_latency_ = tpt.latency + eff.alpha.value();
  m.tp_bw_ = tpt.bandwidth * eff.comm_eff;
  const Tier ppt = tier_for(system, xpus);
  m.pp_latency_ = ppt.latency + eff.alpha.value();
  m.pp_bw_ = ppt.bandwidth * eff.comm_eff;
  return m;
}

// Accumulates operations on the busiest XPU: each one takes max(compute, memory) and counts as
// compute- or memory-bound accordingly.
struct StepModel::Ops {
  Breakdown& b;
  double compute_bound = 0.0, memory_bound = 0.0;

  void add(Part part, double count, double t_compute, double t_memory, double flops, double bytes) {
    if (count <= 0) return;
    auto& p = b.parts[part];
    p.compute += Seconds(count * t_compute);
    p.memory += Seconds(count * t_memory);
    p.flops += Flops(count * flops);
    p.bytes += Bytes(count * bytes);
    if (t_compute >= t_memory) compute_bound += count * t_compute;
    else memory_bound += count * t_memory;
  }
};

// `count` attention layers (sliding-window or full) for a shape (per microbatch) whose decode
// sequences each carry `queries` query tokens.
void StepModel::attention(Ops& ops, Part part, const IterationShape& s, double count, bool sliding,
                          double queries) const {
  if (count <= 0) return;
  const double q_dec = s.decode_seqs * queries;
  const double tokens = q_dec + s.prefill_tokens;
  const double share = rank_share(s);
  double dec_ctx = s.decode_context, pre_att = s.prefill_attended;
  if (sliding) {
    const double w = window_;
    dec_ctx = s.decode_window_context >= 0 ? s.decode_window_context : std::min(dec_ctx, s.decode_seqs * w);
    pre_att = s.prefill_window_attended >= 0 ? s.prefill_window_attended : std::min(pre_att, s.prefill_tokens * w);
  }
  const double flops_proj = (q_dec * attn_proj_flops_decode_ + s.prefill_tokens * attn_proj_flops_prefill_) * share;
  const double flops_core = (queries * dec_ctx * attn_core_flops_decode_ + pre_att * attn_core_flops_prefill_) * share;
  // KV read: each decode sequence reads its context once per step; a prefill chunk reads the keys
  // its queries span once (about attended / tokens + tokens per chunk, never more than attended).
  const double prefill_kv =
      s.prefill_tokens > 0 ? std::min(pre_att, pre_att / s.prefill_tokens * s.prefill_chunks + s.prefill_tokens) : 0.0;
  const double kv_share = dpa_ ? share : kv_share_rank_;
  const double kv_bytes = (dec_ctx + prefill_kv + tokens) * kv_bytes_layer_ * kv_share;  // read + write
  const double act_bytes = mem_.activation_passes / 2 * tokens * share * hidden_ * kActBytes;
  const double bytes = attn_weight_bytes_rank_ + kv_bytes + act_bytes;
  ops.add(part, count, flops_proj / rate_attn_proj_ + flops_core / rate_attn_core_, bytes / hbm_rate_,
          flops_proj + flops_core, bytes);
}

void StepModel::moe(Ops& ops, Part part, double tokens, double share, double count) const {
  const double rows = tokens * top_k_ / tp_ * eff_.moe_imbalance;  // expert-width share per rank
  const double touched = expected_distinct_experts(experts_, top_k_, tokens) / ep_;
  const double own = dpa_ ? tokens * share : tokens;  // tokens this rank routes and runs through shared experts
  const double flops_e = rows * expert_flops_, flops_s = own * shared_flops_, flops_r = own * router_flops_;
  const double bytes = touched * expert_bytes_rank_ + shared_bytes_rank_ + router_bytes_ +
                       mem_.activation_passes / 2 * tokens * hidden_ * kActBytes;
  ops.add(part, count, flops_e / rate_expert_ + flops_s / rate_shared_ + flops_r / rate_attn_core_,
          bytes / hbm_rate_, flops_e + flops_s + flops_r, bytes);
}

void StepModel::dense(Ops& ops, Part part, double tokens, double count) const {
  const double flops = tokens * dense_flops_per_token_;
  const double bytes = dense_bytes_rank_ + mem_.activation_passes / 2 * tokens * hidden_ * kActBytes;
  ops.add(part, count, flops / rate_dense_, bytes / hbm_rate_, flops, bytes);
}

void StepModel::lm_head(Ops& ops, Part part, double sampled) const {
  if (sampled <= 0) return;
  const double flops = sampled * head_flops_;
  ops.add(part, 1.0, flops / rate_head_, head_bytes_rank_ / hbm_rate_, flops, head_bytes_rank_);
}

// With DP attention the busiest rank holds ceil(items / tp) of the batch's sequences and chunks.
double StepModel::rank_share(const IterationShape& s) const {
  if (!dpa_) return 1.0;
  const double items = s.decode_seqs + s.prefill_chunks;
  return items > 0 ? std::ceil(items / tp_ - 1e-9) / items : 0.0;
}

Breakdown StepModel::step(const IterationShape& full) const {
  Breakdown b;
  Ops ops{b};
  const double items = full.decode_seqs + full.prefill_chunks;
  // Pipeline: the iteration is split into up to pp microbatches; a token's step is one pass of its
  // microbatch through every stage, i.e. all layers at the microbatch's size.
  const double micro = pp_ > 1 ? std::clamp(std::floor(items), 1.0, pp_) : 1.0;
  IterationShape s = full;
  if (micro > 1) {
    const double f = 1.0 / micro;
    for (double* x : {&s.decode_seqs, &s.decode_context, &s.prefill_chunks, &s.prefill_tokens, &s.prefill_attended,
                      &s.prefill_completions})
      *x *= f;
    if (s.decode_window_context >= 0) s.decode_window_context *= f;
    if (s.prefill_window_attended >= 0) s.prefill_window_attended *= f;
  }
  const double queries = 1.0 + spec_.draft_tokens;
  const double tokens = s.decode_seqs * queries + s.prefill_tokens;

  attention(ops, kAttention, s, sliding_layers_, true, queries);
  attention(ops, kAttention, s, layers_ - sliding_layers_, false, queries);
  if (tokens > 0) {
    if (dense_layers_ > 0) dense(ops, kDenseFfn, tokens, dense_layers_);
    if (moe_layers_ > 0) moe(ops, kMoe, tokens, rank_share(s), moe_layers_);
  }
  lm_head(ops, kLmHead, s.decode_seqs * queries + s.prefill_completions);

  // Collectives, per layer, on the TP group's tier.
  double comm = 0.0, comm_bytes = 0.0;
  auto all_reduce = [&](double bytes, double count) {
    if (tp_ <= 1 || bytes <= 0 || count <= 0) return;
    const double moved = 2 * (tp_ - 1) / tp_ * bytes;  // ring all-reduce
    comm += count * (tp_steps_ * tp_step_latency_ + moved / tp_bw_);
    comm_bytes += count * moved;
  };
  auto all_to_all = [&](double bytes, double count) {
    if (tp_ <= 1 || bytes <= 0 || count <= 0) return;
    comm += count * (tp_steps_ * tp_step_latency_ + bytes / tp_bw_);
    comm_bytes += count * bytes;
  };
  const double act = tokens * hidden_ * kActBytes;
  if (!dpa_) {
    all_reduce(act, 2 * layers_);  // after attention and after the FFN of every layer
  } else {
    // Dense layers (and TP-sharded experts when ep = 1) gather and scatter the tokens of all ranks.
    all_reduce(act, dense_layers_ + (ep_ == 1 ? moe_layers_ : 0.0));
    if (moe_ && ep_ > 1) {
      // Dispatch and combine: each token goes to the distinct EP ranks among its top-k experts.
      const double ranks = ep_ * (1.0 - std::pow(1.0 - 1.0 / ep_, top_k_));
      const double bytes = tokens * rank_share(s) * ranks * (ep_ - 1) / ep_ * hidden_ * kActBytes;
      all_to_all(bytes, 2 * moe_layers_);
    }
  }
  if (pp_ > 1 && tokens > 0) {  // stage boundaries
    comm += (pp_ - 1) * (pp_latency_ + act / pp_bw_);
    comm_bytes += act;
  }

  // Speculative drafting: draft_tokens sequential passes of one layer plus the LM head on one token
  // per sequence (an MTP module, or a draft model of about one layer).
  double draft_overhead = 0.0;
  if (spec_.draft_tokens > 0 && s.decode_seqs > 0) {
    const double d = spec_.draft_tokens, n = s.decode_seqs;
    IterationShape one = IterationShape::decode(n, s.decode_context);
    attention(ops, kDraft, one, d, false, 1.0);
    if (moe_) moe(ops, kDraft, n, rank_share(one), d);
    else dense(ops, kDraft, n, d);
    for (int i = 0; i < spec_.draft_tokens; ++i) lm_head(ops, kDraft, n);
    draft_overhead = d * eff_.layer_overhead.value();
  }

  const double exposed = comm * (1.0 - eff_.overlap);
  b.compute = Seconds(ops.compute_bound);
  b.memory = Seconds(ops.memory_bound);
  b.communication = Seconds(exposed);
  b.comm_raw = Seconds(comm);
  b.overhead = Seconds(layers_ * eff_.layer_overhead.value() + eff_.step_overhead.value() + draft_overhead);
  b.total = b.compute + b.memory + b.communication + b.overhead;
  // Per-XPU volumes: an XPU holds 1/pp of the layers and sees every microbatch.
  for (const auto& p : b.parts) {
    b.flops += p.flops;
    b.hbm_bytes += p.bytes;
  }
  b.flops = b.flops * (micro / pp_);
  b.hbm_bytes = b.hbm_bytes * (micro / pp_);
  b.comm_bytes = Bytes(comm_bytes * micro / pp_);
  b.tokens_per_decode_seq = spec_.acceptance;
  const double vals[] = {b.compute.value(), b.memory.value(), b.communication.value(), b.overhead.value()};
  b.bound = static_cast<Bound>(std::max_element(std::begin(vals), std::end(vals)) - std::begin(vals));
  return b;
}

Bytes StepModel::weights_per_xpu() const {
  const double moe_layer = moe_ ? (experts_ / ep_) * expert_bytes_rank_ + shared_bytes_rank_ + router_bytes_ : 0.0;
  const double stage = std::ceil(layers_ / pp_);
  auto layers_bytes = [&](double dense_count, double moe_count) {
    return (dense_count + moe_count) * attn_weight_bytes_rank_ + dense_count * dense_bytes_rank_ + moe_count * moe_layer;
  };
  const double first_dense = std::min(dense_layers_, stage);
  const double first = layers_bytes(first_dense, stage - first_dense) + emb_bytes_rank_;
  const double last_dense = std::max(0.0, dense_layers_ - (layers_ - stage));
  double last = layers_bytes(last_dense, stage - last_dense) + (tied_ && pp_ <= 1 ? 0.0 : head_bytes_rank_);
  if (pp_ <= 1) last += emb_bytes_rank_;
  return Bytes(pp_ <= 1 ? last : std::max(first, last));
}

double StepModel::kv_tokens(Bytes free) const {
  if (free.value() <= 0 || kv_bytes_per_token_rank_ <= 0) return 0.0;
  // With DP attention each rank holds whole sequences of its own; otherwise every rank holds its
  // share of every token.
  return (dpa_ ? tp_ : 1.0) * free.value() / kv_bytes_per_token_rank_;
}

std::string best_precision(const Model& model, const System& system, const Catalog& catalog) {
  std::string best;
  double best_bytes = std::numeric_limits<double>::max();
  int best_class = 99;
  for (const auto& [name, v] : model.variants) {
    bool native = true;
    double bits = 0;
    int widest = 0;
    for (const std::string* id : {&v.attention, &v.dense_ffn, &v.routed_experts, &v.shared_experts, &v.lm_head}) {
      if (id->empty()) continue;
      auto it = catalog.formats.find(*id);
      if (it == catalog.formats.end()) {
        native = false;
        continue;
      }
      native = native && system.chip->dense_peak.contains(it->second.compute);
      bits += it->second.bits_per_element;
      widest = std::max(widest, static_cast<int>(it->second.compute));
    }
    // Routed experts dominate MoE weight bytes; compare by the expert (or attention) format bits.
    const std::string& main_id = v.routed_experts.empty() ? v.dense_ffn : v.routed_experts;
    auto it = catalog.formats.find(main_id);
    const double main_bits = it != catalog.formats.end() ? it->second.bits_per_element : bits;
    const int main_class = it != catalog.formats.end() ? static_cast<int>(it->second.compute) : widest;
    if (!native) continue;
    if (main_bits < best_bytes - 1e-9 || (std::abs(main_bits - best_bytes) < 1e-9 && main_class < best_class)) {
      best = name;
      best_bytes = main_bits;
      best_class = main_class;
    }
  }
  return best.empty() ? model.default_precision : best;
}

}  // namespace racktwin::perf
