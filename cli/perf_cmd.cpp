// racktwin perf: one iteration's time and breakdown; racktwin layouts: valid layouts and KV
// capacity. The figures come from app/perf; this file parses and renders.

#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include "app/perf.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"

namespace racktwin::cli {
namespace {

std::string ms(Seconds s) {
  return fmt::format("{:.4f} ms", s.value() * 1e3);
}
std::string pct(Seconds part, Seconds whole) {
  return whole.value() > 0 ? fmt::format("{:.1f}%", 100.0 * part.value() / whole.value()) : "-";
}

// The problem with advice for the command line.
int perf_error(const app::Problem& p) {
  using Input = app::Problem::Input;
  if (p.input == Input::system || p.input == Input::model)
    return input_error(p.message + "; 'racktwin catalog list' shows all");
  return input_error(p.input == Input::layout ? "--layout: " + p.message : p.message);
}

void print_iteration(const app::IterationTime& t) {
  const app::PerfRequest& a = t.request;
  const perf::Breakdown& b = t.breakdown;
  fmt::print("{} on {}, layout {} ({} XPUs), weights {} ({})\n", a.model, a.system,
             t.layout.label(), t.xpus, t.precision, t.weights);
  fmt::print("iteration: {:g} decode sequences at context {:g}", a.batch, a.context);
  if (a.prefill > 0)
    fmt::print(" + a prefill chunk of {:g} tokens after {:g}", a.prefill, a.prefill_context);
  if (a.draft > 0)
    fmt::print("; speculation {} draft tokens, acceptance {:g}", a.draft, a.acceptance);
  const auto& e = t.efficiency;
  const std::string origin = t.efficiency_origin == "calibrated"
                                 ? "calibrated for " + a.system
                                 : t.efficiency_origin.starts_with("family ")
                                       ? "calibrated for the family '" + t.prior + "'"
                                       : "prior '" + t.prior + "'";
  fmt::print(
      "\nefficiency: {}{} (mfu {:g}, mbu {:g}, comm_eff {:g}, alpha {}, overlap {:g}, layer {}, step "
      "{}, MoE imbalance {:g})\n\n",
      origin, a.prior ? ", as asked" : ", as run uses", e.mfu, e.mbu, e.comm_eff, format(e.alpha),
      e.overlap, format(e.layer_overhead), format(e.step_overhead), e.moe_imbalance);
  Table tt({"term", "time", "share"});
  tt.add({"compute-bound ops", ms(b.compute), pct(b.compute, b.total)});
  tt.add({"memory-bound ops", ms(b.memory), pct(b.memory, b.total)});
  tt.add({"communication", ms(b.communication), pct(b.communication, b.total)});
  tt.add({"overhead", ms(b.overhead), pct(b.overhead, b.total)});
  tt.add({"total", ms(b.total), "100%"});
  fmt::print("{}", tt.render({1, 2}));
  fmt::print("bound: {}\n\n", perf::to_string(b.bound));
  Table pt({"part", "compute", "memory", "FLOPs", "HBM bytes"});
  for (std::size_t i = 0; i < perf::kPartCount; ++i) {
    const auto& p = b.parts[i];
    if (p.flops.value() == 0 && p.bytes.value() == 0) continue;
    pt.add({perf::kPartNames[i], ms(p.compute), ms(p.memory), format(p.flops), format(p.bytes)});
  }
  fmt::print("{}", pt.render({1, 2, 3, 4}));
  fmt::print(
      "\nper XPU: {} computed, {} read/written in HBM, {} sent; communication before overlap {}\n",
      format(b.flops), format(b.hbm_bytes), format(b.comm_bytes), ms(b.comm_raw));
  if (a.batch > 0 && b.total.value() > 0)
    fmt::print(
        "decode: {:.4f} ms per output token, {:.0f} output tokens/s per replica, {:.0f} per XPU\n",
        t.time_per_output_token.value() * 1e3, t.output_tokens_per_s,
        t.output_tokens_per_s_per_xpu);
}

void print_layouts(const app::LayoutList& l, bool all) {
  const app::LayoutsRequest& a = l.request;
  fmt::print(
      "{} on {}: weights {} ({}); {} HBM per XPU, {:.0f}% usable less {} reserve; valid layouts "
      "need room "
      "for one {:g}-token sequence\n\n",
      a.model, a.system, l.precision, l.weights, format(l.hbm), l.memory_utilization * 100,
      format(l.runtime_reserve), a.min_context);
  Table v(
      {"layout", "XPUs", "weights/XPU", "KV/token/XPU", "KV capacity (tokens)", "seqs at context"});
  Table r({"layout", "XPUs", "reason"});
  for (const auto& [o, seqs] : l.layouts) {
    if (o.valid)
      v.add({o.layout.label(), std::to_string(o.layout.xpus()),
             fmt::format("{:.2f} GB", o.memory.weights.value() / 1e9),
             fmt::format("{:.1f} KB", o.memory.kv_per_token.value() / 1e3),
             fmt::format("{:.0f}", o.memory.kv_tokens), fmt::format("{:.0f}", seqs)});
    else
      r.add({o.layout.label(), std::to_string(o.layout.xpus()), o.reason});
  }
  fmt::print("Valid layouts ({})\n{}", l.valid,
             l.valid > 0 ? v.render({1, 2, 3, 4, 5}) : "  none\n");
  const std::size_t rejected = l.layouts.size() - static_cast<std::size_t>(l.valid);
  fmt::print("\nRejected layouts ({})\n", rejected);
  if (all) return fmt::print("{}", r.render({1}));
  for (const auto& g : l.rejections)
    fmt::print("  {} x {}, e.g. {}\n", g.count, g.label, g.example);
  if (rejected > 0) fmt::print("  (--all lists every rejected layout with its reason)\n");
}

}  // namespace

void add_perf_commands(CLI::App& app, Commands& out) {
  struct PerfArgs {
    app::PerfRequest request;
    bool json = false;
  };
  auto pa = std::make_shared<PerfArgs>();
  app::PerfRequest& p = pa->request;
  auto* perf = app.add_subcommand(
      "perf", "Time one engine iteration of a model replica, with its breakdown and bound");
  perf->add_option("--system", p.system, "System id")->required();
  perf->add_option("--model", p.model, "Model id")->required();
  perf->add_option("--layout", p.layout, "Parallel layout, e.g. tp8, tp8-ep8-dpa, tp4-pp2")
      ->required();
  perf->add_option("--batch", p.batch, "Decode sequences in the iteration")
      ->check(CLI::Range(0.0, 1e7))
      ->default_val(1);
  perf->add_option("--context", p.context, "Context length of each decode sequence, tokens")
      ->check(CLI::Range(0.0, 1e8))
      ->default_val(0);
  perf->add_option("--prefill", p.prefill, "Tokens of one prefill chunk in the iteration")
      ->check(CLI::Range(0.0, 1e8));
  perf->add_option("--prefill-context", p.prefill_context,
                   "Tokens already cached before the prefill chunk")
      ->check(CLI::Range(0.0, 1e8));
  perf->add_option("--precision", p.precision, "Weight variant (default: the system's best)");
  perf->add_option("--draft", p.draft, "Speculative / MTP draft tokens per step")
      ->check(CLI::Range(0, 16));
  perf->add_option("--acceptance", p.acceptance,
                   "Mean tokens emitted per sequence per step with --draft")
      ->check(CLI::Range(1.0, 17.0));
  perf->add_flag("--prior", p.prior,
                 "Use the system's efficiency prior, not the calibrated efficiencies run uses");
  perf->add_flag("--json", pa->json, "Machine-readable output");
  out.push_back({perf, [pa](const Catalog& cat) {
                   const auto t = app::iteration_time(cat, pa->request);
                   if (!t) return perf_error(t.error());
                   pa->json ? print_json(to_json(*t)) : print_iteration(*t);
                   return kExitOk;
                 }});

  struct LayoutsArgs {
    app::LayoutsRequest request;
    bool all = false, json = false;
  };
  auto la = std::make_shared<LayoutsArgs>();
  app::LayoutsRequest& q = la->request;
  auto* layouts = app.add_subcommand(
      "layouts", "List the valid parallel layouts of a model on a system, with KV capacity");
  layouts->add_option("--system", q.system, "System id")->required();
  layouts->add_option("--model", q.model, "Model id")->required();
  layouts
      ->add_option("--xpus", q.xpus,
                   "Replica sizes to try (default: powers of two, tray, rack, domain)")
      ->check(CLI::Range(1, 1 << 20));
  layouts->add_option("--max-pp", q.max_pp, "Deepest pipeline tried")
      ->check(CLI::Range(1, 1024))
      ->default_val(8);
  layouts
      ->add_option("--min-context", q.min_context,
                   "KV tokens a valid layout must hold (one longest sequence)")
      ->check(CLI::Range(1.0, 1e9))
      ->default_val(9216);
  layouts->add_option("--precision", q.precision, "Weight variant (default: the system's best)");
  layouts->add_flag("--all", la->all, "List every rejected layout with its reason");
  layouts->add_flag("--json", la->json, "Machine-readable output");
  out.push_back({layouts, [la](const Catalog& cat) {
                   const auto l = app::layout_list(cat, la->request);
                   if (!l) return perf_error(l.error());
                   la->json ? print_json(to_json(*l)) : print_layouts(*l, la->all);
                   return kExitOk;
                 }});
}

}  // namespace racktwin::cli
