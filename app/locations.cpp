#include "app/locations.hpp"

#include <cstdlib>

namespace racktwin::app {

std::string resolve_db_path(const std::string& flag,
                            const std::optional<std::string>& scenario_db) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("RACKTWIN_DB"); env != nullptr && *env != '\0') return env;
  if (scenario_db && !scenario_db->empty()) return *scenario_db;
  return "racktwin.db";
}

}  // namespace racktwin::app
