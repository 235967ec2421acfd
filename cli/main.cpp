// racktwin: command-line front end. Parses arguments, calls the libraries, prints, exits.
// Exit codes: 0 success, 1 runtime failure, 2 usage or input error.

#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>

#include "cli/commands.hpp"
#include "racktwin/version.hpp"
#include "scenarios/catalog_loader.hpp"

namespace {

namespace fs = std::filesystem;
using namespace racktwin;

// --catalog, then RACKTWIN_CATALOG, then an installed share/racktwin/catalog beside the binary,
// then the catalog of the source tree the binary was built from.
std::string resolve_catalog_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("RACKTWIN_CATALOG"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "racktwin" / "catalog";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return kSourceCatalogDir;
}

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

  auto* catalog = app.add_subcommand("catalog", "List and show the systems, chips and models of the catalog");
  catalog->require_subcommand(1);
  bool list_json = false;
  auto* list = catalog->add_subcommand("list", "List every system and model");
  list->add_flag("--json", list_json, "Machine-readable output");
  bool show_json = false;
  std::string show_id;
  auto* show = catalog->add_subcommand(
      "show", "Show one system, model or chip: every figure with its source, and every assumption");
  show->add_option("ID", show_id, "Catalog id (see 'racktwin catalog list')")->required();
  show->add_flag("--json", show_json, "Machine-readable output");

  bool check_json = false;
  std::string check_path;
  auto* check = app.add_subcommand("check", "Validate a scenario file; print a summary or every error");
  check->add_option("SCENARIO", check_path, "Scenario YAML file")->required();
  check->add_flag("--json", check_json, "Machine-readable output");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? cli::kExitOk : cli::kExitInput;
  }

  const std::string dir = resolve_catalog_dir(catalog_flag);
  auto cat = load_catalog_dir(dir);
  if (!cat) {
    cli::print_diagnostics(cat.error(), "the catalog " + dir);
    return cli::kExitInput;
  }

  try {
    if (list->parsed()) return cli::catalog_list(*cat, list_json);
    if (show->parsed()) return cli::catalog_show(*cat, show_id, show_json);
    if (check->parsed()) return cli::check_scenario(*cat, check_path, check_json);
  } catch (const InputError& e) {
    cli::print_diagnostics(e.diagnostics(), "the input");
    return cli::kExitInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "racktwin: {}\n", e.what());
    return cli::kExitRuntime;
  }
  return cli::kExitInput;
}
