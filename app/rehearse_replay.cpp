// One failure of a serving rehearsal replayed request by request (app/rehearse_replay.hpp).
#include "app/rehearse_replay.hpp"

#include <QChart>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <boost/range/iterator_range.hpp>
#include <regex>

#include "rehearse/engine.hpp"
#include "sim/deployment.hpp"
#include "topology/topology.hpp"

namespace racktwin::app {
namespace {

// The failed part's name in the slice: its rack (or host rack, or rack pair) becomes the first.
std::string slice_name(const std::string& part) {
  static const std::regex rack(R"(^(rack|hostrack|pair)[0-9]+)");
  std::smatch m;
  if (!std::regex_search(part, m, rack)) return part;
  return m[1].str() + "0" + m.suffix().str();
}

// The part's kind and its number among the parts of that kind, in build order (FailureSpec).
struct Numbered {
  topology::PartKind kind = topology::PartKind::xpu;
  int index = 0;
};
std::optional<Numbered> number_part(const topology::Topology& t, const std::string& name) {
  const auto id = t.find(name);
  if (!id) return std::nullopt;
  const auto& g = t.graph();
  Numbered n{g[*id].kind, 0};
  for (auto v : boost::make_iterator_range(boost::vertices(g))) {
    if (v == *id) return n;
    if (g[v].kind == n.kind) ++n.index;
  }
  return std::nullopt;
}

// Output tokens per second as 10-second trailing means, from second `from` to `to`, at seconds
// after second `zero`.
std::vector<std::pair<double, double>> served(const sim::PointResult& r, int from, int to, int zero) {
  std::vector<std::pair<double, double>> out;
  const auto& ts = r.timeseries;
  for (int s = from; s < to; ++s) {
    double sum = 0;
    for (int k = s - 9; k <= s; ++k)
      if (k >= 0 && k < static_cast<int>(ts.size())) sum += ts[static_cast<std::size_t>(k)].output_tokens;
    out.emplace_back(s - zero, sum / 10.0);
  }
  return out;
}

// Replicas of one unit of the point: one group of its prefill and decode replicas when it is
// disaggregated (the rehearsal counts groups), else one replica.
int group_replicas(const sim::PointSpec& p) {
  const int prefill = p.prefill_replicas.value_or(0);
  return prefill > 0 ? prefill + p.replicas : 1;
}

// Whole units (replicas or groups) the slice should hold: at least kMinSliceReplicas replicas
// and four times those the failure took down.
int wanted_units(const sim::PointSpec& p, const ReplayOutcome& r) {
  const int group = group_replicas(p);
  const int want = std::max({kMinSliceReplicas, 4 * r.failure.replicas_hit, group});
  return (want + group - 1) / group;
}

// The slice of an aggregated point: whole racks holding the wanted replicas, never more than the
// site; the failed part's rack becomes the slice's first.
void choose_rack_slice(const RehearsalOutcome& o, const sim::PointSpec& p, ReplayOutcome& r) {
  const int want_units = wanted_units(p, r);
  const int per_rack = static_cast<int>(std::floor(o.replicas_per_rack));
  const int site_units = o.outcome.replicas_total;
  int units = 0;
  if (per_rack >= 1) {
    r.slice_racks = std::min(o.racks, (want_units + per_rack - 1) / per_rack);
    units = std::min(site_units, r.slice_racks * per_rack);
  } else if (o.replicas_per_rack > 0) {  // a replica spans racks
    r.slice_racks = std::min(
        o.racks, static_cast<int>(std::ceil(want_units / o.replicas_per_rack - 1e-9)));
    units = std::min(site_units,
                     static_cast<int>(std::floor(r.slice_racks * o.replicas_per_rack + 1e-9)));
  }
  r.site_replicas = site_units;
  r.slice_replicas = units;
  r.slice_part = slice_name(r.failure.part);
}

// The slice of a disaggregated point: whole domains from the failed one on, each packed as the
// rehearsal packs it (the failed domain's place in its block first, rehearse::pack_units), until
// they hold the wanted groups; the last domains' counts trimmed to whole groups. The failed part
// keeps its name: the slice's first domain is laid out as the failed one was.
void choose_domain_slice(const RehearsalOutcome& o, const sim::PointSpec& p, ReplayOutcome& r) {
  const auto one = topology::build(*p.system, 1);
  const auto packing = rehearse::pack_units(one, o.surrogate);
  const auto pools = o.surrogate.unit();
  const int want_units = wanted_units(p, r);
  std::vector<int> sum(pools.size(), 0);
  int units = 0;
  for (int i = 0; i < o.rehearsal.domains && units < want_units; ++i) {
    const auto& targets = packing.of_domain(r.failure.domain + i);
    r.slice_placement.push_back(targets);
    units = std::numeric_limits<int>::max();
    for (std::size_t k = 0; k < pools.size(); ++k) {
      sum[k] += targets[k];
      units = std::min(units, sum[k] / pools[k].replicas);
    }
  }
  for (std::size_t k = 0; k < pools.size(); ++k) {
    int excess = sum[k] - units * pools[k].replicas;
    for (auto d = r.slice_placement.rbegin(); d != r.slice_placement.rend() && excess > 0; ++d) {
      const int take = std::min(excess, (*d)[k]);
      (*d)[k] -= take;
      excess -= take;
    }
  }
  const int domains = static_cast<int>(r.slice_placement.size());
  r.slice_racks = (domains * p.system->domain_xpus + p.system->xpus_per_rack() - 1) /
                  p.system->xpus_per_rack();
  r.site_replicas = o.outcome.replicas_total * group_replicas(p);
  r.slice_replicas = units * group_replicas(p);
  r.slice_part = r.failure.part;
}

void choose_slice(const RehearsalOutcome& o, const sim::PointSpec& p, ReplayOutcome& r) {
  if (o.surrogate.grouped())
    choose_domain_slice(o, p, r);
  else
    choose_rack_slice(o, p, r);
}

// The arrivals: the site's offered load per unit on the slice's units, as a Poisson rate, for the
// lead and the window after the failure (cut short to kMaxReplayRequests).
void choose_load(const RehearsalOutcome& o, const sim::PointSpec& p, ReplayOutcome& r) {
  const int units = r.slice_replicas / group_replicas(p);
  r.load_tps_per_replica =
      o.surrogate.tps_at_target * o.outcome.offered_replicas / std::max(1, o.outcome.replicas_total);
  r.rate_req_s = r.load_tps_per_replica * units / mean_request_tokens(p.workload);
  const double most = kMaxReplayRequests / r.rate_req_s - kLeadSeconds;
  r.window_s = std::clamp(most, kMinWindowSeconds, kWindowSeconds);
  r.requests = static_cast<int>(std::ceil(r.rate_req_s * (kLeadSeconds + r.window_s)));
  const double rec = r.failure.recovered_s;
  if (rec >= 0 && rec < r.window_s) r.repair_s = rec;
}

// The slice's deployment: its replicas on as few domains as hold them, or a disaggregated point's
// pools domain by domain as the slice's placement says.
std::expected<sim::Deployment, std::string> deploy_slice(const sim::PointSpec& p,
                                                         const ReplayOutcome& r) {
  if (r.slice_placement.empty()) return sim::deploy(*p.system, p.layout.xpus(), r.slice_replicas);
  const int prefill_xpus = sim::prefill_replica_xpus(p);
  sim::TopologyCache cache;
  return sim::deploy_in_domains(cache.get(*p.system, static_cast<int>(r.slice_placement.size())),
                                {prefill_xpus, p.layout.xpus()}, r.slice_placement);
}

std::expected<FailureSpec, std::string> slice_failure(const sim::PointSpec& p,
                                                           ReplayOutcome& r) {
  const int group = group_replicas(p);
  const int units = r.slice_replicas / group;
  auto d = deploy_slice(p, r);
  if (!d) return std::unexpected("the replay's slice cannot be placed: " + d.error());
  const auto n = number_part(*d->topology, r.slice_part);
  if (!n)
    return std::unexpected("the failed part " + r.failure.part + " has no counterpart " +
                           r.slice_part + " in the replay's slice of " +
                           std::to_string(r.slice_racks) + " racks");
  auto impact = sim::failure_impact(*d, n->kind, n->index);
  if (!impact) return std::unexpected(impact.error());
  // Units left: the fewest either pool's survivors make whole (one pool of replicas when the
  // point is aggregated; the sites list the prefill pool first).
  const int prefill = p.prefill_replicas.value_or(0) * units;
  int prefill_down = 0, decode_down = 0;
  for (std::size_t k = 0; k < impact->size(); ++k) {
    const auto& ri = (*impact)[k];
    r.replicas_down += ri.down ? 1 : 0;
    r.replicas_slowed += !ri.down && ri.scale_up_fraction < 1.0 ? 1 : 0;
    (static_cast<int>(k) < prefill ? prefill_down : decode_down) += ri.down ? 1 : 0;
  }
  r.units_left = group == 1 ? units - decode_down
                            : std::min((prefill - prefill_down) / p.prefill_replicas.value_or(1),
                                       (p.replicas * units - decode_down) / p.replicas);
  return FailureSpec{topology::to_string(n->kind), n->index, kLeadSeconds, r.repair_s};
}

// How the runs with and without the failure compare through the window.
void compare(ReplayOutcome& r) {
  const int at = static_cast<int>(kLeadSeconds);
  const int from = static_cast<int>(kWarmupSeconds);
  const int to = static_cast<int>(kLeadSeconds + r.window_s);
  r.served_without = served(r.without, from, to, at);
  r.served_with = served(r.with, from, to, at);
  std::optional<double> last_short;
  for (std::size_t i = 0; i < r.served_with.size(); ++i) {
    const double base = r.served_without[i].second;
    if (r.served_with[i].first < 0 || base <= 0) continue;
    const double share = r.served_with[i].second / base;
    r.lowest_share = std::min(r.lowest_share, share);
    if (share < 0.95) last_short = r.served_with[i].first;
  }
  if (!last_short)
    r.back_within_5pct_s = 0.0;
  else if (*last_short + 1 < r.window_s)
    r.back_within_5pct_s = *last_short + 1;
}

void surrogate_at_load(const RehearsalOutcome& o, const sim::PointSpec& p, ReplayOutcome& r) {
  const int units = r.slice_replicas / group_replicas(p);
  const int left = std::max(1, r.units_left);
  r.surrogate_before = rehearse::latency_at(o.surrogate, r.load_tps_per_replica);
  r.surrogate_after = rehearse::latency_at(o.surrogate, r.load_tps_per_replica * units / left);
}

std::string fixed(double v, int decimals) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

Json stats_json(const sim::PointResult& p) {
  return Json{{"error", p.error},
              {"requests", p.requests},
              {"ttft_p99_s", p.ttft.p99},
              {"ttft_p50_s", p.ttft.median},
              {"tpot_p50_s", p.tpot.median},
              {"tpot_p99_s", p.tpot.p99},
              {"e2e_p99_s", p.e2e.p99},
              {"output_tokens", p.output_tokens},
              {"retried_requests", p.retried_requests},
              {"replica_down_s", p.replica_down_s},
              {"recovery_s", p.recovery_s}};
}

}  // namespace

std::expected<std::size_t, std::string> replay_event_index(const RehearsalOutcome& o,
                                                           const std::string& which) {
  const auto& ev = o.outcome.events;
  if (which == "worst") {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < ev.size(); ++i)
      if (ev[i].replicas_hit > 0 && (!best || ev[i].replicas_hit > ev[*best].replicas_hit)) best = i;
    if (!best) return std::unexpected("no failure of the rehearsal took a replica down: nothing to replay");
    return *best;
  }
  std::size_t n = 0;
  const bool digits = !which.empty() && which.size() < 10 &&
                      std::all_of(which.begin(), which.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) n = std::stoul(which);
  if (n < 1 || n > ev.size())
    return std::unexpected("--replay takes 'worst' or a failure's number from 1 to " +
                           std::to_string(ev.size()) + " (the rows of --events), not '" + which + "'");
  return n - 1;
}

