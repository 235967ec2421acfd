// A run's summary, a stored run and the lists of stored runs and plans as sections
// (app/describe.hpp).

#include <fmt/core.h>

#include <cmath>

#include "app/describe.hpp"

namespace racktwin::app {
namespace {

std::string fixed(double x, int digits = 0) {
  return fmt::format("{:.{}f}", x, digits);
}
std::string ratio(const std::optional<double>& r) {
  return r ? fmt::format("{:.2f}", *r) : std::string("-");
}
std::string optional_fixed(std::optional<double> x, int digits) {
  return x ? fixed(*x, digits) : std::string("-");
}

// The systems' best figures for one model and workload: rows[first, first + systems).
Section best_section(const RunOutcome& o, std::size_t first) {
  const std::string x = "x " + o.systems.front();
  Section s{.title = o.rows[first].model + " / " + o.rows[first].workload,
            .table = {{"system", "peak tok/s/XPU", "best layout", "peak tok/s per rated kW", x,
                       "peak tok/s per all-in MW", "min TBT ms", "min E2E s", x,
                       "TTFT s at min E2E"}},
            .right = {1, 3, 4, 5, 6, 7, 8, 9}};
  for (std::size_t k = first; k < first + o.systems.size(); ++k) {
    const SummaryRow& r = o.rows[k];
    if (!r.best) {
      s.table.push_back({r.system, r.failed > 0 ? "every point failed" : "no layout fits"});
      continue;
    }
    const sim::SweepSummary& b = *r.best;
    s.table.push_back({r.system, fixed(b.peak_tps), b.best_layout, fixed(b.peak_rated_kw),
                       ratio(r.rated_kw_ratio),
                       fixed(b.peak_allin_mw) + (b.allin_computed ? " (computed)" : ""),
                       b.min_tbt ? fixed(*b.min_tbt * 1e3, 2) : "-", fixed(b.min_e2e, 2),
                       ratio(r.min_e2e_ratio), fixed(b.ttft_at_min_e2e, 3)});
  }
  return s;
}

// What the facility's IT power budget holds of each system, at its provisioned power.
Section budget_section(const RunOutcome& o, std::size_t first, double budget_w) {
  Section s{.title = fmt::format("within the IT power budget of {:.1f} MW (whole units at "
                                 "provisioned power; racktwin plan for a rollout):",
                                 budget_w / 1e6)};
  for (std::size_t k = first; k < first + o.systems.size(); ++k)
    if (const auto& b = o.rows[k].budget)
      s.notes.push_back(fmt::format("{}: {:.0f} {}s, {:.0f} XPUs, {:.1f} MW IT, {:.0f} tok/s at peak",
                                    o.rows[k].system, b->units, b->unit, b->xpus, b->it_w / 1e6,
                                    b->tps));
  return s;
}

// The failures the scenario rehearsed, when any point had one.
std::optional<Section> failures_section(const RunOutcome& o, std::size_t first) {
  bool any = false;
  for (std::size_t k = first; k < first + o.systems.size(); ++k)
    any = any || o.rows[k].replica_down_s > 0 || o.rows[k].retried_requests > 0;
  if (!any) return std::nullopt;
  Section s{.title = "failures over the sweep's points (docs/simulation.md section 3.9):",
            .table = {{"system", "retried requests", "replica-down s", "mean recovery s"}},
            .right = {1, 2, 3}};
  for (std::size_t k = first; k < first + o.systems.size(); ++k) {
    const auto& r = o.rows[k];
    s.table.push_back({r.system, std::to_string(r.retried_requests), fixed(r.replica_down_s, 1),
                       r.recovery_s ? fixed(*r.recovery_s, 1) : "-"});
  }
  return s;
}

// Points whose queues grew without bound: their latencies grow with the run's length.
void add_overloaded(const RunOutcome& o, std::size_t first, Sections& out) {
  for (std::size_t k = first; k < first + o.systems.size(); ++k) {
    const auto& r = o.rows[k];
    if (r.overloaded.empty()) continue;
    out.push_back(
        {.title = fmt::format("{}: {} overloaded (arrivals above what the replicas serve; the "
                              "queue grows without bound, so latencies depend on the run's "
                              "length; docs/simulation.md section 6):",
                              r.system, r.overloaded.size() == 1
                                            ? std::string("1 point")
                                            : fmt::format("{} points", r.overloaded.size())),
         .notes = r.overloaded});
  }
}

std::optional<Section> published_section(const RunOutcome& o, const SummaryRow& row) {
  const auto it = o.published.find({row.workload, row.model});
  if (it == o.published.end() || it->second.empty()) return std::nullopt;
  const std::string& base = o.systems.front();
  Section s{.title = fmt::format("published ({}) beside the twin, {} / {}", o.reference_file,
                                 row.model, row.workload),
            .table = {{"metric", "system", "twin", "published", "twin x " + base,
                       "published x " + base, "point"}},
            .right = {2, 3, 4, 5}};
  for (const auto& r : it->second)
    s.table.push_back({r.metric, r.system, r.twin ? figure_text(*r.twin) : "-",
                       figure_text(r.published), ratio(r.twin_ratio), ratio(r.published_ratio),
                       r.point_id});
  return s;
}

std::string load_text(const db::PointKey& k) {
  if (k.arrivals == "poisson") return fmt::format("{:g} req/s", k.rate);
  if (k.arrivals == "trace") return "trace";
  return fmt::format("C={}", k.concurrency);
}

// A point's error, or that it was overloaded.
std::string point_note(const db::StoredPoint& p) {
  if (!p.error.empty()) return p.error;
  if (p.metric("overloaded").value_or(0) == 0) return {};
  return fmt::format("overloaded: {:.0f}% of arrivals left in flight",
                     100 * p.metric("queue_growth").value_or(0));
}

Section points_section(const db::StoredRun& run) {
  Section s{.table = {{"#", "system", "model", "workload", "layout", "load", "tok/s/XPU",
                       "tok/s/user", "TTFT p50 s", "TPOT p50 ms", "E2E p50 s",
                       "tok/s per all-in MW", "note"}},
            .right = {0, 6, 7, 8, 9, 10, 11}};
  for (const auto& p : run.points) {
    auto m = [&](const char* name, double scale, int digits) {
      const auto v = p.metric(name);
      return v ? fixed(*v * scale, digits) : std::string("-");
    };
    const std::string layout =
        p.key.layout + (p.key.serving == "aggregated" ? "" : " " + p.key.serving);
    s.table.push_back({std::to_string(p.index), p.key.system, p.key.model, p.key.workload, layout,
                       load_text(p.key), m("total_tps_per_xpu", 1, 0),
                       m("interactivity_tok_s_user", 1, 1), m("ttft_median_s", 1, 3),
                       m("tpot_median_s", 1e3, 2), m("e2e_median_s", 1, 2),
                       m("tps_per_allin_provisioned_mw", 1, 0), point_note(p)});
  }
  return s;
}

}  // namespace

std::string figure_text(double v) {
  const double a = std::fabs(v);
  if (a >= 1000) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3g}", v);
}

