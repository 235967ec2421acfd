#pragma once
// The analytic step-time model: how long one engine iteration takes on one model replica, and why.
//
// Contract:
// - Pure: no I/O, no randomness, no globals. StepModel::create() does all the per-(model, system,
//   layout, precision) work once; StepModel::step() is arithmetic over a handful of layer kinds, so
//   one evaluation costs O(1) in the number of sequences and layers (layers of one kind share one
//   evaluation).
// - An iteration is summarised by IterationShape: the decode part by (sequences, sum of contexts),
//   the prefill part by (chunks, tokens, attended key positions).
// - The returned Breakdown adds up: total = compute + memory + communication + overhead, where
//   compute (memory) is the time of the operations bound by compute (memory), communication is the
//   exposed (not overlapped) collective time and overhead the fixed per-layer and per-step costs.
// - It carries its roofline (the same operations at peak rates, nothing else), and
//   total >= roofline whenever the efficiencies mfu, attn_eff and mbu are at most 1.
// - Equations, parameters and assumptions: docs/model.md.

#include <array>
#include <expected>
#include <optional>
#include <string>

#include "core/catalog.hpp"
#include "core/perf/efficiency.hpp"
#include "core/scenario.hpp"

namespace racktwin::perf {

// Multi-token prediction / speculative decoding: each decode step verifies `draft_tokens` drafted
// tokens per sequence and emits `acceptance` tokens per sequence on average (1 <= acceptance <=
// draft_tokens + 1).
struct Speculation {
  int draft_tokens = 0;
  double acceptance = 1.0;
};

// One engine iteration of a replica.
struct IterationShape {
  // Decode: sequences generating one token each (before speculation) and the sum of their contexts.
  double decode_seqs = 0;
  double decode_context = 0;
  // Sum over decode sequences of min(context, sliding window); negative = derive as
  // min(decode_context, decode_seqs x window), exact when every context is at least the window.
  double decode_window_context = -1;
  // Prefill: chunks (each belongs to one sequence), their tokens, and the key positions their
  // queries attend to (sum over chunk tokens of the position attended up to, prior context
  // included).
  double prefill_chunks = 0;
  double prefill_tokens = 0;
  double prefill_attended = 0;
  double prefill_window_attended = -1;  // same with each query's span capped at the window
  // Key positions the chunks read from the KV cache: sum over chunks of (prior + tokens), and with
  // the prior capped at the window. Negative = derive from the attended positions.
  double prefill_span = -1;
  double prefill_window_span = -1;
  // Chunks that finish their prompt in this iteration and therefore sample a first token.
  double prefill_completions = 0;
  // DP attention: the busiest attention rank's share of the prefill tokens and of the key
  // positions they attend to, as the engine scheduled them. Negative = whole chunks spread as
  // evenly as they go (ceil(chunks / tp) of the chunks, at the mean chunk's size).
  double prefill_rank_token_share = -1;
  double prefill_rank_attended_share = -1;

