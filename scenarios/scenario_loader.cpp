#include "scenarios/scenario_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <tuple>

#include "scenarios/points_loader.hpp"
#include "scenarios/scenario_limits.hpp"
#include "scenarios/trace_loader.hpp"
#include "scenarios/yaml_reader.hpp"

namespace racktwin {
namespace {

using yaml::Context;
using yaml::MapReader;

constexpr int kMaxConcurrency = 1 << 20;
constexpr int kMaxTokens = 1 << 24;

// A list of catalog ids; each unknown one is reported with the nearest known id.
std::vector<std::string> read_ids(Context& ctx, MapReader& m, std::string_view key,
                                  std::string_view kind, const std::vector<std::string>& known) {
  std::vector<std::string> out;
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  if (!m.has(key)) {
    m.missing(key, "a list of " + std::string(kind) + " ids from the catalog");
    return out;
  }
  YAML::Node n = m.get(key);
  const std::string path = m.child(key);
  if (n.IsScalar()) {
    // A single id is accepted as a one-element list.
    YAML::Node seq(YAML::NodeType::Sequence);
    seq.push_back(n);
    n.reset(seq);
  }
  if (!n.IsSequence() || n.size() == 0) {
    ctx.error(m.get(key), path, "expected a non-empty list of " + std::string(kind) + " ids");
    return out;
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string p = yaml::index_path(path, i);
    auto id = yaml::read_string(ctx, n[i], p);
    if (!id) continue;
    if (std::find(known.begin(), known.end(), *id) == known.end()) {
      const std::string near = nearest(*id, known);
      ctx.error(n[i], p, "unknown " + std::string(kind) + " id '" + *id + "'",
                near.empty()
                    ? "known " + std::string(kind) + " ids: " + list
                    : "did you mean '" + near + "'? 'racktwin catalog list' shows all ids");
      continue;
    }
    if (!seen.insert(*id).second) {
      ctx.error(n[i], p, std::string(kind) + " '" + *id + "' is listed twice", "list it once");
      continue;
    }
    out.push_back(*id);
  }
  return out;
}

// mtp, mtp_draft_tokens and mtp_acceptance of any workload kind; false on an error.
bool read_speculation(Context& ctx, MapReader& m, InferenceXWorkload& x) {
  bool ok = true;
  if (auto v = m.boolean("mtp", false)) x.mtp = *v;
  x.mtp_acceptance = m.number("mtp_acceptance", false, 1.0, 16.0);
  if (auto v = m.integer("mtp_draft_tokens", false, 1, 15))
    x.mtp_draft_tokens = static_cast<int>(*v);
  for (const char* key : {"mtp_acceptance", "mtp_draft_tokens"}) {
    if (m.has(key) && !x.mtp) {
      ctx.error(m.get(key), m.child(key), std::string(key) + " is set but mtp is false",
                std::string("set mtp: true or remove ") + key);
      ok = false;
    }
  }
  if (x.mtp_acceptance && *x.mtp_acceptance > x.mtp_draft_tokens + 1.0) {
    ctx.error(
        m.get("mtp_acceptance"), m.child("mtp_acceptance"),
        "mtp_acceptance " + std::to_string(*x.mtp_acceptance) +
            " exceeds mtp_draft_tokens + 1 (a step emits at most the drafted tokens plus one)",
        "lower mtp_acceptance or raise mtp_draft_tokens");
    ok = false;
  }
  return ok;
}

// An integer of an agentic workload into `out`, which keeps its default when the key is absent;
// false when the key is present but invalid.
bool read_agentic_count(MapReader& m, const char* key, int& out, int lo, int hi) {
  if (auto v = m.integer(key, false, lo, hi)) {
    out = static_cast<int>(*v);
    return true;
  }
  return !m.has(key);
}

// A [low, high] pair of integers, each within [lo, hi], into lo_out and hi_out, which keep their
// defaults when the key is absent; false when the pair is invalid.
bool read_agentic_range(Context& ctx, MapReader& m, const char* key, int& lo_out, int& hi_out,
                        int lo, int hi) {
  if (!m.has(key)) return true;
  const YAML::Node r = m.get(key);
  if (!r.IsSequence() || r.size() != 2) {
    ctx.error(r, m.child(key), "expected [low, high]");
    return false;
  }
  auto a0 = yaml::read_integer(ctx, r[0], yaml::index_path(m.child(key), 0), lo, hi);
  auto a1 = yaml::read_integer(ctx, r[1], yaml::index_path(m.child(key), 1), lo, hi);
  if (!a0 || !a1) return false;
  if (*a1 < *a0) {
    ctx.error(r, m.child(key), "the high end is below the low end");
    return false;
  }
  lo_out = static_cast<int>(*a0);
  hi_out = static_cast<int>(*a1);
  return true;
}

// tool_pause: a [low, high] pair of durations such as ['0.5 s', '5 s'], stored in seconds; false
// when it is invalid.
bool read_tool_pause(Context& ctx, MapReader& m, AgenticWorkload& g) {
  if (!m.has("tool_pause")) return true;
  const YAML::Node r = m.get("tool_pause");
  if (!r.IsSequence() || r.size() != 2) {
    ctx.error(r, m.child("tool_pause"), "expected [low, high] such as ['0.5 s', '5 s']");
    return false;
  }
  auto a0 = yaml::read_quantity(ctx, r[0], yaml::index_path(m.child("tool_pause"), 0),
                                Seconds::kDimension);
  auto a1 = yaml::read_quantity(ctx, r[1], yaml::index_path(m.child("tool_pause"), 1),
                                Seconds::kDimension);
  if (!a0 || !a1) return false;
  if (*a1 < *a0) {
    ctx.error(r, m.child("tool_pause"), "the high end is below the low end");
    return false;
  }
  g.tool_pause_min_s = *a0;
  g.tool_pause_max_s = *a1;
  return true;
}

// The sessions of an agentic workload: their count, warm-up, turns, lengths (tokens) and tool
// pauses; false on an error.
bool read_agentic_sessions(Context& ctx, MapReader& m, AgenticWorkload& g) {
  bool good = true;
  if (!read_agentic_count(m, "sessions_per_client", g.sessions_per_client, 1, 100000)) good = false;
  if (!read_agentic_count(m, "warmup_sessions", g.warmup_sessions, 0, 100000)) good = false;
  if (!read_agentic_range(ctx, m, "turns", g.turns_min, g.turns_max, 1, 10000)) good = false;
  if (!read_agentic_range(ctx, m, "first_context", g.first_context_min, g.first_context_max, 1,
                          kMaxTokens))
    good = false;
  if (!read_agentic_range(ctx, m, "tool_result", g.tool_result_min, g.tool_result_max, 0,
                          kMaxTokens))
    good = false;
  if (!read_agentic_range(ctx, m, "output", g.output_min, g.output_max, 1, kMaxTokens))
    good = false;
  if (!read_agentic_count(m, "max_context", g.max_context, 2, kMaxTokens)) good = false;
  if (!read_tool_pause(ctx, m, g)) good = false;
  return good;
}

// The sub-agents an agentic turn fans out to: probability, count, turns and context (tokens);
// false on an error.
bool read_agentic_subagents(Context& ctx, MapReader& m, AgenticWorkload& g) {
  bool good = true;
  if (auto v = m.number("subagent_probability", false, 0.0, 1.0))
    g.subagent_probability = *v;
  else if (m.has("subagent_probability"))
    good = false;
  if (!read_agentic_range(ctx, m, "subagents", g.subagents_min, g.subagents_max, 1, 1000))
    good = false;
  if (!read_agentic_range(ctx, m, "subagent_turns", g.subagent_turns_min, g.subagent_turns_max, 1,
                          10000))
    good = false;
  if (!read_agentic_range(ctx, m, "subagent_context", g.subagent_context_min,
                          g.subagent_context_max, 1, kMaxTokens))
    good = false;
  return good;
}

// The checks across the keys of a valid agentic workload; false (reported) when one fails.
bool check_agentic(Context& ctx, MapReader& m, const AgenticWorkload& g) {
  if (g.warmup_sessions >= g.sessions_per_client) {
    ctx.error(m.get("warmup_sessions"), m.child("warmup_sessions"),
              "the warm-up takes every session of a client",
              "warmup_sessions must be fewer than sessions_per_client");
    return false;
  }
  if (g.first_context_max + g.output_max > g.max_context ||
      g.subagent_context_max + g.output_max > g.max_context) {
    ctx.error(
        m.node(), m.child("max_context"),
        "a first turn (context + output) can exceed max_context " + std::to_string(g.max_context),
        "raise max_context or lower first_context / subagent_context");
    return false;
  }
  return true;
}

// kind: agentic, a synthetic AgentX-like workload; every parameter has a documented default.
std::optional<Workload> read_agentic(Context& ctx, MapReader& m, Workload w) {
  w.kind = WorkloadKind::agentic;
  auto& g = w.agentic;
  bool good = read_agentic_sessions(ctx, m, g);
  if (!read_agentic_subagents(ctx, m, g)) good = false;
  if (!read_agentic_count(m, "block_tokens", g.block_tokens, 1, 1 << 20)) good = false;
  if (auto p = m.string("precision", false)) w.inferencex.precision = *p;
  if (!read_speculation(ctx, m, w.inferencex)) good = false;
  m.finish();
  if (good && !check_agentic(ctx, m, g)) good = false;
  if (!good) return std::nullopt;
  if (w.id.empty()) w.id = "agentic";
  return w;
}

// kind: trace, the replay of a Mooncake-format JSONL file, which is loaded here.
std::optional<Workload> read_trace(Context& ctx, MapReader& m, Workload w) {
  w.kind = WorkloadKind::trace;
  auto& t = w.trace;
  auto file = m.string("file", true);
  if (auto v = m.integer("block_tokens", false, 1, 1 << 20)) t.block_tokens = static_cast<int>(*v);
  if (auto v = m.number("time_scale", false, 1e-6, 1e6)) t.time_scale = *v;
  const auto max_requests = m.integer("max_requests", false, 1, 100000000);
  if (auto v = m.integer("warmup_requests", false, 0, 100000000))
    t.warmup_requests = static_cast<int>(*v);
  if (auto p = m.string("precision", false)) w.inferencex.precision = *p;
  // An invalid speculation returns before finish(): its unknown keys are not reported.
  if (!read_speculation(ctx, m, w.inferencex)) return std::nullopt;
  m.finish();
  if (!file) return std::nullopt;
  // A relative path is relative to the scenario file's folder.
  std::filesystem::path fp(*file);
  if (fp.is_relative()) fp = std::filesystem::path(ctx.file()).parent_path() / fp;
  t.file = fp.lexically_normal().string();
  auto reqs = load_mooncake_trace(t.file, max_requests ? static_cast<int>(*max_requests) : 0);
  if (!reqs) {
    for (auto& d : reqs.error()) {
      // A problem of the whole file (it cannot be opened) is placed at the key that names it.
      if (d.where.line == 0)
        ctx.error(m.get("file"), m.child("file"), d.message + " '" + t.file + "'", d.hint);
      else
        ctx.diagnostics().push_back(d);
    }
    return std::nullopt;
  }
  if (t.warmup_requests >= static_cast<int>(reqs->size())) {
    ctx.error(
        m.get("warmup_requests"), m.child("warmup_requests"),
        "the warm-up takes every request of the trace (" + std::to_string(reqs->size()) + ")");
    return std::nullopt;
  }
  t.requests = std::make_shared<const std::vector<TraceRequest>>(std::move(*reqs));
  if (w.id.empty()) w.id = "trace-" + fp.stem().string();
  return w;
}

// isl and osl (tokens) and range_ratio of an inferencex or poisson workload; false on an error.
bool read_lengths(Context& ctx, MapReader& m, InferenceXWorkload& x) {
  bool ok = true;
  if (auto v = m.integer("isl", true, 1, kMaxTokens))
    x.isl = static_cast<int>(*v);
  else
    ok = false;
  if (auto v = m.integer("osl", true, 1, kMaxTokens))
    x.osl = static_cast<int>(*v);
  else
    ok = false;
  if (auto v = m.number("range_ratio", false, 0.0, 1.0)) x.range_ratio = *v;
  if (m.has("range_ratio") && x.range_ratio <= 0.0) {
    ctx.error(m.get("range_ratio"), m.child("range_ratio"),
              "range_ratio must be above 0 (lengths are drawn from [range_ratio x L, L])");
    ok = false;
  }
  return ok;
}

// rate: one request rate in requests per second, or a list of distinct ones; false on an error.
bool read_rates(Context& ctx, MapReader& m, InferenceXWorkload& x) {
  if (!m.has("rate")) {
    m.missing("rate", "a request rate in requests per second (or a list of them)");
    return false;
  }
  YAML::Node r = m.get("rate");
  const std::string rp = m.child("rate");
  if (r.IsScalar()) {
    auto v = yaml::read_number(ctx, r, rp, 1e-9, 1e9);
    if (v) x.rates.push_back(*v);
    return v.has_value();
  }
  if (!r.IsSequence() || r.size() == 0) {
    ctx.error(r, rp, "expected a request rate in requests per second, or a list of them");
    return false;
  }
  bool ok = true;
  std::set<double> seen;  // a set, not a search of the list: lists may be long
  for (std::size_t i = 0; i < r.size(); ++i) {
    auto v = yaml::read_number(ctx, r[i], yaml::index_path(rp, i), 1e-9, 1e9);
    if (!v) {
      ok = false;
    } else if (!seen.insert(*v).second) {
      ctx.error(r[i], yaml::index_path(rp, i), "rate " + r[i].Scalar() + " is listed twice");
      ok = false;
    } else {
      x.rates.push_back(*v);
    }
  }
  return ok;
}

// The open loop of kind: poisson: one or more rates, a request count and a warm-up; false on an
// error.
bool read_open_loop(Context& ctx, MapReader& m, InferenceXWorkload& x) {
  bool ok = read_rates(ctx, m, x);
  if (auto v = m.integer("requests", false, 1, 10000000)) x.requests = static_cast<int>(*v);
  if (auto v = m.integer("warmup_requests", false, 0, 10000000))
    x.warmup_requests = static_cast<int>(*v);
  if (x.warmup_requests >= x.requests) {
    ctx.error(m.has("warmup_requests") ? m.get("warmup_requests") : m.node(),
              m.child("warmup_requests"), "warm-up must be fewer than the requests",
              "the default warm-up is 100 of 1000 requests");
    ok = false;
  }
  return ok;
}

// The closed loop of kind: inferencex: prompts and warm-up prompts per client; false on an error.
bool read_closed_loop(Context& ctx, MapReader& m, InferenceXWorkload& x) {
  if (auto v = m.integer("prompts_per_client", false, 1, 1000))
    x.prompts_per_client = static_cast<int>(*v);
  if (auto v = m.integer("warmup_per_client", false, 0, 1000))
    x.warmup_per_client = static_cast<int>(*v);
  if (x.warmup_per_client < x.prompts_per_client) return true;
  ctx.error(m.has("warmup_per_client") ? m.get("warmup_per_client") : m.node(),
            m.child("warmup_per_client"),
            "warm-up (" + std::to_string(x.warmup_per_client) +
                " x C) must be fewer than the prompts (" + std::to_string(x.prompts_per_client) +
                " x C)",
            "InferenceX uses 10 x C prompts and a 2 x C warm-up");
  return false;
}

// Reports each of `keys` that is set as applying to kind `kind` only. The workload itself stays
// usable: the error alone fails the scenario.
void reject_keys(Context& ctx, MapReader& m, std::initializer_list<const char*> keys,
                 const std::string& kind, const std::string& hint) {
  for (const char* key : keys)
    if (m.has(key))
      ctx.error(m.get(key), m.child(key),
                std::string("'") + key + "' applies to kind: " + kind + " only", hint);
}

// precision: a weight variant that every model of the scenario has; false when one lacks it.
bool read_precision(Context& ctx, MapReader& m, const Catalog& catalog,
                    const std::vector<std::string>& models, InferenceXWorkload& x) {
  auto p = m.string("precision", false);
  if (!p) return true;
  x.precision = *p;
  std::vector<std::string> lacking;
  for (const auto& id : models) {
    const Model* md = catalog.find_model(id);
    if (md != nullptr && !md->variants.contains(*p)) lacking.push_back(id);
  }
  if (lacking.empty()) return true;
  std::string names;
  for (const auto& l : lacking) names += (names.empty() ? "" : ", ") + l;
  ctx.error(m.get("precision"), m.child("precision"), "no '" + *p + "' weight variant for " + names,
            "racktwin catalog show MODEL lists its variants; or remove precision to use each "
            "system's best");
  return false;
}

// kind: inferencex (closed loop) or poisson (open loop): fixed-length requests.
std::optional<Workload> read_fixed_length(Context& ctx, MapReader& m, const Catalog& catalog,
                                          const std::vector<std::string>& models, Workload w) {
  auto& x = w.inferencex;
  bool ok = read_lengths(ctx, m, x);
  if (!read_speculation(ctx, m, x)) ok = false;
  if (w.kind == WorkloadKind::poisson) {
    if (!read_open_loop(ctx, m, x)) ok = false;
    reject_keys(ctx, m, {"prompts_per_client", "warmup_per_client"}, "inferencex",
                "an open loop uses requests and warmup_requests");
  } else {
    reject_keys(ctx, m, {"rate", "requests", "warmup_requests"}, "poisson",
                "remove it, or set kind: poisson for an open loop");
    if (!read_closed_loop(ctx, m, x)) ok = false;
  }
  if (!read_precision(ctx, m, catalog, models, x)) ok = false;
  m.finish();
  if (!ok) return std::nullopt;
  if (w.id.empty()) {
    w.id = "isl" + std::to_string(x.isl) + "-osl" + std::to_string(x.osl);
  }
  return w;
}

// One entry of `workloads`: its id and kind, then the keys of that kind.
std::optional<Workload> read_workload(Context& ctx, const YAML::Node& n, const std::string& path,
                                      const Catalog& catalog,
                                      const std::vector<std::string>& models) {
  MapReader m(ctx, n, path);
  if (!m.ok()) return std::nullopt;
  Workload w;
  if (auto id = m.string("id", false)) w.id = *id;
  auto kind = m.choice("kind", false, {"inferencex", "poisson", "agentic", "trace"});
  const std::string k = kind.value_or("inferencex");
  if (k == "agentic") return read_agentic(ctx, m, std::move(w));
  if (k == "trace") return read_trace(ctx, m, std::move(w));
  if (k == "poisson") w.kind = WorkloadKind::poisson;
  return read_fixed_length(ctx, m, catalog, models, std::move(w));
}

std::optional<Layout> read_layout(Context& ctx, const YAML::Node& n, const std::string& path) {
  MapReader m(ctx, n, path);
  if (!m.ok()) return std::nullopt;
  Layout l;
  bool ok = true;
  if (auto v = m.string("name", false)) l.name = *v;
  if (auto v = m.integer("tp", false, 1, 1 << 16))
    l.tp = static_cast<int>(*v);
  else
    ok = ok && !m.has("tp");
  if (auto v = m.integer("ep", false, 1, 1 << 16))
    l.ep = static_cast<int>(*v);
  else
    ok = ok && !m.has("ep");
  if (auto v = m.integer("pp", false, 1, 1024))
    l.pp = static_cast<int>(*v);
  else
    ok = ok && !m.has("pp");
  if (auto v = m.boolean("dp_attention", false))
    l.dp_attention = *v;
  else
    ok = ok && !m.has("dp_attention");
  if (ok && (l.xpus() % l.ep != 0)) {
    ctx.error(m.get("ep"), m.child("ep"),
              "ep " + std::to_string(l.ep) + " does not divide the replica's " +
                  std::to_string(l.xpus()) + " XPUs (tp x pp)",
              "expert parallelism spreads experts over the replica's XPUs");
    ok = false;
  }
  m.finish();
  if (!ok) return std::nullopt;
  if (l.name.empty()) l.name = l.label();
  return l;
}

void read_layouts(Context& ctx, MapReader& top, LayoutSelection& sel) {
  if (!top.has("layouts")) return;
  MapReader m(ctx, top.get("layouts"), top.child("layouts"));
  if (!m.ok()) return;
  if (m.has("replica_xpus")) {
    const YAML::Node n = m.get("replica_xpus");
    if (!n.IsSequence() || n.size() == 0) {
      ctx.error(n, m.child("replica_xpus"), "expected a non-empty list of replica sizes in XPUs");
    } else {
      std::set<std::int64_t> seen;
      for (std::size_t i = 0; i < n.size(); ++i) {
        const std::string p = yaml::index_path(m.child("replica_xpus"), i);
        auto v = yaml::read_integer(ctx, n[i], p, 1, 1 << 20);
        if (!v) continue;
        if (!seen.insert(*v).second) {
          ctx.error(n[i], p, "replica size " + std::to_string(*v) + " is listed twice");
          continue;
        }
        sel.replica_xpus.push_back(static_cast<int>(*v));
      }
    }
  }
  if (m.has("named")) {
    const YAML::Node n = m.get("named");
    if (!n.IsSequence() || n.size() == 0) {
      ctx.error(
          n, m.child("named"),
          "expected a non-empty list of layouts ('tp8-ep8-dpa' or {tp, ep, pp, dp_attention})");
    } else {
      std::set<std::string> names;
      for (std::size_t i = 0; i < n.size(); ++i) {
        const std::string p = yaml::index_path(m.child("named"), i);
        std::optional<Layout> l;
        if (n[i].IsScalar()) {
          if (auto parsed = parse_layout(n[i].Scalar()))
            l = *parsed;
          else
            ctx.error(n[i], p, parsed.error());
        } else {
          l = read_layout(ctx, n[i], p);
        }
        if (l) {
          if (!names.insert(l->name).second) {
            ctx.error(n[i], p, "layout name '" + l->name + "' is used twice",
                      "give each layout its own name");
            continue;
          }
          sel.named.push_back(*l);
        }
      }
    }
  }
  m.finish();
}

void read_concurrency(Context& ctx, MapReader& top, std::vector<int>& out) {
  if (!top.has("concurrency")) {
    top.missing("concurrency",
                "a list of client counts such as [1, 2, 4, 8] or {from: 1, to: 1024, factor: 2}");
    return;
  }
  const YAML::Node n = top.get("concurrency");
  const std::string path = top.child("concurrency");
  if (n.IsSequence()) {
    if (n.size() == 0) ctx.error(n, path, "expected at least one concurrency");
    std::set<std::int64_t> seen;
    for (std::size_t i = 0; i < n.size(); ++i) {
      const std::string p = yaml::index_path(path, i);
      auto v = yaml::read_integer(ctx, n[i], p, 1, kMaxConcurrency);
      if (!v) continue;
      if (!seen.insert(*v).second) {
        ctx.error(n[i], p, "concurrency " + std::to_string(*v) + " is listed twice");
        continue;
      }
      out.push_back(static_cast<int>(*v));
    }
    std::sort(out.begin(), out.end());
    return;
  }
  if (n.IsScalar()) {
    if (auto v = yaml::read_integer(ctx, n, path, 1, kMaxConcurrency))
      out.push_back(static_cast<int>(*v));
    return;
  }
  if (n.IsMap()) {
    MapReader m(ctx, n, path);
    auto from = m.integer("from", true, 1, kMaxConcurrency);
    auto to = m.integer("to", true, 1, kMaxConcurrency);
    auto factor = m.number("factor", false, 1.01, 1024.0).value_or(2.0);
    m.finish();
    if (!from || !to) return;
    if (*to < *from) {
      ctx.error(n, path, "'to' is below 'from'");
      return;
    }
    double c = static_cast<double>(*from);
    int last = 0;
    while (c <= static_cast<double>(*to) + 1e-9) {
      const int v = static_cast<int>(c + 0.5);
      if (v != last) out.push_back(v);
      last = v;
      c *= factor;
    }
    return;
  }
  ctx.error(n, path, "expected a list of client counts or {from, to, factor}");
}

// The `facility` mapping of a scenario's top level, when there is one.
void read_facility(Context& ctx, MapReader& top, FacilitySpec& facility) {
  if (!top.has("facility")) return;
  MapReader f(ctx, top.get("facility"), top.child("facility"));
  if (auto v = f.number("pue", false, 1.0, 3.0)) {
    facility.pue = *v;
    facility.pue_given = true;
  }
  if (auto v = f.quantity<UsdPerJoule>("electricity_price", false)) {
    facility.electricity_price = *v;
    facility.price_given = true;
  }
  facility.power_budget = f.quantity<Watts>("power_budget", false);
  if (facility.power_budget && facility.power_budget->value() <= 0)
    ctx.error(f.get("power_budget"), f.child("power_budget"), "power_budget must be above 0");
  f.finish();
}

// The `engine` mapping of a scenario's top level, when there is one.
void read_engine(Context& ctx, MapReader& top, EngineSpec& e) {
  if (!top.has("engine")) return;
  MapReader m(ctx, top.get("engine"), top.child("engine"));
  if (!m.ok()) return;
  if (auto v = m.integer("max_seqs", false, 1, 1 << 20)) e.max_seqs = static_cast<int>(*v);
  if (auto v = m.integer("max_batched_tokens", false, 16, 1 << 24))
    e.max_batched_tokens = static_cast<int>(*v);
  e.memory_utilization = m.number("memory_utilization", false, 0.05, 1.0);
  e.reserve_output = m.number("reserve_output", false, 0.0, 1.0);
  e.prefix_cache = m.boolean("prefix_cache", false);
  m.finish();
}

// `reference:` names a points file; it is read now, so that a file of another kind fails the
// check rather than the run after its simulation.
void read_reference(Context& ctx, MapReader& top, const Catalog& catalog, Scenario& sc) {
  auto r = top.string("reference", false);
  if (!r) return;
  std::filesystem::path fp(*r);
  if (fp.is_relative()) fp = std::filesystem::path(ctx.file()).parent_path() / fp;
  const std::string hint =
      "give a file in the format of scenarios/reference/published.yaml, relative to the scenario "
      "file";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(fp, ec)) {
    ctx.error(top.get("reference"), top.child("reference"),
              "no points file at '" + fp.string() + "'", hint);
    return;
  }
  auto points = load_points_file(fp.string(), catalog);
  if (!points) {
    const auto& d = points.error();
    ctx.error(top.get("reference"), top.child("reference"),
              "'" + fp.string() + "' is not a points file: " + d.front().to_string() +
                  (d.size() > 1 ? " (and " + std::to_string(d.size() - 1) + " more)" : ""),
              hint);
    return;
  }
  sc.reference = fp.lexically_normal().string();
}

std::expected<Scenario, Diagnostics> read_scenario(Context& ctx, const YAML::Node& root,
                                                   const Catalog& catalog) {
  Scenario sc;
  if (root.IsNull()) {
    ctx.error(SourceLocation{ctx.file(), 1, 1}, "", "the scenario file is empty",
              "see docs/scenarios.md for the format");
    return std::unexpected(ctx.diagnostics());
  }
  MapReader top(ctx, root, "");
  if (!top.ok()) return std::unexpected(ctx.diagnostics());
  if (auto v = top.string("name", true)) sc.name = *v;
  if (auto v = top.string("description", false)) sc.description = *v;
  if (auto v = top.integer("seed", false, 0, std::numeric_limits<std::int64_t>::max()))
    sc.seed = static_cast<std::uint64_t>(*v);
  sc.systems = read_ids(ctx, top, "systems", "system", catalog.system_ids());
  sc.models = read_ids(ctx, top, "models", "model", catalog.model_ids());
  if (top.has("workloads")) {
    const YAML::Node w = top.get("workloads");
    if (!w.IsSequence() || w.size() == 0) {
      ctx.error(w, top.child("workloads"), "expected a non-empty list of workloads");
    } else {
      std::set<std::string> ids;
      for (std::size_t i = 0; i < w.size(); ++i) {
        const std::string p = yaml::index_path(top.child("workloads"), i);
        if (auto wl = read_workload(ctx, w[i], p, catalog, sc.models)) {
          if (!ids.insert(wl->id).second) {
            ctx.error(w[i], p, "workload id '" + wl->id + "' is used twice",
                      "give each workload its own id");
            continue;
          }
          sc.workloads.push_back(std::move(*wl));
        }
      }
    }
  } else {
    top.missing("workloads", "a list of workloads (kind: inferencex with isl and osl)");
  }
  read_layouts(ctx, top, sc.layouts);
  const bool closed_loop =
      std::any_of(sc.workloads.begin(), sc.workloads.end(), [](const Workload& w) {
        return w.kind == WorkloadKind::inferencex || w.kind == WorkloadKind::agentic;
      });
  if (closed_loop || top.has("concurrency")) read_concurrency(ctx, top, sc.concurrency);
  if (auto v = top.integer("replicas", false, 1, 1 << 20)) sc.replicas = static_cast<int>(*v);
  if (auto v = top.number("host_offload", false, 0.0, 1.0)) sc.host_offload = *v;
  if (top.has("failures")) {
    YAML::Node n = top.get("failures");
    const std::string path = top.child("failures");
    if (!n.IsSequence() || n.size() == 0) {
      ctx.error(n, path, "expected a non-empty list of failures",
                "e.g. failures: [{part: switch_tray, index: 2, at: 30 s, repair: 120 s}]");
    } else {
      for (std::size_t i = 0; i < n.size(); ++i) {
        MapReader f(ctx, n[i], yaml::index_path(path, i));
        if (!f.ok()) continue;
        FailureSpec x;
        bool good = true;
        if (auto v = f.choice("part", true, kFailureParts))
          x.part = *v;
        else
          good = false;
        if (auto v = f.integer("index", false, 0, 1 << 24)) x.index = static_cast<int>(*v);
        if (auto v = f.quantity<Seconds>("at", true))
          x.at_s = v->value();
        else
          good = false;
        if (auto v = f.quantity<Seconds>("repair", false)) x.repair_s = v->value();
        if (x.at_s < 0 || (x.repair_s && *x.repair_s <= 0)) {
          ctx.error(n[i], yaml::index_path(path, i),
                    "a failure's 'at' must be 0 s or later and its 'repair' above 0 s");
          good = false;
        }
        f.finish();
        if (good) sc.failures.push_back(x);
      }
    }
  }
  if (top.has("serving")) {
    // A list of serving modes (a single one is accepted as a one-element list).
    YAML::Node n = top.get("serving");
    const std::string path = top.child("serving");
    std::vector<ServingMode> modes;
    auto one = [&](const YAML::Node& item, const std::string& where) {
      auto text = yaml::read_string(ctx, item, where);
      if (!text) return;
      auto m = parse_serving_mode(*text);
      if (!m) {
        ctx.error(item, where, m.error(), "list serving modes such as [aggregated, 1p3d]");
        return;
      }
      modes.push_back(*m);
    };
    if (n.IsSequence() && n.size() > 0) {
      for (std::size_t i = 0; i < n.size(); ++i) one(n[i], yaml::index_path(path, i));
    } else if (n.IsScalar()) {
      one(n, path);
    } else {
      ctx.error(n, path, "expected a serving mode or a non-empty list of them",
                "e.g. serving: [aggregated, 1p3d]");
    }
    if (!modes.empty()) sc.serving = modes;
  }
  if (top.has("router"))
    if (auto r = top.choice("router", false, router_names())) sc.router = *router_from_name(*r);
  read_engine(ctx, top, sc.engine);
  read_facility(ctx, top, sc.facility);
  read_reference(ctx, top, catalog, sc);
  read_limits(ctx, top, sc.limits);
  if (top.has("output")) {
    MapReader o(ctx, top.get("output"), top.child("output"));
    sc.output.db = o.string("db", false);
    sc.output.json = o.string("json", false);
    sc.output.plots = o.string("plots", false);
    o.finish();
  }
  top.finish();
  if (ctx.ok()) check_limits(ctx, top, sc);
  if (!ctx.ok()) {
    Diagnostics d = ctx.diagnostics();
    std::stable_sort(d.begin(), d.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
    });
    return std::unexpected(std::move(d));
  }
  return sc;
}

}  // namespace

