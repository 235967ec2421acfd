// The rehearsal's JSON document, event CSV and charts.
#include <QChart>
#include <fmt/core.h>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "app/rehearse.hpp"
#include "racktwin/version.hpp"

namespace racktwin::app {
namespace {

// NaN (an overloaded interval's latency) becomes null.
Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json recovery_json(const rehearse::EngineOutcome& e) {
  std::vector<double> r;
  int unrecovered = 0;
  for (const auto& ev : e.events) {
    if (ev.replicas_hit == 0) continue;
    if (ev.recovered_s < 0)
      ++unrecovered;
    else
      r.push_back(ev.recovered_s);
  }
  std::sort(r.begin(), r.end());
  auto q = [&](double f) {
    return r.empty() ? Json(nullptr) : Json(r[static_cast<std::size_t>(f * static_cast<double>(r.size() - 1))]);
  };
  double mean = 0;
  for (double x : r) mean += x;
  return Json{{"events_with_impact", r.size() + static_cast<std::size_t>(unrecovered)},
              {"not_recovered_within_horizon", unrecovered},
              {"mean_s", r.empty() ? Json(nullptr) : Json(mean / static_cast<double>(r.size()))},
              {"p50_s", q(0.5)},
              {"p90_s", q(0.9)},
              {"max_s", q(1.0)}};
}

Json classes_json(const rehearse::EngineOutcome& e, bool jobs) {
  Json out = Json::array();
  for (std::size_t c = 0; c < kAllPartClasses.size(); ++c) {
    const auto& t = e.classes[c];
    Json j{{"class", to_string(kAllPartClasses[c])}, {"failures", t.failures}};
    if (jobs) {
      j["interruptions"] = t.interruptions;
    } else {
      j["spares_at_start"] = t.spares_at_start;
      j["spares_used"] = t.spares_used;
      j["min_spares"] = t.min_spares;
    }
    out.push_back(std::move(j));
  }
  return out;
}

Json samples_json(const rehearse::EngineOutcome& e) {
  Json out = Json::array();
  for (const auto& s : e.samples)
    out.push_back({{"t_h", s.t_s / 3600.0},
                   {"replicas_up", s.replicas_up},
                   {"min_replicas_up", s.min_replicas_up},
                   {"attainment", s.attainment},
                   {"served_tps", s.served_tps},
                   {"lost_tps", s.lost_tps},
                   {"ttft_p99_s", number(s.ttft_p99_s)},
                   {"tpot_p99_s", number(s.tpot_p99_s)},
                   {"failures", s.failures},
                   {"parts_down", s.parts_down}});
  return out;
}

// What the serving counts count: a replica, or a group of each pool's replicas.
Json unit_json(const RehearsalOutcome& o) {
  Json pools = Json::array();
  const auto& s = o.surrogate;
  const char* roles[] = {"prefill", "decode"};
  if (s.grouped())
    for (std::size_t i = 0; i < s.pools.size(); ++i)
      pools.push_back({{"role", roles[std::min<std::size_t>(i, 1)]},
                       {"xpus", s.pools[i].xpus},
                       {"replicas", s.pools[i].replicas}});
  return Json{{"kind", o.unit()}, {"xpus", s.unit_xpus()}, {"pools", std::move(pools)}};
}

Json serving_json(const RehearsalOutcome& o) {
  const auto& e = o.outcome;
  Json search = Json::array();
  for (const auto& t : o.search_curve)
    search.push_back({{"spare_racks", t.spare_racks},
                      {"offered_replicas", t.offered_replicas},
                      {"attainment", t.attainment},
                      {"tokens_lost_share", t.tokens_lost_share}});
  const auto& s = o.surrogate;
  Json curve = Json::array();
  for (const auto& p : s.curve)
    curve.push_back({{"tps_per_replica", p.tps}, {"ttft_p99_s", p.ttft_p99_s}, {"tpot_p99_s", p.tpot_p99_s}});
  return Json{
      {"surrogate", {{"from", o.surrogate_note},
                     {"run_id", o.run_id},
                     {"layout", o.layout},
                     {"replica_xpus", s.replica_xpus},
                     {"unit", unit_json(o)},
                     {"tps_per_replica_at_target", s.tps_at_target},
                     {"tps_per_replica_saturated", s.tps_saturated},
                     {"latency_by_load", std::move(curve)}}},
      {"spare", {{"racks", o.racks},
                 {"replicas_per_rack", o.replicas_per_rack},
                 {"spare_racks_at_run", o.rehearsal.spare_racks},
                 {"attainment_goal", o.rehearsal.attainment_goal},
                 {"search", std::move(search)},
                 {"racks_needed", o.spare_needed ? Json(*o.spare_needed) : Json(nullptr)},
                 {"racks_needed_per_domain",
                  o.spare_needed ? Json(static_cast<double>(*o.spare_needed) / o.rehearsal.domains)
                                 : Json(nullptr)}}},
      {"replicas_total", e.replicas_total},
      {"offered_replicas", e.offered_replicas},
      {"availability", e.availability},
      {"attainment", e.attainment},
      {"min_replicas_up", e.min_replicas_up},
      {"tokens_offered", e.tokens_offered},
      {"tokens_served", e.tokens_served},
      {"tokens_late", e.tokens_late},
      {"tokens_lost", e.tokens_lost},
      {"technician_utilisation", e.technician_utilisation},
      {"swaps_unfinished", e.swaps_unfinished},
      {"recovery", recovery_json(e)}};
}

Json jobs_json(const RehearsalOutcome& o) {
  Json out = Json::array();
  for (const auto& j : o.jobs) {
    Json by = Json::object();
    for (const auto& [c, n] : j.by_class) by[c] = n;
    out.push_back({{"job_xpus", j.job_xpus},
                   {"jobs", j.jobs},
                   {"replications", j.replications},
                   {"interruptions", j.interruptions},
                   {"interruptions_fewest", j.interruptions_lo},
                   {"interruptions_most", j.interruptions_hi},
                   {"mttf_h", j.mttf_h},
                   {"by_class", std::move(by)}});
  }
  return out;
}

}  // namespace

Json RehearsalOutcome::to_json() const {
  const auto& r = rehearsal;
  Json figs = Json::array();
  for (const auto& f : figures)
    figs.push_back({{"what", f.what}, {"value", f.value}, {"where", f.where},
                    {"assumption", f.assumption}, {"reason", f.reason}, {"source", f.source}});
  Json j{{"rehearsal", r.name},
         {"file", r.file},
         {"version", kVersion},
         {"commit", kGitCommit},
         {"seed", seed},
         {"system", r.system},
         {"domains", r.domains},
         {"xpus", outcome.xpus_total},
         {"horizon_h", r.horizon.value() / 3600.0},
         {"sample_every_h", r.sample_every.value() / 3600.0}};
  if (r.serving)
    j["serving"] = serving_json(*this);
  else
    j["jobs"] = jobs_json(*this);
  j["failures"] = outcome.events.size();
  j["classes"] = classes_json(outcome, !r.serving);
  if (r.serving) j["samples"] = samples_json(outcome);
  j["figures"] = std::move(figs);
  return j;
}

std::string RehearsalOutcome::events_csv() const {
  std::string out = "t_h,domain,part,class,xpus_out,hit,recovered_h,waited_spare_h,waited_technician_h\n";
  char line[512];
  for (const auto& e : outcome.events) {
    std::snprintf(line, sizeof line, "%.6f,%d,%s,%s,%d,%d,%s,%.6f,%.6f\n", e.t_s / 3600.0, e.domain,
                  e.part.c_str(), to_string(e.cls).c_str(), e.xpus_out, e.replicas_hit,
                  e.recovered_s < 0 ? "" : std::to_string(e.recovered_s / 3600.0).c_str(),
                  e.waited_spare_s / 3600.0, e.waited_technician_s / 3600.0);
    out += line;
  }
  return out;
}

std::vector<charts::NamedChart> rehearsal_charts(const RehearsalOutcome& o) {
  std::vector<charts::NamedChart> out;
  const auto& e = o.outcome;
  if (!o.rehearsal.serving || e.samples.empty()) return out;
  const double step_h = o.rehearsal.sample_every.value() / 3600.0;
  charts::XYChart timeline{"Failures and parts awaiting repair — " + o.rehearsal.name, "time (days)",
                           "parts", {}, std::nullopt};
  charts::XYSeries began{"failures in the interval", {}}, down{"parts down awaiting repair", {}};
  for (const auto& s : e.samples) {
    const double mid = (s.t_s / 3600.0 + step_h / 2) / 24.0;
    began.points.emplace_back(mid, s.failures);
    down.points.emplace_back(mid, s.parts_down);
  }
  timeline.series = {began, down};
  out.push_back({"timeline", charts::xy_line_chart(timeline)});
  charts::XYChart tps{"Tokens per second through the failures — " + o.rehearsal.name,
                      "time (days)", "million tok/s", {}, std::nullopt};
  charts::XYSeries served{"served", {}}, offered{"offered (the load)", {}, true},
      capacity{"capacity at the target (" + o.unit() + "s up)", {}};
  const double load = e.offered_replicas * o.surrogate.tps_at_target / 1e6;
  for (const auto& s : e.samples) {
    const double mid = (s.t_s / 3600.0 + step_h / 2) / 24.0;
    served.points.emplace_back(mid, s.served_tps / 1e6);
    offered.points.emplace_back(mid, load);
    capacity.points.emplace_back(mid, s.replicas_up * o.surrogate.tps_at_target / 1e6);
  }
  charts::XYSeries fewest_cap{"capacity at the fewest " + o.unit() + "s up in the interval", {}, true};
  double lo = load;
  for (const auto& s : e.samples) {
    const double mid = (s.t_s / 3600.0 + step_h / 2) / 24.0;
    fewest_cap.points.emplace_back(mid, s.min_replicas_up * o.surrogate.tps_at_target / 1e6);
    lo = std::min({lo, s.served_tps / 1e6, fewest_cap.points.back().second});
  }
  const double hi = e.replicas_total * o.surrogate.tps_at_target / 1e6;
  tps.series = {capacity, fewest_cap, served, offered};
  tps.y_range = std::pair{std::max(0.0, lo - 0.1 * (hi - lo)), hi + 0.05 * (hi - lo)};
  out.push_back({"throughput", charts::xy_line_chart(tps)});
  charts::XYChart att{(o.surrogate.grouped() ? "Groups" : "Replicas") +
                          std::string(" up and service-target attainment — ") + o.rehearsal.name,
                      "time (days)", "share", {}, std::pair{0.0, 1.0}};
  charts::XYSeries up{o.unit() + "s up / all", {}}, met{"time at the target (per interval)", {}},
      fewest{"fewest " + o.unit() + "s up / all", {}, true};
  for (const auto& s : e.samples) {
    const double mid = (s.t_s / 3600.0 + step_h / 2) / 24.0;
    up.points.emplace_back(mid, s.replicas_up / std::max(1, e.replicas_total));
    fewest.points.emplace_back(mid, s.min_replicas_up / std::max(1, e.replicas_total));
    met.points.emplace_back(mid, s.attainment);
  }
  att.series = {up, fewest, met};
  double low = e.min_replicas_up / std::max(1, e.replicas_total);
  for (const auto& s : e.samples) low = std::min(low, s.attainment);
  att.y_range = std::pair{std::max(0.0, std::floor(std::min(0.99, low) * 100) / 100), 1.0};
  out.push_back({"attainment", charts::xy_line_chart(att)});
  return out;
}

std::expected<std::vector<std::string>, std::string> render_rehearsal_plots(
    const RehearsalOutcome& o, const std::string& dir, charts::Formats formats) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return std::unexpected("cannot create " + dir + ": " + ec.message());
  std::vector<std::string> files;
  for (auto& c : rehearsal_charts(o)) {
    auto f = charts::save_chart(std::move(c.chart), dir + "/" + o.rehearsal.name + "-" + c.name, formats);
    if (!f) return std::unexpected(f.error());
    files.insert(files.end(), f->begin(), f->end());
  }
  return files;
}