  static IterationShape decode(double seqs, double total_context);
  // Adds a chunk of `tokens` prompt tokens after `prior` tokens already in the KV cache.
  IterationShape& add_prefill_chunk(double tokens, double prior, bool completes, int window = 0);
};

enum class Bound { compute, memory, communication, overhead };
std::string to_string(Bound b);

// Time of one part of the iteration (attention, dense FFN, MoE, LM head) on the busiest XPU.
struct PartTime {
  Seconds compute;  // FLOPs / (peak x mfu), the attention core's / (peak x its efficiency)
  Seconds memory;   // HBM bytes / (bandwidth x mbu)
  Flops flops;
  Bytes bytes;
  Seconds time() const { return compute > memory ? compute : memory; }
};

enum Part : std::size_t { kAttention = 0, kDenseFfn, kMoe, kLmHead, kDraft, kPartCount };
inline constexpr std::array<const char*, kPartCount> kPartNames{"attention", "dense_ffn", "moe",
                                                                "lm_head", "draft"};

struct Breakdown {
  Seconds total;
  Seconds compute;        // time in operations bound by compute
  Seconds memory;         // time in operations bound by HBM bandwidth
  Seconds communication;  // exposed collective and pipeline-transfer time
  Seconds overhead;       // layer and step overheads
  Seconds comm_raw;       // collective time before overlap
  // The same operations at the chip's peak FLOP/s and HBM bandwidth (every efficiency 1), each part
  // still max(compute, memory), with no communication and no overhead: no step doing this work
  // on this layout can be faster. total / roofline >= 1 whenever mfu, attn_eff, mbu <= 1.
  Seconds roofline;
  Flops flops;            // on the busiest XPU
  Bytes hbm_bytes;        // on the busiest XPU
  Bytes comm_bytes;       // sent by the busiest XPU
  std::array<PartTime, kPartCount> parts{};
  double tokens_per_decode_seq = 1.0;  // tokens each decode sequence advances (speculation)
  Bound bound = Bound::overhead;
};

// Why a layout cannot serve a model on a system. layout_problem() decides the structural reasons
// (StepModel::create() fails with their detail), plan_memory() the two memory ones.
enum class LayoutRejection {
  none,
  no_chip,                   // the system has no chip
  unknown_precision,         // the model has no such weight variant
  bad_degree,                // tp, ep or pp below 1
  exceeds_domain,            // more XPUs than the scale-up domain, not a whole number of domains
  pp_exceeds_layers,         // more pipeline stages than layers
  dp_attention_needs_tp,     // DP attention with tp 1
  heads_not_divisible,       // attention heads not divisible by tp
  kv_heads_not_divisible,    // KV heads and tp do not divide one another
  dense_ffn_not_divisible,   // dense FFN width not divisible by tp
  ep_on_dense_model,         // ep > 1 without experts
  ep_not_dividing_tp,        // ep does not divide tp
  experts_not_divisible,     // routed experts not divisible by ep
  expert_ffn_not_divisible,  // expert FFN width not divisible by tp / ep
  dp_attention_ep,           // DP attention with 1 < ep < tp
  bad_speculation,           // acceptance outside [1, draft_tokens + 1]
  unknown_format,            // the weight variant names an unknown number format
  weights_exceed_hbm,        // weights and workspace exceed the usable HBM
  kv_below_min_tokens,       // the KV cache holds less than one longest sequence
};
std::string to_string(LayoutRejection r);  // the enumerator's name
// A parallel degree does not split a model dimension (heads, FFN width, experts) evenly.
bool is_divisibility(LayoutRejection r);
// The layout runs, but one XPU's HBM cannot hold its share.
bool is_memory(LayoutRejection r);

struct LayoutProblem {
  LayoutRejection reason = LayoutRejection::none;
  std::string detail;  // with the numbers, e.g. "128 attention heads are not divisible by tp 3"
};

// Why `layout` cannot run `model` on `system` with these weights and speculation; nullopt when it
// can. StepModel::create() fails exactly when this returns a problem, with its detail.
std::optional<LayoutProblem> layout_problem(const Model& model, const System& system,
                                            const Catalog& catalog, const Layout& layout,
                                            const std::string& precision,
                                            const Speculation& spec = {});

// A collective group of `ranks` XPUs packed contiguously, priced on two levels: groups of
// `per_inner` ranks on the inner tier (the widest scale-up tier narrower than the group), and
// ceil(ranks / per_inner) such groups joined by the outer tier (the narrowest tier holding the
// group, or the scale-out network). A group within one tier's narrowest level has per_inner = 1:
// one level, the outer tier. When ranks is not a multiple of per_inner the last group is smaller,
// `smallest` ranks; its ranks carry the most over the outer tier, and the costs are theirs (the
// busiest XPU's). Only two levels: a group over several domains of a multi-tier domain prices its
// domains' part on the domain's widest tier. Latencies include the per-step alpha; bandwidths the
// comm_eff.
struct CollectiveSpan {
  // The span of `ranks` XPUs of `system` packed contiguously, at efficiencies `eff`.
  static CollectiveSpan of(const System& system, int ranks, const Efficiency& eff);

  double ranks = 1, per_inner = 1, smallest = 1;
  double inner_steps = 0, inner_latency = 0, inner_bw = 0;
  double outer_steps = 0, outer_latency = 0, outer_bw = 0;

