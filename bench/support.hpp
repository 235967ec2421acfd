#pragma once
// What the whole-use-case benchmarks share: wall time since a moment, and the shipped catalog.

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "scenarios/catalog_loader.hpp"

namespace racktwin::bench {

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The catalog in scenarios/catalog; nullopt (with a line on stderr) when it does not load.
inline std::optional<Catalog> shipped_catalog() {
  auto cat = load_catalog_dir(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/catalog");
  if (!cat) {
    std::fprintf(stderr, "the catalog does not load\n");
    return std::nullopt;
  }
  return std::move(*cat);
}

}  // namespace racktwin::bench
