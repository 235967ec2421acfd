#pragma once
// The racktwin subcommands. Each returns the process exit code.

#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/run.hpp"
#include "core/catalog.hpp"
#include "core/error.hpp"
#include "core/reference.hpp"

namespace CLI {
class App;
}

namespace racktwin::app {
struct SweepChoice;
}

namespace racktwin::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;  // a run failed
inline constexpr int kExitInput = 2;    // bad usage or bad input

// Prints diagnostics on stderr, one per line, followed by a count.
void print_diagnostics(const Diagnostics& d, const std::string& what);

// A subcommand: the CLI11 node it parses into and what it does once the catalog is loaded.
// Each command file adds its commands with an add_*_commands function; main() runs the one parsed.
struct Command {
  CLI::App* app = nullptr;
  std::function<int(const Catalog&)> run;
};
using Commands = std::vector<Command>;

// `command_line` is recorded in the calibration file the command writes.
void add_calibrate_command(CLI::App& app, Commands& out, std::string command_line);
void add_catalog_commands(CLI::App& app, Commands& out);
void add_check_command(CLI::App& app, Commands& out);
void add_crossval_command(CLI::App& app, Commands& out);
void add_explain_command(CLI::App& app, Commands& out);
void add_perf_commands(CLI::App& app, Commands& out);
void add_plan_command(CLI::App& app, Commands& out);
void add_rehearse_command(CLI::App& app, Commands& out);
void add_run_command(CLI::App& app, Commands& out);
void add_runs_commands(CLI::App& app, Commands& out);
void add_plot_command(CLI::App& app, Commands& out);
void add_topology_command(CLI::App& app, Commands& out);
void add_validate_command(CLI::App& app, Commands& out);

// Prints a use case's failure (its diagnostics, or "racktwin COMMAND: message") and returns the
// exit code: 2 for input, 1 for runtime failures.
int print_failure(const app::Failure& f, const std::string& command);
void add_jobs_option(CLI::App* cmd, int& jobs);
// --replica-xpus and --concurrency: what the sweeps of validate, calibrate and crossval try.
void add_sweep_options(CLI::App* cmd, app::SweepChoice& sweep);
// --seed: a decimal number from 0 to 2^64-1; anything else (a sign included) is a usage error.
void add_seed_option(CLI::App* cmd, std::optional<std::uint64_t>& seed, const std::string& what);

}  // namespace racktwin::cli