std::expected<ReplayOutcome, std::string> replay_failure(const Catalog& cat,
                                                         const RehearsalOutcome& o,
                                                         const std::string& which,
                                                         const JobOptions& job) {
  if (!o.rehearsal.serving)
    return std::unexpected("a replay needs a serving rehearsal: jobs have no requests to replay");
  if (!o.serving_point)
    return std::unexpected(
        "a replay needs the serving sweep's point: this rehearsal's per-replica figures are given "
        "in the file; name a serving scenario instead");
  const sim::PointSpec& p = *o.serving_point;
  auto idx = replay_event_index(o, which);
  if (!idx) return std::unexpected(idx.error());
  ReplayOutcome r;
  r.event = *idx;
  r.failure = o.outcome.events[*idx];
  r.unit = o.unit();
  choose_slice(o, p, r);
  if (r.slice_replicas < 1)
    return std::unexpected("the site holds no whole " + o.unit() + " of " + o.layout +
                           ": nothing to replay");
  choose_load(o, p, r);
  if (!(r.rate_req_s > 0))
    return std::unexpected("the site offers no load to replay (no replica serves at the target)");
  auto failure = slice_failure(p, r);
  if (!failure) return std::unexpected(failure.error());
  sim::PointSpec without = p;
  const int groups = r.slice_replicas / group_replicas(p);
  const int prefill = p.prefill_replicas.value_or(0);
  without.replicas = prefill > 0 ? p.replicas * groups : r.slice_replicas;
  if (prefill > 0) without.prefill_replicas = prefill * groups;
  without.arrivals = sim::OpenLoop{r.rate_req_s};
  without.workload.requests = r.requests;
  without.workload.warmup_requests = static_cast<int>(std::ceil(r.rate_req_s * kWarmupSeconds));
  without.failures.clear();
  without.placement = r.slice_placement;
  without.seed = sim::stream_seed(o.seed, "replay/" + std::to_string(r.event + 1));
  sim::PointSpec with = without;
  with.failures = {*failure};
  auto runs = simulate_in_workers(cat, {without, with}, job);
  if (!runs) return std::unexpected(runs.error());
  r.without = std::move((*runs)[0]);
  r.with = std::move((*runs)[1]);
  if (!r.without.error.empty())
    return std::unexpected("the replay's slice could not serve its load: " + r.without.error);
  compare(r);
  surrogate_at_load(o, p, r);
  return r;
}

