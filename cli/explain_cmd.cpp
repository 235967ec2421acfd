// racktwin explain RUN METRIC [POINT]: the formula of a stored number, its inputs and their
// origins.

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <map>
#include <set>

#include "app/explain.hpp"
#include "cli/commands.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"

namespace racktwin::cli {
namespace {

struct ExplainArgs {
  std::string db;
  std::string run;
  std::string metric;
  std::int64_t point = 0;
  CLI::Option* point_option = nullptr;
  bool json = false;
};

// Six significant digits; whole numbers from 100,000 up without an exponent.
std::string num(double v) {
  if (std::abs(v) >= 1e5 && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.6g}", v);
}

std::string value_text(const app::Term& t) {
  return t.unit.empty() ? num(t.value) : num(t.value) + " " + t.unit;
}

// One term and its inputs, indented by depth: the value, then how it is obtained. A derived term
// met again (the same label, value and formula) is not derived a second time.
void print_term(const app::Term& t, int depth, std::map<std::string, app::CitedSource>& cited,
                std::set<std::string>& derived) {
  const std::string pad(static_cast<std::size_t>(depth) * 4, ' ');
  const std::string more = pad + (depth == 0 ? "  " : "    ");
  std::string head = depth == 0 ? t.metric : t.label;
  if (depth > 0 && !t.metric.empty() && t.metric != t.label) head += " [" + t.metric + "]";
  const bool again =
      !t.inputs.empty() && !derived.insert(t.label + "|" + t.formula + "|" + num(t.value)).second;
  fmt::print("{}{}{} = {}{}\n", pad, depth == 0 ? "" : "- ", head, value_text(t),
             again ? " (derived above)" : "");
  if (again) return;
  if (depth == 0 && t.label != t.metric && t.label != t.unit) fmt::print("{}({})\n", more, t.label);
  if (!t.note.empty()) fmt::print("{}{}\n", more, t.note);
  if (!t.formula.empty())
    fmt::print("{}= {}{}\n", more, t.formula, t.docs.empty() ? "" : "   [" + t.docs + "]");
  if (t.origin) fmt::print("{}from {}\n", more, t.origin->describe(t.docs, cited));
  for (const auto& x : t.inputs) print_term(x, depth + 1, cited, derived);
}

int explain(const Catalog& cat, const ExplainArgs& a) {
  auto store = open_store(resolve_db_path(a.db), db::Store::Mode::read);
  if (!store) return store.error();
  const auto id = resolve_run(*store, a.run);
  if (!id) return kExitInput;
  const auto run = store->load(*id, {.percentiles = false, .timeseries = false});
  if (!run) return kExitInput;  // removed since resolve_run found it
  app::ExplainRequest request{a.metric, std::nullopt};
  if (a.point_option->count() > 0) request.point = a.point;
  const app::Explanation e = app::explain(cat, *run, request);
  if (a.json) {
    print_json(e.to_json());
    return kExitOk;
  }
  fmt::print("run {} ('{}'), point {}: {}\n", e.run, e.scenario, e.point, e.point_label);
  if (e.peak)
    fmt::print("(no POINT given: the point where {} peaks, among the {} points that have it)\n",
               e.metric, e.compared);
  for (const auto& n : e.notes) fmt::print("note: {}\n", n);
  fmt::print("\n");
  std::map<std::string, app::CitedSource> cited;
  std::set<std::string> derived;
  print_term(e.term, 0, cited, derived);
  if (!e.plain.empty()) fmt::print("\n{}\n", e.plain);
  if (!e.stored)
    fmt::print("\nrun {} does not store {}: the value above is derived from what it stores\n",
               e.run, e.metric);
  else if (!e.matches())
    fmt::print("\nthe stored value is {} ({}): it differs from the value derived above\n",
               num(*e.stored), e.stored_as);
  else
    fmt::print("\nstored value ({}): {}, the same\n", e.stored_as, num(*e.stored));
  if (!cited.empty()) {
    fmt::print("\nSources\n");
    for (const auto& [source_id, s] : cited)
      fmt::print("  {}: {}{}\n", source_id, s.citation, s.url.empty() ? "" : " " + s.url);
  }
  return kExitOk;
}

}  // namespace

void add_explain_command(CLI::App& app, Commands& out) {
  auto a = std::make_shared<ExplainArgs>();
  auto* c = app.add_subcommand(
      "explain",
      "Where a stored number comes from: its formula and documentation section, and each input "
      "with its value and its catalog source or assumption, down to the catalog, the scenario "
      "and the simulation's outputs");
  c->add_option("RUN", a->run, "Run id (or latest)")->required();
  c->add_option("METRIC", a->metric,
                "Metric name as stored (docs/results.md section 5), e.g. tps_per_allin_mw")
      ->required();
  a->point_option = c->add_option("POINT", a->point,
                                  "Point index of the run (default: the point where the metric "
                                  "peaks)")
                        ->check(CLI::NonNegativeNumber);
  c->add_flag("--json", a->json, "The explanation as JSON");
  add_db_option(c, a->db);
  out.push_back({c, [a](const Catalog& cat) { return explain(cat, *a); }});
}

}  // namespace racktwin::cli
