#include "app/check.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <set>

#include "db/export.hpp"
#include "db/provenance.hpp"
#include "scenarios/scenario_loader.hpp"
#include "sim/sweep.hpp"

namespace racktwin::app {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string describe(const Workload& w) {
  const auto& x = w.inferencex;
  const std::string weights = x.precision.value_or("the system's best");
  if (w.kind == WorkloadKind::agentic) {
    const auto& g = w.agentic;
    return fmt::format(
        "{}: agentic sessions, C clients x {} sessions of {}-{} turns, first context {}-{} "
        "tokens, tool results {}-{}, output {}-{}, pauses {:g}-{:g} s, sub-agents p={:g} x {}-{}, "
        "max context {}, weights {}",
        w.id, g.sessions_per_client, g.turns_min, g.turns_max, g.first_context_min,
        g.first_context_max, g.tool_result_min, g.tool_result_max, g.output_min, g.output_max,
        g.tool_pause_min_s, g.tool_pause_max_s, g.subagent_probability, g.subagents_min,
        g.subagents_max, g.max_context, weights);
  }
  if (w.kind == WorkloadKind::trace) {
    std::set<std::string> sessions;
    for (const auto& q : *w.trace.requests)
      if (!q.session_id.empty()) sessions.insert(q.session_id);
    return fmt::format(
        "{}: replay of {} ({} requests, {} sessions, {}-token blocks, time x{:g}, {} warm-up), "
        "weights {}",
        w.id, w.trace.file, w.trace.requests->size(), sessions.size(), w.trace.block_tokens,
        w.trace.time_scale, w.trace.warmup_requests, weights);
  }
  std::vector<std::string> rates;
  for (double r : x.rates) rates.push_back(fmt::format("{:g}", r));
  const std::string arrivals =
      w.kind == WorkloadKind::poisson
          ? fmt::format("open loop, Poisson at {} req/s, {} requests ({} warm-up)", join(rates),
                        x.requests, x.warmup_requests)
          : std::string("InferenceX closed loop");
  const std::string mtp =
      x.mtp ? (x.mtp_acceptance ? fmt::format("on (acceptance {:g})", *x.mtp_acceptance)
                                : std::string("on (the system's acceptance)"))
            : std::string("off");
  return fmt::format("{}: {}, ISL {} / OSL {} drawn from [{:g} L, L], MTP {}, weights {}", w.id,
                     arrivals, x.isl, x.osl, x.range_ratio, mtp, weights);
}

std::string plural(std::size_t n, const std::string& one, const std::string& many = "") {
  return std::to_string(n) + " " + (n == 1 ? one : (many.empty() ? one + "s" : many));
}

template <class T>
std::string join_all(const std::vector<T>& v) {
  return fmt::format("{}", fmt::join(v, ", "));
}

std::string routing(RouterPolicy p) {
  switch (p) {
    case RouterPolicy::round_robin:
      return "round robin";
    case RouterPolicy::session_affinity:
      return "by session (sticky), else to the least outstanding";
    case RouterPolicy::prefix_aware:
      return "to the longest cached prefix, else to the least outstanding";
    default:
      return "to the least outstanding";
  }
}

const char* kind_name(WorkloadKind k) {
  return k == WorkloadKind::poisson   ? "poisson"
         : k == WorkloadKind::trace   ? "trace"
         : k == WorkloadKind::agentic ? "agentic"
                                      : "inferencex";
}

// Where one engine setting of a system's points comes from: the scenario, the system's catalog
// default (its published benchmarks' engine) or the simulation's default.
template <class T>
std::string origin_mark(const std::optional<T>& given, const System* s,
                        std::optional<T> EngineLimits::*limit) {
  switch (sim::origin_of(given, s, limit)) {
    case sim::SettingOrigin::scenario:
      return "";
    case sim::SettingOrigin::catalog:
      return " (catalog)";
    case sim::SettingOrigin::simulation:
      break;
  }
  return " (default)";
}

// The engine settings the points of system `s` (or of no system) run with, each marked where it
// is not the scenario's: "(catalog)" for the system's catalog default, "(default)" for the
// simulation's; with none given anywhere, one "(the defaults)" at the end.
std::string engine_text(const Scenario& sc, const System* s) {
  const EngineSpec& given = sc.engine;
  const sim::EngineParams e = sim::engine_of(sc, Workload{}, s);
  const perf::MemoryParams m = sim::memory_of(sc, s);
  const bool any = given.max_seqs || given.max_batched_tokens || given.memory_utilization ||
                   given.reserve_output || given.prefix_cache ||
                   (s != nullptr && s->serving.engine_limits.any());
  auto mark = [&](std::string text) { return any ? text : std::string(); };
  const std::string admission =
      e.reserve_output_ratio >= 1.0   ? "admits a request when its whole output fits, never preempts"
      : e.reserve_output_ratio <= 0.0 ? "admits on the current context, preempts when the cache fills"
                                      : fmt::format("reserves {:g} of each output at admission, "
                                                    "preempts when the cache fills",
                                                    e.reserve_output_ratio);
  const bool tp_attention = s != nullptr && !s->serving.engine_limits.dp_attention.value_or(true);
  return fmt::format(
      "{} sequences{}, {} tokens per iteration{}, {:g}% of HBM{}; {}{}; prefix cache {}{}{}{}",
      e.max_seqs, mark(origin_mark(given.max_seqs, s, &EngineLimits::max_seqs)),
      m.max_batched_tokens,
      mark(origin_mark(given.max_batched_tokens, s, &EngineLimits::max_batched_tokens)),
      m.memory_utilization * 100,
      mark(origin_mark(given.memory_utilization, s, &EngineLimits::memory_utilization)), admission,
      mark(origin_mark(given.reserve_output, s, &EngineLimits::reserve_output)),
      e.prefix_cache ? "on" : "off", mark(given.prefix_cache ? "" : " (default)"),
      tp_attention ? "; attention tensor-parallel: no DP-attention layouts unless named (catalog)"
                   : "",
      any ? "" : " (the defaults)");
}

// One line per system when their engine settings differ (a system with catalog defaults), else
// the one line they share.
std::vector<std::string> engine_lines(const Catalog& cat, const Scenario& sc) {
  std::vector<std::pair<std::string, std::string>> per;
  for (const auto& sid : sc.systems) per.emplace_back(sid, engine_text(sc, cat.find_system(sid)));
  const bool same = std::all_of(per.begin(), per.end(),
                                [&](const auto& p) { return p.second == per.front().second; });
  std::vector<std::string> out;
  if (per.empty() || same)
    out.push_back(per.empty() ? engine_text(sc, nullptr) : per.front().second);
  else
    for (const auto& [sid, text] : per) out.push_back(sid + ": " + text);
  // A catalog setting is in play where a system has one the scenario does not override.
  const EngineSpec& given = sc.engine;
  const bool catalog = std::any_of(sc.systems.begin(), sc.systems.end(), [&](const auto& sid) {
    const System* s = cat.find_system(sid);
    auto catalog_gives = [&](const auto& key, auto limit) {
      return sim::origin_of(key, s, limit) == sim::SettingOrigin::catalog;
    };
    return catalog_gives(given.max_seqs, &EngineLimits::max_seqs) ||
           catalog_gives(given.max_batched_tokens, &EngineLimits::max_batched_tokens) ||
           catalog_gives(given.memory_utilization, &EngineLimits::memory_utilization) ||
           catalog_gives(given.reserve_output, &EngineLimits::reserve_output);
  });
  const bool default_budget = std::any_of(sc.systems.begin(), sc.systems.end(), [&](const auto& sid) {
    return sim::origin_of(given.max_batched_tokens, cat.find_system(sid),
                          &EngineLimits::max_batched_tokens) == sim::SettingOrigin::simulation;
  });
  if (default_budget || (sc.systems.empty() && !given.max_batched_tokens))
    out.push_back(fmt::format(
        "tokens per iteration by default: a DP-attention replica wider than tp{} takes {} per "
        "attention rank, and each rank prefills within its slice",
        perf::MemoryParams{}.max_batched_tokens / sim::kBatchedTokensPerAttentionRank,
        sim::kBatchedTokensPerAttentionRank));
  if (catalog)
    out.push_back("(catalog): the system's single-server benchmarks, for aggregated replicas within "
                  "one scale-up domain; replicas over several domains take the defaults where the "
                  "scenario is silent, and disaggregated pools the defaults with the batch of the "
                  "system's multi-node benchmarks where the catalog has one");
  return out;
}

Json engine_values(const Scenario& sc, const System* s) {
  const sim::EngineParams e = sim::engine_of(sc, Workload{}, s);
  const perf::MemoryParams m = sim::memory_of(sc, s);
  return {{"max_seqs", e.max_seqs},
          {"max_batched_tokens", m.max_batched_tokens},
          {"memory_utilization", m.memory_utilization},
          {"reserve_output", e.reserve_output_ratio},
          {"prefix_cache", e.prefix_cache}};
}

// The scenario's settings over the simulation's defaults, and under "by_system" what each
// system's points run with (its catalog defaults where the scenario is silent).
Json engine_json(const Catalog& cat, const Scenario& sc) {
  Json j = engine_values(sc, nullptr);
  Json by = Json::object();
  for (const auto& sid : sc.systems) by[sid] = engine_values(sc, cat.find_system(sid));
  j["by_system"] = by;
  return j;
}

}  // namespace