std::vector<std::vector<std::string>> ReplayOutcome::table() const {
  auto row = [&](std::string what, auto get, int decimals) {
    return std::vector<std::string>{std::move(what), fixed(get(without), decimals),
                                    with.error.empty() ? fixed(get(with), decimals) : "-"};
  };
  std::vector<std::vector<std::string>> rows{{"", "without the failure", "with it"}};
  rows.push_back(row("TTFT p50 (s)", [](const auto& p) { return p.ttft.median; }, 3));
  rows.push_back(row("TTFT p99 (s)", [](const auto& p) { return p.ttft.p99; }, 3));
  rows.push_back(row("TPOT p50 (ms)", [](const auto& p) { return p.tpot.median * 1e3; }, 2));
  rows.push_back(row("TPOT p99 (ms)", [](const auto& p) { return p.tpot.p99 * 1e3; }, 2));
  rows.push_back(row("E2E p99 (s)", [](const auto& p) { return p.e2e.p99; }, 2));
  rows.push_back(row("requests restarted", [](const auto& p) { return double(p.retried_requests); }, 0));
  rows.push_back(row("replica time out of service (s)", [](const auto& p) { return p.replica_down_s; }, 0));
  rows.push_back(row("output tokens (millions)", [](const auto& p) { return p.output_tokens / 1e6; }, 2));
  return rows;
}

