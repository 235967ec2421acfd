// Failure impact, paths, max-flow bandwidths and replica placement on a topology graph.

#include "topology/queries.hpp"

#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/pending/queue.hpp>
#include <cmath>
#include <map>
#include <set>

#include "core/enum_names.hpp"
#include "core/error.hpp"

namespace racktwin::topology {

namespace {
constexpr EnumWords<Effect, 4> kEffects{"none,slowed,cut off,lost"};
constexpr EnumWords<Scope, 4> kScopes{"tray,rack,domain,domains"};
}  // namespace

std::string to_string(Effect e) {
  return std::string(kEffects.name(e));
}

std::string to_string(Scope s) {
  return std::string(kScopes.name(s));
}

namespace {

using Edge = Graph::edge_descriptor;

// Edge filter: support edges only.
struct SupportEdges {
  const Graph* g = nullptr;
  bool operator()(Edge e) const { return is_support((*g)[e].kind); }
};

// Edge filter: the links of one network.
struct NetworkEdges {
  const Graph* g = nullptr;
  Network net = Network::scale_up;
  bool operator()(Edge e) const {
    const LinkKind k = (*g)[e].kind;
    return net == Network::scale_up ? k == LinkKind::scale_up || k == LinkKind::uplink
                                    : k == LinkKind::scale_out;
  }
};

// Vertex filter: parts still up; XPUs only where they are the two ends of a route (no transit).
struct RoutableParts {
  const Graph* g = nullptr;
  const std::vector<bool>* down = nullptr;
  PartId a{}, b{};
  bool ends_only = false;
  bool operator()(PartId v) const {
    if (down != nullptr && (*down)[v]) return false;
    return !ends_only || (*g)[v].kind != PartKind::xpu || v == a || v == b;
  }
};

// Records, for each part reached, the support edge it was reached by.
struct TreeEdgeRecorder : boost::default_bfs_visitor {
  std::vector<std::optional<Edge>>* via = nullptr;
  template <class E, class G>
  void tree_edge(E e, const G& g) const {
    (*via)[boost::target(e, g)] = e;
  }
};

std::vector<bool> no_failures(const Graph& g) {
  return std::vector<bool>(boost::num_vertices(g), false);
}

bool is_switch(PartKind k) {
  return k == PartKind::switch_tray || k == PartKind::onboard_switch || k == PartKind::spine;
}

std::string fraction_text(double f) {
  const double pct = std::round(f * 1000.0) / 10.0;
  std::string s = std::to_string(pct);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s + "%";
}

}  // namespace

Impact assess(const Topology& t, std::span<const PartId> failed_in) {
  const Graph& g = t.graph();
  Impact out;
  std::set<PartId> seen;
  for (PartId v : failed_in) {
    if (v >= boost::num_vertices(g))
      throw InputError({Diagnostic{
          {}, "failed", "part id " + std::to_string(v) + " is not in this topology", ""}});
    if (seen.insert(v).second) out.failed.push_back(v);
  }

  // 1. Everything that depends on a failed part: a breadth-first search along support edges.
  const std::size_t n = boost::num_vertices(g);
  std::vector<std::optional<Edge>> via(n);
  std::vector<boost::default_color_type> color(n);
  boost::filtered_graph<Graph, SupportEdges> support(g, SupportEdges{&g});
  boost::queue<PartId> queue;
  TreeEdgeRecorder rec;
  rec.via = &via;
  boost::breadth_first_search(
      support, out.failed.begin(), out.failed.end(), queue, rec,
      boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, g)));
  out.down.assign(n, false);
  for (std::size_t v = 0; v < n; ++v) out.down[v] = color[v] != boost::white_color;

  // 2. Islands of the scale-up network among the parts still up.
  boost::filtered_graph<Graph, NetworkEdges, RoutableParts> net(
      g, NetworkEdges{&g, Network::scale_up}, RoutableParts{&g, &out.down});
  std::vector<int> island(n, -1);
  boost::strong_components(
      net, boost::make_iterator_property_map(island.begin(), boost::get(boost::vertex_index, g)));

  // The main island of each domain holds the most working XPUs (at least two); ties go to the
  // island of the first XPU in build order.
  std::map<int, std::map<int, int>> size;  // domain -> island -> working XPUs
  std::map<int, int> first;                // island -> ordinal of its first XPU
  for (PartId x : t.xpus()) {
    if (out.down[x]) continue;
    ++size[g[x].domain][island[x]];
    first.emplace(island[x], t.ordinal(x));
  }
  std::map<int, int> main_island;
  for (const auto& [d, islands] : size) {
    int best = -1, best_size = 1;
    for (const auto& [i, k] : islands)
      if (k > best_size || (k == best_size && best >= 0 && first[i] < first[best]))
        best = i, best_size = k;
    main_island[d] = best;
  }

  // 3. Each XPU's effect, and the bandwidth it keeps.
  const std::string single =
      out.failed.size() == 1 ? g[out.failed.front()].name : "several failures";
  out.total_xpus = static_cast<int>(t.xpus().size());
  out.state.assign(t.xpus().size(), Effect::none);
  for (PartId x : t.xpus()) {
    double up_all = 0, up_ok = 0, dom_all = 0, dom_ok = 0, out_all = 0, out_ok = 0;
    for (auto e : boost::make_iterator_range(boost::out_edges(x, g))) {
      const Link& l = g[e];
      const PartId y = boost::target(e, g);
      const double bw = l.bandwidth.value();
      const bool y_up = !out.down[y];
      if (l.kind == LinkKind::scale_out) {
        out_all += bw;
        out_ok += y_up ? bw : 0;
      } else if (l.kind == LinkKind::scale_up) {
        // A dead peer of a full mesh takes no bandwidth from the living: count live peers only.
        if (g[y].kind == PartKind::xpu && !y_up) continue;
        up_all += bw;
        up_ok += y_up ? bw : 0;
        if (g[y].uplink) {
          dom_all += bw;
          bool reaches_tier = false;
          for (auto u : boost::make_iterator_range(boost::out_edges(y, g)))
            if (g[u].kind == LinkKind::uplink && !out.down[boost::target(u, g)])
              reaches_tier = true;
          dom_ok += y_up && reaches_tier ? bw : 0;
        }
      }
    }
    out.scale_up_before += BytesPerSecond(up_all);

    XpuImpact xi;
    xi.xpu = x;
    xi.scale_up_fraction = up_all > 0 ? up_ok / up_all : 1.0;
    xi.domain_fraction = dom_all > 0 ? dom_ok / dom_all : 1.0;
    xi.scale_out_fraction = out_all > 0 ? out_ok / out_all : 1.0;
    if (out.down[x]) {
      xi.effect = Effect::lost;
      // Walk back to the failed part, noting how the XPU depended on it.
      PartId v = x;
      std::string how = "failed";
      while (via[v]) {
        const Edge e = *via[v];
        const PartId parent = boost::source(e, g);
        if (g[e].kind == LinkKind::hosts)
          how = "loses its host " + g[parent].name;
        else if (g[e].kind == LinkKind::powers && how.rfind("loses its host", 0) != 0)
          how = "loses power";
        else if (how == "failed")
          how = "inside the failed part";
        v = parent;
      }
      xi.cause = g[v].name;
      xi.how = how;
      xi.scale_up_fraction = xi.domain_fraction = xi.scale_out_fraction = 0.0;
      ++out.lost;
    } else if (t.system().domain_xpus > 1 && island[x] != main_island[g[x].domain]) {
      xi.effect = Effect::cut_off;
      xi.cause = single;
      xi.how = "cut off from its scale-up domain (an island of " +
               std::to_string(size[g[x].domain][island[x]]) + " XPUs)";
      ++out.cut_off;
    } else {
      out.scale_up_after += BytesPerSecond(up_ok);
      std::string how;
      auto note = [&](double f, const char* what) {
        if (f < 1.0 - 1e-12)
          how += (how.empty() ? "" : ", ") + fraction_text(f) + " of " + what + " left";
      };
      note(xi.scale_up_fraction, "scale-up bandwidth");
      note(xi.domain_fraction, "bandwidth into the domain");
      note(xi.scale_out_fraction, "scale-out bandwidth");
      if (!how.empty()) {
        xi.effect = Effect::slowed;
        xi.cause = single;
        xi.how = how;
        ++out.slowed;
      }
    }
    out.state[static_cast<std::size_t>(t.ordinal(x))] = xi.effect;
    if (xi.effect != Effect::none) out.affected.push_back(std::move(xi));
  }
  return out;
}

