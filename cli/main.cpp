// racktwin: command-line front end. Parses arguments, calls the libraries, prints, exits.
// Exit codes: 0 success, 1 runtime failure, 2 usage or input error.

#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "app/locations.hpp"
#include "cli/commands.hpp"
#include "racktwin/version.hpp"
#include "scenarios/catalog_loader.hpp"

namespace {

using namespace racktwin;

std::string version_text() {
  return fmt::format("racktwin {} (commit {})", kVersion, kGitCommit);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "racktwin: a digital twin of rack-scale AI inference systems and a datacenter capacity "
      "planner.\nJalapeno (Vindaloo/Katsu/Chana) against NVL72, HGX and MI systems: tokens per MW, "
      "latency, $ per million tokens, rollout and failures.",
      "racktwin"};
  app.set_version_flag("--version", version_text(), "Print the version and exit");
  app.require_subcommand(1);
  std::string catalog_flag;
  app.add_option("--catalog", catalog_flag,
                 "Catalog directory of *.yaml files (default: $RACKTWIN_CATALOG, else the shipped "
                 "scenarios/catalog)")
      ->check(CLI::ExistingDirectory);

  std::string command_line = "racktwin";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
  cli::Commands commands;
  cli::add_calibrate_command(app, commands, command_line);
  cli::add_catalog_commands(app, commands);
  cli::add_check_command(app, commands);
  cli::add_crossval_command(app, commands);
  cli::add_explain_command(app, commands);
  cli::add_perf_commands(app, commands);
  cli::add_plan_command(app, commands);
  cli::add_rehearse_command(app, commands);
  cli::add_run_command(app, commands);
  cli::add_runs_commands(app, commands);
  cli::add_plot_command(app, commands);
  cli::add_topology_command(app, commands);
  cli::add_validate_command(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? cli::kExitOk : cli::kExitInput;
  }

  const std::string dir = racktwin::app::catalog_dir(catalog_flag);
  auto cat = load_catalog_dir(dir);
  if (!cat) {
    cli::print_diagnostics(cat.error(), "the catalog " + dir);
    return cli::kExitInput;
  }

  try {
    for (const auto& c : commands)
      if (c.app->parsed()) return c.run(*cat);
  } catch (const InputError& e) {
    cli::print_diagnostics(e.diagnostics(), "the input");
    return cli::kExitInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "racktwin: {}\n", e.what());
    return cli::kExitRuntime;
  }
  return cli::kExitInput;
}
