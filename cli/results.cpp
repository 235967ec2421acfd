#include "cli/results.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"

namespace racktwin::cli {

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

std::optional<std::int64_t> resolve_run(const db::Store& store, const std::string& text) {
  auto id = app::resolve_run(store, text);
  if (!id) fmt::print(stderr, "racktwin: {}\n", id.error());
  return id ? std::optional<std::int64_t>(*id) : std::nullopt;
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

}  // namespace racktwin::cli
