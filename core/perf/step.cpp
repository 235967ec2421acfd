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

// The tensor-core class a GEMM on weights stored in `f` computes in: the format's class if the
// chip has it, else BF16 (weights are dequantised, W4A16/W8A16 style), else the widest class the
// chip has.
ComputeClass class_for(const Chip& chip, const NumberFormat* f) {
  const ComputeClass want = f != nullptr ? f->compute : ComputeClass::bf16;
  if (chip.dense_peak.contains(want)) return want;
  if (chip.dense_peak.contains(ComputeClass::bf16)) return ComputeClass::bf16;
  return chip.dense_peak.rbegin()->first;
}

// Peak FLOP/s for a GEMM whose weights are stored in `f`: its class's (class_for).
double peak_for(const Chip& chip, const NumberFormat* f) {
  return chip.dense_peak.at(class_for(chip, f)).value();
}

// Bits of one operand in a tensor-core class.
double class_bits(ComputeClass c) {
  switch (c) {
    case ComputeClass::fp4:
      return 4.0;
    case ComputeClass::fp8:
      return 8.0;
    case ComputeClass::bf16:
      return 16.0;
  }
  return 16.0;
}

double bytes_per_element(const NumberFormat* f) {
  return f != nullptr ? f->bits_per_element / 8.0 : 2.0;
}

double ceil_log2(double p) {
  return p <= 1.0 ? 0.0 : std::ceil(std::log2(p) - 1e-9);
}

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

CollectiveSpan CollectiveSpan::of(const System& s, int p, const Efficiency& eff) {
  CollectiveSpan c;
  c.ranks = std::max(1, p);
  for (const auto& t : s.scale_up)
    if (t.xpus < p) c.per_inner = std::max<double>(c.per_inner, t.xpus);
  const int inner_size = static_cast<int>(c.per_inner);
  c.smallest = p % inner_size == 0 ? c.per_inner : p % inner_size;
  const Tier outer = tier_for(s, p);
  c.outer_steps = ceil_log2(std::ceil(c.ranks / c.per_inner));
  c.outer_latency = outer.latency + eff.alpha.value();
  c.outer_bw = outer.bandwidth * eff.comm_eff;
  if (c.per_inner > 1) {
    const Tier inner = tier_for(s, static_cast<int>(c.per_inner));
    c.inner_steps = ceil_log2(c.per_inner);
    c.inner_latency = inner.latency + eff.alpha.value();
    c.inner_bw = inner.bandwidth * eff.comm_eff;
  }
  return c;
}

CollectiveSpan::Cost CollectiveSpan::all_reduce(double bytes) const {
  // The inner phases of a whole inner group; the outer phase of the smallest group's shards.
  const double m = per_inner, k = std::ceil(ranks / per_inner);
  const double inner = 2 * (m - 1) / m * bytes, outer = 2 * (k - 1) / k * bytes / smallest;
  Cost c;
  c.bytes = inner + outer;
  c.seconds = outer_steps * outer_latency + outer / outer_bw;
  if (inner > 0) c.seconds += 2 * inner_steps * inner_latency + inner / inner_bw;
  return c;
}

CollectiveSpan::Cost CollectiveSpan::all_to_all(double bytes) const {
  // A rank of the smallest group sends the most over the outer tier.
  const double inner = bytes * (smallest - 1) / ranks, outer = bytes * (ranks - smallest) / ranks;
  Cost c;
  c.bytes = inner + outer;
  c.seconds = outer_steps * outer_latency + outer / outer_bw;
  if (inner > 0) {
    c.seconds = std::max(c.seconds, inner_steps * inner_latency + inner / inner_bw);
  }
  return c;
}

double expected_distinct_experts(double experts, double top_k, double tokens) {
  if (experts <= 0 || tokens <= 0) return 0.0;
  return experts * (1.0 - std::pow(1.0 - std::min(top_k, experts) / experts, tokens));
}

std::string to_string(Bound b) {
  switch (b) {
    case Bound::compute:
      return "compute";
    case Bound::memory:
      return "memory";
    case Bound::communication:
      return "communication";
    case Bound::overhead:
      return "overhead";
  }
  return "?";
}

IterationShape IterationShape::decode(double seqs, double total_context) {
  IterationShape s;
  s.decode_seqs = seqs;
  s.decode_context = total_context;
  return s;
}

