// racktwin topology: the physical twin of a system (parts, links, bandwidth, power) and what a
// failure takes out. The figures come from app/topology; this file parses and renders.

#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include "app/describe.hpp"
#include "app/topology.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"

namespace racktwin::cli {
namespace {

struct TopologyArgs {
  app::TopologyRequest request;
  bool summary = false, dot = false, parts = false, as_json = false;
  std::vector<std::string> fail, between;
  int place = 0;
};

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
                  [](const app::PathView& p) { print_sections(app::describe(p)); });
  if (!a.fail.empty() || a.place > 0)
    return render(app::assess_failure(cat, {a.request, a.fail, a.place}), a, "--fail",
                  [](const app::FailureAssessment& f) { print_sections(app::describe(f)); });
  return render(app::topology_report(cat, a.request), a, "", [](const app::TopologyReport& r) {
    print_sections(app::describe(r));
    fmt::print("\n'racktwin topology {} --parts' lists every part; '--fail PART' shows what its "
               "failure takes out.\n",
               r.system);
  });
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