// --- bandwidth -----------------------------------------------------------------------------------

namespace {

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, long long,
        boost::property<boost::edge_residual_capacity_t, long long,
                        boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

// Max-flow from `from` to `to` over one network in bytes per second; XPUs are endpoints only.
long long max_flow(const Topology& t, std::span<const PartId> from, std::span<const PartId> to,
                   Network net, const std::vector<bool>& down) {
  const Graph& g = t.graph();
  const std::size_t n = boost::num_vertices(g);
  std::vector<int> role(n, 0);  // XPUs: +1 source side, -1 sink side, 0 neither
  for (PartId v : from) role[v] = 1;
  for (PartId v : to) role[v] = role[v] == 1 ? 0 : -1;

  FlowGraph f(n + 2);
  const auto source = static_cast<FlowTraits::vertex_descriptor>(n);
  const auto sink = static_cast<FlowTraits::vertex_descriptor>(n + 1);
  auto cap = boost::get(boost::edge_capacity, f);
  auto rev = boost::get(boost::edge_reverse, f);
  auto arc_pair = [&](std::size_t u, std::size_t v, long long uv, long long vu) {
    const auto e1 = boost::add_edge(u, v, f).first;
    const auto e2 = boost::add_edge(v, u, f).first;
    cap[e1] = uv;
    cap[e2] = vu;
    rev[e1] = e2;
    rev[e2] = e1;
  };
  const NetworkEdges in_net{&g, net};
  auto sends = [&](PartId v) { return g[v].kind != PartKind::xpu || role[v] == 1; };
  auto takes = [&](PartId v) { return g[v].kind != PartKind::xpu || role[v] == -1; };
  long long total = 0;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    if (g[e].mirror || !in_net(e)) continue;
    const PartId u = boost::source(e, g), v = boost::target(e, g);
    if (down[u] || down[v]) continue;
    const long long c = std::llround(g[e].bandwidth.value());
    const long long uv = sends(u) && takes(v) ? c : 0;
    const long long vu = sends(v) && takes(u) ? c : 0;
    if (uv == 0 && vu == 0) continue;
    arc_pair(u, v, uv, vu);
    total += uv + vu;
  }
  const long long unlimited = total + 1;
  for (std::size_t v = 0; v < n; ++v) {
    if (down[v]) continue;
    if (role[v] == 1) arc_pair(source, v, unlimited, 0);
    if (role[v] == -1) arc_pair(v, sink, unlimited, 0);
  }
  return boost::push_relabel_max_flow(f, source, sink);
}