IterationShape& IterationShape::add_prefill_chunk(double tokens, double prior, bool completes,
                                                  int window) {
  if (prefill_window_attended < 0) prefill_window_attended = 0;
  if (prefill_span < 0) prefill_span = 0;
  if (prefill_window_span < 0) prefill_window_span = 0;
  prefill_span += prior + tokens;
  prefill_window_span += (window > 0 ? std::min<double>(prior, window) : prior) + tokens;
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

std::string to_string(LayoutRejection r) {
  switch (r) {
    case LayoutRejection::none:
      return "none";
    case LayoutRejection::no_chip:
      return "no_chip";
    case LayoutRejection::unknown_precision:
      return "unknown_precision";
    case LayoutRejection::bad_degree:
      return "bad_degree";
    case LayoutRejection::exceeds_domain:
      return "exceeds_domain";
    case LayoutRejection::pp_exceeds_layers:
      return "pp_exceeds_layers";
    case LayoutRejection::dp_attention_needs_tp:
      return "dp_attention_needs_tp";
    case LayoutRejection::heads_not_divisible:
      return "heads_not_divisible";
    case LayoutRejection::kv_heads_not_divisible:
      return "kv_heads_not_divisible";
    case LayoutRejection::dense_ffn_not_divisible:
      return "dense_ffn_not_divisible";
    case LayoutRejection::ep_on_dense_model:
      return "ep_on_dense_model";
    case LayoutRejection::ep_not_dividing_tp:
      return "ep_not_dividing_tp";
    case LayoutRejection::experts_not_divisible:
      return "experts_not_divisible";
    case LayoutRejection::expert_ffn_not_divisible:
      return "expert_ffn_not_divisible";
    case LayoutRejection::dp_attention_ep:
      return "dp_attention_ep";
    case LayoutRejection::bad_speculation:
      return "bad_speculation";
    case LayoutRejection::unknown_format:
      return "unknown_format";
    case LayoutRejection::weights_exceed_hbm:
      return "weights_exceed_hbm";
    case LayoutRejection::kv_below_min_tokens:
      return "kv_below_min_tokens";
  }
  return "?";
}

bool is_divisibility(LayoutRejection r) {
  switch (r) {
    case LayoutRejection::heads_not_divisible:
    case LayoutRejection::kv_heads_not_divisible:
    case LayoutRejection::dense_ffn_not_divisible:
    case LayoutRejection::ep_not_dividing_tp:
    case LayoutRejection::experts_not_divisible:
    case LayoutRejection::expert_ffn_not_divisible:
      return true;
    default:
      return false;
  }
}

bool is_memory(LayoutRejection r) {
  return r == LayoutRejection::weights_exceed_hbm || r == LayoutRejection::kv_below_min_tokens;
}

std::optional<LayoutProblem> layout_problem(const Model& model, const System& system,
                                            const Catalog& catalog, const Layout& layout,
                                            const std::string& precision, const Speculation& spec) {
  using R = LayoutRejection;
  auto problem = [](R r, std::string detail) { return LayoutProblem{r, std::move(detail)}; };
  if (system.chip == nullptr) return problem(R::no_chip, "system " + system.id + " has no chip");
  auto vit = model.variants.find(precision);
  if (vit == model.variants.end())
    return problem(R::unknown_precision, model.id + " has no '" + precision +
                                             "' weight variant (it has " +
                                             join_keys(model.variants) + ")");
  const WeightVariant& v = vit->second;
  const int tp = layout.tp, ep = layout.ep, pp = layout.pp;
  if (tp < 1 || ep < 1 || pp < 1) return problem(R::bad_degree, "tp, ep and pp must be at least 1");
  const int xpus = layout.xpus();
  // A replica larger than a scale-up domain spans whole domains (servers, racks) over the
  // scale-out network, as multi-node serving deploys; its collectives are priced on the tier they
  // cross.
  if (xpus > system.domain_xpus && xpus % system.domain_xpus != 0)
    return problem(R::exceeds_domain, "replica of " + std::to_string(xpus) +
                                          " XPUs exceeds the scale-up domain of " +
                                          std::to_string(system.domain_xpus) +
                                          " and is not a whole number of domains");
  if (pp > model.layers)
    return problem(R::pp_exceeds_layers, "pp " + std::to_string(pp) + " exceeds the " +
                                             std::to_string(model.layers) + " layers");
  if (layout.dp_attention && tp == 1)
    return problem(R::dp_attention_needs_tp, "dp_attention needs tp > 1");
  const auto& a = model.attention;
  if (!layout.dp_attention) {
    if (a.q_heads % tp != 0)
      return problem(R::heads_not_divisible, std::to_string(a.q_heads) +
                                                 " attention heads are not divisible by tp " +
                                                 std::to_string(tp));
    if (a.kind == AttentionKind::gqa && a.kv_heads % tp != 0 && tp % a.kv_heads != 0)
      return problem(R::kv_heads_not_divisible, std::to_string(a.kv_heads) + " KV heads and tp " +
                                                    std::to_string(tp) +
                                                    " do not divide one another");
  }
  if (model.dense_layers > 0 && model.dense_ffn && *model.dense_ffn % tp != 0)
    return problem(R::dense_ffn_not_divisible, "dense FFN width " +
                                                   std::to_string(*model.dense_ffn) +
                                                   " is not divisible by tp " + std::to_string(tp));
  if (!model.moe && ep > 1) return problem(R::ep_on_dense_model, "ep > 1 on a dense model");
  if (model.moe) {
    if (tp % ep != 0)
      return problem(R::ep_not_dividing_tp, "ep " + std::to_string(ep) + " does not divide tp " +
                                                std::to_string(tp) +
                                                " (experts are spread within a pipeline stage)");
    if (model.moe->routed_experts % ep != 0)
      return problem(R::experts_not_divisible, std::to_string(model.moe->routed_experts) +
                                                   " experts are not divisible by ep " +
                                                   std::to_string(ep));
    if (model.moe->expert_ffn % (tp / ep) != 0)
      return problem(R::expert_ffn_not_divisible,
                     "expert FFN width " + std::to_string(model.moe->expert_ffn) +
                         " is not divisible by tp/ep " + std::to_string(tp / ep));
    if (layout.dp_attention && ep != 1 && ep != tp)
      return problem(R::dp_attention_ep, "with dp_attention, ep must be 1 or equal to tp");
  }
  if (spec.draft_tokens < 0 || spec.acceptance < 1.0 || spec.acceptance > spec.draft_tokens + 1.0)
    return problem(R::bad_speculation, "speculation acceptance must lie in [1, draft_tokens + 1]");
  for (const std::string* id : {&v.attention, &v.dense_ffn, &v.routed_experts, &v.shared_experts,
                                &v.embeddings, &v.lm_head, &v.kv_cache})
    if (!id->empty() && find_format(catalog, *id) == nullptr)
      return problem(R::unknown_format, "unknown number format '" + *id + "'");
  return std::nullopt;
}

std::expected<StepModel, std::string> StepModel::create(
    const Model& model, const System& system, const Catalog& catalog, const Layout& layout,
    const std::string& precision, const Efficiency& eff, const Speculation& spec,
    const MemoryParams& mem) {
  if (auto p = layout_problem(model, system, catalog, layout, precision, spec))
    return std::unexpected(p->detail);
  const Chip& chip = *system.chip;
  const WeightVariant& v = model.variants.at(precision);
  const int tp = layout.tp, ep = layout.ep, pp = layout.pp;
  const int xpus = layout.xpus();
  const auto& a = model.attention;
  auto fmt = [&](const std::string& id) { return id.empty() ? nullptr : find_format(catalog, id); };

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
  // Scores and values run in the KV cache's format when the chip computes it natively (FP8 KV:
  // FP8 attention kernels, as TensorRT-LLM's FP8 FMHA and FlashMLA's FP8 path do), else in BF16.
  m.attn_core_peak_ = peak_for(chip, fmt(v.kv_cache));
  m.rate_router_ = bf16_peak * mfu;
  m.rate_dense_ = peak_for(chip, fmt(v.dense_ffn)) * mfu;
  m.rate_expert_ = peak_for(chip, fmt(v.routed_experts)) * mfu;
  m.rate_shared_ = peak_for(chip, fmt(v.shared_experts)) * mfu;
  m.rate_head_ = peak_for(chip, fmt(v.lm_head)) * mfu;
  m.hbm_rate_ = chip.hbm_bandwidth.value() * eff.mbu;
  auto deq = [&](const std::string& id) {
    return dequantises(chip, fmt(id)) ? eff.dequant_eff : 1.0;
  };
  m.deq_attn_ = deq(v.attention);
  m.deq_dense_ = deq(v.dense_ffn);
  m.deq_expert_ = deq(v.routed_experts);
  m.deq_shared_ = deq(v.shared_experts);
  m.deq_head_ = deq(v.lm_head);

  // Attention.
  const double b_attn = bytes_per_element(fmt(v.attention));
  const double b_kv = bytes_per_element(fmt(v.kv_cache));
  double params = 0, params_rank = 0;
  if (a.kind == AttentionKind::gqa) {
    const double hq = a.q_heads, hkv = a.kv_heads, d = a.head_dim;
    params = h * hq * d + 2 * h * hkv * d + hq * d * h;
    // Q and O split over tp; K and V over at most kv_heads ranks, replicated beyond that.
    params_rank =
        m.dpa_ ? params : (2 * h * hq * d) / tp + (2 * h * hkv * d) / std::min<double>(tp, hkv);
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
    // The down-projections q_a and kv_a are not split by heads: every TP rank holds them.
    params_rank = m.dpa_ ? params : q_a + kv_a + (q_b + kv_b + o) / tp;
    // Absorbed decode: scores against the latent (kvr + rope) and values from the latent (kvr).
    m.attn_core_flops_decode_ = 2 * H * (kvr + rope) + 2 * H * kvr;
    // Prefill decompresses K and V per token (kv_b, counted in params) and attends per head.
    m.attn_core_flops_prefill_ = 2 * H * (nope + rope) + 2 * H * vd;
    m.kv_bytes_layer_ = (kvr + rope) * b_kv;
    m.kv_share_rank_ = 1.0;  // the latent is replicated on every TP rank
  }
  m.attn_proj_flops_decode_ = m.attn_proj_flops_prefill_ = 2 * params_rank;
  m.attn_weight_bytes_rank_ = params_rank * b_attn;
  if (!m.dpa_) {
    m.attn_core_flops_decode_ /= tp;
    m.attn_core_flops_prefill_ /= tp;
  }

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
    m.expert_bytes_rank_ =
        3 * h * Fe * bytes_per_element(fmt(v.routed_experts)) / (static_cast<double>(tp) / ep);
    // Shared experts: split over the TP group, or with DP attention replicated on every rank, each
    // rank passing its own tokens through them.
    const double shared_split = m.dpa_ ? 1.0 : tp;
    m.shared_flops_ = 2 * 3 * h * Fe * e.shared_experts / shared_split;
    m.shared_bytes_rank_ =
        3 * h * Fe * e.shared_experts * bytes_per_element(fmt(v.shared_experts)) / shared_split;
    m.router_flops_ = 2 * h * e.routed_experts;
    m.router_bytes_ = h * e.routed_experts * 2.0;
  }
  // LM head, vocabulary-parallel over the TP group.
  m.head_flops_ = 2 * h * model.vocab / tp;
  m.head_bytes_rank_ = h * model.vocab * bytes_per_element(fmt(v.lm_head)) / tp;
  m.emb_bytes_rank_ = h * model.vocab * bytes_per_element(fmt(v.embeddings)) / tp;
  m.tied_ = model.tied_embeddings;
  m.mtp_layers_ = spec.draft_tokens > 0 ? model.mtp_layers : 0;

  // Communication tiers.
  m.tp_span_ = CollectiveSpan::of(system, tp, eff);
  const Tier ppt = tier_for(system, xpus);
  m.pp_latency_ = ppt.latency + eff.alpha.value();
  m.pp_bw_ = ppt.bandwidth * eff.comm_eff;
  return m;
}