  // Seconds and bytes per XPU of one all-reduce of `bytes` over the group: a reduce-scatter on the
  // inner tier, an all-reduce of the 1/per_inner shards across the inner groups on the outer
  // tier (each XPU over its own link), an all-gather on the inner tier, each phase a ring.
  struct Cost {
    double seconds = 0, bytes = 0;
  };
  Cost all_reduce(double bytes) const;
  // One all-to-all in which an XPU sends `bytes` in equal shares to every rank of the group
  // (itself included): the shares for ranks of its own inner group move on the inner tier, the
  // others' on the outer tier, both at once.
  Cost all_to_all(double bytes) const;
};

// Per-layer constants of one replica; built once by create().
class StepModel {
 public:
  // Fails (with the reason) when the layout cannot run this model on this system: heads, experts or
  // FFN widths not divisible, precision variant unknown, replica larger than the scale-up domain
  // (layout_problem() gives the reason typed).
  static std::expected<StepModel, std::string> create(const Model& model, const System& system,
                                                      const Catalog& catalog, const Layout& layout,
                                                      const std::string& precision,
                                                      const Efficiency& eff,
                                                      const Speculation& spec = {},
                                                      const MemoryParams& mem = {});

  Breakdown step(const IterationShape& shape) const;

  const Layout& layout() const { return layout_; }
  const std::string& precision() const { return precision_; }
  const Efficiency& efficiency() const { return eff_; }
  int window() const { return window_; }  // sliding-window size (0 = none)
  // KV-cache bytes one token adds on the busiest XPU (the full-attention layers of the stage that
  // holds the most of them).
  Bytes kv_bytes_per_token_per_xpu() const;
  // Weight bytes on the busiest XPU: the layers of the fullest pipeline stage, plus the embeddings
  // on the first stage and the LM head (and MTP modules when drafting) on the last.
  Bytes weights_per_xpu() const;
  // KV-cache tokens a replica holds when each XPU has `budget` bytes for weights and cache.
  double kv_tokens(Bytes budget) const;

 private:
  struct Ops;
  void attention(Ops& ops, Part part, const IterationShape& s, double count, bool sliding,
                 double queries) const;
  void moe(Ops& ops, Part part, double tokens, double own_tokens, double count) const;
  void dense(Ops& ops, Part part, double tokens, double count) const;
  void lm_head(Ops& ops, Part part, double sampled) const;
  // Achieved / peak FLOP/s of the attention core for queries spanning `span` key positions on
  // average: attn_eff x span / (span + kAttentionTileKeys); 0 for no span.
  double attention_core_efficiency(double span) const;
  struct Shares {
    double decode = 1.0;            // the busiest rank's share of the decode sequences,
    double prefill = 1.0;           // of the prefill tokens,
    double prefill_attended = 1.0;  // and of the key positions they attend to
  };
  Shares shares(const IterationShape& s) const;
  // Whole items of n on the busiest of the tp DP-attention ranks: ceil(n / tp).
  double on_busiest_rank(double n) const;
  // Sequences (decode sequences and prefill chunks) of the iteration on the busiest scheduler:
  // the replica's one, or under DP attention the busiest attention rank's (whole items each).
  double scheduled_items(const IterationShape& s) const;
  template <class F>
  void for_each_stage(F&& visit) const;

