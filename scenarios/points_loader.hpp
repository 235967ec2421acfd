#pragma once
// Reads a file of published reference points (the format of scenarios/reference/published.yaml,
// documented in docs/validation.md) and checks each point against the catalog.
//
// A problem in one point rejects that point only: it is returned in PointsFile::rejected, named by
// the point's id (or "points[i]" when it has none), with file:line:column, and the other points
// are kept. Only a file that cannot be read at all (missing, not YAML, no `points:` list) fails
// the whole load.

#include <expected>
#include <string>
#include <vector>

#include "core/catalog.hpp"
#include "core/error.hpp"
#include "core/reference.hpp"

namespace racktwin {

std::expected<PointsFile, Diagnostics> load_points_file(const std::string& path,
                                                        const Catalog& catalog);

// Several points files read as one, in the order given: `file` joins their names with " + ",
// `hash` is the file's own for one file and the hash of their hashes for several, and a point
// whose id an earlier file already used is rejected. Unreadable files fail the load together.
std::expected<PointsFile, Diagnostics> load_points_files(const std::vector<std::string>& paths,
                                                         const Catalog& catalog);

// `name` is used in messages in place of a file name.
std::expected<PointsFile, Diagnostics> load_points_string(const std::string& text,
                                                          const std::string& name,
                                                          const Catalog& catalog);

// "fnv1a64:<16 hex digits>" of the bytes.
std::string content_hash(const std::string& bytes);

}  // namespace racktwin
