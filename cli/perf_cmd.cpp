// racktwin perf: one iteration's time and breakdown; racktwin layouts: valid layouts and KV
// capacity.

#include <fmt/core.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "core/perf/memory.hpp"
#include "core/perf/step.hpp"

namespace racktwin::cli {
namespace {

using json = nlohmann::ordered_json;

struct Target {
  const System* system = nullptr;
  const Model* model = nullptr;
  std::string precision;
  const EfficiencyPrior* prior = nullptr;
};

// Resolves --system, --model and --precision; prints the problem and returns nullopt on bad input.
std::optional<Target> resolve(const Catalog& cat, const std::string& system,
                              const std::string& model, const std::string& precision) {
  Target t;
  t.system = cat.find_system(system);
  if (t.system == nullptr) {
    fmt::print(stderr, "racktwin: unknown system '{}'{}; 'racktwin catalog list' shows all\n",
               system, did_you_mean(system, cat.system_ids()));
    return std::nullopt;
  }
  t.model = cat.find_model(model);
  if (t.model == nullptr) {
    fmt::print(stderr, "racktwin: unknown model '{}'{}; 'racktwin catalog list' shows all\n", model,
               did_you_mean(model, cat.model_ids()));
    return std::nullopt;
  }
  t.precision = precision.empty() ? perf::best_precision(*t.model, *t.system, cat) : precision;
  if (!t.model->variants.contains(t.precision)) {
    std::vector<std::string> names;
    for (const auto& [k, _] : t.model->variants) names.push_back(k);
    fmt::print(stderr, "racktwin: {} has no '{}' weight variant{}; it has: {}\n", model,
               t.precision, did_you_mean(t.precision, names), fmt::join(names, ", "));
    return std::nullopt;
  }
  t.prior = cat.efficiency_prior_for(t.system->id);
  if (t.prior == nullptr) {
    fmt::print(stderr,
               "racktwin: the catalog has no efficiency prior for {} and no 'default' prior\n",
               system);
    return std::nullopt;
  }
  return t;
}

std::string ms(Seconds s) {
  return fmt::format("{:.4f} ms", s.value() * 1e3);
}
std::string pct(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100.0 * part / whole) : "-";
}
std::string gb(Bytes b) {
  return fmt::format("{:.2f} GB", b.value() / 1e9);
}

std::string variant_text(const Model& m, const std::string& precision) {
  const auto& v = m.variants.at(precision);
  std::string s = "attention " + v.attention;
  if (!v.dense_ffn.empty()) s += ", dense FFN " + v.dense_ffn;
  if (!v.routed_experts.empty()) s += ", experts " + v.routed_experts;
  s += ", KV " + v.kv_cache;
  return s;
}

json efficiency_json(const perf::Efficiency& e) {
  return {{"mfu", e.mfu},
          {"mbu", e.mbu},
          {"comm_eff", e.comm_eff},
          {"alpha_s", e.alpha.value()},
          {"overlap", e.overlap},
          {"layer_overhead_s", e.layer_overhead.value()},
          {"step_overhead_s", e.step_overhead.value()},
          {"moe_imbalance", e.moe_imbalance},
          {"request_latency_s", e.request_latency.value()}};
}

struct PerfArgs {
  std::string system, model, layout, precision;
  double batch = 1, context = 0, prefill = 0, prefill_context = 0;
  int draft = 0;
  double acceptance = 1.0;
  bool json = false;
};

int run_perf(const Catalog& cat, const PerfArgs& a) {
  auto resolved = resolve(cat, a.system, a.model, a.precision);
  if (!resolved) return kExitInput;
  const Target& t = *resolved;
  auto layout = parse_layout(a.layout);
  if (!layout) {
    fmt::print(stderr, "racktwin: --layout: {}\n", layout.error());
    return kExitInput;
  }
  const perf::Speculation spec{a.draft, a.acceptance};
  auto sm = perf::StepModel::create(*t.model, *t.system, cat, *layout, t.precision, t.prior->values,
                                    spec);
  if (!sm) {
    fmt::print(stderr, "racktwin: layout {} cannot run {} on {}: {}\n", layout->label(), a.model,
               a.system, sm.error());
    return kExitInput;
  }
  perf::IterationShape shape = perf::IterationShape::decode(a.batch, a.batch * a.context);
  if (a.prefill > 0)
    shape.add_prefill_chunk(a.prefill, a.prefill_context, true,
                            t.model->attention.sliding_window.value_or(0));
  const perf::Breakdown b = sm->step(shape);
  const double total = b.total.value();
  const double out_tokens = a.batch * b.tokens_per_decode_seq;
  const int xpus = layout->xpus();

  if (a.json) {
    json parts = json::object();
    for (std::size_t i = 0; i < perf::kPartCount; ++i) {
      const auto& p = b.parts[i];
      parts[perf::kPartNames[i]] = {{"compute_s", p.compute.value()},
                                    {"memory_s", p.memory.value()},
                                    {"flops", p.flops.value()},
                                    {"hbm_bytes", p.bytes.value()}};
    }
    json j{{"system", a.system},
           {"model", a.model},
           {"layout", layout->label()},
           {"xpus", xpus},
           {"precision", t.precision},
           {"efficiency_prior", t.prior->id},
           {"efficiency", efficiency_json(t.prior->values)},
           {"shape",
            {{"decode_seqs", a.batch},
             {"context", a.context},
             {"prefill_tokens", a.prefill},
             {"prefill_context", a.prefill_context}}},
           {"total_s", total},
           {"compute_s", b.compute.value()},
           {"memory_s", b.memory.value()},
           {"communication_s", b.communication.value()},
           {"communication_raw_s", b.comm_raw.value()},
           {"overhead_s", b.overhead.value()},
           {"bound", perf::to_string(b.bound)},
           {"flops_per_xpu", b.flops.value()},
           {"hbm_bytes_per_xpu", b.hbm_bytes.value()},
           {"comm_bytes_per_xpu", b.comm_bytes.value()},
           {"tokens_per_decode_seq", b.tokens_per_decode_seq},
           {"decode_tokens_per_s_per_xpu", total > 0 ? out_tokens / total / xpus : 0.0},
           {"parts", parts}};
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }

  fmt::print("{} on {}, layout {} ({} XPUs), weights {} ({})\n", a.model, a.system, layout->label(),
             xpus, t.precision, variant_text(*t.model, t.precision));
  fmt::print("iteration: {:g} decode sequences at context {:g}", a.batch, a.context);
  if (a.prefill > 0)
    fmt::print(" + a prefill chunk of {:g} tokens after {:g}", a.prefill, a.prefill_context);
  if (a.draft > 0)
    fmt::print("; speculation {} draft tokens, acceptance {:g}", a.draft, a.acceptance);
  const auto& e = t.prior->values;
  fmt::print(
      "\nefficiency: prior '{}' (mfu {:g}, mbu {:g}, comm_eff {:g}, alpha {}, overlap {:g}, layer "
      "{}, step {}, "
      "MoE imbalance {:g})\n\n",
      t.prior->id, e.mfu, e.mbu, e.comm_eff, format(e.alpha), e.overlap, format(e.layer_overhead),
      format(e.step_overhead), e.moe_imbalance);
  Table tt({"term", "time", "share"});
  tt.add({"compute-bound ops", ms(b.compute), pct(b.compute.value(), total)});
  tt.add({"memory-bound ops", ms(b.memory), pct(b.memory.value(), total)});
  tt.add({"communication", ms(b.communication), pct(b.communication.value(), total)});
  tt.add({"overhead", ms(b.overhead), pct(b.overhead.value(), total)});
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
  if (a.batch > 0 && total > 0)
    fmt::print(
        "decode: {:.4f} ms per output token, {:.0f} output tokens/s per replica, {:.0f} per XPU\n",
        total / b.tokens_per_decode_seq * 1e3, out_tokens / total, out_tokens / total / xpus);
  return kExitOk;
}

struct LayoutsArgs {
  std::string system, model, precision;
  std::vector<int> xpus;
  int max_pp = 8;
  double min_context = 9216;
  bool all = false, json = false;
};

int run_layouts(const Catalog& cat, const LayoutsArgs& a) {
  auto resolved = resolve(cat, a.system, a.model, a.precision);
  if (!resolved) return kExitInput;
  const Target& t = *resolved;
  perf::LayoutQuery q;
  q.replica_xpus = a.xpus;
  q.max_pp = a.max_pp;
  q.precision = t.precision;
  q.min_tokens = a.min_context;
  const auto options = perf::enumerate_layouts(*t.model, *t.system, cat, q);

  if (a.json) {
    json arr = json::array();
    for (const auto& o : options) {
      arr.push_back({{"layout", o.layout.label()},
                     {"xpus", o.layout.xpus()},
                     {"tp", o.layout.tp},
                     {"ep", o.layout.ep},
                     {"pp", o.layout.pp},
                     {"dp_attention", o.layout.dp_attention},
                     {"valid", o.valid},
                     {"reason", o.reason},
                     {"weights_per_xpu_bytes", o.memory.weights.value()},
                     {"kv_bytes_per_token_per_xpu", o.memory.kv_per_token.value()},
                     {"kv_capacity_tokens", o.memory.kv_tokens}});
    }
    json j{{"system", a.system},
           {"model", a.model},
           {"precision", t.precision},
           {"min_context", a.min_context},
           {"layouts", arr}};
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }

  const Chip& chip = *t.system->chip;
  fmt::print(
      "{} on {}: weights {} ({}); {} HBM per XPU, {:.0f}% usable less {} reserve; valid layouts "
      "need room "
      "for one {:g}-token sequence\n\n",
      a.model, a.system, t.precision, variant_text(*t.model, t.precision),
      format(chip.hbm_capacity), perf::MemoryParams{}.memory_utilization * 100,
      format(perf::MemoryParams{}.runtime_reserve), a.min_context);
  Table v(
      {"layout", "XPUs", "weights/XPU", "KV/token/XPU", "KV capacity (tokens)", "seqs at context"});
  int valid = 0;
  std::map<std::string, int> reasons;
  std::map<std::string, std::string> example;
  for (const auto& o : options) {
    if (o.valid) {
      ++valid;
      v.add({o.layout.label(), std::to_string(o.layout.xpus()), gb(o.memory.weights),
             fmt::format("{:.1f} KB", o.memory.kv_per_token.value() / 1e3),
             fmt::format("{:.0f}", o.memory.kv_tokens),
             fmt::format("{:.0f}", o.memory.kv_tokens / a.min_context)});
    } else {
      std::string kind = o.reason.substr(0, o.reason.find(':'));
      if (kind.find("not divisible") != std::string::npos ||
          kind.find("do not divide") != std::string::npos ||
          kind.find("does not divide") != std::string::npos)
        kind = "not divisible";
      reasons[kind] += 1;
      if (!example.contains(kind)) example[kind] = o.layout.label() + ": " + o.reason;
    }
  }
  fmt::print("Valid layouts ({})\n{}", valid, valid > 0 ? v.render({1, 2, 3, 4, 5}) : "  none\n");
  const int rejected = static_cast<int>(options.size()) - valid;
  fmt::print("\nRejected layouts ({})\n", rejected);
  if (a.all) {
    Table r({"layout", "XPUs", "reason"});
    for (const auto& o : options)
      if (!o.valid) r.add({o.layout.label(), std::to_string(o.layout.xpus()), o.reason});
    fmt::print("{}", r.render({1}));
  } else {
    for (const auto& [kind, n] : reasons)
      fmt::print("  {} x {}, e.g. {}\n", n, kind, example[kind]);
    if (rejected > 0) fmt::print("  (--all lists every rejected layout with its reason)\n");
  }
  return kExitOk;
}

}  // namespace