// Accumulates operations on the busiest XPU: each one takes max(compute, memory) and counts as
// compute- or memory-bound accordingly; at peak FLOP/s and peak bandwidth it adds to the roofline.
struct StepModel::Ops {
  Breakdown& b;
  double hbm_rate = 1.0, mbu = 1.0;  // the achieved HBM rate and its share of the peak
  double compute_bound = 0.0, memory_bound = 0.0, roofline = 0.0;

  // `t_peak`: the operation's compute time at peak FLOP/s; its memory time at peak bandwidth is
  // that of its `bytes`.
  void add(Part part, double count, double t_compute, double t_memory, double flops, double bytes,
           double t_peak) {
    if (count <= 0) return;
    auto& p = b.parts[part];
    p.compute += Seconds(count * t_compute);
    p.memory += Seconds(count * t_memory);
    p.flops += Flops(count * flops);
    p.bytes += Bytes(count * bytes);
    roofline += count * std::max(t_peak, bytes / hbm_rate * mbu);
    if (t_compute >= t_memory)
      compute_bound += count * t_compute;
    else
      memory_bound += count * t_memory;
  }
};

double gemm_row_efficiency(double rows) {
  return rows > 0 ? rows / (rows + kGemmHalfRows) : 1.0;
}

double StepModel::attention_core_efficiency(double span) const {
  if (span <= 0) return 0.0;
  return eff_.attn_eff * span / (span + kAttentionTileKeys);
}