Json to_json(const ScenarioCheck& c) {
  if (!c.valid())
    return {{"file", c.file}, {"valid", false}, {"errors", diagnostics_json(c.errors)}};
  const Scenario& sc = *c.scenario;
  Json layouts = Json::array();
  for (const auto& l : sc.layouts.named)
    layouts.push_back({{"name", l.name},
                       {"tp", l.tp},
                       {"ep", l.ep},
                       {"pp", l.pp},
                       {"dp_attention", l.dp_attention}});
  Json wl = Json::array();
  for (const auto& w : sc.workloads) {
    const auto& x = w.inferencex;
    wl.push_back({{"id", w.id},
                  {"kind", kind_name(w.kind)},
                  {"trace_file", w.trace.file},
                  {"rates_req_s", x.rates},
                  {"requests", x.requests},
                  {"warmup_requests", x.warmup_requests},
                  {"isl", x.isl},
                  {"osl", x.osl},
                  {"range_ratio", x.range_ratio},
                  {"mtp", x.mtp},
                  {"mtp_acceptance", optional_json(x.mtp_acceptance)},
                  {"prompts_per_client", x.prompts_per_client},
                  {"warmup_per_client", x.warmup_per_client},
                  {"precision", optional_json(x.precision)}});
  }
  Json assumed = Json::array();
  for (const auto& a : c.assumptions) assumed.push_back(db::assumption_json(a));
  const auto& f = sc.facility;
  Json j{{"file", c.file},
         {"valid", true},
         {"name", sc.name},
         {"description", sc.description},
         {"seed", sc.seed},
         {"systems", sc.systems},
         {"models", sc.models},
         {"workloads", wl},
         {"layouts", {{"replica_xpus", sc.layouts.replica_xpus}, {"named", layouts}}},
         {"concurrency", sc.concurrency},
         {"replicas", sc.replicas},
         {"router", router_name(sc.router)},
         {"engine", c.engine},
         {"facility",
          {{"pue", f.pue},
           {"electricity_usd_per_kwh", f.electricity_price.value() * kJoulesPerKwh},
           {"power_budget_w", f.power_budget ? Json(f.power_budget->value()) : Json(nullptr)}}},
         {"output",
          {{"db", optional_json(sc.output.db)},
           {"json", optional_json(sc.output.json)},
           {"plots", optional_json(sc.output.plots)}}},
         {"points_per_layout", c.points},
         {"assumptions", assumed}};
  if (c.sweep_problem) j["sweep_problem"] = *c.sweep_problem;
  return j;
}

