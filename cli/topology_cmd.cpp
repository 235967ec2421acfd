// racktwin topology: the physical twin of a system (parts, links, bandwidth, power) and what a
// failure takes out.

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "power/power_model.hpp"
#include "topology/dot.hpp"
#include "topology/queries.hpp"

namespace racktwin::cli {
namespace {

using json = nlohmann::ordered_json;
using namespace racktwin::topology;

struct TopologyArgs {
  std::string system;
  int domains = 1;
  bool summary = false;
  bool dot = false;
  bool parts = false;
  bool as_json = false;
  std::vector<std::string> fail;
  int place = 0;
  std::vector<std::string> between;
  double pue = 1.10;
};

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

std::string pct(double f) {
  return fmt::format("{:+.2f}%", f * 100.0);
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

std::string bandwidths_text(const std::set<double>& bws) {
  std::string s;
  for (double b : bws) s += (s.empty() ? "" : ", ") + format(BytesPerSecond(b));
  return s;
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

// Representative pairs of XPUs: same tray, another tray of the rack, another rack of the domain,
// another domain.
std::vector<std::pair<std::string, Path>> sample_paths(const Topology& t) {
  std::vector<std::pair<std::string, Path>> out;
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
    if (b) out.emplace_back(what, path(t, a, *b));
  return out;
}

json path_json(const Topology& t, const Path& p) {
  json route = json::array();
  for (PartId v : p.route) route.push_back(t.part(v).name);
  return {{"reachable", p.reachable},
          {"network", p.network == Network::scale_up ? "scale_up" : "scale_out"},
          {"switch_hops", p.switch_hops},
          {"bandwidth_bytes_per_s", p.bandwidth.value()},
          {"latency_s", p.latency.value()},
          {"route", route}};
}

json sheet_json(const power::PowerSheet& s) {
  json lines = json::array();
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

void print_sheet(const std::string& title, const power::PowerSheet& s) {
  Table tb({"part", "count", "each", "total"});
  for (const auto& l : s.lines)
    tb.add({l.part, std::to_string(l.count), format(l.each), format(l.total())});
  tb.add({"conversion loss", "", "", format(s.conversion_loss)});
  tb.add({"input (IT power)", "", "", format(s.input)});
  fmt::print("\n{}\n{}", title, tb.render({1, 2, 3}));
}

int summary(const Topology& t, const power::PowerModel& pm, bool as_json) {
  const System& s = t.system();
  const auto parts = t.part_counts();
  const auto links = t.link_counts();
  const auto bws = link_bandwidths(t);
  const auto ex = examples(t);
  const BytesPerSecond bis = bisection(t, 0);
  const bool several = t.domains() >= 2;
  const BytesPerSecond out_bis = several ? scale_out_bisection(t) : BytesPerSecond{};
  const auto paths = sample_paths(t);
  const auto rack = pm.sheet(pm.compute_rack_parts(), power::Operating::rated());
  const std::optional<power::PowerSheet> hosts =
      pm.separate_host_rack()
          ? std::optional(pm.sheet(pm.host_rack_parts(), power::Operating::rated()))
          : std::nullopt;
  const auto checks = pm.budget_checks();
  const auto all_in = pm.all_in();
  const auto counts = power_counts(t);
  const Watts it_rated = pm.sheet(counts, power::Operating::rated()).input;
  const Watts it_full = pm.sheet(counts, power::Operating::at({1.0, 1.0})).input;
  const double pue = pm.facility().pue;
  int uplinks = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(t.graph())))
    uplinks += t.part(v).uplink ? 1 : 0;

  if (as_json) {
    json jp = json::array(), jl = json::array(), jpaths = json::array(), jchecks = json::array();
    for (const auto& [k, n] : parts)
      jp.push_back(
          {{"kind", to_string(k)}, {"label", label(s, k)}, {"count", n}, {"example", ex.at(k)}});
    for (const auto& [k, n] : links) {
      json bw = json::array();
      if (bws.contains(k))
        for (double b : bws.at(k)) bw.push_back(b);
      jl.push_back({{"kind", to_string(k)}, {"count", n}, {"bandwidth_bytes_per_s", bw}});
    }
    for (const auto& [what, p] : paths) {
      json j = path_json(t, p);
      j["pair"] = what;
      jpaths.push_back(j);
    }
    for (const auto& c : checks)
      jchecks.push_back({{"figure", c.what},
                         {"basis", c.basis},
                         {"computed_w", c.computed.value()},
                         {"published_w", c.published.value()},
                         {"residual", c.residual()}});
    json j{{"system", s.id},
           {"domains", t.domains()},
           {"domain_xpus", s.domain_xpus},
           {"xpus", t.xpus().size()},
           {"parts", jp},
           {"links", jl},
           {"bisection_bytes_per_s", bis.value()},
           {"scale_out_bisection_bytes_per_s", several ? json(out_bis.value()) : json(nullptr)},
           {"paths", jpaths},
           {"power",
            {{"pue", pue},
             {"conversion_efficiency", pm.facility().conversion.efficiency()},
             {"compute_rack", sheet_json(rack)},
             {"host_rack", hosts ? sheet_json(*hosts) : json(nullptr)},
             {"budget_checks", jchecks},
             {"budget_tolerance", power::kBudgetTolerance},
             {"all_in_per_xpu_w", all_in.per_xpu.value()},
             {"all_in_computed", all_in.computed},
             {"all_in_computed_per_xpu_w", all_in.computed_per_xpu.value()},
             {"deployment_it_provisioned_w", it_rated.value()},
             {"deployment_it_full_activity_w", it_full.value()},
             {"deployment_facility_provisioned_w", it_rated.value() * pue}}}};
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }

  fmt::print("{} - {}\n", s.id, s.name);
  fmt::print("{} scale-up domain{} of {} XPUs = {} XPUs, joined by the scale-out network\n",
             t.domains(), t.domains() == 1 ? "" : "s", s.domain_xpus, t.xpus().size());

  Table tp({"part", "count", "example name"});
  for (PartKind k : kAllPartKinds) {
    if (!parts.contains(k)) continue;
    std::string l = label(s, k);
    if (k == PartKind::switch_tray && uplinks > 0)
      l += fmt::format(" ({} rack-local, {} uplink)", parts.at(k) - uplinks, uplinks);
    tp.add({l, std::to_string(parts.at(k)), ex.at(k)});
  }
  fmt::print("\nParts\n{}", tp.render({1}));

  Table tl({"link", "count", "bandwidth each (per direction)"});
  for (LinkKind k : kAllLinkKinds) {
    if (!links.contains(k)) continue;
    tl.add({link_label(k), std::to_string(links.at(k)),
            bws.contains(k) ? bandwidths_text(bws.at(k)) : "-"});
  }
  fmt::print("\nLinks\n{}", tl.render({1}));

  fmt::print("\nBandwidth (per direction, max-flow over the graph)\n");
  fmt::print("  bisection of a domain     {} ({} per XPU across the cut between the two halves)\n",
             format(bis), format(bis / (s.domain_xpus / 2.0)));
  if (several)
    fmt::print("  scale-out bisection       {} (domains 0-{} against the rest)\n", format(out_bis),
               t.domains() / 2 - 1);
  Table tpath({"between xpu0 and", "XPU", "network", "switch hops", "bandwidth", "latency"});
  for (const auto& [what, p] : paths)
    tpath.add({what, t.part(p.route.back()).name,
               p.network == Network::scale_up ? "scale-up" : "scale-out",
               std::to_string(p.switch_hops), format(p.bandwidth), format(p.latency)});
  fmt::print("\n{}", tpath.render({3, 4, 5}));

  fmt::print("\nPower (rated: XPUs at {} TDP; conversion {:g} x {:g} = {:.4f}; PUE {:.2f})\n",
             format(pm.xpu().tdp()), pm.facility().conversion.rectifier,
             pm.facility().conversion.point_of_load, pm.facility().conversion.efficiency(), pue);
  fmt::print("  XPU: idle {}, sustained maximum {}, rated TDP {}\n", format(pm.xpu().idle()),
             format(pm.xpu().sustained_max()), format(pm.xpu().tdp()));
  print_sheet("Compute rack", rack);
  if (hosts) print_sheet("Host rack (host trays rated)", *hosts);
  if (!checks.empty()) {
    Table tc({"published figure", "computed", "published", "residual", "computed from"});
    for (const auto& c : checks)
      tc.add({c.what, format(c.computed), format(c.published), pct(c.residual()), c.basis});
    fmt::print(
        "\nComponents against the published figures (residual = unexplained share; tolerance "
        "{:g}%)\n{}",
        power::kBudgetTolerance * 100, tc.render({1, 2, 3}));
  } else {
    fmt::print(
        "\nNo rack or server power figure is published for {}: the components are not checked.\n",
        s.id);
  }
  fmt::print("\nAll-in utility power per XPU: {} ({})\n", format(all_in.per_xpu),
             all_in.computed
                 ? "computed from the components and PUE; no published figure"
                 : fmt::format("published; the components and PUE give {}, {:.1f}% {}",
                               format(all_in.computed_per_xpu),
                               std::abs(all_in.computed_per_xpu / all_in.per_xpu - 1.0) * 100.0,
                               all_in.computed_per_xpu < all_in.per_xpu ? "below" : "above"));
  fmt::print(
      "Deployment of {} XPUs: IT {} provisioned ({} at full activity), facility {} provisioned\n",
      t.xpus().size(), format(it_rated), format(it_full), format(it_rated * pue));
  fmt::print(
      "\n'racktwin topology {} --parts' lists every part; '--fail PART' shows what its failure "
      "takes out.\n",
      s.id);
  return kExitOk;
}

int list_parts(const Topology& t, bool as_json) {
  const Graph& g = t.graph();
  if (as_json) {
    json arr = json::array();
    for (auto v : boost::make_iterator_range(boost::vertices(g)))
      arr.push_back({{"name", g[v].name}, {"kind", to_string(g[v].kind)}, {"domain", g[v].domain}});
    fmt::print("{}\n", arr.dump(2));
    return kExitOk;
  }
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    fmt::print("{}  {}\n", g[v].name, to_string(g[v].kind));
  return kExitOk;
}

// A run of affected XPUs sharing effect, cause and how.
struct Group {
  Effect effect;
  std::string cause, how;
  std::vector<std::string> xpus;
};

std::vector<Group> group(const Topology& t, const Impact& im) {
  std::vector<Group> out;
  for (const auto& x : im.affected) {
    if (out.empty() || out.back().effect != x.effect || out.back().cause != x.cause ||
        out.back().how != x.how)
      out.push_back({x.effect, x.cause, x.how, {}});
    out.back().xpus.push_back(t.part(x.xpu).name);
  }
  return out;
}

json placement_json(const Topology& t, const Placement& p) {
  json reps = json::array();
  for (const auto& r : p.replicas) {
    json xs = json::array();
    for (PartId x : r.xpus) xs.push_back(t.part(x).name);
    reps.push_back(xs);
  }
  json left = json::array();
  for (PartId x : p.leftover) left.push_back(t.part(x).name);
  return {{"replica_xpus", p.replica_xpus},     {"scope", to_string(p.scope)},
          {"replicas", p.replicas.size()},      {"leftover", left.size()},
          {"out_of_service", p.out_of_service}, {"replica_xpu_names", reps},
          {"leftover_xpu_names", left}};
}

void print_placement(const Topology& t, const Placement& p) {
  fmt::print("\nPlacement of {}-XPU replicas (each within one {})\n", p.replica_xpus,
             to_string(p.scope));
  fmt::print("  replicas        {} ({} XPUs)\n", p.replicas.size(),
             p.replicas.size() * static_cast<std::size_t>(p.replica_xpus));
  fmt::print("  left over       {} XPUs in service that make no whole replica\n",
             p.leftover.size());
  fmt::print("  out of service  {} XPUs\n", p.out_of_service);
  if (!p.replicas.empty())
    fmt::print("  first replica   {} .. {}\n", t.part(p.replicas.front().xpus.front()).name,
               t.part(p.replicas.front().xpus.back()).name);
}

int failures(const Topology& t, const std::vector<PartId>& failed, int place_xpus, bool as_json) {
  const Impact none = assess(t, {});
  const Impact im = assess(t, failed);
  std::vector<BytesPerSecond> bis_before, bis_after;
  for (int d = 0; d < t.domains(); ++d) {
    bis_before.push_back(bisection(t, d));
    bis_after.push_back(bisection(t, d, &im));
  }
  const auto groups = group(t, im);
  const std::optional<Placement> before =
      place_xpus > 0 ? std::optional(place(t, place_xpus, &none)) : std::nullopt;
  const std::optional<Placement> after =
      place_xpus > 0 ? std::optional(place(t, place_xpus, &im)) : std::nullopt;
  const double bw_left =
      im.scale_up_before.value() > 0 ? im.scale_up_after.value() / im.scale_up_before.value() : 1.0;

  if (as_json) {
    json jf = json::array(), jg = json::array(), jb = json::array();
    for (PartId v : im.failed)
      jf.push_back({{"name", t.part(v).name}, {"kind", to_string(t.part(v).kind)}});
    for (const auto& gr : groups)
      jg.push_back({{"effect", to_string(gr.effect)},
                    {"cause", gr.cause},
                    {"how", gr.how},
                    {"xpus", gr.xpus}});
    for (int d = 0; d < t.domains(); ++d)
      jb.push_back({{"domain", d},
                    {"before_bytes_per_s", bis_before[static_cast<std::size_t>(d)].value()},
                    {"after_bytes_per_s", bis_after[static_cast<std::size_t>(d)].value()}});
    json j{{"system", t.system().id},
           {"domains", t.domains()},
           {"failed", jf},
           {"xpus", im.total_xpus},
           {"lost", im.lost},
           {"cut_off", im.cut_off},
           {"slowed", im.slowed},
           {"in_service", im.in_service()},
           {"scale_up_bandwidth_before_bytes_per_s", im.scale_up_before.value()},
           {"scale_up_bandwidth_after_bytes_per_s", im.scale_up_after.value()},
           {"bisection", jb},
           {"affected", jg}};
    if (after) {
      j["placement_before"] = placement_json(t, *before);
      j["placement_after"] = placement_json(t, *after);
    }
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }

  std::string names;
  for (PartId v : im.failed)
    names += (names.empty() ? "" : ", ") + t.part(v).name + " (" + to_string(t.part(v).kind) + ")";
  fmt::print("{}, {} domain{} of {} XPUs: failing {}\n", t.system().id, t.domains(),
             t.domains() == 1 ? "" : "s", t.system().domain_xpus,
             names.empty() ? "nothing" : names);
  fmt::print("  lost        {} XPUs (down, or depending on a part that is)\n", im.lost);
  fmt::print("  cut off     {} XPUs (working, but outside the main island of their domain)\n",
             im.cut_off);
  fmt::print("  slowed      {} XPUs (serving with part of their bandwidth)\n", im.slowed);
  fmt::print("  in service  {} of {} XPUs\n", im.in_service(), im.total_xpus);
  fmt::print("  scale-up    {} of {} injection bandwidth left ({:.2f}%)\n",
             format(im.scale_up_after), format(im.scale_up_before), bw_left * 100.0);
  for (int d = 0; d < t.domains(); ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (bis_before[i] != bis_after[i] || t.domains() == 1)
      fmt::print("  bisection   domain {}: {} -> {}\n", d, format(bis_before[i]),
                 format(bis_after[i]));
  }
  if (!groups.empty()) {
    Table tg({"effect", "XPUs", "cause", "how", "which"});
    for (const auto& gr : groups)
      tg.add({to_string(gr.effect), std::to_string(gr.xpus.size()), gr.cause, gr.how,
              gr.xpus.size() == 1 ? gr.xpus.front() : gr.xpus.front() + " .. " + gr.xpus.back()});
    fmt::print("\nAffected XPUs\n{}", tg.render({1}));
  } else {
    fmt::print("\nNo XPU is affected.\n");
  }
  if (after) {
    print_placement(t, *after);
    fmt::print("  without the failures: {} replicas\n", before->replicas.size());
  }
  return kExitOk;
}

int between(const Topology& t, PartId a, PartId b, bool as_json) {
  const Path p = path(t, a, b);
  if (as_json) {
    fmt::print("{}\n", path_json(t, p).dump(2));
    return kExitOk;
  }
  if (!p.reachable) {
    fmt::print("{} and {} are not connected\n", t.part(a).name, t.part(b).name);
    return kExitOk;
  }
  std::string route;
  for (PartId v : p.route) route += (route.empty() ? "" : " -> ") + t.part(v).name;
  fmt::print(
      "{} -> {}\n  network     {}\n  switch hops {}\n  bandwidth   {} per direction (max-flow)\n  "
      "latency     {}\n  route       {}\n",
      t.part(a).name, t.part(b).name, p.network == Network::scale_up ? "scale-up" : "scale-out",
      p.switch_hops, format(p.bandwidth), format(p.latency), route);
  return kExitOk;
}

// The part named on the command line, or a usage error with the nearest name.
std::optional<PartId> lookup(const Topology& t, const std::string& option,
                             const std::string& name) {
  if (auto v = t.find(name)) return v;
  fmt::print(stderr, "racktwin: {}: no part '{}' in this {} deployment{}\n", option, name,
             t.system().id, did_you_mean(name, t.part_names()));
  fmt::print(stderr, "  'racktwin topology {} --parts' lists every part name\n", t.system().id);
  return std::nullopt;
}

int run_topology(const Catalog& cat, const TopologyArgs& a) {
  const System* s = cat.find_system(a.system);
  if (s == nullptr) {
    fmt::print(stderr, "racktwin: no system '{}' in the catalog{}\n", a.system,
               did_you_mean(a.system, cat.system_ids()));
    fmt::print(stderr, "  'racktwin catalog list' shows every system\n");
    return kExitInput;
  }
  const Topology t = build(*s, a.domains);
  if (a.dot) {
    fmt::print("{}", to_dot(t));
    return kExitOk;
  }
  if (a.parts) return list_parts(t, a.as_json);
  if (!a.between.empty()) {
    const auto x = lookup(t, "--path", a.between[0]);
    const auto y = x ? lookup(t, "--path", a.between[1]) : std::nullopt;
    if (!x || !y) return kExitInput;
    return between(t, *x, *y, a.as_json);
  }
  if (!a.fail.empty() || a.place > 0) {
    std::vector<PartId> failed;
    for (const auto& name : a.fail) {
      const auto v = lookup(t, "--fail", name);
      if (!v) return kExitInput;
      failed.push_back(*v);
    }
    return failures(t, failed, a.place, a.as_json);
  }
  power::Facility f;
  f.pue = a.pue;
  const auto pm = power::PowerModel::of(*s, f);
  if (!pm) {
    fmt::print(stderr, "racktwin: {}\n  add the missing power figures to the catalog\n",
               pm.error());
    return kExitInput;
  }
  return summary(t, *pm, a.as_json);
}

}  // namespace

void add_topology_command(CLI::App& app, Commands& out) {
  auto args = std::make_shared<TopologyArgs>();
  auto* cmd = app.add_subcommand(
      "topology",
      "The physical twin of a system: parts, links, bandwidth and power (--summary, the default), "
      "its "
      "GraphViz graph (--dot), and what failing a part takes out (--fail PART).\nPart names look "
      "like "
      "rack3, rack3/vindaloo5, rack3/vindaloo5/xpu2, rack3/chana2, rack3/feed, hostrack3/katsu5, "
      "domain0/spine1, scaleout; '--parts' lists every one.");
  cmd->add_option("SYSTEM", args->system, "Catalog system id (see 'racktwin catalog list')")
      ->required();
  cmd->add_option("--domains", args->domains,
                  "Scale-up domains joined by the scale-out network (default 1)")
      ->check(CLI::Range(1, kMaxDeploymentXpus));
  auto* summary = cmd->add_flag(
      "--summary", args->summary,
      "Counts of every part and link, bisection bandwidth, power budget and residual (default)");
  auto* dot = cmd->add_flag("--dot", args->dot,
                            "Print the graph in GraphViz format (render with 'dot -Tsvg')");
  auto* parts = cmd->add_flag("--parts", args->parts, "List every part name and kind");
  auto* fail =
      cmd->add_option(
             "--fail", args->fail,
             "Fail a part (repeat for several): what it takes out (lost, cut off, slowed) and "
             "what is left; '--parts' lists the names")
          ->allow_extra_args(false);
  auto* place =
      cmd->add_option(
             "--place", args->place,
             "Pack replicas of this many XPUs by tray and rack (after any --fail) and show "
             "what is left over")
          ->check(CLI::Range(1, kMaxDeploymentXpus));
  auto* path =
      cmd->add_option("--path", args->between, "Route, hop count and bandwidth between two XPUs")
          ->expected(2);
  cmd->add_option("--pue", args->pue, "Facility PUE for the power summary (default 1.10)")
      ->check(CLI::Range(1.0, 3.0));
  cmd->add_flag("--json", args->as_json, "Machine-readable output (not with --dot)");
  dot->excludes(summary)->excludes(parts)->excludes(fail)->excludes(place)->excludes(path);
  parts->excludes(summary)->excludes(fail)->excludes(place)->excludes(path);
  path->excludes(summary)->excludes(fail)->excludes(place);
  fail->excludes(summary);
  place->excludes(summary);
  out.push_back({cmd, [args](const Catalog& cat) { return run_topology(cat, *args); }});
}

}  // namespace racktwin::cli
