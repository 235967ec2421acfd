#include "db/export.hpp"

#include "db/codec.hpp"

#include <fmt/core.h>

namespace racktwin::db {

using json = nlohmann::ordered_json;

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string number_text(double x) {
  return fmt::format("{}", x);
}

namespace {

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_field(fields[i]);
  return line + "\n";
}

// The run record as (field, value) pairs, in the order of the runs table.
std::vector<std::pair<std::string, std::string>> run_fields(const RunInfo& r) {
  return {{"id", std::to_string(r.id)},
          {"status", r.state()},
          {"scenario_name", r.scenario_name},
          {"scenario_file", r.scenario_file},
          {"scenario_hash", r.scenario_hash},
          {"seed", std::to_string(r.seed)},
          {"racktwin_version", r.version},
          {"racktwin_commit", r.commit},
          {"catalog_hash", r.catalog_hash},
          {"calibration_hash", r.calibration_hash},
          {"options", r.options},
          {"started_at", r.started_at},
          {"finished_at", r.finished_at},
          {"wall_s", r.wall_s ? number_text(*r.wall_s) : ""},
          {"error", r.error},
          {"pid", std::to_string(r.pid)},
          {"host", r.host},
          {"points", std::to_string(r.points)},
          {"failed_points", std::to_string(r.failed_points)}};
}

std::vector<std::string> key_fields(const StoredPoint& p) {
  return {std::to_string(p.index),
          p.key.system,
          p.key.model,
          p.key.workload,
          p.key.layout,
          p.key.precision,
          p.key.serving,
          p.key.arrivals,
          std::to_string(p.key.concurrency),
          number_text(p.key.rate),
          std::to_string(p.key.replicas),
          std::to_string(p.xpus),
          p.error};
}

const std::vector<std::string> kKeyColumns{
    "index",    "system",      "model",      "workload", "layout", "precision", "serving",
    "arrivals", "concurrency", "rate_req_s", "replicas", "xpus",   "error"};

}  // namespace

std::vector<std::pair<std::string, std::string>> csv_files(const StoredRun& run) {
  std::vector<std::pair<std::string, std::string>> files;
  std::string s = csv_line({"field", "value"});
  for (const auto& [k, v] : run_fields(run.info)) s += csv_line({k, v});
  files.emplace_back("run.csv", s);

  std::vector<std::string> header = kKeyColumns;
  for (const auto& m : run.metrics) header.push_back(m.name);
  s = csv_line(header);
  for (const auto& p : run.points) {
    std::vector<std::string> row = key_fields(p);
    for (const auto& m : run.metrics) {
      const auto v = p.metric(m.name);
      row.push_back(v ? number_text(*v) : "");
    }
    s += csv_line(row);
  }
  files.emplace_back("points.csv", s);

  s = csv_line({"metric", "unit"});
  for (const auto& m : run.metrics) s += csv_line({m.name, m.unit});
  files.emplace_back("metrics.csv", s);

  s = csv_line({"index", "metric", "percentile", "value_s"});
  for (const auto& p : run.points)
    for (const auto& [name, values] : p.percentiles_s)
      for (std::size_t k = 0; k < values.size(); ++k)
        s += csv_line({std::to_string(p.index), name, std::to_string(k), number_text(values[k])});
  files.emplace_back("latency_percentiles.csv", s);

  bool series = false;
  for (const auto& p : run.points) series = series || !p.timeseries.empty();
  if (series) {
    s = csv_line(
        {"index", "second", "output_tokens", "prefill_tokens", "completed", "xpu_power_w"});
    for (const auto& p : run.points)
      for (std::size_t t = 0; t < p.timeseries.size(); ++t) {
        const auto& x = p.timeseries[t];
        s += csv_line({std::to_string(p.index), std::to_string(t), number_text(x.output_tokens),
                       number_text(x.prefill_tokens), number_text(x.completed),
                       number_text(x.xpu_power_w)});
      }
    files.emplace_back("timeseries.csv", s);
  }

  s = csv_line({"entry_kind", "entry_id", "field", "value", "reason"});
  for (const auto& a : run.assumptions)
    s += csv_line({a.entry_kind, a.entry_id, a.field, a.value, a.reason});
  files.emplace_back("assumptions.csv", s);
  files.emplace_back("scenario.yaml", run.info.scenario_text);
  return files;
}

json assumption_json(const Assumption& a) {
  return {{"entry_kind", a.entry_kind},
          {"entry_id", a.entry_id},
          {"field", a.field},
          {"value", a.value},
          {"reason", a.reason}};
}

json point_key_json(const PointKey& k) {
  return {{"system", k.system},       {"model", k.model},
          {"workload", k.workload},   {"layout", k.layout},
          {"precision", k.precision}, {"serving", k.serving},
          {"arrivals", k.arrivals},   {"concurrency", k.concurrency},
          {"rate_req_s", k.rate},     {"replicas", k.replicas}};
}

json run_info_json(const RunInfo& r) {
  json j;
  j["id"] = r.id;
  j["status"] = r.state();
  j["scenario"] = {{"name", r.scenario_name}, {"file", r.scenario_file}, {"hash", r.scenario_hash}};
  j["seed"] = r.seed;
  j["racktwin"] = r.version;
  j["commit"] = r.commit;
  j["catalog_hash"] = r.catalog_hash;
  j["calibration_hash"] = r.calibration_hash;
  j["options"] = r.options.empty() ? json::object() : json::parse(r.options);
  j["started_at"] = r.started_at;
  j["finished_at"] = r.finished_at.empty() ? json() : json(r.finished_at);
  j["wall_s"] = r.wall_s ? json(*r.wall_s) : json();
  j["error"] = r.error;
  j["pid"] = r.pid;
  j["host"] = r.host;
  j["points"] = r.points;
  j["failed_points"] = r.failed_points;
  return j;
}

json run_json(const StoredRun& run, const JsonOptions& what) {
  json j;
  j["run"] = run_info_json(run.info);
  if (what.scenario_text) j["run"]["scenario"]["text"] = run.info.scenario_text;
  json as = json::array();
  for (const auto& a : run.assumptions) as.push_back(assumption_json(a));
  j["assumptions"] = as;
  json units = json::object();
  for (const auto& m : run.metrics) units[m.name] = m.unit;
  j["units"] = units;
  json pts = json::array();
  for (const auto& p : run.points)
    pts.push_back(point_json(p, {what.percentiles, what.timeseries}));
  j["points"] = pts;
  return j;
}

}  // namespace racktwin::db
