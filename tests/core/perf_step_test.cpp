// The step-time model: hand-checked cases computed from first principles, and invariants over every
// system and model of the shipped catalog.

#include <gtest/gtest.h>

#include <cmath>

#include "core/perf/step.hpp"
#include "test_support.hpp"

namespace racktwin::perf {
namespace {

using test::shipped_catalog;

const System& sys(const char* id) {
  const System* s = shipped_catalog().find_system(id);
  EXPECT_NE(s, nullptr) << id;
  return *s;
}
const Model& mdl(const char* id) {
  const Model* m = shipped_catalog().find_model(id);
  EXPECT_NE(m, nullptr) << id;
  return *m;
}

// Efficiencies with no fixed costs, so that the hand-computed roofline terms are the whole answer.
Efficiency bare(double mfu = 0.6, double mbu = 0.8) {
  Efficiency e;
  e.mfu = mfu;
  e.mbu = mbu;
  e.attn_eff = mfu;  // the attention core at the GEMMs' efficiency on long spans
  e.comm_eff = 0.7;
  e.alpha = Seconds(2e-6);
  e.overlap = 0.0;
  e.layer_overhead = Seconds(0);
  e.step_overhead = Seconds(0);
  e.seq_overhead = Seconds(0);
  e.moe_imbalance = 1.0;
  return e;
}

StepModel make(const char* model, const char* system, const Layout& l, const std::string& precision,
               const Efficiency& e = bare(), const Speculation& spec = {}) {
  auto m = StepModel::create(mdl(model), sys(system), shipped_catalog(), l, precision, e, spec);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error());
  return *m;
}

Layout tp(int t, int ep = 1, int pp = 1, bool dpa = false) {
  return Layout{"", t, ep, pp, dpa};
}

TEST(PerfStep_HandChecked, GptOssDecodeBatch1OnOneH100_IsMemoryBoundOnTheBytesItTouches) {
  const double C = 8192;  // context of the one sequence
  const StepModel m = make("gpt-oss-120b", "h100-hgx", tp(1), "fp4");
  const Breakdown b = m.step(IterationShape::decode(1, C));

  // Weights touched, in bytes (fp4 variant: BF16 attention, router and head; MXFP4 experts at 4.25
  // bits).
  const double layers = 36, h = 2880;
  const double attn_params =
      h * (64 * 64) + 2 * h * (8 * 64) + (64 * 64) * h;  // q, k, v, o = 26,542,080
  const double attn = layers * attn_params * 2.0;
  const double expert_params = 3 * h * 2880;                     // gate, up, down = 24,883,200
  const double experts = layers * 4 * expert_params * 4.25 / 8;  // one token touches top-4 experts
  const double router = layers * h * 128 * 2.0;
  const double head = 201088 * h * 2.0;
  // KV cache at BF16: 2 (K, V) x 8 heads x 64 dims x 2 B = 2,048 B per token per layer. 18 full
  // layers read the whole context, 18 sliding layers at most 128 tokens; all 36 write one token.
  const double kv = 2048 * (18 * C + 18 * 128 + 36 * 1);
  // Activations: 6 BF16 passes over the hidden state per layer (3 in attention, 3 in the MoE).
  const double act = layers * 6 * h * 2.0;
  const double bytes = attn + experts + router + head + kv + act;
  EXPECT_NEAR(b.hbm_bytes.value() / bytes, 1.0, 1e-12);
  const double weights_only = attn + experts + router + head;
  EXPECT_NEAR(weights_only / 1e9, 4.99, 0.01);  // about 5 GB of weights per token

  EXPECT_EQ(b.bound, Bound::memory);
  EXPECT_NEAR(b.memory.value(), bytes / (3.35e12 * 0.8), 1e-12);
  EXPECT_DOUBLE_EQ(b.compute.value(), 0.0);        // no operation is compute-bound at batch 1
  EXPECT_DOUBLE_EQ(b.communication.value(), 0.0);  // one XPU, no collectives
  EXPECT_NEAR(b.total.value(), bytes / (3.35e12 * 0.8), 1e-12);
}

TEST(PerfStep_HandChecked, DeepSeekAbsorbedMlaDecodeFlops) {
  const double C = 4096;
  const StepModel m = make("deepseek-r1", "jalapeno-a0", tp(1), "fp8");
  const Breakdown b = m.step(IterationShape::decode(1, C));
  // Projections per token per layer: q_a 7168x1536, q_b 1536x128x192, kv_a 7168x576,
  // kv_b 512x128x256 (absorbed into the query and output), o 128x128x7168: 2 FLOPs per weight.
  const double proj =
      7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
  // Absorbed attention over the latent: scores 2 x 128 x (512 + 64) and values 2 x 128 x 512 per
  // position.
  const double core = 2.0 * 128 * 576 + 2.0 * 128 * 512;
  const double expected = 61 * (2 * proj + core * C);
  EXPECT_NEAR(b.parts[kAttention].flops.value() / expected, 1.0, 1e-12);
}

TEST(PerfStep_HandChecked, LlamaTp8DecodeAllReduce) {
  const StepModel m = make("llama-3.3-70b", "h100-hgx", tp(8), "bf16");
  const Breakdown b = m.step(IterationShape::decode(1, 1000));
  // Two ring all-reduces per layer of 1 token x 8192 x 2 B; 3 tree steps of (0.75 us hop + 2 us);
  // 2 x 7/8 of the bytes over 450 GB/s x 0.7.
  const double bytes = 8192 * 2.0;
  const double one = 3 * (0.75e-6 + 2e-6) + 2.0 * 7 / 8 * bytes / (450e9 * 0.7);
  EXPECT_NEAR(b.comm_raw.value(), 2 * 80 * one, 1e-15);
  EXPECT_NEAR(b.communication.value(), 2 * 80 * one, 1e-15);
  EXPECT_NEAR(b.comm_bytes.value(), 2 * 80 * 2.0 * 7 / 8 * bytes, 1e-6);
}

TEST(PerfStep_HandChecked, LlamaTp16OverTwoServers_AllReducesWithinThenAcross) {
  const System& h100 = sys("h100-hgx");
  const StepModel m = make("llama-3.3-70b", "h100-hgx", tp(16), "bf16");
  const Breakdown b = m.step(IterationShape::decode(1, 1000));
  // Per all-reduce: reduce-scatter and all-gather within each server (2 x 3 steps of 0.75 us +
  // 2 us; 2 x 7/8 of the message over 450 GB/s x 0.7), then the 1/8 shards all-reduced between the
  // two servers (1 step of the scale-out latency + 2 us; 2 x 1/2 of a shard over 50 GB/s x 0.7).
  const double bytes = 8192 * 2.0;
  const double within = 2 * 3 * (0.75e-6 + 2e-6) + 2.0 * 7 / 8 * bytes / (450e9 * 0.7);
  const double across = (h100.scale_out_latency.value() + 2e-6) +
                        bytes / 8 / (h100.scale_out_bandwidth_per_xpu.value() * 0.7);
  EXPECT_NEAR(b.comm_raw.value(), 2 * 80 * (within + across), 1e-15);
  EXPECT_NEAR(b.comm_bytes.value(), 2 * 80 * (2.0 * 7 / 8 * bytes + bytes / 8), 1e-6);
  // The whole ring on the NICs would move 15/8 of the message over them: far slower.
  const double flat = 4 * (h100.scale_out_latency.value() + 2e-6) +
                      2.0 * 15 / 16 * bytes / (h100.scale_out_bandwidth_per_xpu.value() * 0.7);
  EXPECT_LT(within + across, flat);
}

TEST(PerfStep_HandChecked, CollectiveSpan_OfAGroup_TakesItsInnerAndOuterTiersFromTheSystem) {
  const Efficiency e = bare();
  const System& h100 = sys("h100-hgx");
  // Within one server: one level, NVLink.
  const auto eight = CollectiveSpan::of(h100, 8, e);
  EXPECT_EQ(eight.per_inner, 1);
  EXPECT_EQ(eight.outer_steps, 3);
  EXPECT_DOUBLE_EQ(eight.outer_bw, 450e9 * 0.7);
  // Two servers: servers of 8 over NVLink, joined by the NICs.
  const auto sixteen = CollectiveSpan::of(h100, 16, e);
  EXPECT_EQ(sixteen.per_inner, 8);
  EXPECT_EQ(sixteen.smallest, 8);
  EXPECT_EQ(sixteen.outer_steps, 1);
  EXPECT_DOUBLE_EQ(sixteen.inner_bw, 450e9 * 0.7);
  EXPECT_DOUBLE_EQ(sixteen.outer_bw, h100.scale_out_bandwidth_per_xpu.value() * 0.7);
  // Twelve: a server and a half; the half is the busiest.
  const auto twelve = CollectiveSpan::of(h100, 12, e);
  EXPECT_EQ(twelve.per_inner, 8);
  EXPECT_EQ(twelve.smallest, 4);
  EXPECT_EQ(twelve.outer_steps, 1);
  // Jalapeno: 256 XPUs are two racks (800 GB/s each within) over the domain tier (200 GB/s).
  const auto racks = CollectiveSpan::of(sys("jalapeno-a0"), 256, e);
  EXPECT_EQ(racks.per_inner, 128);
  EXPECT_DOUBLE_EQ(racks.inner_bw, 800e9 * 0.7);
  EXPECT_DOUBLE_EQ(racks.outer_bw, 200e9 * 0.7);
}

TEST(PerfStep_HandChecked, CollectiveSpan_SplitsTheBytesByTier) {
  CollectiveSpan two{.ranks = 16, .per_inner = 8, .smallest = 8, .inner_steps = 3,
                     .inner_latency = 1e-6, .inner_bw = 400e9, .outer_steps = 1,
                     .outer_latency = 5e-6, .outer_bw = 50e9};
  const double y = 16e6;
  // All-to-all: 1/16 stays, 7/16 within the server, 8/16 across, at the same time.
  const auto a = two.all_to_all(y);
  EXPECT_DOUBLE_EQ(a.bytes, y * 15 / 16);
  EXPECT_DOUBLE_EQ(a.seconds, std::max(5e-6 + y / 2 / 50e9, 3e-6 + y * 7 / 16 / 400e9));
  // One level (per_inner = 1): the ring and the all-to-all on the outer tier alone.
  CollectiveSpan one{.ranks = 16, .per_inner = 1, .outer_steps = 4, .outer_latency = 5e-6,
                     .outer_bw = 50e9};
  EXPECT_DOUBLE_EQ(one.all_reduce(y).bytes, 2.0 * 15 / 16 * y);
  EXPECT_DOUBLE_EQ(one.all_reduce(y).seconds, 4 * 5e-6 + 2.0 * 15 / 16 * y / 50e9);
  EXPECT_DOUBLE_EQ(one.all_to_all(y).seconds, 4 * 5e-6 + y * 15 / 16 / 50e9);
  // Over two levels the NICs carry less of either collective.
  EXPECT_LT(two.all_reduce(y).seconds, one.all_reduce(y).seconds);
  EXPECT_LT(a.seconds, one.all_to_all(y).seconds);
  // Twelve ranks over 8-XPU servers: a rank of the 4-rank remainder sends 8/12 across and 3/12
  // within, and all-reduces shards of 1/4 of the message across.
  CollectiveSpan twelve = two;
  twelve.ranks = 12;
  twelve.smallest = 4;
  EXPECT_DOUBLE_EQ(twelve.all_to_all(y).bytes, y * 11 / 12);
  EXPECT_DOUBLE_EQ(twelve.all_to_all(y).seconds, 5e-6 + y * 8 / 12 / 50e9);
  EXPECT_DOUBLE_EQ(twelve.all_reduce(y).seconds,
                   5e-6 + 2.0 * 1 / 2 * y / 4 / 50e9 + 2 * 3 * 1e-6 + 2.0 * 7 / 8 * y / 400e9);
}

TEST(PerfStep_HandChecked, GptOssPrefillOnH100_IsComputeBoundAtBf16Rate) {
  // H100 has no FP4 tensor cores: MXFP4 experts are dequantised and multiply at the BF16 rate.
  const StepModel m = make("gpt-oss-120b", "h100-hgx", tp(1), "fp4");
  IterationShape s;
  s.add_prefill_chunk(8192, 0, true, 128);
  const Breakdown b = m.step(s);
  const double T = 8192;
  const double attn_params = 2880.0 * 4096 + 2 * 2880.0 * 512 + 4096.0 * 2880;
  // Routed rows: every token uses 4 experts of 3 x 2880 x 2880 weights.
  const double moe = T * 4 * 2 * 3 * 2880.0 * 2880 + T * 2 * 2880.0 * 128;
  const double full_pairs = T * (T + 1) / 2;
  // Sliding layers: query i attends min(i, 128) positions.
  const double sliding_pairs = 128.0 * 129 / 2 + (T - 128) * 128;
  const double core = 4 * 64 * 64.0;
  const double projections = 36 * 2 * attn_params * T;
  const double attention = projections + 18 * core * full_pairs + 18 * core * sliding_pairs;
  EXPECT_NEAR(b.parts[kAttention].flops.value() / attention, 1.0, 1e-12);
  EXPECT_NEAR(b.parts[kMoe].flops.value() / (36 * moe), 1.0, 1e-12);
  EXPECT_EQ(b.bound, Bound::compute);
  EXPECT_GT(b.compute.value(), 10 * b.memory.value());
  const double rate = 989e12 * 0.6;
  // The attention core runs at 0.6 x L / (L + 128) for its queries' mean span L: about 4,096
  // positions on the full layers, under 128 on the sliding ones.
  auto core_rate = [&](double pairs) {
    const double span = pairs / T;
    return 989e12 * 0.6 * span / (span + kAttentionTileKeys);
  };
  // GEMMs run at m / (m + 32) for m rows: 8,192 in the projections and the router, the 32,768
  // token-expert pairs over the 128 experts they touch (all of them) in each expert's GEMMs.
  auto g = [](double rows) { return rows / (rows + kGemmHalfRows); };
  const double routed = T * 4 * 2 * 3 * 2880.0 * 2880, router = T * 2 * 2880.0 * 128;
  const double per_expert = T * 4 / expected_distinct_experts(128, 4, T);
  EXPECT_NEAR(per_expert, 256.0, 1e-9);
  EXPECT_NEAR(b.compute.value(),
              projections / (rate * g(T)) +
                  36 * (routed / (rate * g(per_expert)) + router / (rate * g(T))) +
                  18 * core * full_pairs / core_rate(full_pairs) +
                  18 * core * sliding_pairs / core_rate(sliding_pairs),
              1e-9 * b.compute.value());
  // Sampling the one first token reads the whole BF16 head for 2 x 2880 x 201088 FLOPs:
  // memory-bound.
  EXPECT_NEAR(b.memory.value(), 201088 * 2880 * 2.0 / (3.35e12 * 0.8), 1e-15);
}

// MXFP4 experts on a chip without FP4 are unpacked in the kernel: their GEMMs and their weight
// streaming run at dequant_eff of the native rates; on a chip with FP4 nothing changes, and the
// roofline (the physical bound) never moves.
TEST(PerfStep_HandChecked, DequantisingExperts_RunAtDequantEffOfTheNativeRates) {
  const Catalog& cat = shipped_catalog();
  EXPECT_TRUE(dequantises(*sys("h100-hgx").chip, &cat.formats.at("mxfp4")));
  EXPECT_FALSE(dequantises(*sys("b200-hgx").chip, &cat.formats.at("mxfp4")));
  EXPECT_FALSE(dequantises(*sys("h100-hgx").chip, &cat.formats.at("fp8")));
  EXPECT_TRUE(dequantises(*sys("b200-hgx").chip, &cat.formats.at("int4-g32")));  // W4A16
  EXPECT_TRUE(variant_dequantises(mdl("gpt-oss-120b"), sys("mi300x-8"), cat, "fp4"));
  EXPECT_FALSE(variant_dequantises(mdl("deepseek-r1"), sys("h200-hgx"), cat, "fp8"));

  Efficiency half = bare();
  half.dequant_eff = 0.5;
  // Decode at batch 1 is memory-bound: the experts' bytes take twice as long, the rest as before.
  const IterationShape one = IterationShape::decode(1, 8192);
  const Breakdown native = make("gpt-oss-120b", "h100-hgx", tp(1), "fp4").step(one);
  const Breakdown slowed = make("gpt-oss-120b", "h100-hgx", tp(1), "fp4", half).step(one);
  const double expert_bytes = 36 * 4 * (3 * 2880.0 * 2880) * 4.25 / 8;
  EXPECT_NEAR(slowed.memory.value() - native.memory.value(), expert_bytes / (3.35e12 * 0.8),
              1e-12);
  EXPECT_DOUBLE_EQ(slowed.hbm_bytes.value(), native.hbm_bytes.value());
  EXPECT_DOUBLE_EQ(slowed.roofline.value(), native.roofline.value());
  // A prefill chunk is compute-bound: the routed experts' GEMMs take twice as long.
  IterationShape chunk;
  chunk.add_prefill_chunk(8192, 0, true, 128);
  const Breakdown pn = make("gpt-oss-120b", "h100-hgx", tp(1), "fp4").step(chunk);
  const Breakdown ps = make("gpt-oss-120b", "h100-hgx", tp(1), "fp4", half).step(chunk);
  const double routed = 36 * 8192 * 4 * 2 * 3 * 2880.0 * 2880;
  const double rows = 256;  // per expert GEMM: 8,192 tokens x top-4 over 128 experts
  EXPECT_NEAR(ps.parts[kMoe].compute.value() - pn.parts[kMoe].compute.value(),
              routed / (989e12 * 0.6 * gemm_row_efficiency(rows)),
              1e-9 * pn.parts[kMoe].compute.value());
  EXPECT_DOUBLE_EQ(ps.roofline.value(), pn.roofline.value());
  // B200 computes MXFP4 natively: dequant_eff does not apply.
  EXPECT_DOUBLE_EQ(make("gpt-oss-120b", "b200-hgx", tp(1), "fp4", half).step(one).total.value(),
                   make("gpt-oss-120b", "b200-hgx", tp(1), "fp4").step(one).total.value());
}

// The attention core runs at attn_eff x L / (L + 128) for a mean key span L, the projections at
// mfu: a short context costs more per key position than a long one.
TEST(PerfStep_HandChecked, AttentionCore_RunsAtItsOwnEfficiency_LowerOnShortSpans) {
  Efficiency e = bare(0.6, 0.8);
  e.attn_eff = 0.5;
  const StepModel m = make("llama-3.3-70b", "h100-hgx", tp(8), "bf16", e);
  const double h = 8192, hq = 64, hkv = 8, d = 128, t = 8, seqs = 64;
  const double proj = 2 * ((2 * h * hq * d) / t + (2 * h * hkv * d) / t);  // per token
  const double core = 4 * hq * d / t;                                      // per key position
  double per_position_short = 0, per_position_long = 0;
  for (double ctx : {100.0, 1000.0, 100000.0}) {
    const Breakdown b = m.step(IterationShape::decode(seqs, seqs * ctx));
    const double eta = 0.5 * ctx / (ctx + kAttentionTileKeys);
    const double t_core = seqs * ctx * core / (989e12 * eta);
    const double expected = 80 * (seqs * proj / (989e12 * 0.6 * seqs / (seqs + 32)) + t_core);
    EXPECT_NEAR(b.parts[kAttention].compute.value(), expected, 1e-9 * expected) << ctx;
    (ctx == 100.0 ? per_position_short : per_position_long) = t_core / ctx;
  }
  EXPECT_GT(per_position_short, 2 * per_position_long);
}

// A GEMM of m rows runs at m / (m + 32) of mfu x peak: the expert GEMMs of a decode step, a few
// rows each, are charged far more per row than a prefill chunk's; the roofline stays at the peak.
TEST(PerfStep_HandChecked, GemmRows_SetTheGemmsShareOfTheirRate) {
  EXPECT_DOUBLE_EQ(gemm_row_efficiency(32), 0.5);
  EXPECT_DOUBLE_EQ(gemm_row_efficiency(8), 0.2);
  EXPECT_NEAR(gemm_row_efficiency(8192), 8192.0 / 8224, 1e-15);
  EXPECT_DOUBLE_EQ(gemm_row_efficiency(0), 1.0);
  // gpt-oss-120b on one B200 at 256 decode sequences: 1,024 token-expert pairs over the (almost
  // all 128) experts they touch, 8 rows per expert GEMM; the router sees all 256 tokens.
  const double seqs = 256, h = 2880;
  const Breakdown b = make("gpt-oss-120b", "b200-hgx", tp(1), "fp4")
                          .step(IterationShape::decode(seqs, seqs * 1024));
  const double distinct = expected_distinct_experts(128, 4, seqs);
  const double rows = seqs * 4 / distinct;
  EXPECT_NEAR(rows, 8.0, 0.01);
  const double routed = seqs * 4 * 2 * 3 * h * 2880, router = seqs * 2 * h * 128;
  const double expected = 36 * (routed / (9000e12 * 0.6 * rows / (rows + 32)) +
                                router / (2250e12 * 0.6 * seqs / (seqs + 32)));
  EXPECT_NEAR(b.parts[kMoe].compute.value(), expected, 1e-9 * expected);
  // At peak rates, without the row share: the roofline's compute term for the same FLOPs.
  const double peak = 36 * (routed / 9000e12 + router / 2250e12);
  EXPECT_GT(b.parts[kMoe].compute.value(), 4 * peak / 0.6);
  // Llama-3.3-70B on 8 H100s at 64 decode sequences: the dense FFN's and the LM head's GEMMs have
  // 64 rows each (every sequence's token), at 64 / 96 of their rate.
  const Breakdown l = make("llama-3.3-70b", "h100-hgx", tp(8), "bf16")
                          .step(IterationShape::decode(64, 64 * 1000.0));
  const double share = 64.0 / (64 + 32), rate = 989e12 * 0.6 * share;
  const double ffn = 80 * 64 * 6 * 8192.0 * 28672 / 8, head = 64 * 2 * 8192.0 * 128256 / 8;
  EXPECT_NEAR(l.parts[kDenseFfn].compute.value(), ffn / rate, 1e-9 * ffn / rate);
  EXPECT_NEAR(l.parts[kLmHead].compute.value(), head / rate, 1e-9 * head / rate);
}

TEST(PerfStep_HandChecked, ExpectedDistinctExperts_BetweenKAndE) {
  EXPECT_DOUBLE_EQ(expected_distinct_experts(256, 8, 1), 8.0);
  double prev = 0;
  for (double t : {1.0, 2.0, 8.0, 64.0, 512.0, 4096.0, 1e6}) {
    const double d = expected_distinct_experts(256, 8, t);
    EXPECT_GE(d, 8.0 - 1e-9);
    EXPECT_LE(d, 256.0);
    EXPECT_GE(d, prev);
    prev = d;
  }
  EXPECT_NEAR(expected_distinct_experts(256, 8, 1e6), 256.0, 1e-6);
  // Two tokens: 256 x (1 - (248/256)^2) = 15.75.
  EXPECT_NEAR(expected_distinct_experts(256, 8, 2), 256 * (1 - std::pow(248.0 / 256, 2)), 1e-12);
}

TEST(PerfStep_Layouts, InvalidLayouts_AreRejectedWithTheirReason) {
  const Catalog& c = shipped_catalog();
  auto err = [&](const char* model, const char* system, Layout l, const char* precision) {
    auto m = StepModel::create(mdl(model), sys(system), c, l, precision, bare());
    EXPECT_FALSE(m.has_value());
    return m ? std::string() : m.error();
  };
  EXPECT_NE(err("gpt-oss-120b", "h100-hgx", tp(3), "fp4").find("not divisible"), std::string::npos);
  // 12 XPUs span one and a half 8-XPU servers: not a whole number of domains.
  EXPECT_NE(err("llama-3.3-70b", "h100-hgx", tp(12), "bf16").find("exceeds the scale-up domain"),
            std::string::npos);
  EXPECT_NE(err("llama-3.3-70b", "h100-hgx", tp(8, 8), "bf16").find("dense model"),
            std::string::npos);
  EXPECT_NE(err("deepseek-r1", "gb200-nvl72", tp(8, 3), "fp8").find("does not divide"),
            std::string::npos);
  EXPECT_NE(err("deepseek-r1", "gb200-nvl72", tp(1, 1, 1, true), "fp8").find("dp_attention"),
            std::string::npos);
  EXPECT_NE(err("deepseek-r1", "gb200-nvl72", tp(8), "int4").find("no 'int4' weight variant"),
            std::string::npos);
}

TEST(PerfStep_Precision, BestPrecision_PrefersNativeNarrowFormats) {
  const Catalog& c = shipped_catalog();
  EXPECT_EQ(best_precision(mdl("deepseek-r1"), sys("gb300-nvl72"), c), "fp4");
  EXPECT_EQ(best_precision(mdl("deepseek-r1"), sys("h200-hgx"), c), "fp8");   // no FP4 on Hopper
  EXPECT_EQ(best_precision(mdl("gpt-oss-120b"), sys("h200-hgx"), c), "fp4");  // its only variant
  EXPECT_EQ(best_precision(mdl("llama-3.3-70b"), sys("mi300x-8"), c), "fp8");
  EXPECT_EQ(best_precision(mdl("kimi-k2.5"), sys("h100-hgx"), c), "int4");
}

TEST(PerfStep_Speculation, AcceptedTokens_DivideTheTimePerToken) {
  const StepModel plain = make("deepseek-r1", "gb300-nvl72", tp(8, 8, 1, true), "fp4");
  const StepModel mtp =
      make("deepseek-r1", "gb300-nvl72", tp(8, 8, 1, true), "fp4", bare(), Speculation{1, 1.8});
  const auto s = IterationShape::decode(8, 8 * 8192.0);
  const Breakdown a = plain.step(s), b = mtp.step(s);
  EXPECT_DOUBLE_EQ(b.tokens_per_decode_seq, 1.8);
  EXPECT_GT(b.total, a.total);                        // a step verifies and drafts more
  EXPECT_LT(b.total.value() / 1.8, a.total.value());  // but costs less per token
  EXPECT_GT(b.parts[kDraft].bytes.value(), 0.0);
}

// --- Invariants over every system and model ------------------------------------------------------

struct Case {
  const System* system;
  const Model* model;
  Layout layout;
  std::string precision;
};

// One structurally valid layout per (system, model): the largest power-of-two TP within the domain
// (and within 8), with EP over it for MoE models.
std::vector<Case> every_case() {
  std::vector<Case> out;
  const Catalog& c = shipped_catalog();
  for (const auto& [sid, s] : c.systems) {
    for (const auto& [mid, m] : c.models) {
      for (int t : {8, 4, 2, 1}) {
        if (t > s->domain_xpus) continue;
        Layout l = tp(t, m->is_moe() ? t : 1);
        const std::string p = best_precision(*m, *s, c);
        if (StepModel::create(*m, *s, c, l, p, bare())) {
          out.push_back({s.get(), m.get(), l, p});
          break;
        }
      }
    }
  }
  return out;
}

TEST(PerfStep_Invariants, EverySystemAndModel_HasACase) {
  EXPECT_EQ(every_case().size(),
            shipped_catalog().systems.size() * shipped_catalog().models.size());
}

TEST(PerfStep_Invariants, TimeNeverDecreasesWithBatchOrContext) {
  for (const auto& k : every_case()) {
    const auto m = *StepModel::create(*k.model, *k.system, shipped_catalog(), k.layout, k.precision,
                                      shipped_catalog().efficiency_prior_for(k.system->id)->values);
    double prev = 0;
    for (double batch : {1.0, 2.0, 4.0, 16.0, 64.0, 256.0, 1024.0}) {
      const double t = m.step(IterationShape::decode(batch, batch * 2048)).total.value();
      EXPECT_GE(t, prev * (1 - 1e-12)) << k.system->id << " " << k.model->id << " batch " << batch;
      prev = t;
    }
    prev = 0;
    for (double ctx : {1.0, 128.0, 1000.0, 8192.0, 65536.0, 262144.0}) {
      const double t = m.step(IterationShape::decode(16, 16 * ctx)).total.value();
      EXPECT_GE(t, prev * (1 - 1e-12)) << k.system->id << " " << k.model->id << " context " << ctx;
      prev = t;
    }
    prev = 0;
    for (double chunk : {64.0, 512.0, 2048.0, 8192.0}) {
      IterationShape s;
      s.add_prefill_chunk(chunk, 1000, true, k.model->attention.sliding_window.value_or(0));
      const double t = m.step(s).total.value();
      EXPECT_GE(t, prev * (1 - 1e-12)) << k.system->id << " " << k.model->id << " chunk " << chunk;
      prev = t;
    }
  }
}

TEST(PerfStep_Invariants, MoreBandwidthOrFlops_NeverSlower) {
  for (const auto& k : every_case()) {
    const Efficiency e = shipped_catalog().efficiency_prior_for(k.system->id)->values;
    auto faster = [&](double bw, double flops) {
      auto chip = std::make_shared<Chip>(*k.system->chip);
      chip->hbm_bandwidth = chip->hbm_bandwidth * bw;
      for (auto& [cls, v] : chip->dense_peak) v = v * flops;
      System s = *k.system;
      s.chip = chip;
      return *StepModel::create(*k.model, s, shipped_catalog(), k.layout, k.precision, e);
    };
    const auto base = faster(1, 1), more_bw = faster(2, 1), more_flops = faster(1, 2);
    IterationShape mixed = IterationShape::decode(32, 32 * 4096.0);
    mixed.add_prefill_chunk(2048, 0, false, k.model->attention.sliding_window.value_or(0));
    for (const auto& s :
         {IterationShape::decode(1, 8192), IterationShape::decode(256, 256 * 8192.0), mixed}) {
      const double t = base.step(s).total.value();
      EXPECT_LE(more_bw.step(s).total.value(), t) << k.system->id << " " << k.model->id;
      EXPECT_LE(more_flops.step(s).total.value(), t) << k.system->id << " " << k.model->id;
    }
  }
}

TEST(PerfStep_Invariants, LargePrefillComputeBound_SmallDecodeMemoryBound_OnEverySystem) {
  for (const auto& k : every_case()) {
    const auto m = *StepModel::create(*k.model, *k.system, shipped_catalog(), k.layout, k.precision,
                                      shipped_catalog().efficiency_prior_for(k.system->id)->values);
    IterationShape prefill;
    prefill.add_prefill_chunk(16384, 0, true, k.model->attention.sliding_window.value_or(0));
    const Breakdown p = m.step(prefill);
    EXPECT_GT(p.compute, p.memory) << k.system->id << " " << k.model->id << " prefill";
    const Breakdown d = m.step(IterationShape::decode(1, 2048));
    EXPECT_GT(d.memory, d.compute) << k.system->id << " " << k.model->id << " decode";
  }
}

TEST(PerfStep_Invariants, BreakdownAddsUpToTotal) {
  for (const auto& k : every_case()) {
    const auto m = *StepModel::create(*k.model, *k.system, shipped_catalog(), k.layout, k.precision,
                                      shipped_catalog().efficiency_prior_for(k.system->id)->values);
    IterationShape s = IterationShape::decode(24, 24 * 3000.0);
    s.add_prefill_chunk(1024, 512, true, k.model->attention.sliding_window.value_or(0));
    const Breakdown b = m.step(s);
    const double sum =
        b.compute.value() + b.memory.value() + b.communication.value() + b.overhead.value();
    EXPECT_NEAR(b.total.value(), sum, 1e-15 * sum) << k.system->id << " " << k.model->id;
    // Each part aggregates operations; the sum over operations of max(compute, memory) lies between
    // the sum over parts of max(compute sum, memory sum) and of (compute sum + memory sum).
    double lo = 0, hi = 0;
    for (const auto& p : b.parts) {
      lo += p.time().value();
      hi += p.compute.value() + p.memory.value();
    }
    const double busy = b.compute.value() + b.memory.value();
    EXPECT_GE(busy, lo * (1 - 1e-12)) << k.system->id << " " << k.model->id;
    EXPECT_LE(busy, hi * (1 + 1e-12)) << k.system->id << " " << k.model->id;
    EXPECT_GT(b.total.value(), 0.0);
  }
}

// No step is faster than its roofline: the same operations at peak rates with no communication or
// overhead. At every efficiency 1 with no fixed costs the step is its roofline but for the
// attention core's short spans; lowering the efficiencies moves the step away from it and leaves
// the roofline where it was.
TEST(PerfStep_Invariants, NoStepFasterThanItsRoofline) {
  for (const auto& k : every_case()) {
    IterationShape s = IterationShape::decode(24, 24 * 3000.0);
    s.add_prefill_chunk(1024, 512, true, k.model->attention.sliding_window.value_or(0));
    const std::string at = k.system->id + " " + k.model->id;
    const auto prior = *StepModel::create(*k.model, *k.system, shipped_catalog(), k.layout,
                                          k.precision,
                                          shipped_catalog().efficiency_prior_for(k.system->id)->values);
    const Breakdown b = prior.step(s);
    EXPECT_GT(b.roofline.value(), 0.0) << at;
    EXPECT_GE(b.total.value(), b.roofline.value()) << at;
    const auto peak = *StepModel::create(*k.model, *k.system, shipped_catalog(), k.layout,
                                         k.precision, bare(1.0, 1.0));
    const auto slow = *StepModel::create(*k.model, *k.system, shipped_catalog(), k.layout,
                                         k.precision, bare(0.3, 0.4));
    const Breakdown at_peak = peak.step(s), slowed = slow.step(s);
    EXPECT_NEAR(at_peak.roofline.value(), slowed.roofline.value(), 1e-12 * at_peak.roofline.value())
        << at;
    // At every efficiency 1 only the attention core's short spans keep the step above its
    // roofline: no key span here is under 64 positions, so no operation takes twice its peak time.
    EXPECT_GE(at_peak.compute.value() + at_peak.memory.value(),
              at_peak.roofline.value() * (1 - 1e-12))
        << at;
    EXPECT_LE(at_peak.compute.value() + at_peak.memory.value(), 3.0 * at_peak.roofline.value())
        << at;
    EXPECT_GE(slowed.compute.value() + slowed.memory.value(), 2.4 * slowed.roofline.value()) << at;
  }
}

TEST(PerfStep_HandChecked, DpAttention_TheBusiestRanksPrefillSetsTheStep) {
  // One 8,192-token prompt on tp8-ep8-dpa: whole chunks are not split, so by default its rank does
  // all the attention. When the engine spread four 2,048-token chunks over four ranks it says the
  // busiest rank holds a quarter of the tokens and of the attended positions.
  const StepModel m = make("deepseek-r1", "gb300-nvl72", tp(8, 8, 1, true), "fp8");
  IterationShape one;
  one.add_prefill_chunk(8192, 0, true);
  IterationShape spread;
  for (int i = 0; i < 4; ++i) spread.add_prefill_chunk(2048, 0, true);
  const double one_rank = m.step(one).parts[kAttention].flops.value();
  // Four chunks: by default ceil(4 / 8) = 1 of 4 chunks, at the mean chunk's attended positions.
  const double by_chunks = m.step(spread).parts[kAttention].flops.value();
  spread.prefill_rank_token_share = 0.25;
  spread.prefill_rank_attended_share = 0.25;
  const double told = m.step(spread).parts[kAttention].flops.value();
  EXPECT_DOUBLE_EQ(told, by_chunks);  // an even spread is what the default assumes
  // Four 2,048-token prompts attend to 4 x 2048 x 2049 / 2 positions, one 8,192-token prompt to
  // 8192 x 8193 / 2: the busiest rank's work falls by the tokens (projections) and the pairs.
  EXPECT_LT(told, 0.25 * one_rank);
  // Telling it the busiest rank took half the tokens and positions doubles its attention FLOPs.
  spread.prefill_rank_token_share = 0.5;
  spread.prefill_rank_attended_share = 0.5;
  EXPECT_NEAR(m.step(spread).parts[kAttention].flops.value() / told, 2.0, 1e-12);
  // Without DP attention the shares are ignored: every rank holds its heads of every token.
  const StepModel plain = make("deepseek-r1", "gb300-nvl72", tp(8, 8), "fp8");
  IterationShape even;
  for (int i = 0; i < 4; ++i) even.add_prefill_chunk(2048, 0, true);
  const double before = plain.step(even).total.value();
  even.prefill_rank_token_share = even.prefill_rank_attended_share = 0.1;
  EXPECT_EQ(plain.step(even).total.value(), before);
}

TEST(PerfStep_Invariants, PipelineAndDataParallelAttention_ConserveWork) {
  // Splitting a replica's layers into stages leaves the per-token FLOPs of the replica unchanged.
  const StepModel one = make("llama-3.3-70b", "gb200-nvl72", tp(4), "bf16");
  const StepModel two = make("llama-3.3-70b", "gb200-nvl72", tp(4, 1, 2), "bf16");
  const auto s = IterationShape::decode(2, 2 * 1000.0);
  // Per XPU: half the layers, each microbatch of one sequence: total = 2 stages x per-XPU FLOPs.
  EXPECT_NEAR(two.step(s).flops.value() * 2, one.step(s).flops.value(),
              1e-6 * one.step(s).flops.value());
}

}  // namespace
}  // namespace racktwin::perf

