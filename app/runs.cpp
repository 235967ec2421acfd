#include "app/runs.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace racktwin::app {
namespace {

// The metrics the table shows (the JSON has them all).
const std::vector<std::pair<std::string, std::string>> kHeadline{
    {"total_tps_per_xpu", "tok/s/XPU"},
    {"interactivity_tok_s_user", "tok/s/user"},
    {"e2e_median_s", "E2E p50 s"},
    {"tps_per_allin_provisioned_mw", "tok/s per all-in MW"}};

// The failure metrics, when either run rehearsed failures.
const std::vector<std::pair<std::string, std::string>> kFailureHeadline{
    {"retried_requests", "retried"}, {"replica_down_s", "replica-down s"}, {"recovery_s", "recovery s"}};

bool had_failures(const db::Comparison& c) {
  for (const auto& p : c.points)
    for (const auto& m : p.metrics)
      for (const auto& [name, label] : kFailureHeadline)
        if (m.name == name && (m.a.value_or(0) != 0 || m.b.value_or(0) != 0)) return true;
  return false;
}

std::string num(std::optional<double> x, int digits) {
  return x ? fmt::format("{:.{}f}", *x, digits) : std::string("-");
}

int digits_of(const std::string& name) {
  if (name == "e2e_median_s") return 3;
  if (name == "interactivity_tok_s_user" || name == "replica_down_s" || name == "recovery_s") return 1;
  return 0;
}

}  // namespace

std::vector<std::string> comparison_lines(const db::Comparison& c) {
  auto id = [](std::int64_t x) { return std::to_string(x); };
  std::vector<std::string> out;
  out.push_back("run " + id(c.a.id) + " ('" + c.a.scenario_name + "', seed " + std::to_string(c.a.seed) +
                ") against run " + id(c.b.id) + " ('" + c.b.scenario_name + "', seed " +
                std::to_string(c.b.seed) + ")");
  out.push_back("");
  out.push_back(std::string("Run record: ") +
                (c.fields.empty() ? "same scenario, seed, version, catalog and calibration" : "differences"));
  for (const auto& f : c.fields) out.push_back("  " + f.field + ": " + f.a + " -> " + f.b);
  out.push_back("");
  out.push_back(std::string("Scenario text: ") + (c.scenario_diff.empty() ? "identical" : "differences"));
  for (const auto& l : c.scenario_diff) out.push_back("  " + l);
  if (!c.assumptions_only_a.empty() || !c.assumptions_only_b.empty()) {
    out.push_back("");
    out.push_back("Assumptions");
    for (const auto& [list, run] : {std::pair{&c.assumptions_only_a, c.a.id}, std::pair{&c.assumptions_only_b, c.b.id}})
      for (const auto& x : *list)
        out.push_back("  only in run " + id(run) + ": " + x.entry_kind + " " + x.entry_id + " " + x.field +
                      " = " + x.value);
  }
  for (const auto& [list, run] :
       {std::pair{&c.metrics_only_a, c.a.id}, std::pair{&c.metrics_only_b, c.b.id}}) {
    if (list->empty()) continue;
    std::string names;
    for (const auto& n : *list) names += (names.empty() ? "" : ", ") + n;
    out.push_back("");
    out.push_back("Metrics only run " + id(run) + " reports (not compared): " + names);
  }
  out.push_back("");
  out.push_back("Results: " + std::to_string(c.in_both) + " points in both runs, " +
                std::to_string(c.only_in_a) + " only in run " + id(c.a.id) + ", " +
                std::to_string(c.only_in_b) + " only in run " + id(c.b.id) + "; " +
                std::to_string(c.differing_points) + " differ in at least one metric");
  return out;
}

std::vector<std::vector<std::string>> comparison_table(const db::Comparison& c) {
  auto headline = kHeadline;
  if (had_failures(c)) headline.insert(headline.end(), kFailureHeadline.begin(), kFailureHeadline.end());
  std::vector<std::string> header{"point"};
  for (const auto& [name, label] : headline) {
    header.push_back(label + " " + std::to_string(c.a.id));
    header.push_back(std::to_string(c.b.id));
    header.push_back("change");
  }
  std::vector<std::vector<std::string>> rows{header};
  for (const auto& p : c.points) {
    std::vector<std::string> row{p.key.label()};
    for (const auto& [name, label] : headline) {
      const auto it = std::find_if(p.metrics.begin(), p.metrics.end(),
                                   [&](const db::MetricDiff& m) { return m.name == name; });
      const std::optional<double> va = it == p.metrics.end() ? std::nullopt : it->a;
      const std::optional<double> vb = it == p.metrics.end() ? std::nullopt : it->b;
      row.push_back(num(va, digits_of(name)));
      row.push_back(num(vb, digits_of(name)));
      std::string change = "-";
      if (it != p.metrics.end() && it->relative()) {
        char b[32];
        std::snprintf(b, sizeof b, "%+.2f%%", *it->relative() * 100);
        change = it->differs() ? b : "same";
      }
      row.push_back(change);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace racktwin::app
