#include "app/topology.hpp"

#include <cmath>
#include <map>
#include <set>

#include "topology/dot.hpp"

namespace racktwin::app {
namespace {

using namespace racktwin::topology;

// What each kind of part is called for this system.
std::string label(const System& s, PartKind k) {
  switch (k) {
    case PartKind::xpu:
      return "XPU (" + s.chip_id + ")";
    case PartKind::compute_tray:
      return s.compute_tray.name;
    case PartKind::switch_tray:
      return s.switches.name;
    case PartKind::onboard_switch:
      return "on-board scale-up switch";
    case PartKind::host:
      switch (s.host.placement) {
        case HostPlacement::separate_rack:
          return s.host.name + " host tray";
        case HostPlacement::in_compute_tray:
          return s.host.name + " CPU (in the compute tray)";
        case HostPlacement::in_server:
          return s.host.name + " (" + std::to_string(s.host.cpus) + " CPUs per server)";
      }
      break;
    case PartKind::compute_rack:
      return "compute rack";
    case PartKind::host_rack:
      return "host rack";
    case PartKind::rack_pair:
      return "rack pair (compute + host rack)";
    case PartKind::power_feed:
      return "rack power feed";
    case PartKind::spine:
      return "second-tier switch plane";
    case PartKind::scale_out:
      return "scale-out network";
  }
  return to_string(k);
}

std::string link_label(LinkKind k) {
  switch (k) {
    case LinkKind::contains:
      return "contains";
    case LinkKind::powers:
      return "feed powers rack";
    case LinkKind::hosts:
      return "host serves XPU";
    case LinkKind::scale_up:
      return "scale-up link";
    case LinkKind::uplink:
      return "uplink to the second tier";
    case LinkKind::scale_out:
      return "scale-out link (NIC)";
    case LinkKind::host_link:
      return "host link";
  }
  return to_string(k);
}

const char* network_name(Network n) {
  return n == Network::scale_up ? "scale_up" : "scale_out";
}

// The first part of a kind, as an example of its name.
std::map<PartKind, std::string> examples(const Topology& t) {
  std::map<PartKind, std::string> out;
  for (auto v : boost::make_iterator_range(boost::vertices(t.graph())))
    out.emplace(t.part(v).kind, t.part(v).name);
  return out;
}

// Distinct bandwidths of each link kind (network links only).
std::map<LinkKind, std::set<double>> link_bandwidths(const Topology& t) {
  std::map<LinkKind, std::set<double>> out;
  const Graph& g = t.graph();
  for (auto e : boost::make_iterator_range(boost::edges(g)))
    if (!g[e].mirror && is_network(g[e].kind)) out[g[e].kind].insert(g[e].bandwidth.value());
  return out;
}

power::PartCounts power_counts(const Topology& t) {
  const auto n = t.part_counts();
  auto count = [&](PartKind k) { return n.contains(k) ? n.at(k) : 0; };
  power::PartCounts c;
  c.xpus = count(PartKind::xpu);
  c.compute_trays = count(PartKind::compute_tray);
  c.switch_trays = count(PartKind::switch_tray);
  c.hosts = count(PartKind::host);
  return c;
}

PathView path_view(const Topology& t, PartId a, PartId b) {
  const Path p = path(t, a, b);
  PathView v{t.part(a).name, t.part(b).name, p.reachable, p.network,
             p.switch_hops,  p.bandwidth,    p.latency,   {}};
  for (PartId x : p.route) v.route.push_back(t.part(x).name);
  return v;
}

// Representative pairs of XPUs: same tray, another tray of the rack, another rack of the domain,
// another domain.
std::vector<SamplePath> sample_paths(const Topology& t) {
  std::vector<SamplePath> out;
  const auto& xs = t.xpus();
  const PartId a = xs.front();
  const Part& pa = t.part(a);
  auto first = [&](auto pred) -> std::optional<PartId> {
    for (PartId x : xs)
      if (x != a && pred(t.part(x))) return x;
    return std::nullopt;
  };
  const std::pair<std::string, std::optional<PartId>> cases[] = {
      {"same tray", first([&](const Part& p) { return p.rack == pa.rack && p.tray == pa.tray; })},
      {"same rack", first([&](const Part& p) {
         return p.rack == pa.rack && p.tray != pa.tray && p.domain == pa.domain;
       })},
      {"same domain, other rack",
       first([&](const Part& p) { return p.rack != pa.rack && p.domain == pa.domain; })},
      {"other domain", first([&](const Part& p) { return p.domain != pa.domain; })},
  };
  for (const auto& [what, b] : cases)
    if (b) out.push_back({what, path_view(t, a, *b)});
  return out;
}

Json sheet_json(const power::PowerSheet& s) {
  Json lines = Json::array();
  for (const auto& l : s.lines)
    lines.push_back({{"part", l.part},
                     {"count", l.count},
                     {"each_w", l.each.value()},
                     {"total_w", l.total().value()}});
  return {{"lines", lines},
          {"load_w", s.load.value()},
          {"conversion_loss_w", s.conversion_loss.value()},
          {"input_w", s.input.value()}};
}

Json placement_json(const PlacementView& p) {
  return {{"replica_xpus", p.replica_xpus},     {"scope", to_string(p.scope)},
          {"replicas", p.replicas.size()},      {"leftover", p.leftover.size()},
          {"out_of_service", p.out_of_service}, {"replica_xpu_names", p.replicas},
          {"leftover_xpu_names", p.leftover}};
}

PlacementView placement_view(const Topology& t, const Placement& p) {
  PlacementView v;
  v.replica_xpus = p.replica_xpus;
  v.scope = p.scope;
  for (const auto& r : p.replicas) {
    auto& names = v.replicas.emplace_back();
    for (PartId x : r.xpus) names.push_back(t.part(x).name);
  }
  for (PartId x : p.leftover) v.leftover.push_back(t.part(x).name);
  v.out_of_service = p.out_of_service;
  return v;
}

Result<const System*> find_system(const Catalog& cat, const std::string& id) {
  if (const System* s = cat.find_system(id)) return s;
  return std::unexpected(Problem{Problem::Input::system, "no system '" + id + "' in the catalog" +
                                                             did_you_mean(id, cat.system_ids())});
}

Result<Topology> build_topology(const Catalog& cat, const TopologyRequest& req) {
  auto s = find_system(cat, req.system);
  if (!s) return std::unexpected(s.error());
  return build(**s, req.domains);
}

Result<PartId> find_part(const Topology& t, const std::string& name) {
  if (auto v = t.find(name)) return *v;
  return std::unexpected(Problem{Problem::Input::part, "no part '" + name + "' in this " +
                                                           t.system().id + " deployment" +
                                                           did_you_mean(name, t.part_names())});
}

}  // namespace

Json to_json(const PathView& p) {
  return {{"reachable", p.reachable},       {"network", network_name(p.network)},
          {"switch_hops", p.switch_hops},   {"bandwidth_bytes_per_s", p.bandwidth.value()},
          {"latency_s", p.latency.value()}, {"route", p.route}};
}

Json to_json(const TopologyReport& r) {
  Json jp = Json::array(), jl = Json::array(), jpaths = Json::array(), jchecks = Json::array();
  for (const auto& p : r.parts)
    jp.push_back({{"kind", to_string(p.kind)},
                  {"label", p.label},
                  {"count", p.count},
                  {"example", p.example}});
  for (const auto& l : r.links) {
    Json bw = Json::array();
    for (BytesPerSecond b : l.bandwidths) bw.push_back(b.value());
    jl.push_back({{"kind", to_string(l.kind)}, {"count", l.count}, {"bandwidth_bytes_per_s", bw}});
  }
  for (const auto& sp : r.paths) {
    Json j = to_json(sp.path);
    j["pair"] = sp.pair;
    jpaths.push_back(j);
  }
  const PowerSummary& pw = r.power;
  for (const auto& c : pw.budget_checks)
    jchecks.push_back({{"figure", c.what},
                       {"basis", c.basis},
                       {"computed_w", c.computed.value()},
                       {"published_w", c.published.value()},
                       {"residual", c.residual()}});
  return {{"system", r.system},
          {"domains", r.domains},
          {"domain_xpus", r.domain_xpus},
          {"xpus", r.xpus},
          {"parts", jp},
          {"links", jl},
          {"bisection_bytes_per_s", r.bisection.value()},
          {"scale_out_bisection_bytes_per_s",
           r.scale_out_bisection ? Json(r.scale_out_bisection->value()) : Json(nullptr)},
          {"paths", jpaths},
          {"power",
           {{"pue", pw.pue},
            {"conversion_efficiency", pw.conversion.efficiency()},
            {"compute_rack", sheet_json(pw.compute_rack)},
            {"host_rack", pw.host_rack ? sheet_json(*pw.host_rack) : Json(nullptr)},
            {"budget_checks", jchecks},
            {"budget_tolerance", pw.budget_tolerance},
            {"all_in_per_xpu_w", pw.all_in.per_xpu.value()},
            {"all_in_computed", pw.all_in.computed},
            {"all_in_computed_per_xpu_w", pw.all_in.computed_per_xpu.value()},
            {"deployment_it_provisioned_w", pw.it_provisioned.value()},
            {"deployment_it_full_activity_w", pw.it_full_activity.value()},
            {"deployment_facility_provisioned_w", pw.facility_provisioned.value()}}}};
}

Json to_json(const PartList& l) {
  Json arr = Json::array();
  for (const auto& p : l.parts)
    arr.push_back({{"name", p.name}, {"kind", to_string(p.kind)}, {"domain", p.domain}});
  return arr;
}

Json to_json(const FailureAssessment& a) {
  Json jf = Json::array(), jg = Json::array(), jb = Json::array();
  for (const auto& f : a.failed) jf.push_back({{"name", f.name}, {"kind", to_string(f.kind)}});
  for (const auto& g : a.affected)
    jg.push_back(
        {{"effect", to_string(g.effect)}, {"cause", g.cause}, {"how", g.how}, {"xpus", g.xpus}});
  for (const auto& b : a.bisection)
    jb.push_back({{"domain", b.domain},
                  {"before_bytes_per_s", b.before.value()},
                  {"after_bytes_per_s", b.after.value()}});
  Json j{{"system", a.system},
         {"domains", a.domains},
         {"failed", jf},
         {"xpus", a.xpus},
         {"lost", a.lost},
         {"cut_off", a.cut_off},
         {"slowed", a.slowed},
         {"in_service", a.in_service},
         {"scale_up_bandwidth_before_bytes_per_s", a.scale_up_before.value()},
         {"scale_up_bandwidth_after_bytes_per_s", a.scale_up_after.value()},
         {"bisection", jb},
         {"affected", jg}};
  if (a.placement_after) {
    j["placement_before"] = placement_json(*a.placement_before);
    j["placement_after"] = placement_json(*a.placement_after);
  }
  return j;
}

Result<TopologyReport> topology_report(const Catalog& cat, const TopologyRequest& req) {
  auto built = build_topology(cat, req);
  if (!built) return std::unexpected(built.error());
  const Topology& t = *built;
  const System& s = t.system();
  power::Facility f;
  f.pue = req.pue;
  const auto pm = power::PowerModel::of(s, f);
  if (!pm) return std::unexpected(Problem{Problem::Input::power_figures, pm.error()});

  TopologyReport r;
  r.system = s.id;
  r.name = s.name;
  r.domains = t.domains();
  r.domain_xpus = s.domain_xpus;
  r.xpus = static_cast<int>(t.xpus().size());
  int uplinks = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(t.graph())))
    uplinks += t.part(v).uplink ? 1 : 0;
  const auto ex = examples(t);
  for (const auto& [k, n] : t.part_counts())
    r.parts.push_back({k, label(s, k), n, ex.at(k), k == PartKind::switch_tray ? uplinks : 0});
  const auto bws = link_bandwidths(t);
  for (const auto& [k, n] : t.link_counts()) {
    LinkKindCount l{k, link_label(k), n, {}};
    if (bws.contains(k))
      for (double b : bws.at(k)) l.bandwidths.push_back(BytesPerSecond(b));
    r.links.push_back(std::move(l));
  }
  r.bisection = bisection(t, 0);
  r.bisection_per_xpu = r.bisection / (s.domain_xpus / 2.0);
  if (t.domains() >= 2) {
    r.scale_out_bisection = scale_out_bisection(t);
    r.scale_out_split_last = t.domains() / 2 - 1;
  }
  r.paths = sample_paths(t);

  PowerSummary& p = r.power;
  p.pue = pm->facility().pue;
  p.conversion = pm->facility().conversion;
  p.xpu_idle = pm->xpu().idle();
  p.xpu_measured_sustained = pm->system().chip->sustained_power;
  p.xpu_tdp = pm->xpu().tdp();
  p.compute_rack = pm->sheet(pm->compute_rack_parts(), power::Operating::rated());
  if (pm->separate_host_rack())
    p.host_rack = pm->sheet(pm->host_rack_parts(), power::Operating::rated());
  p.budget_checks = pm->budget_checks();
  p.all_in = pm->all_in();
  p.all_in_gap =
      p.all_in.computed ? 0.0 : std::abs(p.all_in.computed_per_xpu / p.all_in.per_xpu - 1.0);
  const auto counts = power_counts(t);
  p.it_provisioned = pm->sheet(counts, power::Operating::rated()).input;
  p.it_full_activity = pm->sheet(counts, power::Operating::at(power::Activity::full())).input;
  p.facility_provisioned = p.it_provisioned * p.pue;
  return r;
}

