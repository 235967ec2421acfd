// One iteration's breakdown and a model's layouts as sections (app/describe.hpp).

#include <fmt/core.h>

#include "app/describe.hpp"

namespace racktwin::app {
namespace {

std::string ms(Seconds s) {
  return fmt::format("{:.4f} ms", s.value() * 1e3);
}
std::string pct(Seconds part, Seconds whole) {
  return whole.value() > 0 ? fmt::format("{:.1f}%", 100.0 * part.value() / whole.value()) : "-";
}

// What the iteration holds and which efficiencies time it.
std::string iteration_title(const IterationTime& t) {
  const PerfRequest& a = t.request;
  std::string s = fmt::format("{} on {}, layout {} ({} XPUs), weights {} ({})\n", a.model,
                              a.system, t.layout.label(), t.xpus, t.precision, t.weights);
  s += fmt::format("iteration: {:g} decode sequences at context {:g}", a.batch, a.context);
  if (a.prefill > 0)
    s += fmt::format(" + a prefill chunk of {:g} tokens after {:g}", a.prefill, a.prefill_context);
  if (a.draft > 0)
    s += fmt::format("; speculation {} draft tokens, acceptance {:g}", a.draft, a.acceptance);
  const auto& e = t.efficiency;
  const std::string origin = t.efficiency_origin == "calibrated"
                                 ? "calibrated for " + a.system
                                 : t.efficiency_origin.starts_with("family ")
                                       ? "calibrated for the family '" + t.prior + "'"
                                       : "prior '" + t.prior + "'";
  return s + fmt::format(
                 "\nefficiency: {}{} (mfu {:g}, mbu {:g}, attention core {:g}, comm_eff {:g}, "
                 "alpha {}, overlap {:g}, "
                 "layer {}, step {}, per sequence {}, MoE imbalance {:g}, dequantising GEMMs {:g}; "
                 "a GEMM of m rows at m / (m + {:g}) of its rate)",
                 origin, a.prior ? ", as asked" : ", as run uses", e.mfu, e.mbu, e.attn_eff,
                 e.comm_eff, format(e.alpha), e.overlap, format(e.layer_overhead),
                 format(e.step_overhead), format(e.seq_overhead), e.moe_imbalance, e.dequant_eff,
                 perf::kGemmHalfRows);
}

Section terms_section(const perf::Breakdown& b) {
  return {.table = {{"term", "time", "share"},
                    {"compute-bound ops", ms(b.compute), pct(b.compute, b.total)},
                    {"memory-bound ops", ms(b.memory), pct(b.memory, b.total)},
                    {"communication", ms(b.communication), pct(b.communication, b.total)},
                    {"overhead", ms(b.overhead), pct(b.overhead, b.total)},
                    {"total", ms(b.total), "100%"}},
          .right = {1, 2}};
}

Section parts_section(const perf::Breakdown& b) {
  Section s{.table = {{"part", "compute", "memory", "FLOPs", "HBM bytes"}}, .right = {1, 2, 3, 4}};
  for (std::size_t i = 0; i < perf::kPartCount; ++i) {
    const auto& p = b.parts[i];
    if (p.flops.value() == 0 && p.bytes.value() == 0) continue;
    s.table.push_back(
        {perf::kPartNames[i], ms(p.compute), ms(p.memory), format(p.flops), format(p.bytes)});
  }
  return s;
}

}  // namespace

Sections describe(const IterationTime& t) {
  const perf::Breakdown& b = t.breakdown;
  std::string totals = fmt::format(
      "per XPU: {} computed, {} read/written in HBM, {} sent; communication before overlap {}",
      format(b.flops), format(b.hbm_bytes), format(b.comm_bytes), ms(b.comm_raw));
  if (t.request.batch > 0 && b.total.value() > 0)
    totals += fmt::format(
        "\ndecode: {:.4f} ms per output token, {:.0f} output tokens/s per replica, {:.0f} per XPU",
        t.time_per_output_token.value() * 1e3, t.output_tokens_per_s,
        t.output_tokens_per_s_per_xpu);
  const std::string bound =
      b.roofline.value() > 0
          ? fmt::format("bound: {}; roofline {} (peak FLOP/s and HBM bandwidth, no communication "
                        "or overhead): this step takes {:.2f}x its roofline",
                        perf::to_string(b.bound), ms(b.roofline), b.total / b.roofline)
          : "bound: " + perf::to_string(b.bound);
  return {{.title = iteration_title(t), .gap = false},
          terms_section(b),
          {.title = bound, .gap = false},
          parts_section(b),
          {.title = totals}};
}

Sections describe(const LayoutList& l, bool every_rejection) {
  const LayoutsRequest& a = l.request;
  Section head{.title = fmt::format("{} on {}: weights {} ({}); {} HBM per XPU, {:.0f}% usable "
                                    "less {} reserve; valid layouts need room for one "
                                    "{:g}-token sequence",
                                    a.model, a.system, l.precision, l.weights, format(l.hbm),
                                    l.memory_utilization * 100, format(l.runtime_reserve),
                                    a.min_context),
               .gap = false};
  Section valid{.title = fmt::format("Valid layouts ({})", l.valid),
                .table = {{"layout", "XPUs", "weights/XPU", "KV/token/XPU",
                           "KV capacity (tokens)", "seqs at context"}},
                .right = {1, 2, 3, 4, 5}};
  Section rejected{.table = {{"layout", "XPUs", "reason"}}, .right = {1}};
  for (const auto& [o, seqs] : l.layouts) {
    if (o.valid)
      valid.table.push_back({o.layout.label(), std::to_string(o.layout.xpus()),
                             fmt::format("{:.2f} GB", o.memory.weights.value() / 1e9),
                             fmt::format("{:.1f} KB", o.memory.kv_per_token.value() / 1e3),
                             fmt::format("{:.0f}", o.memory.kv_tokens),
                             fmt::format("{:.0f}", seqs)});
    else
      rejected.table.push_back({o.layout.label(), std::to_string(o.layout.xpus()), o.reason});
  }
  if (l.valid == 0) valid = {.title = valid.title, .notes = {"none"}};
  rejected.title = fmt::format("Rejected layouts ({})", rejected.table.size() - 1);
  if (!every_rejection) {
    rejected.table.clear();
    for (const auto& g : l.rejections)
      rejected.notes.push_back(fmt::format("{} x {}, e.g. {}", g.count, g.label, g.example));
  }
  return {head, valid, rejected};
}

}  // namespace racktwin::app