void add_perf_commands(CLI::App& app, Commands& out) {
  auto pa = std::make_shared<PerfArgs>();
  auto* perf = app.add_subcommand(
      "perf", "Time one engine iteration of a model replica, with its breakdown and bound");
  perf->add_option("--system", pa->system, "System id")->required();
  perf->add_option("--model", pa->model, "Model id")->required();
  perf->add_option("--layout", pa->layout, "Parallel layout, e.g. tp8, tp8-ep8-dpa, tp4-pp2")
      ->required();
  perf->add_option("--batch", pa->batch, "Decode sequences in the iteration")
      ->check(CLI::Range(0.0, 1e7))
      ->default_val(1);
  perf->add_option("--context", pa->context, "Context length of each decode sequence, tokens")
      ->check(CLI::Range(0.0, 1e8))
      ->default_val(0);
  perf->add_option("--prefill", pa->prefill, "Tokens of one prefill chunk in the iteration")
      ->check(CLI::Range(0.0, 1e8));
  perf->add_option("--prefill-context", pa->prefill_context,
                   "Tokens already cached before the prefill chunk")
      ->check(CLI::Range(0.0, 1e8));
  perf->add_option("--precision", pa->precision, "Weight variant (default: the system's best)");
  perf->add_option("--draft", pa->draft, "Speculative / MTP draft tokens per step")
      ->check(CLI::Range(0, 16));
  perf->add_option("--acceptance", pa->acceptance,
                   "Mean tokens emitted per sequence per step with --draft")
      ->check(CLI::Range(1.0, 17.0));
  perf->add_flag("--json", pa->json, "Machine-readable output");
  out.push_back({perf, [pa](const Catalog& cat) { return run_perf(cat, *pa); }});

  auto la = std::make_shared<LayoutsArgs>();
  auto* layouts = app.add_subcommand(
      "layouts", "List the valid parallel layouts of a model on a system, with KV capacity");
  layouts->add_option("--system", la->system, "System id")->required();
  layouts->add_option("--model", la->model, "Model id")->required();
  layouts
      ->add_option("--xpus", la->xpus,
                   "Replica sizes to try (default: powers of two, tray, rack, domain)")
      ->check(CLI::Range(1, 1 << 20));
  layouts->add_option("--max-pp", la->max_pp, "Deepest pipeline tried")
      ->check(CLI::Range(1, 1024))
      ->default_val(8);
  layouts
      ->add_option("--min-context", la->min_context,
                   "KV tokens a valid layout must hold (one longest sequence)")
      ->check(CLI::Range(1.0, 1e9))
      ->default_val(9216);
  layouts->add_option("--precision", la->precision, "Weight variant (default: the system's best)");
  layouts->add_flag("--all", la->all, "List every rejected layout with its reason");
  layouts->add_flag("--json", la->json, "Machine-readable output");
  out.push_back({layouts, [la](const Catalog& cat) { return run_layouts(cat, *la); }});
}

}  // namespace racktwin::cli
