#include "db/codec.hpp"

#include <cmath>
#include <limits>

#include "db/export.hpp"
#include "sim/result_schema.hpp"

namespace racktwin::db {

using json = nlohmann::ordered_json;

StoredPoint stored_point(const sim::PointResult& r, std::int64_t index) {
  StoredPoint p;
  p.index = index;
  p.key = point_key(r);
  p.xpus = r.xpus;
  p.error = r.error;
  p.metrics = point_metrics(r);
  if (!r.error.empty()) return p;
  for (const auto& d : sim::distribution_fields())
    p.percentiles_s[std::string(d.name)] = (r.*d.stats).percentiles;
  p.timeseries.reserve(r.timeseries.size());
  for (const auto& s : r.timeseries) {
    SecondSample x;
    for (const auto& f : sim::series_fields()) x.*f.value = s.*f.value;
    p.timeseries.push_back(x);
  }
  return p;
}

sim::PointResult to_result(const StoredPoint& p, sim::PointSpec spec) {
  sim::PointResult r;
  r.spec = std::move(spec);
  r.error = p.error;
  for (const auto& m : p.metrics)
    if (const auto* f = sim::find_result_field(m.name); f != nullptr && f->set != nullptr)
      f->set(r, m.value);
  r.xpus = p.xpus;
  for (const auto& d : sim::distribution_fields())
    if (auto it = p.percentiles_s.find(std::string(d.name)); it != p.percentiles_s.end())
      (r.*d.stats).percentiles = it->second;
  for (const auto& s : p.timeseries) {
    sim::PointResult::Second x;
    for (const auto& f : sim::series_fields()) x.*f.value = s.*f.value;
    r.timeseries.push_back(x);
  }
  return r;
}

namespace {

json number(double x) {
  return std::isfinite(x) ? json(x) : json(nullptr);
}

double number_of(const json& j) {
  return j.is_null() ? std::numeric_limits<double>::quiet_NaN() : j.get<double>();
}

}  // namespace

json point_json(const StoredPoint& p, const PointJsonOptions& what) {
  json j = {{"index", p.index}};
  j.update(point_key_json(p.key));
  j["xpus"] = p.xpus;
  j["error"] = p.error;
  json m = json::object();
  for (const auto& x : p.metrics) m[x.name] = number(x.value);
  j["metrics"] = m;
  if (what.percentiles) {
    json d = json::object();
    for (const auto& [name, values] : p.percentiles_s) {
      json v = json::array();
      for (double x : values) v.push_back(number(x));
      d[name] = v;
    }
    j["latency_percentiles"] = d;
  }
  if (what.timeseries && !p.timeseries.empty()) {
    json series = json::object();
    for (const auto& f : sim::series_fields()) {
      json col = json::array();
      for (const auto& s : p.timeseries) col.push_back(number(s.*f.value));
      series[std::string(f.name)] = col;
    }
    j["timeseries_1s"] = series;
  }
  return j;
}

std::expected<StoredPoint, std::string> point_from_json(const json& j) {
  try {
    StoredPoint p;
    p.index = j.at("index").get<std::int64_t>();
    PointKey& k = p.key;
    k.system = j.at("system").get<std::string>();
    k.model = j.at("model").get<std::string>();
    k.workload = j.at("workload").get<std::string>();
    k.layout = j.at("layout").get<std::string>();
    k.precision = j.at("precision").get<std::string>();
    k.serving = j.at("serving").get<std::string>();
    k.arrivals = j.at("arrivals").get<std::string>();
    k.concurrency = j.at("concurrency").get<int>();
    k.rate = j.at("rate_req_s").get<double>();
    k.replicas = j.at("replicas").get<int>();
    p.xpus = j.at("xpus").get<int>();
    p.error = j.at("error").get<std::string>();
    for (const auto& [name, value] : j.at("metrics").items()) {
      const auto* f = sim::find_result_field(name);
      p.metrics.push_back({name, number_of(value), f ? std::string(f->unit) : std::string()});
    }
    if (j.contains("latency_percentiles"))
      for (const auto& [name, values] : j.at("latency_percentiles").items())
        for (const auto& v : values) p.percentiles_s[name].push_back(number_of(v));
    if (j.contains("timeseries_1s")) {
      const json& series = j.at("timeseries_1s");
      const std::size_t n = series.at("output_tokens").size();
      p.timeseries.assign(n, {});
      for (const auto& f : sim::series_fields()) {
        const json& col = series.at(std::string(f.name));
        if (col.size() != n)
          return std::unexpected("series '" + std::string(f.name) + "' is short");
        for (std::size_t t = 0; t < n; ++t) p.timeseries[t].*f.value = number_of(col[t]);
      }
    }
    return p;
  } catch (const json::exception& e) {
    return std::unexpected(std::string("malformed point: ") + e.what());
  }
}

}  // namespace racktwin::db