// `count` attention layers (sliding-window or full) for a shape (per microbatch) whose decode
// sequences each carry `queries` query tokens.
void StepModel::attention(Ops& ops, Part part, const IterationShape& s, double count, bool sliding,
                          double queries) const {
  if (count <= 0) return;
  const Shares sh = shares(s);
  const double q_dec = s.decode_seqs * queries * sh.decode;  // on the busiest rank
  const double q_pre = s.prefill_tokens * sh.prefill;
  double dec_ctx = s.decode_context, pre_att = s.prefill_attended;
  double span =
      s.prefill_span >= 0
          ? s.prefill_span
          : std::min(pre_att, pre_att / std::max(1.0, s.prefill_tokens) * s.prefill_chunks +
                                  s.prefill_tokens);
  if (sliding) {
    const double w = window_;
    dec_ctx = s.decode_window_context >= 0 ? s.decode_window_context
                                           : std::min(dec_ctx, s.decode_seqs * w);
    pre_att = s.prefill_window_attended >= 0 ? s.prefill_window_attended
                                             : std::min(pre_att, s.prefill_tokens * w);
    span = s.prefill_window_span >= 0 ? s.prefill_window_span
                                      : std::min(span, s.prefill_chunks * w + s.prefill_tokens);
  }
  dec_ctx *= sh.decode;
  pre_att *= sh.prefill_attended;
  span *= sh.prefill;
  const double flops_proj = q_dec * attn_proj_flops_decode_ + q_pre * attn_proj_flops_prefill_;
  const double core_dec = queries * dec_ctx * attn_core_flops_decode_;
  const double core_pre = pre_att * attn_core_flops_prefill_;
  const double flops_core = core_dec + core_pre;
  // The core's efficiency by the mean key span of its queries: a decode query spans its
  // sequence's context, a prefill query the positions it attends to.
  const double eff_dec = attention_core_efficiency(q_dec > 0 ? dec_ctx * queries / q_dec : 0.0);
  const double eff_pre = attention_core_efficiency(q_pre > 0 ? pre_att / q_pre : 0.0);
  const double t_core = (eff_dec > 0 ? core_dec / (attn_core_peak_ * eff_dec) : 0.0) +
                        (eff_pre > 0 ? core_pre / (attn_core_peak_ * eff_pre) : 0.0);
  // KV: each decode sequence reads its context once per step, each prefill chunk the keys it spans
  // (prior context and its own tokens); every new token is written once.
  const double kv_bytes =
      (dec_ctx + span + q_dec + q_pre) * kv_bytes_layer_ * (dpa_ ? 1.0 : kv_share_rank_);
  const double act_bytes = mem_.activation_passes / 2 * (q_dec + q_pre) * hidden_ * kActBytes;
  const double bytes = attn_weight_bytes_rank_ + kv_bytes + act_bytes;
  const double g_proj = gemm_row_efficiency(q_dec + q_pre);
  ops.add(part, count, flops_proj / (rate_attn_proj_ * deq_attn_ * g_proj) + t_core,
          (attn_weight_bytes_rank_ / deq_attn_ + kv_bytes + act_bytes) / hbm_rate_,
          flops_proj + flops_core, bytes,
          flops_proj / rate_attn_proj_ * eff_.mfu + flops_core / attn_core_peak_);
}