namespace {

// The check of a loaded scenario (or its errors) for `file`.
ScenarioCheck check_loaded(const Catalog& cat, std::expected<Scenario, Diagnostics> sc,
                           const std::string& file) {
  ScenarioCheck c;
  c.file = file;
  if (!sc) {
    c.errors = sc.error();
    return c;
  }
  for (const auto& w : sc->workloads)
    c.loads += w.kind == WorkloadKind::poisson ? w.inferencex.rates.size()
               : w.kind == WorkloadKind::trace ? 1
                                               : sc->concurrency.size();
  c.points = sc->systems.size() * sc->models.size() * c.loads * sc->serving.size();
  // The points racktwin run would simulate, for the assumptions its stored run records.
  sim::SweepOptions so;
  so.seed = sc->seed;
  auto points = sim::build_sweep(cat, *sc, so);
  if (!points) {
    c.sweep_problem = points.error();
  } else if (auto too_many = sweep_limit_problem(*sc, points->size())) {
    c.errors = {*too_many};
    return c;
  } else {
    c.assumptions = db::assumptions_of(cat, *points);
  }

  auto add = [&](std::string label, std::string text) {
    c.summary.push_back({std::move(label), std::move(text)});
  };
  add("seed", std::to_string(sc->seed));
  add("systems", join_all(sc->systems));
  add("models", join_all(sc->models));
  for (std::size_t i = 0; i < sc->workloads.size(); ++i)
    add(i == 0 ? "workloads" : "", describe(sc->workloads[i]));
  const LayoutSelection& ls = sc->layouts;
  if (ls.all_valid())
    add("layouts",
        "every valid layout (no pipeline) of one compute tray and of 8 XPUs, and for MoE models "
        "of 16, 32, ... XPUs up to the scale-up domain (at most 256 and one rank per routed "
        "expert), per system and model");
  else if (!ls.replica_xpus.empty())
    add("layouts", "every valid layout of replicas of " + join_all(ls.replica_xpus) + " XPUs");
  for (const auto& l : ls.named)
    add("layout", fmt::format("{} (tp {}, ep {}, pp {}{}; {} XPUs)", l.name, l.tp, l.ep, l.pp,
                              l.dp_attention ? ", DP attention" : "", l.xpus()));
  if (!sc->concurrency.empty())
    add("concurrency",
        join_all(sc->concurrency) + " (" + plural(sc->concurrency.size(), "point") + ")");
  add("replicas", fmt::format("{} per point, routed {}", sc->replicas, routing(sc->router)));
  if (sc->serving.size() > 1 || sc->serving.front().disaggregated()) {
    std::vector<std::string> modes;
    for (const auto& m : sc->serving) modes.push_back(m.label());
    add("serving", join_all(modes) +
                       " (<P>p<D>d: P prefill replicas hand their KV to D decode replicas, which "
                       "replace `replicas`; after '/', the prefill replicas' own layout)");
  }
  c.engine = engine_json(cat, *sc);
  const auto engines = engine_lines(cat, *sc);
  for (std::size_t i = 0; i < engines.size(); ++i) add(i == 0 ? "engine" : "", engines[i]);
  const FacilitySpec& f = sc->facility;
  add("facility",
      fmt::format("PUE {:g}{}, electricity {}{}{}", f.pue, f.pue_given ? "" : " (default)",
                  format(f.electricity_price), f.price_given ? "" : " (default)",
                  f.power_budget ? ", IT power budget " + format(*f.power_budget) : ""));
  if (sc->output.db) add("database", *sc->output.db);
  if (sc->output.json) add("json", *sc->output.json);
  if (sc->output.plots) add("plots", *sc->output.plots);
  add("sweep",
      fmt::format("{} x {} x {}{} = {} per layout", plural(sc->systems.size(), "system"),
                  plural(sc->models.size(), "model"),
                  plural(c.loads, "load (concurrency or rate)", "loads (concurrencies and rates)"),
                  sc->serving.size() > 1 ? " x " + plural(sc->serving.size(), "serving mode") : "",
                  plural(c.points, "point")));
  if (c.sweep_problem) add("sweep", "cannot be built: " + *c.sweep_problem);
  add("assumptions",
      fmt::format("the selected systems, chips, models and efficiency priors rest on {} catalog "
                  "assumptions, as a stored run records them ('--json' lists them with reasons)",
                  c.assumptions.size()));
  c.scenario = std::move(*sc);
  return c;
}

}  // namespace

ScenarioCheck check_scenario(const Catalog& cat, const std::string& path) {
  return check_loaded(cat, load_scenario_file(path, cat), path);
}

ScenarioCheck check_scenario_text(const Catalog& cat, const std::string& text,
                                  const std::string& file) {
  return check_loaded(cat, load_scenario_string(text, file, cat), file);
}

}  // namespace racktwin::app
