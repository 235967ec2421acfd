#include "db/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "db/export.hpp"

namespace racktwin::db {

using json = nlohmann::ordered_json;

std::optional<double> MetricDiff::relative() const {
  if (!a || !b || *a == 0) return std::nullopt;
  return (*b - *a) / std::abs(*a);
}

bool PointDiff::differs() const {
  if (!index_a || !index_b || error_a != error_b) return true;
  return std::any_of(metrics.begin(), metrics.end(),
                     [](const MetricDiff& m) { return m.in_both_runs && m.differs(); });
}

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

std::vector<std::string> line_diff(const std::string& a, const std::string& b, int context) {
  const auto x = lines_of(a), y = lines_of(b);
  const std::size_t n = x.size(), m = y.size();
  // lcs[i][j]: longest common subsequence of x[i..] and y[j..].
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t j = m; j-- > 0;)
      lcs[i][j] = x[i] == y[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<std::string> all;
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] == y[j]) {
      all.push_back("  " + x[i]);
      ++i;
      ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      all.push_back("- " + x[i++]);  // removals before additions, as diff prints them
    } else {
      all.push_back("+ " + y[j++]);
    }
  }
  // Keep changes and their context.
  std::vector<bool> keep(all.size(), false);
  bool changed = false;
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (all[k][0] == ' ') continue;
    changed = true;
    const std::size_t from = k >= static_cast<std::size_t>(context) ? k - context : 0;
    const std::size_t to = std::min(all.size() - 1, k + static_cast<std::size_t>(context));
    for (std::size_t t = from; t <= to; ++t) keep[t] = true;
  }
  std::vector<std::string> out;
  if (!changed) return out;
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (keep[k])
      out.push_back(all[k]);
    else if (!out.empty() && out.back() != "  ...")
      out.push_back("  ...");
  }
  if (!out.empty() && out.back() == "  ...") out.pop_back();
  return out;
}

Comparison compare(const StoredRun& a, const StoredRun& b) {
  Comparison c;
  c.a = a.info;
  c.b = b.info;
  auto field = [&](std::string name, const std::string& x, const std::string& y) {
    if (x != y) c.fields.push_back({std::move(name), x, y});
  };
  field("status", a.info.state(), b.info.state());
  field("scenario_name", a.info.scenario_name, b.info.scenario_name);
  field("scenario_file", a.info.scenario_file, b.info.scenario_file);
  field("scenario_hash", a.info.scenario_hash, b.info.scenario_hash);
  field("seed", std::to_string(a.info.seed), std::to_string(b.info.seed));
  field("racktwin_version", a.info.version, b.info.version);
  field("racktwin_commit", a.info.commit, b.info.commit);
  field("catalog_hash", a.info.catalog_hash, b.info.catalog_hash);
  field("calibration_hash", a.info.calibration_hash, b.info.calibration_hash);
  field("options", a.info.options, b.info.options);
  c.scenario_diff = line_diff(a.info.scenario_text, b.info.scenario_text);
  auto sorted = [](std::vector<Assumption> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  const auto sa = sorted(a.assumptions), sb = sorted(b.assumptions);
  std::set_difference(sa.begin(), sa.end(), sb.begin(), sb.end(),
                      std::back_inserter(c.assumptions_only_a));
  std::set_difference(sb.begin(), sb.end(), sa.begin(), sa.end(),
                      std::back_inserter(c.assumptions_only_b));

  // Every metric name of either run, the first run's order first; those one run lacks, listed.
  auto reports = [](const StoredRun& r, const std::string& name) {
    return std::any_of(r.metrics.begin(), r.metrics.end(),
                       [&](const MetricInfo& x) { return x.name == name; });
  };
  std::vector<MetricInfo> names = a.metrics;
  for (const auto& m : a.metrics)
    if (!reports(b, m.name)) c.metrics_only_a.push_back(m.name);
  for (const auto& m : b.metrics)
    if (!reports(a, m.name)) {
      names.push_back(m);
      c.metrics_only_b.push_back(m.name);
    }
  std::set<std::string> one_sided(c.metrics_only_a.begin(), c.metrics_only_a.end());
  one_sided.insert(c.metrics_only_b.begin(), c.metrics_only_b.end());
  std::map<PointKey, const StoredPoint*> in_b;
  for (const auto& p : b.points) in_b.emplace(p.key, &p);
  std::map<PointKey, bool> matched;
  auto diff = [&](const StoredPoint* pa, const StoredPoint* pb) {
    PointDiff d;
    d.key = pa ? pa->key : pb->key;
    if (pa) d.index_a = pa->index, d.error_a = pa->error;
    if (pb) d.index_b = pb->index, d.error_b = pb->error;
    for (const auto& m : names) {
      MetricDiff md{m.name, m.unit, pa ? pa->metric(m.name) : std::nullopt,
                    pb ? pb->metric(m.name) : std::nullopt, !one_sided.contains(m.name)};
      if (md.a || md.b) d.metrics.push_back(md);
    }
    c.differing_points += d.differs() ? 1 : 0;
    (pa && pb ? c.in_both : pa ? c.only_in_a : c.only_in_b) += 1;
    c.points.push_back(std::move(d));
  };
  for (const auto& p : a.points) {
    auto it = in_b.find(p.key);
    const StoredPoint* pb = it == in_b.end() ? nullptr : it->second;
    if (pb) matched[p.key] = true;
    diff(&p, pb);
  }
  for (const auto& p : b.points)
    if (!matched.contains(p.key)) diff(nullptr, &p);
  return c;
}

json comparison_json(const Comparison& c) {
  json j;
  j["a"] = run_info_json(c.a);
  j["b"] = run_info_json(c.b);
  json f = json::array();
  for (const auto& d : c.fields) f.push_back({{"field", d.field}, {"a", d.a}, {"b", d.b}});
  j["run_differences"] = f;
  j["scenario_diff"] = c.scenario_diff;
  auto assumptions = [](const std::vector<Assumption>& v) {
    json out = json::array();
    for (const auto& x : v) out.push_back(assumption_json(x));
    return out;
  };
  j["assumptions_only_in_a"] = assumptions(c.assumptions_only_a);
  j["assumptions_only_in_b"] = assumptions(c.assumptions_only_b);
  j["metrics_only_in_a"] = c.metrics_only_a;
  j["metrics_only_in_b"] = c.metrics_only_b;
  j["differing_points"] = c.differing_points;
  json pts = json::array();
  auto opt = [](const auto& v) { return v ? json(*v) : json(); };
  for (const auto& p : c.points) {
    json ms = json::array();
    for (const auto& m : p.metrics)
      ms.push_back({{"name", m.name},
                    {"unit", m.unit},
                    {"a", opt(m.a)},
                    {"b", opt(m.b)},
                    {"relative_change", opt(m.relative())}});
    json jp = point_key_json(p.key);
    jp.update(json{{"index_a", opt(p.index_a)},
                   {"index_b", opt(p.index_b)},
                   {"error_a", p.error_a},
                   {"error_b", p.error_b},
                   {"differs", p.differs()},
                   {"metrics", ms}});
    pts.push_back(std::move(jp));
  }
  j["points"] = pts;
  return j;
}

}  // namespace racktwin::db
