// racktwin check: validate a scenario file and summarise what it sweeps. The summary comes from
// app/check; this file parses and renders.

#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include "app/check.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"

namespace racktwin::cli {

void add_check_command(CLI::App& app, Commands& out) {
  auto as_json = std::make_shared<bool>(false);
  auto path = std::make_shared<std::string>();
  auto* check =
      app.add_subcommand("check", "Validate a scenario file; print a summary or every error");
  check->add_option("SCENARIO", *path, "Scenario YAML file")->required();
  check->add_flag("--json", *as_json, "Machine-readable output");
  out.push_back({check, [path, as_json](const Catalog& cat) {
                   const auto c = app::check_scenario(cat, *path);
                   if (*as_json) {
                     print_json(to_json(c));
                   } else if (!c.valid()) {
                     print_diagnostics(c.errors, c.file);
                   } else {
                     fmt::print("{}: valid scenario '{}'\n", c.file, c.scenario->name);
                     if (!c.scenario->description.empty())
                       fmt::print("  {}\n", c.scenario->description);
                     print_facts(c.summary, 13);
                   }
                   return c.valid() ? kExitOk : kExitInput;
                 }});
}

}  // namespace racktwin::cli
