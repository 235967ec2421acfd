#pragma once
// Where the catalog and the results database are, by the rules every front end follows.

#include <optional>
#include <string>

namespace racktwin::app {

// --db PATH, else $RACKTWIN_DB, else the scenario's output.db (for run), else racktwin.db in the
// working directory.
std::string resolve_db_path(const std::string& flag,
                            const std::optional<std::string>& scenario_db = std::nullopt);

}  // namespace racktwin::app
