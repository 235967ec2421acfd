// PlanOutcome::to_json: the `racktwin plan --json` document (docs/plan.md "Output").
#include <fmt/core.h>

#include <algorithm>

#include "app/plan.hpp"

namespace racktwin::app {
namespace {

Json installed_json(const plan::Installed& in) {
  return Json{{"units", in.units},
              {"units_added", in.added},
              {"racks", in.racks},
              {"xpus", in.xpus},
              {"domains_whole", in.domains_whole},
              {"domains_partial", in.domains_partial},
              {"it_mw", in.it_w / 1e6},
              {"facility_mw", in.facility_w / 1e6},
              {"tps", in.tps},
              {"capex_usd", in.capex},
              {"tco_usd_per_year", in.tco_per_year}};
}

Json quarter_json(const plan::QuarterRow& r) {
  Json gens = Json::array();
  for (const auto& g : r.generations) {
    Json j{{"generation", g.generation}};
    j.update(installed_json(g.installed));
    gens.push_back(std::move(j));
  }
  Json sites = Json::array();
  for (const auto& s : r.sites) {
    Json j{{"site", s.site},
           {"energised_mw", s.energised_w / 1e6},
           {"pue", s.pue},
           {"binding", plan::to_string(s.binding)}};
    j.update(installed_json(s.installed));
    sites.push_back(std::move(j));
  }
  Json j{{"quarter", to_string(r.quarter)},
         {"binding", plan::to_string(r.binding)},
         {"capacity_units",
          {{"power", r.room_units}, {"supply", r.ready_units}, {"deployment", r.crew_units}}},
         {"energised_mw", r.energised_w / 1e6}};
  j.update(installed_json(r.total));
  j["tps_per_facility_mw"] = r.tps_per_facility_mw;
  j["capex_cumulative_usd"] = r.capex_cumulative;
  j["opex_usd"] = r.opex;
  j["usd_per_mtok"] = {{"blended", r.usd_per_mtok},
                       {"input", r.usd_per_mtok_input},
                       {"output", r.usd_per_mtok_output}};
  j["tokens_per_usd"] = r.tokens_per_usd;
  j["generations"] = std::move(gens);
  j["sites"] = std::move(sites);
  return j;
}

Json rollout_json(const plan::Rollout& r) {
  Json q = Json::array();
  for (const auto& row : r.quarters) q.push_back(quarter_json(row));
  return q;
}

Json unit_json(const PlannedUnit& p) {
  const auto& u = p.unit;
  Json t = Json::array();
  for (const auto& o : p.throughput)
    t.push_back({{"workload", o.workload},
                 {"scenario", o.scenario},
                 {"run_id", o.run_id},
                 {"point", o.point.index},
                 {"layout", o.point.layout},
                 {"clients", o.point.clients},
                 {"tps_per_xpu", o.point.tps_per_xpu},
                 {"tpot_p50_ms", o.point.tpot_p50_s * 1e3},
                 {"tpot_p99_ms", o.point.tpot_p99_s * 1e3},
                 {"ttft_p99_s", o.point.ttft_p99_s}});
  return Json{
      {"generation", p.generation},
      {"system", p.system},
      {"comparator", p.comparator},
      {"unit", u.unit_name},
      {"xpus_per_unit", u.xpus},
      {"racks_per_unit", u.racks},
      {"domain_xpus", u.domain_xpus},
      {"unit_kw", u.it_power.value() / 1e3},
      {"unit_kw_provisioned", p.it_power_provisioned_w / 1e3},
      {"unit_kw_production", p.it_power_production_w / 1e3},
      {"unit_kw_operating", u.operating_it_power.value() / 1e3},
      {"tps_per_xpu", u.tps_per_xpu},
      {"output_share", u.output_share},
      {"capex_per_unit_usd", u.capex_per_unit ? Json(*u.capex_per_unit) : Json()},
      {"cost_usd_per_xpu_hour", u.cost_per_xpu_s ? Json(*u.cost_per_xpu_s * 3600.0) : Json()},
      {"availability", p.availability ? Json(*p.availability) : Json()},
      {"availability_origin", p.availability_note},
      {"throughput_origin", p.throughput_note},
      {"throughput", std::move(t)}};
}

void csv_rows(const plan::Rollout& r, std::string& out) {
  auto line = [&](const plan::QuarterRow& q, const std::string& gen, const plan::Installed& in,
                  bool total) {
    out += fmt::format(
        "{},{},{},{},{},{:.6f},{:.6f},{:.0f},{:.0f},{:.0f},{:.0f},{:.0f},{:.0f},{:.6g},", r.fleet,
        to_string(q.quarter), gen, total ? plan::to_string(q.binding) : "",
        total ? fmt::format("{:.6f}", q.energised_w / 1e6) : "", in.facility_w / 1e6, in.it_w / 1e6,
        in.units, in.added, in.racks, in.xpus, in.domains_whole, in.domains_partial, in.tps);
    out += fmt::format("{:.2f},{:.2f},{}", in.capex, in.tco_per_year,
                       total ? fmt::format("{:.2f}", q.capex_cumulative) : "");
    if (total)
      out += fmt::format(",{:.2f},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g}\n", q.opex,
                         q.tps_per_facility_mw, q.usd_per_mtok, q.usd_per_mtok_input,
                         q.usd_per_mtok_output, q.tokens_per_usd);
    else
      out += ",,,,,,\n";
  };
  for (const auto& q : r.quarters) {
    line(q, "all", q.total, true);
    for (const auto& g : q.generations) line(q, g.generation, g.installed, false);
  }
}

Json swings_json(const std::vector<plan::Swing>& swings) {
  Json a = Json::array();
  for (const auto& w : swings)
    a.push_back({{"figure", w.figure},
                 {"low", w.low},
                 {"high", w.high},
                 {"usd_per_mtok_low", w.usd_per_mtok_low},
                 {"usd_per_mtok_high", w.usd_per_mtok_high},
                 {"tps_low", w.tps_low},
                 {"tps_high", w.tps_high}});
  return a;
}

Json uncertainty_json(const PlanOutcome& o) {
  if (!o.sensitivity || !o.monte_carlo) return Json();
  Json bands = Json::array();
  for (const auto& q : o.monte_carlo->quarters)
    bands.push_back({{"quarter", to_string(q.quarter)},
                     {"tps", {{"p10", q.tps.p10}, {"p50", q.tps.p50}, {"p90", q.tps.p90}}},
                     {"usd_per_mtok",
                      {{"p10", q.usd_per_mtok.p10},
                       {"p50", q.usd_per_mtok.p50},
                       {"p90", q.usd_per_mtok.p90}}}});
  return Json{{"draws", o.monte_carlo->draws},
              {"seed", o.plan.uncertainty.seed},
              {"final_quarter",
               {{"usd_per_mtok", o.sensitivity->usd_per_mtok}, {"tps", o.sensitivity->tps}}},
              {"sensitivity_by_cost", swings_json(o.sensitivity->by_cost)},
              {"sensitivity_by_tokens", swings_json(o.sensitivity->by_tokens)},
              {"monte_carlo", std::move(bands)}};
}

}  // namespace

std::string money_text(double usd) {
  if (usd >= 1e9) return fmt::format("{:.2f}B", usd / 1e9);
  if (usd >= 1e6) return fmt::format("{:.1f}M", usd / 1e6);
  return fmt::format("{:.0f}", usd);
}

std::vector<std::vector<std::string>> PlanOutcome::quarter_table() const {
  const std::string unit = units.empty() ? "units" : units.front().unit.unit_name + "s";
  std::vector<std::vector<std::string>> rows{{"quarter", "binding", "MW energised", "MW used", unit,
                                              "added", "XPUs", "domains", "Mtok/s", "tok/s/MW",
                                              "capex $", "cum capex $", "TCO $/yr", "$/Mtok"}};
  for (const auto& r : rollout.quarters) {
    const auto& in = r.total;
    rows.push_back({to_string(r.quarter), plan::to_string(r.binding),
                    fmt::format("{:.1f}", r.energised_w / 1e6),
                    fmt::format("{:.1f}", in.facility_w / 1e6), fmt::format("{:.0f}", in.units),
                    fmt::format("{:.0f}", in.added), fmt::format("{:.0f}", in.xpus),
                    fmt::format("{:.0f}+{:.0f}", in.domains_whole, in.domains_partial),
                    fmt::format("{:.1f}", in.tps / 1e6),
                    fmt::format("{:.0f}", r.tps_per_facility_mw), money_text(in.capex),
                    money_text(r.capex_cumulative), money_text(in.tco_per_year),
                    r.usd_per_mtok > 0 ? fmt::format("{:.4f}", r.usd_per_mtok) : "-"});
  }
  return rows;
}

std::vector<std::vector<std::string>> PlanOutcome::unit_table() const {
  // The availability column only when a unit counts one.
  const bool available =
      std::any_of(units.begin(), units.end(), [](const auto& u) { return u.availability; });
  std::vector<std::vector<std::string>> rows{{"generation", "system", "unit", "XPUs",
                                              "kW (" + to_string(plan.basis) + ")", "kW operating",
                                              "tok/s/XPU", "throughput", "cost"}};
  if (available) rows[0].insert(rows[0].begin() + 6, "available");
  for (const auto& u : units) {
    std::string origin = u.throughput_note;
    for (const auto& th : u.throughput)
      origin += fmt::format("; {}: run {} {} C={} TPOT p50 {:.1f} ms", th.workload, th.run_id,
                            th.point.layout, th.point.clients, th.point.tpot_p50_s * 1e3);
    const std::string cost = u.unit.capex_per_unit
                                 ? "$" + money_text(*u.unit.capex_per_unit) + "/unit"
                                 : fmt::format("${:.3f}/XPU-h", *u.unit.cost_per_xpu_s * 3600);
    rows.push_back({u.generation + (u.comparator ? " (comparator)" : ""), u.system,
                    u.unit.unit_name, std::to_string(u.unit.xpus),
                    fmt::format("{:.1f}", u.unit.it_power.value() / 1e3),
                    fmt::format("{:.1f}", u.unit.operating_it_power.value() / 1e3),
                    fmt::format("{:.0f}", u.unit.tps_per_xpu), origin, cost});
    if (available)
      rows.back().insert(rows.back().begin() + 6,
                         u.availability ? fmt::format("{:.3f}%", *u.availability * 100) : "-");
  }
  return rows;
}

std::vector<std::vector<std::string>> PlanOutcome::comparator_table() const {
  if (comparators.empty()) return {};
  std::vector<std::vector<std::string>> rows{{"quarter", "plan Mtok/s", "plan $/Mtok"}};
  for (const auto& c : comparators) {
    rows[0].push_back(c.fleet + " Mtok/s");
    rows[0].push_back(c.fleet + " $/Mtok");
  }
  auto mtok = [](double tps) { return fmt::format("{:.1f}", tps / 1e6); };
  auto price = [](double v) { return v > 0 ? fmt::format("{:.4f}", v) : std::string("-"); };
  for (std::size_t q = 0; q < rollout.quarters.size(); ++q) {
    const auto& r = rollout.quarters[q];
    std::vector<std::string> row{to_string(r.quarter), mtok(r.total.tps), price(r.usd_per_mtok)};
    for (const auto& c : comparators) {
      row.push_back(mtok(c.quarters[q].total.tps));
      row.push_back(price(c.quarters[q].usd_per_mtok));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string PlanOutcome::to_csv() const {
  std::string out =
      "fleet,quarter,generation,binding,energised_mw,facility_mw,it_mw,units,units_added,racks,"
      "xpus,domains_whole,domains_partial,tps,capex_usd,tco_usd_per_year,capex_cumulative_usd,"
      "opex_usd,tps_per_facility_mw,usd_per_mtok,usd_per_mtok_input,usd_per_mtok_output,"
      "tokens_per_usd\n";
  csv_rows(rollout, out);
  for (const auto& c : comparators) csv_rows(c, out);
  return out;
}

Json PlanOutcome::to_json() const {
  Json units_j = Json::array();
  for (const auto& u : units) units_j.push_back(unit_json(u));
  Json comps = Json::array();
  for (const auto& c : comparators)
    comps.push_back({{"fleet", c.fleet}, {"quarters", rollout_json(c)}});
  Json assumed = Json::array();
  for (const auto& a : assumptions)
    assumed.push_back({{"what", a.what},
                       {"value", a.value},
                       {"where", a.where},
                       {"reason", a.reason},
                       {"source", a.source}});
  return Json{{"plan", plan.name},
              {"file", plan.file},
              {"power_basis", to_string(plan.basis)},
              {"quarters_from", to_string(plan.first)},
              {"quarters_to", to_string(plan.last)},
              {"units", std::move(units_j)},
              {"quarters", rollout_json(rollout)},
              {"comparators", std::move(comps)},
              {"assumptions", std::move(assumed)},
              {"uncertainty", uncertainty_json(*this)}};
}

}  // namespace racktwin::app