const std::vector<bool>& down_of(const Topology& t, const Impact* failures,
                                 std::vector<bool>& none) {
  if (failures != nullptr) return failures->down;
  none = no_failures(t.graph());
  return none;
}

void require_xpu(const Topology& t, PartId v, const char* what) {
  if (v >= boost::num_vertices(t.graph()) || t.part(v).kind != PartKind::xpu)
    throw InputError({Diagnostic{
        {},
        what,
        "'" + (v < boost::num_vertices(t.graph()) ? t.part(v).name : "?") + "' is not an XPU",
        "give an XPU such as rack0/" + stem(t.system(), PartKind::compute_tray) + "0/xpu0"}});
}

}  // namespace

Dependents dependents(const Topology& t, PartId unit) {
  const Graph& g = t.graph();
  if (unit >= boost::num_vertices(g))
    throw InputError({Diagnostic{
        {}, "failed", "part id " + std::to_string(unit) + " is not in this topology", ""}});
  Dependents d;
  std::vector<PartId> stack{unit};
  std::vector<char> seen(boost::num_vertices(g), 0);
  seen[unit] = 1;
  while (!stack.empty()) {
    const PartId v = stack.back();
    stack.pop_back();
    d.parts.push_back(v);
    const PartKind k = g[v].kind;
    d.transit = d.transit || k == PartKind::switch_tray || k == PartKind::onboard_switch ||
                k == PartKind::spine || k == PartKind::scale_out;
    for (auto e : boost::make_iterator_range(boost::out_edges(v, g))) {
      const Link& link = g[e];
      const PartId w = boost::target(e, g);
      if (is_support(link.kind) && !link.mirror && !seen[w]) {
        seen[w] = 1;
        stack.push_back(w);
      }
    }
  }
  return d;
}