namespace racktwin::perf {
namespace {

TEST(PerfStep_Invariants, AddingWork_NeverMakesAStepFaster) {
  // Every structurally valid layout of sizes 8 and 16 (DP attention included) on a few systems.
  for (const char* system : {"jalapeno-a0", "gb300-nvl72", "mi355x-8"}) {
    for (const auto& [mid, mp] : shipped_catalog().models) {
      const Model& m = *mp;
      for (int t : {8, 16}) {
        for (int e : {1, t}) {
          for (bool dpa : {false, true}) {
            auto sm = StepModel::create(m, sys(system), shipped_catalog(), tp(t, e, 1, dpa),
                                        best_precision(m, sys(system), shipped_catalog()), bare());
            if (!sm) continue;
            const int w = m.attention.sliding_window.value_or(0);
            IterationShape prefill;
            prefill.add_prefill_chunk(8192, 0, true, w);
            double prev = sm->step(prefill).total.value();
            for (double k : {1.0, 7.0, 31.0, 127.0}) {
              IterationShape mixed = IterationShape::decode(k, k * 8192);
              mixed.add_prefill_chunk(8192, 0, true, w);
              const double t_mixed = sm->step(mixed).total.value();
              EXPECT_GE(t_mixed, prev * (1 - 1e-12))
                  << system << " " << mid << " " << tp(t, e, 1, dpa).label() << " +" << k;
              prev = t_mixed;
            }
          }
        }
      }
    }
  }
}

TEST(PerfStep_HandChecked, MoeImbalance_OnlyWithExpertParallelism) {
  Efficiency skewed = bare();
  skewed.moe_imbalance = 1.5;
  const auto s = IterationShape::decode(64, 64 * 1000.0);
  const double flat =
      make("deepseek-r1", "gb300-nvl72", tp(8, 1), "fp4").step(s).parts[kMoe].flops.value();
  const double same =
      make("deepseek-r1", "gb300-nvl72", tp(8, 1), "fp4", skewed).step(s).parts[kMoe].flops.value();
  EXPECT_DOUBLE_EQ(flat, same);  // ep = 1: every rank has a slice of every expert
  const double ep_flat =
      make("deepseek-r1", "gb300-nvl72", tp(8, 8), "fp4").step(s).parts[kMoe].flops.value();
  const double ep_skew =
      make("deepseek-r1", "gb300-nvl72", tp(8, 8), "fp4", skewed).step(s).parts[kMoe].flops.value();
  EXPECT_GT(ep_skew, ep_flat);
}

TEST(PerfStep_HandChecked, GqaBeyondKvHeads_ReplicatesKvProjections) {
  // Llama 3.3 70B has 8 KV heads: at tp 16 each rank holds 1/16 of Q and O but 1/8 of K and V.
  const StepModel m = make("llama-3.3-70b", "gb200-nvl72", tp(16), "bf16");
  const auto b = m.step(IterationShape::decode(1, 1));
  const double h = 8192, q_o = 2 * h * 64 * 128, kv = 2 * h * 8 * 128;
  const double per_rank = q_o / 16 + kv / 8;
  // Attention bytes: 80 layers of weights (BF16) + KV (1 token read + 1 written, 2 x 8 x 128 x 2 B
  // per layer, 1/8 on this rank) + 3 activation passes over 8192 BF16 values.
  const double expected = 80 * (per_rank * 2 + 2 * (2 * 8 * 128 * 2.0) / 8 + 3 * h * 2);
  EXPECT_NEAR(b.parts[kAttention].bytes.value() / expected, 1.0, 1e-12);
}

TEST(PerfStep_HandChecked, SeqOverhead_CountsTheBusiestSchedulersSequences) {
  // 100 us per sequence: 37 decode sequences and 3 prefill chunks cost 40 x 100 us on the one
  // scheduler of a replica; under DP attention over 8 ranks the busiest rank schedules
  // ceil(37 / 8) = 5 decode sequences and ceil(3 / 8) = 1 chunk, so 6 x 100 us.
  Efficiency host = bare();
  host.seq_overhead = Seconds(100e-6);
  IterationShape s = IterationShape::decode(37, 37 * 2000.0);
  for (int i = 0; i < 3; ++i) s.add_prefill_chunk(512, 0, true);
  for (const bool dpa : {false, true}) {
    const Layout l = tp(8, 8, 1, dpa);
    const double without = make("deepseek-r1", "gb300-nvl72", l, "fp4").step(s).overhead.value();
    const Breakdown with = make("deepseek-r1", "gb300-nvl72", l, "fp4", host).step(s);
    EXPECT_NEAR(with.overhead.value() - without, (dpa ? 6 : 40) * 100e-6, 1e-12) << dpa;
    EXPECT_DOUBLE_EQ(with.total.value(), with.compute.value() + with.memory.value() +
                                             with.communication.value() + with.overhead.value());
  }
  // The cost grows with the batch and stays off the roofline (host work is not hardware work).
  const StepModel m = make("gpt-oss-120b", "h100-hgx", tp(1), "fp4", host);
  const Breakdown small = m.step(IterationShape::decode(8, 8 * 1000.0));
  const Breakdown large = m.step(IterationShape::decode(256, 256 * 1000.0));
  EXPECT_NEAR(large.overhead.value() - small.overhead.value(), 248 * 100e-6, 1e-12);
  EXPECT_DOUBLE_EQ(large.roofline.value(), make("gpt-oss-120b", "h100-hgx", tp(1), "fp4")
                                               .step(IterationShape::decode(256, 256 * 1000.0))
                                               .roofline.value());
}

TEST(PerfStep_Invariants, EmptyIteration_CostsNothing) {
  const StepModel m = make("deepseek-r1", "jalapeno-a0", tp(8, 8, 1, true), "fp4");
  const Breakdown b = m.step(IterationShape{});
  EXPECT_DOUBLE_EQ(b.total.value(), 0.0);
  EXPECT_DOUBLE_EQ(b.hbm_bytes.value(), 0.0);
}

TEST(PerfStep_HandChecked, PipelineStages_HoldTheirOwnLayers) {
  // DeepSeek-R1 at pp 2: stage 0 holds 31 layers (the 3 dense ones first) and the embeddings,
  // stage 1 holds 30 MoE layers and the head; the fuller of the two decides.
  const StepModel one = make("deepseek-r1", "jalapeno-a0", tp(8, 8), "fp4");
  const StepModel two = make("deepseek-r1", "jalapeno-a0", tp(8, 8, 2), "fp4");
  const double h = 7168;
  const double attn = (7168.0 * 1536 + 7168.0 * 576) +
                      (1536.0 * 128 * 192 + 512.0 * 128 * 256 + 128.0 * 128 * 7168) / 8;
  const double moe = 32 * 3 * h * 2048 * 4.5 / 8 + 3 * h * 2048 * 1.0 / 8 + h * 256 * 2;
  const double dense = 3 * h * 18432 * 1.0 / 8;
  const double emb = 129280 * h * 2.0 / 8;
  const double stage0 = 31 * attn + 3 * dense + 28 * moe + emb;
  const double stage1 = 30 * attn + 30 * moe + emb;  // the head is the same size as the embeddings
  EXPECT_NEAR(two.weights_per_xpu().value() / std::max(stage0, stage1), 1.0, 1e-12);
  EXPECT_NEAR(one.weights_per_xpu().value() / (61 * attn + 3 * dense + 58 * moe + 2 * emb), 1.0,
              1e-12);
}

}  // namespace
}  // namespace racktwin::perf