// `tokens`: tokens of the whole replica routed to the experts; `own`: tokens this rank routes and
// passes through the shared experts (all of them, or its DP share).
void StepModel::moe(Ops& ops, Part part, double tokens, double own, double count) const {
  // Token-expert rows on the busiest rank; with ep = 1 every rank holds a slice of every expert and
  // sees the same rows, so only expert parallelism is imbalanced.
  const double imbalance = ep_ > 1 ? eff_.moe_imbalance : 1.0;
  const double rows = tokens * top_k_ / tp_ * imbalance;
  const double distinct = expected_distinct_experts(experts_, top_k_, tokens);
  const double touched = distinct / ep_;
  const double flops_e = rows * expert_flops_, flops_s = own * shared_flops_,
               flops_r = own * router_flops_;
  // Activations: with EP a rank handles its own tokens' hidden states; with experts sliced over the
  // TP group (ep = 1) every rank passes every token through its slices.
  const double act_tokens = ep_ > 1 ? own : tokens;
  const double act_bytes = mem_.activation_passes / 2 * act_tokens * hidden_ * kActBytes;
  const double bytes =
      touched * expert_bytes_rank_ + shared_bytes_rank_ + router_bytes_ + act_bytes;
  const double t_native = flops_e / rate_expert_ + flops_s / rate_shared_ + flops_r / rate_router_;
  // Rows per expert GEMM: the token-expert pairs over the experts they touch (on the busiest rank
  // under EP; with ep = 1 each rank's slice of an expert sees all of its rows).
  const double g_e = gemm_row_efficiency(distinct > 0 ? tokens * top_k_ * imbalance / distinct : 0);
  const double g_own = gemm_row_efficiency(own);
  ops.add(part, count,
          flops_e / (rate_expert_ * deq_expert_ * g_e) +
              (flops_s / (rate_shared_ * deq_shared_) + flops_r / rate_router_) / g_own,
          (touched * expert_bytes_rank_ / deq_expert_ + shared_bytes_rank_ / deq_shared_ +
           router_bytes_ + act_bytes) /
              hbm_rate_,
          flops_e + flops_s + flops_r, bytes, t_native * eff_.mfu);
}

