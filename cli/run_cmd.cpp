// racktwin run: a scenario's sweep through the serving simulation, and the comparison table.

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "cli/commands.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "core/perf/memory.hpp"
#include "racktwin/version.hpp"
#include "scenarios/scenario_loader.hpp"
#include "sim/serving.hpp"

namespace racktwin::cli {
namespace {

using json = nlohmann::ordered_json;

struct RunArgs {
  std::string path;
  std::optional<std::uint64_t> seed;
  bool json = false;
  bool no_fuse = false;
  bool timeseries = false;
  ResultOptions results;  // --db, --plots, --points, --quiet
};

// The layouts a sweep tries for one system and model: the scenario's named layouts, plus every
// valid layout (pipeline depth 1) of the scenario's replica sizes, by default the compute tray and
// 8 XPUs.
std::vector<Layout> sweep_layouts(const Catalog& cat, const Scenario& sc, const System& s,
                                  const Model& m, const std::string& precision, double min_tokens) {
  std::vector<Layout> out = sc.layouts.named;
  std::vector<int> sizes = sc.layouts.replica_xpus;
  if (sc.layouts.all_valid()) {
    for (int n : {s.compute_tray.xpus, 8})
      if (n <= s.domain_xpus && std::find(sizes.begin(), sizes.end(), n) == sizes.end())
        sizes.push_back(n);
  }
  if (!sizes.empty()) {
    perf::LayoutQuery q;
    q.replica_xpus = sizes;
    q.max_pp = 1;
    q.precision = precision;
    q.min_tokens = min_tokens;
    for (const auto& o : perf::enumerate_layouts(m, s, cat, q))
      if (o.valid) out.push_back(o.layout);
  }
  // A named layout may also come out of the enumeration: keep the first of each.
  std::vector<Layout> unique;
  for (const auto& l : out) {
    const bool seen = std::any_of(unique.begin(), unique.end(), [&](const Layout& u) {
      return u.tp == l.tp && u.ep == l.ep && u.pp == l.pp && u.dp_attention == l.dp_attention;
    });
    if (!seen) unique.push_back(l);
  }
  return unique;
}

std::string fmt_num(double x, int digits = 0) {
  return fmt::format("{:.{}f}", x, digits);
}

int run_scenario(const Catalog& cat, const RunArgs& a) {
  auto sc = load_scenario_file(a.path, cat);
  if (!sc) {
    print_diagnostics(sc.error(), a.path);
    return kExitInput;
  }
  const std::uint64_t seed = a.seed.value_or(sc->seed);
  std::vector<sim::PointSpec> specs;
  for (const auto& sid : sc->systems) {
    const System& s = *cat.find_system(sid);
    const EfficiencyPrior* prior = cat.efficiency_prior_for(sid);
    if (prior == nullptr) {
      fmt::print(stderr,
                 "racktwin: no efficiency prior for {} and no 'default' prior in the catalog\n",
                 sid);
      return kExitInput;
    }
    for (const auto& mid : sc->models) {
      const Model& m = *cat.find_model(mid);
      for (const auto& w : sc->workloads) {
        const std::string precision =
            w.inferencex.precision.value_or(perf::best_precision(m, s, cat));
        double min_tokens = w.inferencex.isl + w.inferencex.osl;
        if (w.kind == WorkloadKind::agentic) min_tokens = w.agentic.max_context;
        if (w.kind == WorkloadKind::trace) {  // the longest request of the trace must fit
          min_tokens = 0;
          for (const auto& q : *w.trace.requests)
            min_tokens = std::max<double>(min_tokens, q.input_length + q.output_length);
        }
        // Closed loop: one point per concurrency; open loop: one per rate.
        std::vector<std::pair<int, double>> loads;
        if (w.kind == WorkloadKind::poisson) {
          for (double r : w.inferencex.rates) loads.emplace_back(0, r);
        } else if (w.kind == WorkloadKind::trace) {
          loads.emplace_back(0, 0.0);  // the trace sets its own arrivals
        } else {
          for (int c : sc->concurrency) loads.emplace_back(c, 0.0);
        }
        for (const Layout& l : sweep_layouts(cat, *sc, s, m, precision, min_tokens)) {
          for (const ServingMode& mode : sc->serving) {
            for (const auto& [c, rate] : loads) {
              sim::PointSpec p;
              p.system = &s;
              p.model = &m;
              p.layout = l;
              p.precision = precision;
              p.workload = w.inferencex;
              p.workload_id = w.id;
              p.kind = w.kind;
              p.trace = w.trace;
              if (w.kind == WorkloadKind::trace) p.engine.block_tokens = w.trace.block_tokens;
              if (w.kind == WorkloadKind::agentic) p.engine.block_tokens = w.agentic.block_tokens;
              p.agentic = w.agentic;
              p.concurrency = c;
              p.rate = rate;
              p.replicas = mode.disaggregated() ? mode.decode : sc->replicas;
              p.prefill_replicas = mode.prefill;
              p.host_offload = sc->host_offload;
            p.failures = sc->failures;
              p.router = sc->router;
              const std::string load = w.kind == WorkloadKind::poisson
                                           ? fmt::format("rate{:.17g}", rate)
                                           : std::to_string(c);
              // Aggregated points keep the stream names they had before serving modes existed.
              const std::string served = mode.disaggregated() ? "/" + mode.label() : "";
              p.seed = sim::stream_seed(
                  seed, sid + "/" + mid + "/" + w.id + "/" + l.label() + served + "/" + load);
              p.efficiency = prior->values;
              p.facility = sc->facility;
              specs.push_back(p);
            }
          }
        }
      }
    }
  }
  ResultOptions store_opt = a.results;
  store_opt.json = a.json;
  store_opt.fuse = !a.no_fuse;
  auto recorder = RunRecorder::start(cat, *sc, a.path, seed, specs, store_opt);
  if (!recorder) return recorder.error();
  sim::SimOptions opt;
  opt.fuse = !a.no_fuse;
  opt.progress = recorder->progress();
  auto results = sim::simulate(cat, specs, opt);
  if (!results) {
    recorder->fail(results.error());
    fmt::print(stderr, "racktwin run: {}\n", results.error());
    return kExitRuntime;
  }
  recorder->finish(*results);

  // Per system and model: the best over layouts and concurrencies, as the published comparison.
  struct Row {
    double peak_tps = 0, peak_rated_kw = 0, peak_allin_mw = 0, min_tbt = 1e30, min_e2e = 1e30,
           ttft_at_min_e2e = 0;
    std::string best_layout;
    bool allin_computed = false;
    int points = 0, failed = 0;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Row>
      rows;  // (workload, model, system)
  for (const auto& r : *results) {
    Row& row = rows[{r.spec.workload_id, r.spec.model->id, r.spec.system->id}];
    if (!r.error.empty()) {
      row.failed += 1;
      continue;
    }
    row.points += 1;
    if (r.total_tps_per_xpu > row.peak_tps) {
      row.peak_tps = r.total_tps_per_xpu;
      row.best_layout = r.spec.layout.label();
      if (r.spec.prefill_replicas > 0)
        row.best_layout += " " + ServingMode{r.spec.prefill_replicas, r.spec.replicas}.label();
    }
    row.peak_rated_kw = std::max(row.peak_rated_kw, r.tps_per_rated_kw);
    row.peak_allin_mw = std::max(row.peak_allin_mw, r.tps_per_allin_mw);
    row.allin_computed = row.allin_computed || r.all_in_computed;
    if (r.tpot.median > 0) row.min_tbt = std::min(row.min_tbt, r.tpot.median);
    if (r.e2e.median < row.min_e2e) {
      row.min_e2e = r.e2e.median;
      row.ttft_at_min_e2e = r.ttft.median;
    }
  }

  if (a.json) {
    json pts = json::array();
    for (const auto& r : *results) {
      pts.push_back({{"system", r.spec.system->id},
                     {"model", r.spec.model->id},
                     {"workload", r.spec.workload_id},
                     {"layout", r.spec.layout.label()},
                     {"precision", r.spec.precision},
                     {"arrivals", r.spec.kind == WorkloadKind::poisson   ? "poisson"
                                  : r.spec.kind == WorkloadKind::trace   ? "trace"
                                  : r.spec.kind == WorkloadKind::agentic ? "agentic"
                                                                         : "closed_loop"},
                     {"concurrency", r.spec.concurrency},
                     {"rate_req_s", r.spec.rate},
                     {"serving", ServingMode{r.spec.prefill_replicas, r.spec.replicas}.label()},
                     {"replicas", r.spec.replicas},
                     {"prefill_replicas", r.spec.prefill_replicas},
                     {"domains", r.domains},
                     {"xpus", r.xpus},
                     {"error", r.error},
                     {"requests", r.requests},
                     {"completed", r.completed},
                     {"input_tps_per_xpu", r.input_tps_per_xpu},
                     {"max_kv_used_tokens", r.max_kv_used},
                     {"total_tps_per_xpu", r.total_tps_per_xpu},
                     {"output_tps_per_xpu", r.output_tps_per_xpu},
                     {"ttft_s",
                      {{"mean", r.ttft.mean},
                       {"median", r.ttft.median},
                       {"p90", r.ttft.p90},
                       {"p99", r.ttft.p99}}},
                     {"tpot_s",
                      {{"mean", r.tpot.mean},
                       {"median", r.tpot.median},
                       {"p90", r.tpot.p90},
                       {"p99", r.tpot.p99}}},
                     {"e2e_s",
                      {{"mean", r.e2e.mean},
                       {"median", r.e2e.median},
                       {"p90", r.e2e.p90},
                       {"p99", r.e2e.p99}}},
                     {"interactivity_tok_s_user", r.interactivity},
                     {"e2e_normalised_interactivity", r.e2e_norm_interactivity},
                     {"prefix_hit_rate", r.prefix_hit_rate},
                     {"retried_requests", r.retried_requests},
                     {"replica_down_s", r.replica_down_s},
                     {"recovery_s", r.recovery_s},
                     {"offload_hit_rate", r.offload_hit_rate},
                     {"offloaded_bytes", r.offloaded_bytes},
                     {"host_tier_blocks", r.host_tier_blocks},
                     {"kv_transfer_bytes", r.kv_transfer_bytes},
                     {"kv_transfer_s", r.kv_transfer_s},
                     {"mean_concurrency", r.mean_concurrency},
                     {"duration_s", r.duration_s},
                     {"kv_capacity_tokens", r.kv_capacity_tokens},
                     {"compute_activity", r.compute_activity},
                     {"memory_activity", r.memory_activity},
                     {"energy_per_token_j", r.energy_per_token_j},
                     {"xpu_power_w", r.xpu_power_w},
                     {"tps_per_rated_kw", r.tps_per_rated_kw},
                     {"tps_per_measured_kw", r.tps_per_measured_kw},
                     {"tps_per_it_kw", r.tps_per_it_kw},
                     {"tps_per_allin_mw", r.tps_per_allin_mw},
                     {"all_in_computed", r.all_in_computed},
                     {"preemptions", r.preemptions},
                     {"iterations", r.iterations}});
      if (a.timeseries) {
        json out = json::array(), pre = json::array(), done = json::array(), power = json::array();
        for (const auto& s : r.timeseries) {
          out.push_back(s.output_tokens);
          pre.push_back(s.prefill_tokens);
          done.push_back(s.completed);
          power.push_back(s.xpu_power_w);
        }
        pts.back()["timeseries_1s"] = {{"output_tokens", out},
                                       {"prefill_tokens", pre},
                                       {"completed", done},
                                       {"xpu_power_w", power}};
      }
    }
    // The Pareto envelope of total tokens/s per XPU against interactivity, per system, model and
    // workload, over layouts and loads.
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<sim::CurvePoint>>
        curves;
    for (std::size_t i = 0; i < results->size(); ++i) {
      const auto& r = (*results)[i];
      if (r.error.empty())
        curves[{r.spec.system->id, r.spec.model->id, r.spec.workload_id}].push_back(
            {r.interactivity, r.total_tps_per_xpu, i});
    }
    json envs = json::array();
    for (const auto& [key, pts_] : curves) {
      json e = json::array();
      for (const auto& c : sim::pareto_envelope(pts_))
        e.push_back({{"interactivity_tok_s_user", c.interactivity},
                     {"total_tps_per_xpu", c.value},
                     {"layout", (*results)[c.index].spec.layout.label()},
                     {"concurrency", (*results)[c.index].spec.concurrency},
                     {"rate_req_s", (*results)[c.index].spec.rate}});
      envs.push_back({{"system", std::get<0>(key)},
                      {"model", std::get<1>(key)},
                      {"workload", std::get<2>(key)},
                      {"envelope", e}});
    }
    json j{{"racktwin", kVersion}, {"commit", kGitCommit}, {"scenario", sc->name}, {"file", a.path},
           {"seed", seed},         {"points", pts},        {"pareto", envs}};
    fmt::print("{}\n", j.dump(2));
    return recorder->report();
  }

  fmt::print("racktwin {} (commit {}): scenario '{}', seed {}, {} points simulated\n", kVersion,
             kGitCommit, sc->name, seed, results->size());
  fmt::print(
      "Efficiencies are uncalibrated priors; the numbers show the model's shape, not yet published "
      "values.\n\n");
  const std::string baseline = sc->systems.front();
  for (const auto& w : sc->workloads) {
    for (const auto& mid : sc->models) {
      Table t({"system", "peak tok/s/XPU", "best layout", "peak tok/s per rated kW",
               "x " + baseline, "peak tok/s per all-in MW", "min TBT ms", "min E2E s",
               "x " + baseline, "TTFT s at min E2E"});
      const std::tuple<std::string, std::string, std::string> base_key{w.id, mid, baseline};
      const Row* base = rows.contains(base_key) ? &rows.at(base_key) : nullptr;
      for (const auto& sid : sc->systems) {
        auto it = rows.find({w.id, mid, sid});
        if (it == rows.end() || it->second.points == 0) {
          t.add({sid, "no layout fits"});
          continue;
        }
        const Row& r = it->second;
        auto ratio = [](double x, double y) {
          return y > 0 ? fmt::format("{:.2f}", x / y) : std::string("-");
        };
        t.add({sid, fmt_num(r.peak_tps), r.best_layout, fmt_num(r.peak_rated_kw),
               base ? ratio(r.peak_rated_kw, base->peak_rated_kw) : "-",
               fmt_num(r.peak_allin_mw) + (r.allin_computed ? " (computed)" : ""),
               fmt_num(r.min_tbt * 1e3, 2), fmt_num(r.min_e2e, 2),
               base ? ratio(r.min_e2e, base->min_e2e) : "-", fmt_num(r.ttft_at_min_e2e, 3)});
      }
      fmt::print("{} / {}\n{}\n", mid, w.id, t.render({1, 3, 4, 5, 6, 7, 8, 9}));
    }
  }
  int failed = 0;
  for (const auto& r : *results) failed += r.error.empty() ? 0 : 1;
  if (failed > 0) fmt::print("{} points could not run (see --json for each reason)\n", failed);
  return recorder->report();
}

}  // namespace

void add_run_command(CLI::App& app, Commands& out) {
  auto a = std::make_shared<RunArgs>();
  auto* run = app.add_subcommand(
      "run", "Run a scenario's sweep through the serving simulation and compare systems");
  run->add_option("SCENARIO", a->path, "Scenario YAML file")->required();
  run->add_option("--seed", a->seed, "Master seed (default: the scenario's)");
  run->add_flag("--json", a->json, "Every point's metrics, machine-readable");
  run->add_flag("--no-fuse", a->no_fuse,
                "Simulate every decode iteration on its own (slower; same results)");
  auto* json_flag = run->get_option("--json");
  run->add_flag("--timeseries", a->timeseries,
                "With --json: each point's one-second series (tokens, completions, power)")
      ->needs(json_flag);
  add_db_option(run, a->results.db);
  run->add_option("--plots", a->results.plots,
                  "Directory for the run's charts, PNG and SVG (as 'racktwin plot')");
  run->add_option("--points", a->results.points,
                  "Published points (YAML) to overlay on the Pareto charts of --plots");
  run->add_flag("--quiet", a->results.quiet, "No progress bar");
  out.push_back({run, [a](const Catalog& cat) { return run_scenario(cat, *a); }});
}

}  // namespace racktwin::cli
