#include "cli/results.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "db/provenance.hpp"
#include "racktwin/version.hpp"

namespace racktwin::cli {

std::string resolve_db_path(const std::string& flag,
                            const std::optional<std::string>& scenario_db) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("RACKTWIN_DB"); env != nullptr && *env != '\0') return env;
  if (scenario_db && !scenario_db->empty()) return *scenario_db;
  return "racktwin.db";
}

void add_db_option(CLI::App* app, std::string& into) {
  app->add_option("--db", into,
                  "Results database (default: $RACKTWIN_DB, else racktwin.db in the working "
                  "directory)");
}

std::expected<db::Store, int> open_store(const std::string& path, db::Store::Mode mode) {
  auto s = db::Store::open(path, mode);
  if (!s) {
    fmt::print(stderr, "racktwin: {}\n", s.error());
    return std::unexpected(kExitInput);
  }
  return std::move(*s);
}

// A run id as given: a number, or "latest".
std::optional<std::int64_t> resolve_run(const db::Store& store, const std::string& text) {
  if (text == "latest" || text == "last") {
    if (auto id = store.latest()) return id;
    fmt::print(stderr, "racktwin: the database {} holds no run yet\n", store.path());
    return std::nullopt;
  }
  try {
    std::size_t used = 0;
    const long long id = std::stoll(text, &used);
    if (used == text.size() && id > 0) {
      if (store.info(id)) return id;
      fmt::print(stderr, "racktwin: no run {} in {} ('racktwin runs list' shows the runs)\n", id,
                 store.path());
      return std::nullopt;
    }
  } catch (const std::exception&) {
  }
  fmt::print(stderr,
             "racktwin: '{}' is not a run id (a number from 'racktwin runs list', or latest)\n",
             text);
  return std::nullopt;
}

ProgressBar::ProgressBar(bool enabled)
    : enabled_(enabled && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

ProgressBar::~ProgressBar() {
  clear();
}

void ProgressBar::update(double fraction) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0 || (drawn_ && now - last_ < std::chrono::milliseconds(100))) return;
  last_ = now;
  drawn_ = true;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string eta = "--:--";
  if (fraction > 0.01) {
    const auto left = static_cast<long>(elapsed * (1.0 - fraction) / fraction);
    eta = fmt::format("{}:{:02}", left / 60, left % 60);
  }
  fmt::print(stderr, "\r[{}{}] {:3.0f}%  ETA {}  ",
             std::string(static_cast<std::size_t>(filled), '#'),
             std::string(static_cast<std::size_t>(kWidth - filled), ' '), fraction * 100, eta);
  std::fflush(stderr);
}

void ProgressBar::clear() {
  if (!drawn_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

std::expected<RunRecorder, int> RunRecorder::start(const Catalog& cat, const Scenario& sc,
                                                   const std::string& scenario_file,
                                                   std::uint64_t seed,
                                                   const std::vector<sim::PointSpec>& specs,
                                                   const ResultOptions& options) {
  RunRecorder r;
  r.options_ = options;
  r.scenario_plots_ = sc.output.plots;
  r.start_ = std::chrono::steady_clock::now();
  const std::string path = resolve_db_path(options.db, sc.output.db);
  auto store = open_store(path, db::Store::Mode::create);
  if (!store) return std::unexpected(store.error());
  r.store_ = std::make_unique<db::Store>(std::move(*store));
  db::RunInfo info;
  info.scenario_name = sc.name;
  info.scenario_file = scenario_file;
  info.scenario_text = sc.text;
  info.scenario_hash = db::content_hash(info.scenario_text);
  info.seed = seed;
  info.version = kVersion;
  info.commit = kGitCommit;
  info.catalog_hash = db::catalog_hash(cat);
  info.calibration_hash = db::calibration_hash(specs);
  info.options = nlohmann::ordered_json{{"fuse", options.fuse}}.dump();
  r.id_ = r.store_->begin_run(info, db::assumptions_of(cat, specs));
  r.bar_ = std::make_shared<ProgressBar>(!options.quiet);
  return r;
}

std::function<void(double)> RunRecorder::progress() {
  return [bar = bar_](double f) { bar->update(f); };
}

void RunRecorder::finish(const std::vector<sim::PointResult>& results) {
  bar_->clear();
  store_->add_points(id_, results);
  store_->finish_run(
      id_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
}

void RunRecorder::fail(const std::string& error) {
  bar_->clear();
  store_->finish_run(
      id_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(), error);
}

int RunRecorder::report(const Catalog& cat) {
  const std::string note = fmt::format("Stored as run {} in {} (racktwin runs show {} --db {})",
                                       id_, store_->path(), id_, store_->path());
  if (!options_.json)
    fmt::print("{}\n", note);
  else if (!options_.quiet)
    fmt::print(stderr, "racktwin: {}\n", note);
  const std::string dir = !options_.plots.empty() ? options_.plots : scenario_plots_.value_or("");
  if (dir.empty()) return kExitOk;
  std::fflush(stdout);
  return render_run_plots(cat, *store_, id_, dir, options_.points, options_.quiet || options_.json);
}

}  // namespace racktwin::cli