Sections describe(const RunOutcome& o) {
  Sections out;
  for (std::size_t i = 0; i < o.rows.size(); i += o.systems.size()) {
    out.push_back(best_section(o, i));
    if (o.power_budget_w) out.push_back(budget_section(o, i, *o.power_budget_w));
    if (auto f = failures_section(o, i)) out.push_back(std::move(*f));
    add_overloaded(o, i, out);
    if (auto p = published_section(o, o.rows[i])) out.push_back(std::move(*p));
  }
  if (o.failed_points > 0)
    out.push_back({.title = fmt::format("{} points could not run (see --json for each reason)",
                                        o.failed_points)});
  return out;
}

Sections describe(const db::StoredRun& run) {
  const db::RunInfo& r = run.info;
  std::string head = fmt::format("run {}: {}, scenario '{}' ({}, hash {}), seed {}\n", r.id,
                                 r.state(), r.scenario_name, r.scenario_file, r.scenario_hash,
                                 r.seed);
  head += fmt::format("racktwin {} (commit {}), catalog {}, calibration {}, options {}\n",
                      r.version, r.commit, r.catalog_hash, r.calibration_hash, r.options);
  head += fmt::format("started {}{}{}, process {} on {}\n", r.started_at,
                      r.finished_at.empty() ? "" : ", finished " + r.finished_at,
                      r.wall_s ? fmt::format(", {:.1f} s wall", *r.wall_s) : "", r.pid, r.host);
  if (!r.error.empty()) head += "error: " + r.error + "\n";
  head += fmt::format("{} points, {} could not run", r.points, r.failed_points);
  Section assumed{.title = fmt::format("Assumptions ({}; catalog values that are not published)",
                                       run.assumptions.size())};
  for (const auto& x : run.assumptions)
    assumed.notes.push_back(fmt::format("- {} {} {} = {}: {}", x.entry_kind, x.entry_id, x.field,
                                        x.value, x.reason));
  return {{.title = head, .gap = false}, assumed, points_section(run)};
}

std::vector<std::vector<std::string>> run_list_table(const std::vector<db::RunInfo>& runs) {
  std::vector<std::vector<std::string>> t{{"id", "status", "scenario", "seed", "points", "failed",
                                           "started (UTC)", "wall s", "racktwin"}};
  for (const auto& r : runs)
    t.push_back({std::to_string(r.id), r.state(), r.scenario_name, std::to_string(r.seed),
                 std::to_string(r.points), std::to_string(r.failed_points), r.started_at,
                 optional_fixed(r.wall_s, 1), r.version + " (" + r.commit + ")"});
  return t;
}

std::vector<std::vector<std::string>> plan_list_table(const std::vector<db::PlanRecord>& plans) {
  std::vector<std::vector<std::string>> t{
      {"id", "plan", "file", "created (UTC)", "throughput runs", "racktwin"}};
  for (const auto& p : plans) {
    std::string ids;
    for (auto id : p.throughput_runs) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    t.push_back({std::to_string(p.id), p.name, p.file, p.created_at, ids.empty() ? "-" : ids,
                 p.version + " (" + p.commit + ")"});
  }
  return t;
}

}  // namespace racktwin::app
