// racktwin topology: the physical twin of a system (parts, links, bandwidth, power) and what a
// failure takes out. The figures come from app/topology; this file parses and renders.

#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include "app/topology.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"

namespace racktwin::cli {
namespace {

using topology::Network;

struct TopologyArgs {
  app::TopologyRequest request;
  bool summary = false, dot = false, parts = false, as_json = false;
  std::vector<std::string> fail, between;
  int place = 0;
};

std::string network_text(Network n) {
  return n == Network::scale_up ? "scale-up" : "scale-out";
}

void print_sheet(const std::string& title, const power::PowerSheet& s) {
  Table tb({"part", "count", "each", "total"});
  for (const auto& l : s.lines)
    tb.add({l.part, std::to_string(l.count), format(l.each), format(l.total())});
  tb.add({"conversion loss", "", "", format(s.conversion_loss)});
  tb.add({"input (IT power)", "", "", format(s.input)});
  fmt::print("\n{}\n{}", title, tb.render({1, 2, 3}));
}

void print_report(const app::TopologyReport& r) {
  fmt::print("{} - {}\n", r.system, r.name);
  fmt::print("{} scale-up domain{} of {} XPUs = {} XPUs, joined by the scale-out network\n",
             r.domains, r.domains == 1 ? "" : "s", r.domain_xpus, r.xpus);
  Table tp({"part", "count", "example name"});
  for (const auto& p : r.parts)
    tp.add({p.uplinks > 0 ? fmt::format("{} ({} rack-local, {} uplink)", p.label,
                                        p.count - p.uplinks, p.uplinks)
                          : p.label,
            std::to_string(p.count), p.example});
  fmt::print("\nParts\n{}", tp.render({1}));
  Table tl({"link", "count", "bandwidth each (per direction)"});
  for (const auto& l : r.links) {
    std::string bw;
    for (BytesPerSecond b : l.bandwidths) bw += (bw.empty() ? "" : ", ") + format(b);
    tl.add({l.label, std::to_string(l.count), bw.empty() ? "-" : bw});
  }
  fmt::print("\nLinks\n{}", tl.render({1}));
  fmt::print("\nBandwidth (per direction, max-flow over the graph)\n");
  fmt::print("  bisection of a domain     {} ({} per XPU across the cut between the two halves)\n",
             format(r.bisection), format(r.bisection_per_xpu));
  if (r.scale_out_bisection)
    fmt::print("  scale-out bisection       {} (domains 0-{} against the rest)\n",
               format(*r.scale_out_bisection), r.scale_out_split_last);
  Table tpath({"between xpu0 and", "XPU", "network", "switch hops", "bandwidth", "latency"});
  for (const auto& [what, p] : r.paths)
    tpath.add({what, p.to, network_text(p.network), std::to_string(p.switch_hops),
               format(p.bandwidth), format(p.latency)});
  fmt::print("\n{}", tpath.render({3, 4, 5}));

  const app::PowerSummary& pw = r.power;
  fmt::print("\nPower (rated: XPUs at {} TDP; conversion {:g} x {:g} = {:.4f}; PUE {:.2f})\n",
             format(pw.xpu_tdp), pw.conversion.rectifier, pw.conversion.point_of_load,
             pw.conversion.efficiency(), pw.pue);
  fmt::print("  XPU: idle {}, sustained maximum {}, rated TDP {}\n", format(pw.xpu_idle),
             format(pw.xpu_sustained_max), format(pw.xpu_tdp));
  print_sheet("Compute rack", pw.compute_rack);
  if (pw.host_rack) print_sheet("Host rack (host trays rated)", *pw.host_rack);
  if (!pw.budget_checks.empty()) {
    Table tc({"published figure", "computed", "published", "residual", "computed from"});
    for (const auto& c : pw.budget_checks)
      tc.add({c.what, format(c.computed), format(c.published),
              fmt::format("{:+.2f}%", c.residual() * 100.0), c.basis});
    fmt::print(
        "\nComponents against the published figures (residual = unexplained share; tolerance "
        "{:g}%)\n{}",
        pw.budget_tolerance * 100, tc.render({1, 2, 3}));
  } else {
    fmt::print(
        "\nNo rack or server power figure is published for {}: the components are not checked.\n",
        r.system);
  }
  const auto& all_in = pw.all_in;
  fmt::print("\nAll-in utility power per XPU: {} ({})\n", format(all_in.per_xpu),
             all_in.computed
                 ? "computed from the components and PUE; no published figure"
                 : fmt::format("published; the components and PUE give {}, {:.1f}% {}",
                               format(all_in.computed_per_xpu), pw.all_in_gap * 100.0,
                               all_in.computed_per_xpu < all_in.per_xpu ? "below" : "above"));
  fmt::print(
      "Deployment of {} XPUs: IT {} provisioned ({} at full activity), facility {} provisioned\n",
      r.xpus, format(pw.it_provisioned), format(pw.it_full_activity),
      format(pw.facility_provisioned));
  fmt::print(
      "\n'racktwin topology {} --parts' lists every part; '--fail PART' shows what its failure "
      "takes out.\n",
      r.system);
}

void print_assessment(const app::FailureAssessment& a) {
  std::string names;
  for (const auto& f : a.failed)
    names += (names.empty() ? "" : ", ") + f.name + " (" + to_string(f.kind) + ")";
  fmt::print("{}, {} domain{} of {} XPUs: failing {}\n", a.system, a.domains,
             a.domains == 1 ? "" : "s", a.domain_xpus, names.empty() ? "nothing" : names);
  fmt::print("  lost        {} XPUs (down, or depending on a part that is)\n", a.lost);
  fmt::print("  cut off     {} XPUs (working, but outside the main island of their domain)\n",
             a.cut_off);
  fmt::print("  slowed      {} XPUs (serving with part of their bandwidth)\n", a.slowed);
  fmt::print("  in service  {} of {} XPUs\n", a.in_service, a.xpus);
  fmt::print("  scale-up    {} of {} injection bandwidth left ({:.2f}%)\n",
             format(a.scale_up_after), format(a.scale_up_before), a.scale_up_left * 100.0);
  for (const auto& b : a.bisection)
    if (b.before != b.after || a.domains == 1)
      fmt::print("  bisection   domain {}: {} -> {}\n", b.domain, format(b.before),
                 format(b.after));
  if (!a.affected.empty()) {
    Table tg({"effect", "XPUs", "cause", "how", "which"});
    for (const auto& g : a.affected)
      tg.add({to_string(g.effect), std::to_string(g.xpus.size()), g.cause, g.how,
              g.xpus.size() == 1 ? g.xpus.front() : g.xpus.front() + " .. " + g.xpus.back()});
    fmt::print("\nAffected XPUs\n{}", tg.render({1}));
  } else {
    fmt::print("\nNo XPU is affected.\n");
  }
  if (const auto& p = a.placement_after) {
    fmt::print("\nPlacement of {}-XPU replicas (each within one {})\n", p->replica_xpus,
               to_string(p->scope));
    fmt::print("  replicas        {} ({} XPUs)\n", p->replicas.size(), p->placed_xpus());
    fmt::print("  left over       {} XPUs in service that make no whole replica\n",
               p->leftover.size());
    fmt::print("  out of service  {} XPUs\n", p->out_of_service);
    if (!p->replicas.empty())
      fmt::print("  first replica   {} .. {}\n", p->replicas.front().front(),
                 p->replicas.front().back());
    fmt::print("  without the failures: {} replicas\n", a.placement_before->replicas.size());
  }
}

void print_path(const app::PathView& p) {
  if (!p.reachable) return fmt::print("{} and {} are not connected\n", p.from, p.to);
  std::string route;
  for (const auto& v : p.route) route += (route.empty() ? "" : " -> ") + v;
  fmt::print(
      "{} -> {}\n  network     {}\n  switch hops {}\n  bandwidth   {} per direction (max-flow)\n  "
      "latency     {}\n  route       {}\n",
      p.from, p.to, network_text(p.network), p.switch_hops, format(p.bandwidth), format(p.latency),
      route);
}

// Prints the value (as JSON with --json) or the problem with advice for the command line.
template <class T, class Print>
int render(const app::Result<T>& r, const TopologyArgs& a, const std::string& option, Print print) {
  if (r) {
    a.as_json ? print_json(to_json(*r)) : print(*r);
    return kExitOk;
  }
  const std::string& sys = a.request.system;
  switch (r.error().input) {
    case app::Problem::Input::system:
      return input_error(r.error().message, "'racktwin catalog list' shows every system");
    case app::Problem::Input::part:
      return input_error(option + ": " + r.error().message,
                         "'racktwin topology " + sys + " --parts' lists every part name");
    default:
      return input_error(r.error().message, "add the missing power figures to the catalog");
  }
}

int run_topology(const Catalog& cat, const TopologyArgs& a) {
  if (a.dot) {
    const auto d = app::topology_dot(cat, a.request);
    if (d) fmt::print("{}", *d);
    return d ? kExitOk
             : input_error(d.error().message, "'racktwin catalog list' shows every system");
  }
  if (a.parts)
    return render(app::topology_parts(cat, a.request), a, "", [](const app::PartList& l) {
      for (const auto& p : l.parts) fmt::print("{}  {}\n", p.name, to_string(p.kind));
    });
  if (!a.between.empty())
    return render(app::topology_path(cat, a.request, a.between[0], a.between[1]), a, "--path",
                  print_path);
  if (!a.fail.empty() || a.place > 0)
    return render(app::assess_failure(cat, {a.request, a.fail, a.place}), a, "--fail",
                  print_assessment);
  return render(app::topology_report(cat, a.request), a, "", print_report);
}

}  // namespace

void add_topology_command(CLI::App& app, Commands& out) {
  auto args = std::make_shared<TopologyArgs>();
  auto* cmd = app.add_subcommand(
      "topology",
      "The physical twin of a system: parts, links, bandwidth and power (--summary, the default), "
      "its GraphViz graph (--dot), and what failing a part takes out (--fail PART).\nPart names "
      "look like rack3, rack3/vindaloo5, rack3/vindaloo5/xpu2, rack3/chana2, rack3/feed, "
      "hostrack3/katsu5, domain0/spine1, scaleout; '--parts' lists every one.");
  cmd->add_option("SYSTEM", args->request.system, "Catalog system id (see 'racktwin catalog list')")
      ->required();
  cmd->add_option("--domains", args->request.domains,
                  "Scale-up domains joined by the scale-out network (default 1)")
      ->check(CLI::Range(1, topology::kMaxDeploymentXpus));
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
          ->check(CLI::Range(1, topology::kMaxDeploymentXpus));
  auto* path =
      cmd->add_option("--path", args->between, "Route, hop count and bandwidth between two XPUs")
          ->expected(2);
  cmd->add_option("--pue", args->request.pue, "Facility PUE for the power summary (default 1.10)")
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
