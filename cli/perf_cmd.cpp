// racktwin perf: one iteration's time and breakdown; racktwin layouts: valid layouts and KV
// capacity. The figures come from app/perf; this file parses and renders.

#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include "app/describe.hpp"
#include "app/perf.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"

namespace racktwin::cli {
namespace {

// The problem with advice for the command line.
int perf_error(const app::Problem& p) {
  using Input = app::Problem::Input;
  if (p.input == Input::system || p.input == Input::model)
    return input_error(p.message + "; 'racktwin catalog list' shows all");
  return input_error(p.input == Input::layout ? "--layout: " + p.message : p.message);
}

void print_layouts(const app::LayoutList& l, bool all) {
  print_sections(app::describe(l, all));
  if (!all && static_cast<int>(l.layouts.size()) > l.valid)
    fmt::print("  (--all lists every rejected layout with its reason)\n");
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
                   pa->json ? print_json(to_json(*t)) : print_sections(app::describe(*t));
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