  Layout layout_;
  std::string precision_;
  Efficiency eff_;
  Speculation spec_;
  MemoryParams mem_;
  bool moe_ = false;
  bool mla_ = false;
  int window_ = 0;
  double layers_ = 0, dense_layers_ = 0, moe_layers_ = 0, sliding_layers_ = 0;
  double tp_ = 1, ep_ = 1, pp_ = 1;
  bool dpa_ = false;
  double hidden_ = 0;
  // Rates (already multiplied by mfu / mbu; the attention core's peak, which its efficiency
  // multiplies by the span, attention_core_efficiency).
  double rate_attn_proj_ = 0, attn_core_peak_ = 0, rate_router_ = 0, rate_dense_ = 0,
         rate_expert_ = 0, rate_shared_ = 0, rate_head_ = 0, hbm_rate_ = 0;
  // Each GEMM group's share of those rates, compute and weight streaming alike: dequant_eff for a
  // group whose weights the kernel unpacks (dequantises), else 1.
  double deq_attn_ = 1, deq_dense_ = 1, deq_expert_ = 1, deq_shared_ = 1, deq_head_ = 1;
  // Attention, per token (whole replica): projection FLOPs for decode and prefill, weight bytes per
  // XPU, FLOPs per attended key position, KV bytes per token per layer on one XPU.
  double attn_proj_flops_decode_ = 0, attn_proj_flops_prefill_ = 0, attn_weight_bytes_rank_ = 0;
  double attn_core_flops_decode_ = 0, attn_core_flops_prefill_ = 0;
  double kv_bytes_layer_ = 0, kv_share_rank_ = 1;
  // FFN.
  double dense_flops_per_token_ = 0, dense_bytes_rank_ = 0;
  double experts_ = 0, top_k_ = 0, expert_flops_ = 0, expert_bytes_rank_ = 0, shared_flops_ = 0,
         shared_bytes_rank_ = 0, router_flops_ = 0, router_bytes_ = 0;
  // LM head.
  double head_flops_ = 0, head_bytes_rank_ = 0, emb_bytes_rank_ = 0;
  bool tied_ = false;
  double mtp_layers_ = 0;  // MTP modules held in memory when speculation uses them
  // Communication: the TP group's span (its all-reduces, and under DP attention, where the EP
  // group is the TP group (layout_problem), the all-to-alls), and the tier spanning the replica
  // (pipeline stage boundaries).
  CollectiveSpan tp_span_;
  double pp_latency_ = 0, pp_bw_ = 0;
};

// Key positions at which a fused attention kernel reaches half its long-span rate: one key tile.
// A query block pays a fixed cost (loading its queries, the softmax's final rescale, writing its
// output) of about one tile's work beside the tiles it streams. Assumption: FlashAttention kernels
// tile keys by 64-176 positions, and their published throughput rises with sequence length and
// levels off beyond a few thousand tokens; no published curve was fitted.
inline constexpr double kAttentionTileKeys = 128.0;

// Rows (tokens) at which a GEMM reaches half its large-GEMM rate: a GEMM of m rows runs at
// m / (m + kGemmHalfRows) of mfu x peak, as though it computed kGemmHalfRows more rows (its first
// tile's pipeline fill, its epilogue, the last partial wave over the SMs). Assumption: DeepGEMM's
// grouped FP8 GEMMs on H800 fall from 1,233 to 932 TFLOP/s (N 4096, K 7168) and from 925 to 815
// (N 7168, K 2048) as the rows per group fall from 1,024 to 256, which 50-125 rows reproduce;
// Marlin-class 4-bit kernels, with small row tiles, stay at the memory bound up to 16-32 rows,
// which a larger value would contradict at decode batches. The smaller end is taken; no curve was
// fitted.
inline constexpr double kGemmHalfRows = 32.0;

// Achieved share of a GEMM's large-GEMM rate (mfu x peak) at `rows` rows: rows / (rows +
// kGemmHalfRows); 1 for no rows (a GEMM that does not run costs nothing either way).
double gemm_row_efficiency(double rows);

// Expected number of distinct experts that T tokens touch when each picks top_k of `experts`
// uniformly: E x (1 - (1 - k/E)^T). Lies between min(k, E) (T = 1) and E (T -> infinity).
double expected_distinct_experts(double experts, double top_k, double tokens);

// The precision variant racktwin uses on `system` when none is asked for: among the model's
// variants whose formats all compute natively on the chip, the one whose bulk weights (routed
// experts, else the dense FFN) take the fewest bits per element (ties: the narrower compute class);
// the model's default variant when none is native.
std::string best_precision(const Model& model, const System& system, const Catalog& catalog);

// Whether a GEMM on weights stored in `f` unpacks them in the kernel: the weights are narrower than
// the tensor-core class it computes in (MXFP4 experts on a chip without FP4 run in BF16; INT4
// weight-only formats everywhere). Such GEMMs run at Efficiency::dequant_eff of the native rates.
bool dequantises(const Chip& chip, const NumberFormat* f);
// Whether any GEMM of the model's `precision` variant dequantises on the system's chip.
bool variant_dequantises(const Model& model, const System& system, const Catalog& catalog,
                         const std::string& precision);

}  // namespace racktwin::perf
