#include "scenarios/scenario_limits.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "scenarios/scenario_loader.hpp"

namespace racktwin {
namespace {

using yaml::Context;
using yaml::MapReader;

constexpr double kMaxSpanS = 1e8;  // about three years: keeps every series index well in range

std::string raise_hint(const std::string& key, const std::string& example) {
  return "raise the limit with 'limits: {" + key + ": " + example +
         "}' at the top level of the scenario, if the machine has the memory and the time";
}

std::string seconds_text(double s) {
  return std::isfinite(s) ? fmt::format("{:g} s", s) : std::string("more than 1e308 s");
}

int max_clients(const Scenario& sc) {
  return sc.concurrency.empty() ? 1 : *std::max_element(sc.concurrency.begin(), sc.concurrency.end());
}

// Requests one point of the workload issues (sessions of an agentic workload at their most turns).
double requests_per_point(const Workload& w, int clients) {
  switch (w.kind) {
    case WorkloadKind::poisson:
      return w.inferencex.requests;
    case WorkloadKind::trace:
      return static_cast<double>(w.trace.requests->size());
    case WorkloadKind::agentic:
      return static_cast<double>(clients) * w.agentic.sessions_per_client * w.agentic.turns_max;
    default:
      return static_cast<double>(clients) * w.inferencex.prompts_per_client;
  }
}

// The simulated time the workload's arrivals and pauses reach, from its inputs alone (serving
// time comes on top): requests over the lowest rate, the trace's last arrival plus its delays, or
// each client's sessions at their most turns and longest tool pauses.
std::pair<double, std::string> arrival_span_s(const Workload& w) {
  switch (w.kind) {
    case WorkloadKind::poisson:
      return {w.inferencex.requests /
                  *std::min_element(w.inferencex.rates.begin(), w.inferencex.rates.end()),
              "requests over the lowest rate"};
    case WorkloadKind::trace: {
      double last = 0, delays = 0;
      for (const auto& r : *w.trace.requests) {
        last = std::max(last, r.timestamp_s);
        delays += r.delay_s.value_or(0.0);
      }
      return {(last + delays) * w.trace.time_scale, "the last arrival plus the delays"};
    }
    case WorkloadKind::agentic:
      return {static_cast<double>(w.agentic.sessions_per_client) * w.agentic.turns_max *
                  w.agentic.tool_pause_max_s,
              "sessions x turns x the longest tool pause"};
    default:
      return {0.0, ""};
  }
}

void check_workload(Context& ctx, const YAML::Node& node, const std::string& path,
                    const Workload& w, const Scenario& sc) {
  const RunLimits& l = sc.limits;
  const double requests = requests_per_point(w, max_clients(sc));
  if (requests > static_cast<double>(l.requests))
    ctx.error(node, path,
              fmt::format("a point of this workload issues {:g} requests, above the limit of {} "
                          "requests per point",
                          requests, l.requests),
              raise_hint("requests", fmt::format("{:.0f}", requests)));
  const auto [span, how] = arrival_span_s(w);
  if (!(span <= l.span_s))
    ctx.error(node, path,
              fmt::format("this workload spans {} of simulated time ({}), above the limit of "
                          "{:g} s per point",
                          seconds_text(span), how, l.span_s),
              raise_hint("span", "7 day"));
}

}  // namespace

void read_limits(Context& ctx, MapReader& top, RunLimits& limits) {
  if (!top.has("limits")) return;
  MapReader m(ctx, top.get("limits"), top.child("limits"));
  if (auto v = m.integer("points", false, 1, 10'000'000)) limits.points = *v;
  if (auto v = m.integer("requests", false, 1, 1'000'000'000)) limits.requests = *v;
  if (auto v = m.quantity<Seconds>("span", false)) {
    if (v->value() < 1.0 || v->value() > kMaxSpanS)
      ctx.error(m.get("span"), m.child("span"),
                fmt::format("expected a span from 1 s to {:g} s", kMaxSpanS));
    else
      limits.span_s = v->value();
  }
  m.finish();
}

void check_limits(Context& ctx, MapReader& top, const Scenario& sc) {
  const YAML::Node workloads = top.get("workloads");
  for (std::size_t i = 0; i < sc.workloads.size() && i < workloads.size(); ++i)
    check_workload(ctx, workloads[i], yaml::index_path(top.child("workloads"), i),
                   sc.workloads[i], sc);
  const YAML::Node failures = top.get("failures");
  for (std::size_t i = 0; i < sc.failures.size() && i < failures.size(); ++i) {
    const FailureSpec& f = sc.failures[i];
    const double end = f.at_s + f.repair_s.value_or(0.0);
    if (end > sc.limits.span_s)
      ctx.error(failures[i], yaml::index_path(top.child("failures"), i),
                fmt::format("this failure and its repair reach {} of simulated time, above the "
                            "limit of {:g} s per point",
                            seconds_text(end), sc.limits.span_s),
                raise_hint("span", "7 day"));
  }
}

std::optional<Diagnostic> sweep_limit_problem(const Scenario& sc, std::size_t points) {
  if (points <= static_cast<std::size_t>(sc.limits.points)) return std::nullopt;
  return Diagnostic{{sc.file, 0, 0},
                    "limits.points",
                    fmt::format("the sweep has {} points, above the limit of {} points per run",
                                points, sc.limits.points),
                    "narrow the sweep (fewer systems, models, layouts, concurrencies or rates); " +
                        raise_hint("points", std::to_string(points))};
}

}  // namespace racktwin