std::vector<std::string> ReplayOutcome::summary(std::size_t failures) const {
  auto count = [](long n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  auto minutes = [](double s) { return fixed(s / 60, 0) + " min"; };
  const auto& f = failure;
  std::vector<std::string> out;
  out.push_back("Failure " + std::to_string(event + 1) + " of " + std::to_string(failures) +
                ": day " + fixed(f.t_s / 86400, 3) + ", domain " + std::to_string(f.domain) + ", " +
                f.part + " (" + to_string(f.cls) + "): " +
                count(f.replicas_hit, "replica", "replicas") + " of the domain down, " +
                (f.recovered_s < 0 ? "not recovered within the horizon"
                                   : "recovered after " + fixed(f.recovered_s / 3600, 2) + " h"));
  out.push_back("Slice: " + count(slice_racks, "rack", "racks") + ", " +
                std::to_string(slice_replicas) + " of the site's " + std::to_string(site_replicas) +
                " replicas; " + f.part + " there as " + slice_part + ": " +
                std::to_string(replicas_down) + " down, " + std::to_string(replicas_slowed) +
                " slowed");
  out.push_back("Arrivals: Poisson at " + fixed(rate_req_s, 1) + " req/s (the site's load per " +
                unit + "), " + minutes(kLeadSeconds) +
                " before the failure and " + minutes(window_s) + " after, " +
                std::to_string(requests) + " requests, the first " + minutes(kWarmupSeconds) +
                " warm-up; " +
                (repair_s ? "repaired " + fixed(*repair_s, 0) + " s after the failure"
                          : std::string("not repaired within the window")));
  if (!with.error.empty()) out.push_back("With the failure: " + with.error);
  out.push_back("Served output tokens (10 s means): the lowest at " + fixed(lowest_share * 100, 1) +
                "% of the run without the failure; " +
                (!back_within_5pct_s ? std::string("not back within 5% of it by the end of the window")
                 : *back_within_5pct_s == 0
                     ? std::string("never more than 5% below it")
                     : "within 5% of it from " + fixed(*back_within_5pct_s, 0) +
                           " s after the failure on"));
  out.push_back("The surrogate at this load: TTFT p99 " + fixed(surrogate_before.ttft_p99_s, 3) +
                " s, TPOT p99 " + fixed(surrogate_before.tpot_p99_s * 1e3, 2) +
                " ms; on the survivors " + fixed(surrogate_after.ttft_p99_s, 3) + " s, " +
                fixed(surrogate_after.tpot_p99_s * 1e3, 2) + " ms");
  return out;
}

Json ReplayOutcome::to_json() const {
  Json served_json = Json::array();
  for (std::size_t i = 0; i < served_with.size(); ++i)
    served_json.push_back({served_with[i].first, served_without[i].second, served_with[i].second});
  return Json{{"event", event + 1},
              {"t_s", failure.t_s},
              {"domain", failure.domain},
              {"part", failure.part},
              {"class", to_string(failure.cls)},
              {"replicas_hit_in_domain", failure.replicas_hit},
              {"slice",
               {{"racks", slice_racks},
                {"replicas", slice_replicas},
                {"site_replicas", site_replicas},
                {"part", slice_part},
                {"replicas_down", replicas_down},
                {"replicas_slowed", replicas_slowed}}},
              {"load_tps_per_replica", load_tps_per_replica},
              {"rate_req_s", rate_req_s},
              {"lead_s", kLeadSeconds},
              {"warmup_s", kWarmupSeconds},
              {"window_s", window_s},
              {"requests", requests},
              {"repair_s", optional_json(repair_s)},
              {"without", stats_json(without)},
              {"with", stats_json(with)},
              {"lowest_served_share", lowest_share},
              {"back_within_5pct_s", optional_json(back_within_5pct_s)},
              {"surrogate",
               {{"before", {{"ttft_p99_s", surrogate_before.ttft_p99_s},
                            {"tpot_p99_s", surrogate_before.tpot_p99_s}}},
                {"after", {{"ttft_p99_s", surrogate_after.ttft_p99_s},
                           {"tpot_p99_s", surrogate_after.tpot_p99_s}}}}},
              {"served_tps_10s", {{"columns", {"s_after_failure", "without", "with"}}, {"rows", served_json}}}};
}

charts::NamedChart replay_chart(const RehearsalOutcome& o, const ReplayOutcome& r) {
  charts::XYChart c{"Failure " + std::to_string(r.event + 1) + " replayed (" + r.failure.part +
                        ", " + std::to_string(r.slice_replicas) + " replicas) — " + o.rehearsal.name,
                    "seconds after the failure", "output tok/s (10 s mean)", {}, std::nullopt};
  c.series = {{"without the failure", r.served_without, true}, {"with it", r.served_with, false}};
  return {"replay", charts::xy_line_chart(c)};
}

}  // namespace racktwin::app
