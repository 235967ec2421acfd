#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "app/json.hpp"
#include "cli/commands.hpp"
#include "scenarios/scenario_loader.hpp"

namespace racktwin::cli {
namespace {

using json = nlohmann::ordered_json;

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string plural(std::size_t n, const std::string& one, const std::string& many = "") {
  return std::to_string(n) + " " + (n == 1 ? one : (many.empty() ? one + "s" : many));
}

std::string layout_text(const Layout& l) {
  return fmt::format("{} (tp {}, ep {}, pp {}{}; {} XPUs)", l.name, l.tp, l.ep, l.pp,
                     l.dp_attention ? ", DP attention" : "", l.xpus());
}

// Assumptions the selected systems (and their chips) rest on.
std::vector<std::string> assumptions_of(const Catalog& cat, const Scenario& sc) {
  std::vector<std::string> out;
  std::set<std::string> chips;
  for (const auto& id : sc.systems) {
    const System* s = cat.find_system(id);
    for (const auto& f : s->fields)
      if (f.provenance.assumption) out.push_back(id + " " + f.path + " = " + f.text);
    if (chips.insert(s->chip_id).second)
      for (const auto& f : s->chip->fields)
        if (f.provenance.assumption)
          out.push_back("chip " + s->chip_id + " " + f.path + " = " + f.text);
  }
  for (const auto& id : sc.models)
    for (const auto& f : cat.find_model(id)->fields)
      if (f.provenance.assumption) out.push_back(id + " " + f.path + " = " + f.text);
  return out;
}

}  // namespace

namespace {
int check_scenario(const Catalog& cat, const std::string& path, bool as_json) {
  auto sc = load_scenario_file(path, cat);
  if (!sc) {
    if (as_json) {
      json j{{"file", path}, {"valid", false}, {"errors", app::diagnostics_json(sc.error())}};
      fmt::print("{}\n", j.dump(2));
    } else {
      print_diagnostics(sc.error(), path);
    }
    return kExitInput;
  }
  std::vector<std::string> workloads;
  std::size_t loads =
      0;  // points per layout: concurrencies of closed loops plus rates of open loops
  for (const auto& w : sc->workloads) {
    const auto& x = w.inferencex;
    std::vector<std::string> rates;
    for (double r : x.rates) rates.push_back(fmt::format("{:g}", r));
    const std::string arrivals =
        w.kind == WorkloadKind::poisson
            ? fmt::format("open loop, Poisson at {} req/s, {} requests ({} warm-up)", join(rates),
                          x.requests, x.warmup_requests)
            : std::string("InferenceX closed loop");
    loads += w.kind == WorkloadKind::poisson ? x.rates.size()
             : w.kind == WorkloadKind::trace ? 1
                                             : sc->concurrency.size();
    if (w.kind == WorkloadKind::agentic) {
      const auto& g = w.agentic;
      workloads.push_back(fmt::format(
          "{}: agentic sessions, C clients x {} sessions of {}-{} turns, first context {}-{} "
          "tokens, tool "
          "results {}-{}, output {}-{}, pauses {:g}-{:g} s, sub-agents p={:g} x {}-{}, max context "
          "{}, "
          "weights {}",
          w.id, g.sessions_per_client, g.turns_min, g.turns_max, g.first_context_min,
          g.first_context_max, g.tool_result_min, g.tool_result_max, g.output_min, g.output_max,
          g.tool_pause_min_s, g.tool_pause_max_s, g.subagent_probability, g.subagents_min,
          g.subagents_max, g.max_context, x.precision.value_or("the system's best")));
      continue;
    }
    if (w.kind == WorkloadKind::trace) {
      std::set<std::string> sessions;
      for (const auto& q : *w.trace.requests)
        if (!q.session_id.empty()) sessions.insert(q.session_id);
      workloads.push_back(fmt::format(
          "{}: replay of {} ({} requests, {} sessions, {}-token blocks, time x{:g}, {} warm-up), "
          "weights {}",
          w.id, w.trace.file, w.trace.requests->size(), sessions.size(), w.trace.block_tokens,
          w.trace.time_scale, w.trace.warmup_requests, x.precision.value_or("the system's best")));
      continue;
    }
    workloads.push_back(fmt::format(
        "{}: {}, ISL {} / OSL {} drawn from [{:g} L, L], MTP {}, weights {}", w.id, arrivals, x.isl,
        x.osl, x.range_ratio,
        x.mtp ? (x.mtp_acceptance ? fmt::format("on (acceptance {:g})", *x.mtp_acceptance)
                                  : std::string("on (the system's acceptance)"))
              : std::string("off"),
        x.precision.value_or("the system's best")));
  }
  std::vector<std::string> conc;
  for (int c : sc->concurrency) conc.push_back(std::to_string(c));
  const auto assumed = assumptions_of(cat, *sc);
  const std::size_t points = sc->systems.size() * sc->models.size() * loads;

  if (as_json) {
    json layouts = json::array();
    for (const auto& l : sc->layouts.named)
      layouts.push_back({{"name", l.name},
                         {"tp", l.tp},
                         {"ep", l.ep},
                         {"pp", l.pp},
                         {"dp_attention", l.dp_attention}});
    json wl = json::array();
    for (const auto& w : sc->workloads)
      wl.push_back(
          {{"id", w.id},
           {"kind", w.kind == WorkloadKind::poisson   ? "poisson"
                    : w.kind == WorkloadKind::trace   ? "trace"
                    : w.kind == WorkloadKind::agentic ? "agentic"
                                                      : "inferencex"},
           {"trace_file", w.trace.file},
           {"rates_req_s", w.inferencex.rates},
           {"requests", w.inferencex.requests},
           {"warmup_requests", w.inferencex.warmup_requests},
           {"isl", w.inferencex.isl},
           {"osl", w.inferencex.osl},
           {"range_ratio", w.inferencex.range_ratio},
           {"mtp", w.inferencex.mtp},
           {"mtp_acceptance",
            w.inferencex.mtp_acceptance ? json(*w.inferencex.mtp_acceptance) : json(nullptr)},
           {"prompts_per_client", w.inferencex.prompts_per_client},
           {"warmup_per_client", w.inferencex.warmup_per_client},
           {"precision", w.inferencex.precision ? json(*w.inferencex.precision) : json(nullptr)}});
    json j{{"file", path},
           {"valid", true},
           {"name", sc->name},
           {"description", sc->description},
           {"seed", sc->seed},
           {"systems", sc->systems},
           {"models", sc->models},
           {"workloads", wl},
           {"layouts", {{"replica_xpus", sc->layouts.replica_xpus}, {"named", layouts}}},
           {"concurrency", sc->concurrency},
           {"replicas", sc->replicas},
           {"router", router_name(sc->router)},
           {"facility",
            {{"pue", sc->facility.pue},
             {"electricity_usd_per_kwh", sc->facility.electricity_price.value() * kJoulesPerKwh},
             {"power_budget_w", sc->facility.power_budget ? json(sc->facility.power_budget->value())
                                                          : json(nullptr)}}},
           {"output",
            {{"db", sc->output.db ? json(*sc->output.db) : json(nullptr)},
             {"json", sc->output.json ? json(*sc->output.json) : json(nullptr)},
             {"plots", sc->output.plots ? json(*sc->output.plots) : json(nullptr)}}},
           {"points_per_layout", points},
           {"assumptions", assumed}};
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }

  fmt::print("{}: valid scenario '{}'\n", path, sc->name);
  if (!sc->description.empty()) fmt::print("  {}\n", sc->description);
  fmt::print("  seed         {}\n", sc->seed);
  fmt::print("  systems      {}\n", join(sc->systems));
  fmt::print("  models       {}\n", join(sc->models));
  for (std::size_t i = 0; i < workloads.size(); ++i)
    fmt::print("  {}{}\n", i == 0 ? "workloads    " : "             ", workloads[i]);
  if (sc->layouts.all_valid()) {
    fmt::print(
        "  layouts      every valid layout (no pipeline) of one compute tray and of 8 XPUs, per "
        "system and model\n");
  } else {
    if (!sc->layouts.replica_xpus.empty()) {
      std::vector<std::string> r;
      for (int x : sc->layouts.replica_xpus) r.push_back(std::to_string(x));
      fmt::print("  layouts      every valid layout of replicas of {} XPUs\n", join(r));
    }
    for (const auto& l : sc->layouts.named) fmt::print("  layout       {}\n", layout_text(l));
  }
  if (!conc.empty())
    fmt::print("  concurrency  {} ({})\n", join(conc), plural(conc.size(), "point"));
  fmt::print("  replicas     {} per point, routed {}\n", sc->replicas,
             sc->router == RouterPolicy::round_robin ? "round robin"
             : sc->router == RouterPolicy::session_affinity
                 ? "by session (sticky), else to the least outstanding"
             : sc->router == RouterPolicy::prefix_aware
                 ? "to the longest cached prefix, else to the least outstanding"
                 : "to the least outstanding");
  fmt::print(
      "  facility     PUE {:g}{}, electricity {}{}{}\n", sc->facility.pue,
      sc->facility.pue_given ? "" : " (default)", format(sc->facility.electricity_price),
      sc->facility.price_given ? "" : " (default)",
      sc->facility.power_budget ? ", IT power budget " + format(*sc->facility.power_budget) : "");
  if (sc->output.db) fmt::print("  database     {}\n", *sc->output.db);
  if (sc->output.json) fmt::print("  json         {}\n", *sc->output.json);
  if (sc->output.plots) fmt::print("  plots        {}\n", *sc->output.plots);
  fmt::print("  sweep        {} x {} x {} = {} per layout\n", plural(sc->systems.size(), "system"),
             plural(sc->models.size(), "model"),
             plural(loads, "load (concurrency or rate)", "loads (concurrencies and rates)"),
             plural(points, "point"));
  fmt::print(
      "  assumptions  the selected systems, chips and models rest on {} catalog assumptions "
      "('racktwin catalog show ID' lists them with reasons)\n",
      assumed.size());
  return kExitOk;
}

}  // namespace

void add_check_command(CLI::App& app, Commands& out) {
  auto as_json = std::make_shared<bool>(false);
  auto path = std::make_shared<std::string>();
  auto* check =
      app.add_subcommand("check", "Validate a scenario file; print a summary or every error");
  check->add_option("SCENARIO", *path, "Scenario YAML file")->required();
  check->add_flag("--json", *as_json, "Machine-readable output");
  out.push_back({check, [path, as_json](const Catalog& cat) {
                   return check_scenario(cat, *path, *as_json);
                 }});
}

}  // namespace racktwin::cli
