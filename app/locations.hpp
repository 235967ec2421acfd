#pragma once
// Where racktwin finds the catalog it loads and the results database it reads and writes: the
// same rules for every front end.
//
// Contract: reads the environment (RACKTWIN_CATALOG, RACKTWIN_DB) and where the running binary is
// installed; opens nothing.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "db/store.hpp"

namespace racktwin::app {

// The catalog directory: `flag` (--catalog) when given, else $RACKTWIN_CATALOG, else an installed
// share/racktwin/catalog beside the binary (bin/../share/racktwin/catalog), else the catalog of the
// source tree the binary was built from.
std::string catalog_dir(const std::string& flag = "");

// The results database: `flag` (--db) when given, else $RACKTWIN_DB, else the scenario's
// output.db (for a run), else racktwin.db in the working directory.
std::string db_path(const std::string& flag = "",
                    const std::optional<std::string>& scenario_db = std::nullopt);

// The published points a front end overlays on Pareto charts by default: `flag` when given, else
// the reference/published.yaml beside the catalog directory when there is one, else none (empty).
std::string points_file(const std::string& flag, const std::string& catalog_dir);

// A run named by a user: its id as a number, or "latest" (or "last"); the reason, with a hint,
// when the database has no such run.
std::expected<std::int64_t, std::string> resolve_run(const db::Store& store,
                                                     const std::string& text);

}  // namespace racktwin::app