Result<PartList> topology_parts(const Catalog& cat, const TopologyRequest& req) {
  auto t = build_topology(cat, req);
  if (!t) return std::unexpected(t.error());
  PartList l;
  const Graph& g = t->graph();
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    l.parts.push_back({g[v].name, g[v].kind, g[v].domain});
  return l;
}

Result<PathView> topology_path(const Catalog& cat, const TopologyRequest& req,
                               const std::string& from, const std::string& to) {
  auto t = build_topology(cat, req);
  if (!t) return std::unexpected(t.error());
  auto a = find_part(*t, from);
  if (!a) return std::unexpected(a.error());
  auto b = find_part(*t, to);
  if (!b) return std::unexpected(b.error());
  return path_view(*t, *a, *b);
}

Result<std::string> topology_dot(const Catalog& cat, const TopologyRequest& req) {
  auto t = build_topology(cat, req);
  if (!t) return std::unexpected(t.error());
  return to_dot(*t);
}

Result<FailureAssessment> assess_failure(const Catalog& cat, const FailureRequest& req) {
  auto built = build_topology(cat, req.topology);
  if (!built) return std::unexpected(built.error());
  const Topology& t = *built;
  std::vector<PartId> failed;
  for (const auto& name : req.failed) {
    auto v = find_part(t, name);
    if (!v) return std::unexpected(v.error());
    failed.push_back(*v);
  }
  const Impact none = assess(t, {});
  const Impact im = assess(t, failed);

  FailureAssessment a;
  a.system = t.system().id;
  a.domains = t.domains();
  a.domain_xpus = t.system().domain_xpus;
  for (PartId v : im.failed) a.failed.push_back({t.part(v).name, t.part(v).kind});
  a.xpus = im.total_xpus;
  a.lost = im.lost;
  a.cut_off = im.cut_off;
  a.slowed = im.slowed;
  a.in_service = im.in_service();
  a.scale_up_before = im.scale_up_before;
  a.scale_up_after = im.scale_up_after;
  a.scale_up_left =
      im.scale_up_before.value() > 0 ? im.scale_up_after.value() / im.scale_up_before.value() : 1.0;
  for (int d = 0; d < t.domains(); ++d)
    a.bisection.push_back({d, bisection(t, d), bisection(t, d, &im)});
  for (const auto& x : im.affected) {
    auto& g = a.affected;
    if (g.empty() || g.back().effect != x.effect || g.back().cause != x.cause ||
        g.back().how != x.how)
      g.push_back({x.effect, x.cause, x.how, {}});
    g.back().xpus.push_back(t.part(x.xpu).name);
  }
  if (req.place_xpus > 0) {
    a.placement_before = placement_view(t, place(t, req.place_xpus, &none));
    a.placement_after = placement_view(t, place(t, req.place_xpus, &im));
  }
  return a;
}