void StepModel::dense(Ops& ops, Part part, double tokens, double count) const {
  const double flops = tokens * dense_flops_per_token_;
  const double act_bytes = mem_.activation_passes / 2 * tokens * hidden_ * kActBytes;
  const double bytes = dense_bytes_rank_ + act_bytes;
  ops.add(part, count, flops / (rate_dense_ * deq_dense_ * gemm_row_efficiency(tokens)),
          (dense_bytes_rank_ / deq_dense_ + act_bytes) / hbm_rate_, flops, bytes,
          flops / rate_dense_ * eff_.mfu);
}

void StepModel::lm_head(Ops& ops, Part part, double sampled) const {
  if (sampled <= 0) return;
  const double flops = sampled * head_flops_;
  ops.add(part, 1.0, flops / (rate_head_ * deq_head_ * gemm_row_efficiency(sampled)),
          head_bytes_rank_ / (hbm_rate_ * deq_head_), flops, head_bytes_rank_,
          flops / rate_head_ * eff_.mfu);
}

// With DP attention, sequences and prefill chunks are spread over the tp ranks; the busiest rank
// holds ceil(n / tp) of the n decode sequences, and the prefill share the engine scheduled
// (IterationShape::prefill_rank_token_share), else ceil(c / tp) of the c chunks (chunks are not
// split).
double StepModel::on_busiest_rank(double n) const {
  return n > 0 ? std::ceil(n / tp_ - 1e-9) : 0.0;
}

StepModel::Shares StepModel::shares(const IterationShape& s) const {
  if (!dpa_) return {};
  auto share = [&](double n) { return n > 0 ? on_busiest_rank(n) / n : 0.0; };
  const double chunks = share(s.prefill_chunks);
  return {share(s.decode_seqs),
          s.prefill_rank_token_share >= 0 ? s.prefill_rank_token_share : chunks,
          s.prefill_rank_attended_share >= 0 ? s.prefill_rank_attended_share : chunks};
}

double StepModel::scheduled_items(const IterationShape& s) const {
  if (!dpa_) return s.decode_seqs + s.prefill_chunks;
  return on_busiest_rank(s.decode_seqs) + on_busiest_rank(s.prefill_chunks);
}

