#include "scenarios/catalog_loader.hpp"
#include <fmt/core.h>
#include "racktwin/version.hpp"
int main() {
  auto c = racktwin::load_catalog_dir(racktwin::kSourceCatalogDir);
  if (!c) { for (auto& d : c.error()) fmt::print("{}\n", d.to_string()); return 2; }
  fmt::print("{} systems\n", c->systems.size());
}
