#pragma once
// Reads the catalog (sources, number formats, chips, systems, models) from YAML files.
//
// A catalog directory holds any number of *.yaml files, read in name order; each file may define
// any of the top-level lists `sources`, `formats`, `chips`, `systems`, `models`. Every number
// carries its provenance: either its own `{value: ..., source: ...}` / `{value: ..., assumption:
// true, reason: ...}` or, for a plain value, the `source:` of its entry. All problems of all files
// are reported at once. The format is documented in docs/catalog.md.

#include <expected>
#include <string>
#include <vector>

#include "core/catalog.hpp"
#include "core/error.hpp"

namespace racktwin {

std::expected<Catalog, Diagnostics> load_catalog_files(const std::vector<std::string>& files);

// The text of one catalog file and the name used for it in messages and in Catalog::files.
struct CatalogText {
  std::string name;
  std::string text;
};
// The same from texts, in the order given.
std::expected<Catalog, Diagnostics> load_catalog_strings(const std::vector<CatalogText>& texts);

// Every *.yaml file directly inside `dir`, in name order.
std::expected<Catalog, Diagnostics> load_catalog_dir(const std::string& dir);

}  // namespace racktwin