Result<RackElevation> rack_elevation(const Catalog& cat, const std::string& system) {
  auto built = build_topology(cat, TopologyRequest{system, 1, 1.10});
  if (!built) return std::unexpected(built.error());
  const Topology& t = *built;
  const System& s = t.system();
  const auto& pw = s.power;
  const double tdp = s.chip ? s.chip->tdp.value() : 0;
  const bool host_rack = s.host.placement == HostPlacement::separate_rack;
  const double in_tray_hosts = host_rack ? 0 : pw.host.value_or(Watts(0)).value() * s.host_parts_per_compute_tray();
  RackElevation e{s.id, s.name, {}, {}, {}};
  const Graph& g = t.graph();
  for (auto v : boost::make_iterator_range(boost::vertices(g))) {
    const Part& p = g[v];
    if (p.rack != 0) continue;
    const std::string label = p.name.substr(p.name.rfind('/') + 1);
    switch (p.kind) {
      case PartKind::compute_tray:
        e.compute.push_back({p.name, p.kind, label, s.compute_tray.xpus,
                             Watts(tdp * s.compute_tray.xpus +
                                   pw.compute_tray_overhead.value_or(Watts(0)).value() + in_tray_hosts)});
        break;
      case PartKind::switch_tray:
        e.compute.push_back({p.name, p.kind, label + (p.uplink ? " (uplink)" : ""), 0,
                             pw.switch_tray.value_or(Watts(0))});
        break;
      case PartKind::host:
        if (host_rack) e.host.push_back({p.name, p.kind, label, 0, pw.host.value_or(Watts(0))});
        break;
      default: break;
    }
  }
  std::stable_partition(e.compute.begin(), e.compute.end(),
                        [](const ElevationSlot& x) { return x.kind == PartKind::compute_tray; });
  e.note = "Slots in the twin's build order, not physical rack units; power is rated (XPUs at TDP).";
  if (!host_rack) e.note += " Hosts sit inside the compute trays (their power included).";
  return e;
}