BytesPerSecond cut_bandwidth(const Topology& t, std::span<const PartId> from,
                             std::span<const PartId> to, Network net, const Impact* failures) {
  std::vector<bool> none;
  return BytesPerSecond(
      static_cast<double>(max_flow(t, from, to, net, down_of(t, failures, none))));
}

BytesPerSecond bisection(const Topology& t, int domain, const Impact* failures) {
  const auto xs = t.domain_xpus(domain);
  if (xs.size() < 2)
    throw InputError({Diagnostic{
        {}, "domain", "domain " + std::to_string(domain) + " has fewer than 2 XPUs", ""}});
  const std::span<const PartId> all(xs);
  const std::size_t half = xs.size() / 2;
  return cut_bandwidth(t, all.first(half), all.subspan(half), Network::scale_up, failures);
}

BytesPerSecond scale_out_bisection(const Topology& t) {
  if (t.domains() < 2)
    throw InputError(
        {Diagnostic{{}, "domains", "a scale-out bisection needs at least 2 domains", ""}});
  std::vector<PartId> a, b;
  for (PartId x : t.xpus()) (t.part(x).domain < t.domains() / 2 ? a : b).push_back(x);
  return cut_bandwidth(t, a, b, Network::scale_out);
}

Path path(const Topology& t, PartId a, PartId b, const Impact* failures) {
  require_xpu(t, a, "from");
  require_xpu(t, b, "to");
  if (a == b)
    throw InputError(
        {Diagnostic{{}, "to", "the two XPUs are the same", "give two different XPUs"}});
  const Graph& g = t.graph();
  std::vector<bool> none;
  const auto& down = down_of(t, failures, none);

  Path p;
  p.network = g[a].domain == g[b].domain ? Network::scale_up : Network::scale_out;
  if (down[a] || down[b]) return p;

  boost::filtered_graph<Graph, NetworkEdges, RoutableParts> net(
      g, NetworkEdges{&g, p.network}, RoutableParts{&g, &down, a, b, true});
  const std::size_t n = boost::num_vertices(g);
  std::vector<PartId> pred(n);
  for (std::size_t v = 0; v < n; ++v) pred[v] = v;
  auto pred_map =
      boost::make_iterator_property_map(pred.begin(), boost::get(boost::vertex_index, g));
  boost::breadth_first_search(net, a,
                              boost::visitor(boost::make_bfs_visitor(
                                  boost::record_predecessors(pred_map, boost::on_tree_edge()))));
  if (pred[b] == b) return p;
  for (PartId v = b; v != a; v = pred[v]) p.route.push_back(v);
  p.route.push_back(a);
  std::reverse(p.route.begin(), p.route.end());
  p.reachable = true;
  p.switch_hops = static_cast<int>(std::count_if(p.route.begin(), p.route.end(), [&](PartId v) {
    return is_switch(g[v].kind) || g[v].kind == PartKind::scale_out;
  }));
  const PartId ends_a[] = {a}, ends_b[] = {b};
  p.bandwidth = BytesPerSecond(static_cast<double>(max_flow(t, ends_a, ends_b, p.network, down)));
  const System& s = t.system();
  if (p.network == Network::scale_out) {
    p.latency = s.scale_out_latency;
  } else {
    p.latency = s.scale_up.back().latency;
    for (const auto& tier : s.scale_up)
      if (tier.switch_hops >= p.switch_hops) {
        p.latency = tier.latency;
        break;
      }
  }
  return p;
}

