// racktwin run: a scenario's sweep through the serving simulation, and the comparison table.

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "calib/predict.hpp"
#include "cli/commands.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "core/perf/memory.hpp"
#include "racktwin/version.hpp"
#include "scenarios/points_loader.hpp"
#include "scenarios/scenario_loader.hpp"
#include "sim/serving.hpp"
#include "sim/sweep.hpp"

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

std::string fmt_num(double x, int digits = 0) {
  return fmt::format("{:.{}f}", x, digits);
}

// Where the systems' efficiency parameters come from.
void print_efficiency_origins(const Catalog& cat, const std::vector<std::string>& systems) {
  std::string origins;
  bool calibrated = false;
  for (const auto& sid : systems) {
    auto c = cat.efficiency_for(sid);
    if (!c) continue;
    calibrated = calibrated || c->origin.rfind("prior", 0) != 0;
    origins += (origins.empty() ? "" : ", ") + sid + " " + c->origin;
  }
  if (!calibrated || !cat.calibration) {
    fmt::print(
        "Efficiencies are uncalibrated priors; the numbers show the model's shape, not yet "
        "published values.\n\n");
    return;
  }
  fmt::print("Efficiencies: {} (fitted to {}, {}, on {}; docs/validation.md)\n\n", origins,
             cat.calibration->points_file, cat.calibration->points_hash, cat.calibration->date);
}

// The reference points of one model and workload beside the twin's figures for them, with both
// sides' ratios to the scenario's first system.
void print_published_comparison(const Catalog& cat, const Scenario& sc, const Workload& w,
                                const std::string& mid, const PointsFile& ref,
                                const calib::SweepTables& tables) {
  if (w.kind != WorkloadKind::inferencex) return;
  const Model& m = *cat.find_model(mid);
  const std::string baseline = sc.systems.front();
  Table t({"metric", "system", "twin", "published", "twin x " + baseline, "published x " + baseline,
           "point"});
  for (Metric metric : {Metric::peak_mixed_tps_per_kw_rated, Metric::peak_total_tps_per_xpu,
                        Metric::min_tbt_ms, Metric::min_e2e_latency_s}) {
    // The point of each system for this metric, model and workload, if the file has one.
    std::map<std::string, const ReferencePoint*> pts;
    for (const auto& p : ref.points) {
      const System* s = cat.find_system(p.system);
      if (p.metric != metric || p.model != mid || s == nullptr ||
          std::find(sc.systems.begin(), sc.systems.end(), p.system) == sc.systems.end())
        continue;
      if (calib::describes(p.workload, w.inferencex, perf::best_precision(m, *s, cat)))
        pts.emplace(p.system, &p);
    }
    if (pts.empty()) continue;
    auto twin = [&](const ReferencePoint& p) { return calib::metric_value(p, w.id, tables); };
    const ReferencePoint* base = pts.contains(baseline) ? pts.at(baseline) : nullptr;
    const auto base_twin = base ? twin(*base) : std::unexpected(std::string("no point"));
    for (const auto& sid : sc.systems) {
      if (!pts.contains(sid)) continue;
      const ReferencePoint& p = *pts.at(sid);
      const auto v = twin(p);
      t.add({to_string(metric), sid, v ? format_value(*v) : "-", format_value(p.value),
             v && base_twin && *base_twin > 0 ? fmt::format("{:.2f}", *v / *base_twin) : "-",
             base ? fmt::format("{:.2f}", p.value / base->value) : "-", p.id});
    }
  }
  if (t.empty()) return;
  fmt::print("published ({}) beside the twin, {} / {}\n{}\n", ref.file, mid, w.id,
             t.render({2, 3, 4, 5}));
}

int run_scenario(const Catalog& cat, const RunArgs& a) {
  auto sc = load_scenario_file(a.path, cat);
  if (!sc) {
    print_diagnostics(sc.error(), a.path);
    return kExitInput;
  }
  const std::uint64_t seed = a.seed.value_or(sc->seed);
  sim::SweepOptions so;
  so.seed = seed;
  auto specs = sim::build_sweep(cat, *sc, so);
  if (!specs) {
    fmt::print(stderr, "racktwin run: {}\n", specs.error());
    return kExitInput;
  }
  ResultOptions store_opt = a.results;
  store_opt.json = a.json;
  store_opt.fuse = !a.no_fuse;
  auto recorder = RunRecorder::start(cat, *sc, a.path, seed, *specs, store_opt);
  if (!recorder) return recorder.error();
  sim::SimOptions opt;
  opt.fuse = !a.no_fuse;
  opt.progress = recorder->progress();
  auto results = sim::simulate(cat, *specs, opt);
  if (!results) {
    recorder->fail(results.error());
    fmt::print(stderr, "racktwin run: {}\n", results.error());
    return kExitRuntime;
  }
  recorder->finish(*results);

  // Per system and model: the best over layouts and concurrencies, as the published comparison.
  const auto rows = sim::summarise(*results);
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
    const auto curves = sim::envelopes(*results, sim::CurveValue::total_tps_per_xpu);
    json envs = json::array();
    for (const auto& [key, pts_] : curves) {
      json e = json::array();
      for (const auto& c : pts_)
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
    return recorder->report(cat);
  }

  fmt::print("racktwin {} (commit {}): scenario '{}', seed {}, {} points simulated\n", kVersion,
             kGitCommit, sc->name, seed, results->size());
  print_efficiency_origins(cat, sc->systems);
  // The reference points beside the twin's figures, when the scenario names a file of them.
  std::optional<PointsFile> reference;
  if (sc->reference) {
    auto pf = load_points_file(*sc->reference, cat);
    if (!pf) {
      print_diagnostics(pf.error(), *sc->reference);
      return kExitInput;
    }
    reference = std::move(*pf);
  }
  const calib::SweepTables tables(*results);
  const std::string baseline = sc->systems.front();
  for (const auto& w : sc->workloads) {
    for (const auto& mid : sc->models) {
      Table t({"system", "peak tok/s/XPU", "best layout", "peak tok/s per rated kW",
               "x " + baseline, "peak tok/s per all-in MW", "min TBT ms", "min E2E s",
               "x " + baseline, "TTFT s at min E2E"});
      const std::tuple<std::string, std::string, std::string> base_key{w.id, mid, baseline};
      const sim::SweepSummary* base = rows.contains(base_key) ? &rows.at(base_key) : nullptr;
      for (const auto& sid : sc->systems) {
        auto it = rows.find({w.id, mid, sid});
        if (it == rows.end() || it->second.points == 0) {
          t.add({sid, "no layout fits"});
          continue;
        }
        const sim::SweepSummary& r = it->second;
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
      if (reference) print_published_comparison(cat, *sc, w, mid, *reference, tables);
    }
  }
  int failed = 0;
  for (const auto& r : *results) failed += r.error.empty() ? 0 : 1;
  if (failed > 0) fmt::print("{} points could not run (see --json for each reason)\n", failed);
  return recorder->report(cat);
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