Breakdown StepModel::step(const IterationShape& full) const {
  Breakdown b;
  const double items = full.decode_seqs + full.prefill_chunks;
  if (items <= 0 || full.decode_seqs + full.prefill_tokens <= 0) return b;  // nothing to do
  Ops ops{b, hbm_rate_, eff_.mbu};
  // Pipeline: the iteration is split into up to pp microbatches; a token's step is one pass of its
  // microbatch through every stage, i.e. all layers at the microbatch's size.
  const double micro = pp_ > 1 ? std::clamp(std::floor(items), 1.0, pp_) : 1.0;
  IterationShape s = full;
  if (micro > 1) {
    const double f = 1.0 / micro;
    for (double* x : {&s.decode_seqs, &s.decode_context, &s.prefill_chunks, &s.prefill_tokens,
                      &s.prefill_attended, &s.prefill_completions})
      *x *= f;
    for (double* x : {&s.decode_window_context, &s.prefill_window_attended, &s.prefill_span,
                      &s.prefill_window_span})
      if (*x >= 0) *x *= f;
  }
  const double queries = 1.0 + spec_.draft_tokens;
  const double tokens = s.decode_seqs * queries + s.prefill_tokens;
  const Shares sh = shares(s);
  const double own = s.decode_seqs * queries * sh.decode + s.prefill_tokens * sh.prefill;

  attention(ops, kAttention, s, sliding_layers_, true, queries);
  attention(ops, kAttention, s, layers_ - sliding_layers_, false, queries);
  if (tokens > 0) {
    if (dense_layers_ > 0) dense(ops, kDenseFfn, tokens, dense_layers_);
    if (moe_layers_ > 0) moe(ops, kMoe, tokens, own, moe_layers_);
  }
  lm_head(ops, kLmHead, s.decode_seqs * queries + s.prefill_completions);

  // Collectives over the TP group's span, per layer of a pass.
  double comm = 0.0, comm_bytes = 0.0;
  auto add = [&](CollectiveSpan::Cost c, double count) {
    comm += count * c.seconds;
    comm_bytes += count * c.bytes;
  };
  auto all_reduce = [&](double bytes, double count) {
    if (tp_ <= 1 || bytes <= 0 || count <= 0) return;
    add(tp_span_.all_reduce(bytes), count);
  };
  auto all_to_all = [&](double bytes, double count) {
    if (ep_ <= 1 || bytes <= 0 || count <= 0) return;
    add(tp_span_.all_to_all(bytes), count);
  };
  // `n_tokens` through `layers` layers, `moe_count` of them MoE; `own_tokens` on the busiest rank.
  auto layer_collectives = [&](double n_tokens, double own_tokens, double layers,
                               double dense_count, double moe_count) {
    const double act = n_tokens * hidden_ * kActBytes;
    if (!dpa_) {
      all_reduce(act, 2 * layers);  // after attention and after the FFN
      return;
    }
    // Dense layers (and TP-sliced experts when ep = 1) gather and scatter the tokens of all ranks.
    all_reduce(act, dense_count + (ep_ == 1 ? moe_count : 0.0));
    if (moe_ && ep_ > 1) {
      // Dispatch and combine: each token goes to the distinct EP ranks among its top-k experts.
      const double ranks = ep_ * (1.0 - std::pow(1.0 - 1.0 / ep_, top_k_));
      all_to_all(own_tokens * ranks * hidden_ * kActBytes, 2 * moe_count);
    }
  };
  layer_collectives(tokens, own, layers_, dense_layers_, moe_layers_);
  const double layer_bytes = comm_bytes;
  double boundary_bytes = 0.0;
  if (pp_ > 1 && tokens > 0) {  // stage boundaries, once per stage of the pass
    const double act = tokens * hidden_ * kActBytes;
    comm += (pp_ - 1) * (pp_latency_ + act / pp_bw_);
    boundary_bytes = act;  // each XPU but the last stage's sends one per microbatch
  }

  // Speculative drafting: draft_tokens sequential passes of one layer plus the LM head on one token
  // per sequence (an MTP module, or a draft model of about one layer), with that layer's
  // collectives.
  double draft_overhead = 0.0;
  if (spec_.draft_tokens > 0 && s.decode_seqs > 0) {
    const double d = spec_.draft_tokens, n = s.decode_seqs;
    const IterationShape one = IterationShape::decode(n, s.decode_context);
    attention(ops, kDraft, one, d, false, 1.0);
    if (moe_)
      moe(ops, kDraft, n, n * shares(one).decode, d);
    else
      dense(ops, kDraft, n, d);
    for (int i = 0; i < spec_.draft_tokens; ++i) lm_head(ops, kDraft, n);
    layer_collectives(n, n * shares(one).decode, d, moe_ ? 0.0 : d, moe_ ? d : 0.0);
    draft_overhead = d * eff_.layer_overhead.value();
  }
  const double draft_bytes = comm_bytes - layer_bytes;

  const double exposed = comm * (1.0 - eff_.overlap);
  b.compute = Seconds(ops.compute_bound);
  b.memory = Seconds(ops.memory_bound);
  b.communication = Seconds(exposed);
  b.comm_raw = Seconds(comm);
  b.roofline = Seconds(ops.roofline);
  b.overhead = Seconds(layers_ * eff_.layer_overhead.value() + eff_.step_overhead.value() +
                       draft_overhead + eff_.seq_overhead.value() * scheduled_items(full));
  b.total = b.compute + b.memory + b.communication + b.overhead;
  // Per-XPU volumes: an XPU holds 1/pp of the layers and sees every microbatch.
  for (const auto& p : b.parts) {
    b.flops += p.flops;
    b.hbm_bytes += p.bytes;
  }
  b.flops = b.flops * (micro / pp_);
  b.hbm_bytes = b.hbm_bytes * (micro / pp_);
  b.comm_bytes = Bytes((layer_bytes + draft_bytes) * micro / pp_ + boundary_bytes * micro);
  b.tokens_per_decode_seq = spec_.acceptance;
  const double vals[] = {b.compute.value(), b.memory.value(), b.communication.value(),
                         b.overhead.value()};
  b.bound =
      static_cast<Bound>(std::max_element(std::begin(vals), std::end(vals)) - std::begin(vals));
  return b;
}