// --- placement -----------------------------------------------------------------------------------

Placement place(const Topology& t, int replica_xpus, const Impact* failures) {
  const System& s = t.system();
  if (replica_xpus < 1 || (replica_xpus > s.domain_xpus && replica_xpus % s.domain_xpus != 0))
    throw InputError(
        {Diagnostic{{},
                    "replica",
                    "a replica of " + std::to_string(replica_xpus) + " XPUs does not fit a " +
                        std::to_string(s.domain_xpus) +
                        "-XPU scale-up domain and is not a whole number of domains",
                    "give a replica size from 1 to " + std::to_string(s.domain_xpus) +
                        ", or a multiple of " + std::to_string(s.domain_xpus)}});
  Placement out;
  out.replica_xpus = replica_xpus;
  if (replica_xpus <= s.compute_tray.xpus)
    out.scope = Scope::tray;
  else if (replica_xpus <= s.xpus_per_rack() && s.domain_xpus >= s.xpus_per_rack())
    out.scope = Scope::rack;
  else if (replica_xpus <= s.domain_xpus)
    out.scope = Scope::domain;
  else
    out.scope = Scope::domains;

  // In-service XPUs grouped by the unit a replica must stay within, in build order.
  std::map<std::pair<int, int>, std::vector<PartId>> units;
  for (PartId x : t.xpus()) {
    if (failures != nullptr && !failures->in_service(t.ordinal(x))) {
      ++out.out_of_service;
      continue;
    }
    const Part& p = t.part(x);
    // Across domains: whole domains in order, the replica's own domains contiguous.
    const std::pair<int, int> key = out.scope == Scope::tray     ? std::pair{p.rack, p.tray}
                                    : out.scope == Scope::rack   ? std::pair{p.rack, 0}
                                    : out.scope == Scope::domain ? std::pair{p.domain, 0}
                                                                 : std::pair{0, 0};
    units[key].push_back(x);
  }
  const auto r = static_cast<std::size_t>(replica_xpus);
  for (const auto& [key, xs] : units) {
    std::size_t i = 0;
    for (; i + r <= xs.size(); i += r)
      out.replicas.push_back(
          Replica{{xs.begin() + static_cast<long>(i), xs.begin() + static_cast<long>(i + r)}});
    out.leftover.insert(out.leftover.end(), xs.begin() + static_cast<long>(i), xs.end());
  }
  return out;
}

std::vector<Replica> place_free(const Topology& t, int replica_xpus, int most,
                                std::vector<char>& taken, const Impact* failures) {
  if (most <= 0) return {};
  Impact free;
  free.state.assign(t.xpus().size(), Effect::none);
  for (std::size_t x = 0; x < free.state.size(); ++x)
    if (taken[x] != 0 || (failures != nullptr && !failures->in_service(static_cast<int>(x))))
      free.state[x] = Effect::lost;
  auto placed = place(t, replica_xpus, &free).replicas;
  if (static_cast<int>(placed.size()) > most) placed.resize(static_cast<std::size_t>(std::max(0, most)));
  for (const auto& r : placed)
    for (PartId x : r.xpus) taken[static_cast<std::size_t>(t.ordinal(x))] = 1;
  return placed;
}

}  // namespace racktwin::topology