namespace {

std::string pct(double v, int decimals = 3) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f%%", decimals, v * 100);
  return b;
}

std::string fixed(double v, int decimals) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::string duration(double s) {
  if (s < 0) return "-";
  return s < 3600 ? fixed(s / 60, 0) + " min" : fixed(s / 3600, 1) + " h";
}

}  // namespace

std::string RehearsalOutcome::unit_description() const {
  const auto& s = surrogate;
  std::string out = std::to_string(s.unit_xpus()) + " XPUs per " + unit();
  if (!s.grouped()) return out;
  auto pool = [](const rehearse::Surrogate::Pool& p, const char* role) {
    return std::to_string(p.replicas) + " " + role + (p.replicas == 1 ? " replica" : " replicas") +
           " of " + std::to_string(p.xpus);
  };
  return out + " (" + pool(s.pools[0], "prefill") + " XPUs and " + pool(s.pools[1], "decode") + ")";
}

std::string RehearsalOutcome::spare_sentence() const {
  const std::string goal = fmt::format("{:g}", rehearsal.attainment_goal * 100);
  if (!spare_needed)
    return "No spare capacity holds " + goal +
           "% attainment: failures outlast it even with one rack serving.";
  const int n = *spare_needed;
  return std::to_string(n) + (n == 1 ? " spare rack" : " spare racks") + " of the site's " +
         std::to_string(racks) + " (" + fixed(static_cast<double>(n) / rehearsal.domains, 2) +
         " per domain) " + (n == 1 ? "holds " : "hold ") + goal + "% attainment.";
}