namespace {

// The worst effect on each slot's XPUs (the slot's own part failed: lost).
std::vector<Effect> effects_of(const std::vector<const ElevationSlot*>& all, const FailureAssessment& a) {
  auto rank = [](Effect x) { return static_cast<int>(x); };
  std::map<std::string, Effect> by_tray;
  for (const auto& grp : a.affected)
    for (const auto& x : grp.xpus) {
      const std::string tray = x.substr(0, x.rfind('/'));
      auto& cur = by_tray[tray];
      if (rank(grp.effect) > rank(cur)) cur = grp.effect;
    }
  auto effect_of = [&](const ElevationSlot& slot) {
    for (const auto& f : a.failed)
      if (f.name == slot.name) return Effect::lost;
    const auto it = by_tray.find(slot.name);
    return it == by_tray.end() ? Effect::none : it->second;
  };
  std::vector<Effect> out;
  for (const auto* slot : all) out.push_back(effect_of(*slot));
  return out;
}

// A slot of the domain drawing, with its rated power (0 for parts whose power is the server's).
ElevationSlot domain_slot(const System& s, const Part& p, bool host_rack) {
  const auto& pw = s.power;
  const double tdp = s.chip ? s.chip->tdp.value() : 0;
  const double in_tray_hosts =
      host_rack ? 0 : pw.host.value_or(Watts(0)).value() * s.host_parts_per_compute_tray();
  const std::string label = p.name.substr(p.name.rfind('/') + 1);
  switch (p.kind) {
    case PartKind::compute_tray:
      return {p.name, p.kind, label, s.compute_tray.xpus,
              Watts(tdp * s.compute_tray.xpus + pw.compute_tray_overhead.value_or(Watts(0)).value() +
                    in_tray_hosts)};
    case PartKind::switch_tray:
      return {p.name, p.kind, label + (p.uplink ? " (uplink)" : ""), 0, pw.switch_tray.value_or(Watts(0))};
    case PartKind::host:
      return {p.name, p.kind, label, 0, host_rack ? pw.host.value_or(Watts(0)) : Watts(0)};
    default:
      return {p.name, p.kind, label, 0, Watts(0)};
  }
}

ElevationRack& rack_named(std::vector<ElevationRack>& racks, const std::string& name, PartKind kind,
                          int rack) {
  for (auto& r : racks)
    if (r.name == name) return r;
  racks.push_back({name, kind, rack, {}});
  return racks.back();
}

}  // namespace

