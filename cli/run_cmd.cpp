// racktwin run: runs a scenario through the serving simulation. The simulation is not built in this
// version; the command validates the scenario and says so plainly rather than pretending.

#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "racktwin/version.hpp"
#include "scenarios/scenario_loader.hpp"

namespace racktwin::cli {

void add_run_command(CLI::App& app, Commands& out) {
  auto path = std::make_shared<std::string>();
  auto* run = app.add_subcommand("run", "Run a scenario through the serving simulation (not built yet)");
  run->add_option("SCENARIO", *path, "Scenario YAML file")->required();
  out.push_back({run, [path](const Catalog& cat) {
                   auto sc = load_scenario_file(*path, cat);
                   if (!sc) {
                     print_diagnostics(sc.error(), *path);
                     return kExitInput;
                   }
                   fmt::print(stderr,
                              "racktwin run: the serving simulation is not built in racktwin {}; nothing was "
                              "simulated.\n  The scenario '{}' is valid. Available now: 'racktwin check', "
                              "'racktwin perf' (one iteration's time) and 'racktwin layouts'.\n",
                              kVersion, sc->name);
                   return kExitRuntime;
                 }});
}

}  // namespace racktwin::cli