std::vector<std::vector<std::string>> RehearsalOutcome::summary_table() const {
  const auto& e = outcome;
  const double offered = e.tokens_offered > 0 ? e.tokens_offered : 1;
  const double fewest = e.min_replicas_up;  // a fraction of a group while a pool is short
  const bool whole = std::abs(fewest - std::round(fewest)) < 1e-9;
  return {{"availability", "attainment", "fewest " + unit() + "s up", "tokens lost", "tokens late",
           "technicians busy", "swaps open at end"},
          {pct(e.availability), pct(e.attainment), fixed(fewest, whole ? 0 : 2),
           pct(e.tokens_lost / offered), pct(e.tokens_late / offered),
           pct(e.technician_utilisation, 1), std::to_string(e.swaps_unfinished)}};
}

std::vector<std::vector<std::string>> RehearsalOutcome::class_table() const {
  const auto& e = outcome;
  const bool job_mode = !rehearsal.serving;
  std::vector<std::string> head{"class", "tier", "failures"};
  if (job_mode)
    head.push_back("interruptions");
  else
    for (const char* h : {"spares at start", "used", "fewest in pool", "mean recovery"}) head.push_back(h);
  std::vector<std::vector<std::string>> rows{head};
  for (std::size_t c = 0; c < kAllPartClasses.size(); ++c) {
    const auto& k = e.classes[c];
    const RepairTier tier = rehearsal.classes[c].tier;
    std::vector<std::string> row{to_string(kAllPartClasses[c]), to_string(tier), std::to_string(k.failures)};
    if (job_mode) {
      row.push_back(std::to_string(k.interruptions));
      rows.push_back(std::move(row));
      continue;
    }
    double sum = 0;
    int n = 0;
    for (const auto& ev : e.events)
      if (ev.cls == kAllPartClasses[c] && ev.recovered_s >= 0 && ev.replicas_hit > 0) {
        sum += ev.recovered_s;
        ++n;
      }
    const bool swap = tier == RepairTier::swap;
    row.push_back(swap ? std::to_string(k.spares_at_start) : "-");
    row.push_back(swap ? std::to_string(k.spares_used) : "-");
    row.push_back(swap ? std::to_string(k.min_spares) : "-");
    row.push_back(n > 0 ? duration(sum / n) : "-");
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::vector<std::string>> RehearsalOutcome::search_table() const {
  std::vector<std::vector<std::string>> rows{
      {"spare racks", "per domain", "offered " + unit() + "s", "attainment", "tokens lost"}};
  for (const auto& s : search)
    rows.push_back({std::to_string(s.spare_racks),
                    fixed(static_cast<double>(s.spare_racks) / rehearsal.domains, 2),
                    fixed(s.offered_replicas, 1), pct(s.attainment), pct(s.tokens_lost_share)});
  return rows;
}

std::vector<std::vector<std::string>> RehearsalOutcome::jobs_table() const {
  std::vector<std::vector<std::string>> rows{
      {"XPUs per job", "jobs", "replications", "interruptions (mean)", "fewest", "most", "MTTF"}};
  for (const auto& j : jobs)
    rows.push_back({std::to_string(j.job_xpus), std::to_string(j.jobs), std::to_string(j.replications),
                    fixed(j.interruptions, 1), fixed(j.interruptions_lo, 0), fixed(j.interruptions_hi, 0),
                    j.interruptions > 0 ? (j.mttf_h >= 48 ? fixed(j.mttf_h / 24, 1) + " days"
                                                          : fixed(j.mttf_h, 2) + " h")
                                        : "none"});
  return rows;
}

std::vector<std::vector<std::string>> RehearsalOutcome::events_table(std::size_t limit) const {
  std::vector<std::vector<std::string>> rows{
      {"day", "domain", "part", "class", "XPUs out", rehearsal.serving ? "replicas hit" : "jobs hit",
       "recovered after"}};
  for (std::size_t i = 0; i < outcome.events.size() && i < limit; ++i) {
    const auto& e = outcome.events[i];
    rows.push_back({fixed(e.t_s / 86400, 3), std::to_string(e.domain), e.part, to_string(e.cls),
                    std::to_string(e.xpus_out), std::to_string(e.replicas_hit),
                    e.recovered_s < 0 ? "not within the horizon" : duration(e.recovered_s)});
  }
  return rows;
}

}  // namespace racktwin::app