// Visits every pipeline stage with its weight bytes and KV bytes per token on its busiest XPU.
// Stages take floor(L / pp) layers each, the first L mod pp stages one more; dense layers come
// first; the embeddings sit on the first stage, the head and any MTP modules on the last.
template <class F>
void StepModel::for_each_stage(F&& visit) const {
  const double moe_layer =
      moe_ ? (experts_ / ep_) * expert_bytes_rank_ + shared_bytes_rank_ + router_bytes_ : 0.0;
  const double attn_layer = attn_weight_bytes_rank_;
  const double kv_layer = kv_bytes_layer_ * kv_share_rank_;
  const int L = static_cast<int>(layers_), P = static_cast<int>(pp_),
            dense = static_cast<int>(dense_layers_);
  int start = 0;
  for (int i = 0; i < P; ++i) {
    const int n = L / P + (i < L % P ? 1 : 0);
    const int d = std::clamp(dense - start, 0, n);
    // With a sliding window, layers 0, 2, 4, ... are sliding: full layers are the odd ones.
    const int full = window_ > 0 ? (start + n) / 2 - start / 2 : n;
    double weights = n * attn_layer + d * dense_bytes_rank_ + (n - d) * moe_layer;
    double kv = full * kv_layer;
    if (i == 0) weights += emb_bytes_rank_;
    if (i == P - 1) {
      if (!(tied_ && P == 1)) weights += head_bytes_rank_;
      weights += mtp_layers_ * (attn_layer + (moe_ ? moe_layer : dense_bytes_rank_));
      kv += mtp_layers_ * kv_layer;
    }
    visit(weights, kv);
    start += n;
  }
}

Bytes StepModel::weights_per_xpu() const {
  double worst = 0.0;
  for_each_stage([&](double weights, double) { worst = std::max(worst, weights); });
  return Bytes(worst);
}

Bytes StepModel::kv_bytes_per_token_per_xpu() const {
  double worst = 0.0;
  for_each_stage([&](double, double kv) { worst = std::max(worst, kv); });
  return Bytes(worst);
}

double StepModel::kv_tokens(Bytes budget) const {
  // Each stage holds its own layers' cache; the tightest stage decides. With DP attention each
  // rank holds whole sequences of its own; otherwise every rank holds its share of every token.
  double tokens = std::numeric_limits<double>::max();
  for_each_stage([&](double weights, double kv) {
    const double free = budget.value() - weights;
    tokens = std::min(tokens, kv > 0 ? std::max(0.0, free) / kv : 0.0);
  });
  return (dpa_ ? tp_ : 1.0) * tokens;
}

bool dequantises(const Chip& chip, const NumberFormat* f) {
  return f != nullptr && f->bits_per_element + 1.0 < class_bits(class_for(chip, f));
}

bool variant_dequantises(const Model& model, const System& system, const Catalog& catalog,
                         const std::string& precision) {
  auto v = model.variants.find(precision);
  if (v == model.variants.end()) return false;
  const WeightVariant& w = v->second;
  for (const std::string* id :
       {&w.attention, &w.dense_ffn, &w.routed_experts, &w.shared_experts, &w.lm_head})
    if (!id->empty() && dequantises(*system.chip, find_format(catalog, *id))) return true;
  return false;
}

std::string best_precision(const Model& model, const System& system, const Catalog& catalog) {
  std::string best;
  double best_bytes = std::numeric_limits<double>::max();
  int best_class = 99;
  for (const auto& [name, v] : model.variants) {
    bool native = true;
    double bits = 0;
    int widest = 0;
    for (const std::string* id :
         {&v.attention, &v.dense_ffn, &v.routed_experts, &v.shared_experts, &v.lm_head}) {
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
    const int main_class =
        it != catalog.formats.end() ? static_cast<int>(it->second.compute) : widest;
    if (!native) continue;
    if (main_bits < best_bytes - 1e-9 ||
        (std::abs(main_bits - best_bytes) < 1e-9 && main_class < best_class)) {
      best = name;
      best_bytes = main_bits;
      best_class = main_class;
    }
  }
  return best.empty() ? model.default_precision : best;
}

}  // namespace racktwin::perf
