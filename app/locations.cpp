#include "app/locations.hpp"

#include <cstdlib>
#include <filesystem>

#include "racktwin/version.hpp"

namespace racktwin::app {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

}  // namespace

std::string catalog_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (auto v = env("RACKTWIN_CATALOG")) return *v;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "racktwin" / "catalog";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return kSourceCatalogDir;
}

std::string db_path(const std::string& flag, const std::optional<std::string>& scenario_db) {
  if (!flag.empty()) return flag;
  if (auto v = env("RACKTWIN_DB")) return *v;
  if (scenario_db && !scenario_db->empty()) return *scenario_db;
  return "racktwin.db";
}

std::string points_file(const std::string& flag, const std::string& catalog_dir) {
  if (!flag.empty()) return flag;
  std::error_code ec;
  fs::path dir = fs::path(catalog_dir).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // "catalog/"
  const fs::path beside = dir.parent_path() / "reference" / "published.yaml";
  return fs::is_regular_file(beside, ec) ? beside.string() : std::string();
}

std::expected<std::int64_t, std::string> resolve_run(const db::Store& store,
                                                     const std::string& text) {
  if (text == "latest" || text == "last") {
    if (auto id = store.latest()) return *id;
    return std::unexpected("the database " + store.path() + " holds no run yet");
  }
  std::size_t used = 0;
  long long id = 0;
  try {
    id = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || id <= 0)
    return std::unexpected("'" + text +
                           "' is not a run id (a number from 'racktwin runs list', or latest)");
  if (!store.info(id))
    return std::unexpected("no run " + std::to_string(id) + " in " + store.path() +
                           " ('racktwin runs list' shows the runs)");
  return id;
}

}  // namespace racktwin::app