std::vector<topology::Effect> slot_effects(const RackElevation& e, const FailureAssessment& a) {
  std::vector<const ElevationSlot*> all;
  for (const auto* list : {&e.compute, &e.host})
    for (const auto& slot : *list) all.push_back(&slot);
  return effects_of(all, a);
}

std::vector<topology::Effect> slot_effects(const DomainElevation& e, const FailureAssessment& a) {
  return effects_of(e.every_slot(), a);
}

std::vector<const ElevationSlot*> DomainElevation::every_slot() const {
  std::vector<const ElevationSlot*> out;
  for (const auto* racks : {&compute, &host})
    for (const auto& r : *racks)
      for (const auto& slot : r.rack_slots) out.push_back(&slot);
  for (const auto& slot : spines) out.push_back(&slot);
  return out;
}

Result<DomainElevation> domain_elevation(const Catalog& cat, const std::string& system) {
  auto built = build_topology(cat, TopologyRequest{system, 1, 1.10});
  if (!built) return std::unexpected(built.error());
  const Topology& t = *built;
  const System& s = t.system();
  const bool host_rack = s.host.placement == HostPlacement::separate_rack;
  DomainElevation e{s.id, s.name, s.domain_xpus, {}, {}, {}, {}};
  const Graph& g = t.graph();
  for (auto v : boost::make_iterator_range(boost::vertices(g))) {
    const Part& p = g[v];
    const std::string parent = p.name.substr(0, p.name.find('/'));
    switch (p.kind) {
      case PartKind::compute_rack: rack_named(e.compute, p.name, p.kind, p.rack); break;
      case PartKind::host_rack: rack_named(e.host, p.name, p.kind, p.rack); break;
      case PartKind::compute_tray:
      case PartKind::switch_tray:
      case PartKind::onboard_switch:
        rack_named(e.compute, parent, PartKind::compute_rack, p.rack).rack_slots.push_back(domain_slot(s, p, host_rack));
        break;
      case PartKind::host:
        if (host_rack)
          rack_named(e.host, parent, PartKind::host_rack, p.rack).rack_slots.push_back(domain_slot(s, p, true));
        else
          rack_named(e.compute, parent, PartKind::compute_rack, p.rack).rack_slots.push_back(domain_slot(s, p, false));
        break;
      case PartKind::spine: e.spines.push_back(domain_slot(s, p, host_rack)); break;
      default: break;
    }
  }
  for (auto& r : e.compute)
    std::stable_partition(r.rack_slots.begin(), r.rack_slots.end(),
                          [](const ElevationSlot& x) { return x.kind != PartKind::switch_tray; });
  e.note = "Slots in the twin's build order, not physical rack units; power is rated (XPUs at TDP).";
  if (!host_rack) e.note += " Host CPUs sit inside the compute trays or servers (their power counted there).";
  if (!e.spines.empty())
    e.note += " The second switch tier is drawn as its planes, one per uplink tray of each rack.";
  return e;
}

}  // namespace racktwin::app
