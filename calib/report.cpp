#include "calib/report.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace racktwin::calib {

Calibration assemble(const Catalog& cat, const FitReport& fit, const std::vector<Prediction>& final,
                     CalibrationRecord record) {
  Calibration c;
  std::vector<Prediction> fitted_points;
  for (const auto& s : fit.systems) {
    CalibratedEfficiency e;
    e.id = s.system;
    e.values = s.fitted;
    e.fitted = s.params;
    e.pinned = s.pinned;
    e.points = static_cast<int>(s.points.size());
    for (std::size_t i : s.points) {
      if (i >= final.size()) continue;
      fitted_points.push_back(final[i]);
      if (final[i].predicted) e.residuals.push_back({final[i].point->id, final[i].error_pct});
    }
    for (const auto& p : fit.power)
      if (p.system == s.system && p.error.empty())
        e.power = CalibratedEfficiency::Power{.xpu_busy_share = p.busy_share,
                                              .measured = Watts(p.measured_w),
                                              .highest = Watts(p.highest_w),
                                              .highest_at = p.highest_at,
                                              .sweep_points = p.sweep_points,
                                              .stale = {}};
    c.systems.push_back(std::move(e));
  }
  for (const auto& [id, prior] : cat.efficiency_priors) {
    if (prior.systems.empty()) continue;
    std::vector<SystemFit> members;
    for (const auto& s : fit.systems)
      if (std::find(prior.systems.begin(), prior.systems.end(), s.system) != prior.systems.end())
        members.push_back(s);
    if (members.empty()) continue;
    CalibratedEfficiency f;
    f.id = id;
    f.family = true;
    for (const auto& m : members) f.pooled.push_back(m.system);
    f.values = pool_family(prior.values, members);
    std::set<std::string> params;
    for (const auto& m : members) params.insert(m.params.begin(), m.params.end());
    f.fitted.assign(params.begin(), params.end());
    c.families.push_back(std::move(f));
  }
  const ErrorSummary es = summarise_errors(fitted_points);
  record.median_abs_error_pct = es.median_abs_pct;
  record.max_abs_error_pct = es.max_abs_pct;
  c.record = std::move(record);
  return c;
}

namespace {

std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string micro(Seconds s) {
  return num(s.value() * 1e6) + " us";
}

std::string milli(Seconds s) {
  return num(s.value() * 1e3) + " ms";
}

std::string list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out + "]";
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

void entry(std::string& out, const CalibratedEfficiency& e) {
  const auto& v = e.values;
  out += e.family ? "    - prior: " + e.id + "\n" : "    - system: " + e.id + "\n";
  if (e.family) out += "      pooled: " + list(e.pooled) + "\n";
  if (!e.family) out += "      points: " + std::to_string(e.points) + "\n";
  out += "      fitted: " + list(e.fitted) + "\n";
  if (!e.family) out += "      pinned: " + list(e.pinned) + "\n";
  out += "      values: {mfu: " + num(v.mfu) + ", mbu: " + num(v.mbu) +
         ", attn_eff: " + num(v.attn_eff) + ", comm_eff: " + num(v.comm_eff) +
         ", alpha: " + micro(v.alpha) + ", overlap: " + num(v.overlap) +
         ", layer_overhead: " + micro(v.layer_overhead) +
         ", step_overhead: " + micro(v.step_overhead) + ", seq_overhead: " + micro(v.seq_overhead) +
         ", moe_imbalance: " + num(v.moe_imbalance) + ", dequant_eff: " + num(v.dequant_eff) +
         ", request_latency: " + milli(v.request_latency) + "}\n";
  if (e.power)
    out += "      power: {xpu_busy_share: " + num(e.power->xpu_busy_share) +
           ", measured: " + num(e.power->measured.value()) +
           " W, highest: " + num(e.power->highest.value()) +
           " W, highest_at: " + quoted(e.power->highest_at) +
           ", sweep_points: " + std::to_string(e.power->sweep_points) + "}\n";
  if (!e.family) {
    out += "      residuals:\n";
    for (const auto& r : e.residuals)
      out += "        - {id: " + r.id + ", error_pct: " + num(r.error_pct) + "}\n";
  }
}

}  // namespace

std::string calibration_yaml(const Calibration& c) {
  std::string out =
      "# Efficiency parameters fitted to published points by racktwin calibrate. Written by the "
      "command\n"
      "# below; do not edit by hand (rerun it). Which values a system gets: its own entry under\n"
      "# systems, else its family's under families (the efficiency prior that lists it), else its\n"
      "# prior in efficiency.yaml. Format: docs/catalog.md; method: docs/model.md section 13.\n"
      "calibration:\n";
  out += "  points_file: " + quoted(c.record.points_file) + "\n";
  out += "  points_hash: " + quoted(c.record.points_hash) + "\n";
  out += "  date: " + quoted(c.record.date) + "\n";
  out += "  command: " + quoted(c.record.command) + "\n";
  out += "  median_abs_error_pct: " + num(c.record.median_abs_error_pct) + "\n";
  out += "  max_abs_error_pct: " + num(c.record.max_abs_error_pct) + "\n";
  out += "  systems:\n";
  for (const auto& e : c.systems) entry(out, e);
  if (!c.families.empty()) {
    out += "  families:\n";
    for (const auto& e : c.families) entry(out, e);
  }
  return out;
}

}  // namespace racktwin::calib