std::expected<Scenario, Diagnostics> load_scenario_string(const std::string& text,
                                                          const std::string& name,
                                                          const Catalog& catalog) {
  Context ctx(name);
  auto root = yaml::load_string(ctx, text);
  if (!root) return std::unexpected(ctx.diagnostics());
  auto sc = read_scenario(ctx, *root, catalog);
  if (sc) {
    sc->file = name;
    sc->text = text;
  }
  return sc;
}

std::expected<FacilitySpec, Diagnostics> load_scenario_facility(const std::string& text,
                                                                const std::string& name) {
  Context ctx(name);
  auto root = yaml::load_string(ctx, text);
  if (!root) return std::unexpected(ctx.diagnostics());
  FacilitySpec facility;
  if (root->IsMap()) {
    MapReader top(ctx, *root, "");
    read_facility(ctx, top, facility);  // the other keys are not read, so not checked
  }
  if (!ctx.diagnostics().empty()) return std::unexpected(ctx.diagnostics());
  return facility;
}

std::expected<Scenario, Diagnostics> load_scenario_file(const std::string& path,
                                                        const Catalog& catalog) {
  auto text = yaml::read_text_file(path, "the scenario file");
  if (!text) return std::unexpected(text.error());
  return load_scenario_string(*text, path, catalog);
}

}  // namespace racktwin
