// The topology report, failure assessment and path as sections (app/describe.hpp).

#include <fmt/core.h>

#include "app/describe.hpp"

namespace racktwin::app {
namespace {

using topology::Network;

std::string network_text(Network n) {
  return n == Network::scale_up ? "scale-up" : "scale-out";
}

Section parts_section(const TopologyReport& r) {
  Section s{.title = "Parts", .table = {{"part", "count", "example name"}}, .right = {1}};
  for (const auto& p : r.parts)
    s.table.push_back({p.uplinks > 0 ? fmt::format("{} ({} rack-local, {} uplink)", p.label,
                                                   p.count - p.uplinks, p.uplinks)
                                     : p.label,
                       std::to_string(p.count), p.example});
  return s;
}

Section links_section(const TopologyReport& r) {
  Section s{.title = "Links",
            .table = {{"link", "count", "bandwidth each (per direction)"}},
            .right = {1}};
  for (const auto& l : r.links) {
    std::string bw;
    for (BytesPerSecond b : l.bandwidths) bw += (bw.empty() ? "" : ", ") + format(b);
    s.table.push_back({l.label, std::to_string(l.count), bw.empty() ? "-" : bw});
  }
  return s;
}

Sections bandwidth_sections(const TopologyReport& r) {
  Section b{.title = "Bandwidth (per direction, max-flow over the graph)", .label_width = 26};
  b.facts.push_back({"bisection of a domain",
                     fmt::format("{} ({} per XPU across the cut between the two halves)",
                                 format(r.bisection), format(r.bisection_per_xpu))});
  if (r.scale_out_bisection)
    b.facts.push_back({"scale-out bisection",
                       fmt::format("{} (domains 0-{} against the rest)",
                                   format(*r.scale_out_bisection), r.scale_out_split_last)});
  Section paths{.table = {{"between xpu0 and", "XPU", "network", "switch hops", "bandwidth",
                           "latency"}},
                .right = {3, 4, 5}};
  for (const auto& [what, p] : r.paths)
    paths.table.push_back({what, p.to, network_text(p.network), std::to_string(p.switch_hops),
                           format(p.bandwidth), format(p.latency)});
  return {b, paths};
}

Section sheet_section(const std::string& title, const power::PowerSheet& sheet) {
  Section s{.title = title, .table = {{"part", "count", "each", "total"}}, .right = {1, 2, 3}};
  for (const auto& l : sheet.lines)
    s.table.push_back({l.part, std::to_string(l.count), format(l.each), format(l.total())});
  s.table.push_back({"conversion loss", "", "", format(sheet.conversion_loss)});
  s.table.push_back({"input (IT power)", "", "", format(sheet.input)});
  return s;
}

Section budget_section(const std::string& system, const PowerSummary& pw) {
  if (pw.budget_checks.empty())
    return {.title = "No rack or server power figure is published for " + system +
                     ": the components are not checked."};
  Section s{.title = fmt::format("Components against the published figures (residual = "
                                 "unexplained share; tolerance {:g}%)",
                                 pw.budget_tolerance * 100),
            .table = {{"published figure", "computed", "published", "residual", "computed from"}},
            .right = {1, 2, 3}};
  for (const auto& c : pw.budget_checks)
    s.table.push_back({c.what, format(c.computed), format(c.published),
                       fmt::format("{:+.2f}%", c.residual() * 100.0), c.basis});
  return s;
}

Sections power_sections(const TopologyReport& r) {
  const PowerSummary& pw = r.power;
  Sections out;
  out.push_back({.title = fmt::format("Power (rated: XPUs at {} TDP; conversion {:g} x {:g} = "
                                      "{:.4f}; PUE {:.2f})",
                                      format(pw.xpu_tdp), pw.conversion.rectifier,
                                      pw.conversion.point_of_load, pw.conversion.efficiency(),
                                      pw.pue),
                 .notes = {fmt::format("XPU: idle {}, rated TDP {} at full activity{}",
                                       format(pw.xpu_idle), format(pw.xpu_tdp),
                                       pw.xpu_measured_sustained
                                           ? "; measured at load " +
                                                 format(*pw.xpu_measured_sustained)
                                           : std::string())}});
  out.push_back(sheet_section("Compute rack", pw.compute_rack));
  if (pw.host_rack) out.push_back(sheet_section("Host rack (host trays rated)", *pw.host_rack));
  out.push_back(budget_section(r.system, pw));
  const auto& all_in = pw.all_in;
  const std::string origin =
      all_in.computed ? "computed from the components and PUE; no published figure"
                      : fmt::format("published; the components and PUE give {}, {:.1f}% {}",
                                    format(all_in.computed_per_xpu), pw.all_in_gap * 100.0,
                                    all_in.computed_per_xpu < all_in.per_xpu ? "below" : "above");
  out.push_back({.title = fmt::format("All-in utility power per XPU: {} ({})\nDeployment of {} "
                                      "XPUs: IT {} provisioned ({} at full activity), facility "
                                      "{} provisioned",
                                      format(all_in.per_xpu), origin, r.xpus,
                                      format(pw.it_provisioned), format(pw.it_full_activity),
                                      format(pw.facility_provisioned))});
  return out;
}

Section placement_section(const FailureAssessment& a) {
  const PlacementView& p = *a.placement_after;
  Section s{.title = fmt::format("Placement of {}-XPU replicas (each within one {})",
                                 p.replica_xpus, to_string(p.scope)),
            .label_width = 16};
  s.facts = {{"replicas", fmt::format("{} ({} XPUs)", p.replicas.size(), p.placed_xpus())},
             {"left over", fmt::format("{} XPUs in service that make no whole replica",
                                       p.leftover.size())},
             {"out of service", fmt::format("{} XPUs", p.out_of_service)}};
  if (!p.replicas.empty())
    s.facts.push_back({"first replica", p.replicas.front().front() + " .. " +
                                            p.replicas.front().back()});
  s.notes.push_back(
      fmt::format("without the failures: {} replicas", a.placement_before->replicas.size()));
  return s;
}

}  // namespace

Sections describe(const TopologyReport& r) {
  Sections out{{.title = fmt::format("{} - {}\n{} scale-up domain{} of {} XPUs = {} XPUs, joined "
                                     "by the scale-out network",
                                     r.system, r.name, r.domains, r.domains == 1 ? "" : "s",
                                     r.domain_xpus, r.xpus),
                .gap = false},
               parts_section(r), links_section(r)};
  for (auto* part : {&bandwidth_sections, &power_sections})
    for (auto& s : (*part)(r)) out.push_back(std::move(s));
  return out;
}

Sections describe(const FailureAssessment& a) {
  std::string names;
  for (const auto& f : a.failed)
    names += (names.empty() ? "" : ", ") + f.name + " (" + to_string(f.kind) + ")";
  Section head{.title = fmt::format("{}, {} domain{} of {} XPUs: failing {}", a.system, a.domains,
                                    a.domains == 1 ? "" : "s", a.domain_xpus,
                                    names.empty() ? "nothing" : names),
               .label_width = 12,
               .gap = false};
  head.facts = {
      {"lost", fmt::format("{} XPUs (down, or depending on a part that is)", a.lost)},
      {"cut off",
       fmt::format("{} XPUs (working, but outside the main island of their domain)", a.cut_off)},
      {"slowed", fmt::format("{} XPUs (serving with part of their bandwidth)", a.slowed)},
      {"in service", fmt::format("{} of {} XPUs", a.in_service, a.xpus)},
      {"scale-up", fmt::format("{} of {} injection bandwidth left ({:.2f}%)",
                               format(a.scale_up_after), format(a.scale_up_before),
                               a.scale_up_left * 100.0)}};
  for (const auto& b : a.bisection)
    if (b.before != b.after || a.domains == 1)
      head.facts.push_back({"bisection", fmt::format("domain {}: {} -> {}", b.domain,
                                                     format(b.before), format(b.after))});
  Sections out{head};
  if (a.affected.empty()) {
    out.push_back({.title = "No XPU is affected."});
  } else {
    Section g{.title = "Affected XPUs",
              .table = {{"effect", "XPUs", "cause", "how", "which"}},
              .right = {1}};
    for (const auto& x : a.affected)
      g.table.push_back({to_string(x.effect), std::to_string(x.xpus.size()), x.cause, x.how,
                         x.xpus.size() == 1 ? x.xpus.front()
                                            : x.xpus.front() + " .. " + x.xpus.back()});
    out.push_back(std::move(g));
  }
  if (a.placement_after) out.push_back(placement_section(a));
  return out;
}

Sections describe(const PathView& p) {
  if (!p.reachable) return {{.title = p.from + " and " + p.to + " are not connected", .gap = false}};
  std::string route;
  for (const auto& v : p.route) route += (route.empty() ? "" : " -> ") + v;
  return {{.title = p.from + " -> " + p.to,
           .facts = {{"network", network_text(p.network)},
                     {"switch hops", std::to_string(p.switch_hops)},
                     {"bandwidth", format(p.bandwidth) + " per direction (max-flow)"},
                     {"latency", format(p.latency)},
                     {"route", route}},
           .label_width = 12,
           .gap = false}};
}

}  // namespace racktwin::app
