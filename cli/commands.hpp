#pragma once
// The racktwin subcommands. Each returns the process exit code.

#include <string>

#include "core/catalog.hpp"
#include "core/error.hpp"

namespace racktwin::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;  // a run failed
inline constexpr int kExitInput = 2;    // bad usage or bad input

// Prints diagnostics on stderr, one per line, followed by a count.
void print_diagnostics(const Diagnostics& d, const std::string& what);

int catalog_list(const Catalog& cat, bool as_json);
int catalog_show(const Catalog& cat, const std::string& id, bool as_json);
int check_scenario(const Catalog& cat, const std::string& path, bool as_json);

}  // namespace racktwin::cli
