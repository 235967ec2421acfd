#include "db/store.hpp"

#include "db/codec.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <SQLiteCpp/VariadicBind.h>
#include <fmt/chrono.h>
#include <fmt/core.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace racktwin::db {
namespace {

namespace fs = std::filesystem;

// Schema version 1. Every table a run owns refers to it with ON DELETE CASCADE.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE runs (
  id                INTEGER PRIMARY KEY,
  status            TEXT    NOT NULL CHECK (status IN ('running', 'finished', 'failed')),
  scenario_name     TEXT    NOT NULL,
  scenario_file     TEXT    NOT NULL,
  scenario_text     TEXT    NOT NULL,
  scenario_hash     TEXT    NOT NULL,
  seed              INTEGER NOT NULL,
  racktwin_version  TEXT    NOT NULL,
  racktwin_commit   TEXT    NOT NULL,
  catalog_hash      TEXT    NOT NULL,
  calibration_hash  TEXT    NOT NULL,
  options           TEXT    NOT NULL,
  started_at        TEXT    NOT NULL,
  finished_at       TEXT,
  wall_s            REAL,
  error             TEXT    NOT NULL DEFAULT '',
  pid               INTEGER NOT NULL,
  host              TEXT    NOT NULL
);
CREATE TABLE assumptions (
  run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  ord         INTEGER NOT NULL,
  entry_kind  TEXT    NOT NULL,
  entry_id    TEXT    NOT NULL,
  field       TEXT    NOT NULL,
  value       TEXT    NOT NULL,
  reason      TEXT    NOT NULL,
  PRIMARY KEY (run_id, ord)
);
CREATE TABLE metrics (
  run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  ord     INTEGER NOT NULL,
  name    TEXT    NOT NULL,
  unit    TEXT    NOT NULL,
  PRIMARY KEY (run_id, ord),
  UNIQUE (run_id, name)
);
CREATE TABLE points (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx          INTEGER NOT NULL,
  system       TEXT    NOT NULL,
  model        TEXT    NOT NULL,
  workload     TEXT    NOT NULL,
  layout       TEXT    NOT NULL,
  precision    TEXT    NOT NULL,
  serving      TEXT    NOT NULL,
  arrivals     TEXT    NOT NULL,
  concurrency  INTEGER NOT NULL,
  rate_req_s   REAL    NOT NULL,
  replicas     INTEGER NOT NULL,
  xpus         INTEGER NOT NULL,
  error        TEXT    NOT NULL,
  UNIQUE (run_id, idx)
);
CREATE TABLE point_values (
  point_id  INTEGER NOT NULL REFERENCES points(id) ON DELETE CASCADE,
  metric    TEXT    NOT NULL,
  value     REAL    NOT NULL,
  PRIMARY KEY (point_id, metric)
) WITHOUT ROWID;
CREATE TABLE latency_percentiles (
  point_id    INTEGER NOT NULL REFERENCES points(id) ON DELETE CASCADE,
  metric      TEXT    NOT NULL,
  percentile  INTEGER NOT NULL CHECK (percentile BETWEEN 0 AND 100),
  value_s     REAL    NOT NULL,
  PRIMARY KEY (point_id, metric, percentile)
) WITHOUT ROWID;
CREATE TABLE timeseries (
  point_id        INTEGER NOT NULL REFERENCES points(id) ON DELETE CASCADE,
  second          INTEGER NOT NULL,
  output_tokens   REAL    NOT NULL,
  prefill_tokens  REAL    NOT NULL,
  completed       REAL    NOT NULL,
  xpu_power_w     REAL    NOT NULL,
  PRIMARY KEY (point_id, second)
) WITHOUT ROWID;
CREATE INDEX points_by_run ON points(run_id);
)sql";

// Schema version 2: fleet plans, each stored whole (racktwin plan --json) with what it rests on.
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE plans (
  id                INTEGER PRIMARY KEY,
  name              TEXT    NOT NULL,
  file              TEXT    NOT NULL,
  text              TEXT    NOT NULL,
  hash              TEXT    NOT NULL,
  racktwin_version  TEXT    NOT NULL,
  racktwin_commit   TEXT    NOT NULL,
  catalog_hash      TEXT    NOT NULL,
  throughput_runs   TEXT    NOT NULL,
  created_at        TEXT    NOT NULL,
  document          TEXT    NOT NULL
);
)sql";

// Migrations: kMigrations[v] takes a database at user_version v to v + 1.
constexpr std::array<const char*, kSchemaVersion> kMigrations{kSchemaV1, kSchemaV2};

std::string now_utc() {
  const auto t = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", t);
}

std::string this_host() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) return "unknown";
  return name.data();
}

int milliseconds(Seconds t) {
  return static_cast<int>(std::lround(t.value() * 1e3));
}

// SQLITE_BUSY or SQLITE_LOCKED (extended codes included): another connection holds the lock.
bool is_locked(const SQLite::Exception& e) {
  const int code = e.getErrorCode() & 0xff;
  return code == SQLITE_BUSY || code == SQLITE_LOCKED;
}

std::string locked_text(const std::string& path, const SQLite::Exception& e, Seconds waited) {
  return locked_message(path,
                        fmt::format("SQLite: {}, after waiting {:g} s", e.what(), waited.value()));
}

// Whether this process may write the database file and create files beside it (SQLite's WAL
// index and journal).
bool writable(const std::string& path) {
  const fs::path dir = fs::absolute(fs::path(path)).parent_path();
  return ::access(path.c_str(), W_OK) == 0 && ::access(dir.c_str(), W_OK) == 0;
}

// The file as an SQLite URI that reads it as it is on disk (immutable: no WAL index, no locks).
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (const unsigned char c : fs::absolute(fs::path(path)).string()) {
    if (std::isalnum(c) || std::strchr("/-._~", c) != nullptr)
      uri += static_cast<char>(c);
    else
      uri += fmt::format("%{:02X}", c);
  }
  return uri + "?immutable=1";
}

// A read-only connection. SQLite reads a WAL database through an index file it creates beside it;
// where this process may not write (a read-only directory or file), the database is read as it is
// on disk instead. Rethrows a lock held by another process.
std::unique_ptr<SQLite::Database> open_reading(const std::string& path, Seconds busy_timeout) {
  try {
    auto db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READONLY,
                                                 milliseconds(busy_timeout));
    db->execAndGet("PRAGMA user_version");  // the first read opens the WAL index
    return db;
  } catch (const SQLite::Exception& e) {
    if (is_locked(e) || writable(path)) throw;
  }
  return std::make_unique<SQLite::Database>(immutable_uri(path),
                                            SQLite::OPEN_READONLY | SQLite::OPEN_URI,
                                            milliseconds(busy_timeout));
}

// Why an existing file cannot be opened as a racktwin database; empty when it can. Rethrows the
// SQLite::Exception of a database locked by another process.
std::string refuse_reason(const std::string& path, Seconds busy_timeout) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "it is a directory";
  if (fs::file_size(path, ec) == 0 && !ec) return {};
  std::ifstream in(path, std::ios::binary);
  if (!in) return "it cannot be read";
  std::array<char, 16> header{};
  in.read(header.data(), header.size());
  static constexpr char kMagic[] = "SQLite format 3";  // 16 bytes with the terminating NUL
  if (in.gcount() != 16 || !std::equal(header.begin(), header.end(), kMagic))
    return "it is not an SQLite database";
  try {
    const auto db = open_reading(path, busy_timeout);
    const int app = db->execAndGet("PRAGMA application_id").getInt();
    if (app != kApplicationId)
      return fmt::format(
          "it is an SQLite database, but not racktwin's (application_id {:#x}, expected {:#x})",
          static_cast<std::uint32_t>(app), static_cast<std::uint32_t>(kApplicationId));
    const int version = db->execAndGet("PRAGMA user_version").getInt();
    if (version > kSchemaVersion)
      return fmt::format(
          "it was written by a newer racktwin (schema {}; this racktwin reads up to {})", version,
          kSchemaVersion);
  } catch (const SQLite::Exception& e) {
    if (is_locked(e)) throw;
    return std::string("SQLite cannot read it: ") + e.what();
  }
  return {};
}

std::string text_or_empty(const SQLite::Column& c) {
  return c.isNull() ? std::string() : c.getString();
}

constexpr const char* kRunColumns =
    "r.id, r.status, r.scenario_name, r.scenario_file, r.scenario_text, r.scenario_hash, r.seed, "
    "r.racktwin_version, r.racktwin_commit, r.catalog_hash, r.calibration_hash, r.options, "
    "r.started_at, r.finished_at, r.wall_s, r.error, r.pid, r.host, "
    "(SELECT COUNT(*) FROM points p WHERE p.run_id = r.id), "
    "(SELECT COUNT(*) FROM points p WHERE p.run_id = r.id AND p.error != ''), "
    "(SELECT GROUP_CONCAT(DISTINCT p.system) FROM points p WHERE p.run_id = r.id)";

RunInfo read_run(SQLite::Statement& q) {
  RunInfo r;
  r.id = q.getColumn(0).getInt64();
  r.status = q.getColumn(1).getString();
  r.scenario_name = q.getColumn(2).getString();
  r.scenario_file = q.getColumn(3).getString();
  r.scenario_text = q.getColumn(4).getString();
  r.scenario_hash = q.getColumn(5).getString();
  r.seed = static_cast<std::uint64_t>(q.getColumn(6).getInt64());
  r.version = q.getColumn(7).getString();
  r.commit = q.getColumn(8).getString();
  r.catalog_hash = q.getColumn(9).getString();
  r.calibration_hash = q.getColumn(10).getString();
  r.options = q.getColumn(11).getString();
  r.started_at = q.getColumn(12).getString();
  r.finished_at = text_or_empty(q.getColumn(13));
  if (!q.getColumn(14).isNull()) r.wall_s = q.getColumn(14).getDouble();
  r.error = q.getColumn(15).getString();
  r.pid = q.getColumn(16).getInt64();
  r.host = q.getColumn(17).getString();
  r.points = q.getColumn(18).getInt64();
  r.failed_points = q.getColumn(19).getInt64();
  for (std::string rest = text_or_empty(q.getColumn(20)); !rest.empty();) {
    const auto comma = rest.find(',');
    r.systems.push_back(rest.substr(0, comma));
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
  }
  std::sort(r.systems.begin(), r.systems.end());
  return r;
}

}  // namespace

std::string locked_message(const std::string& path, const std::string& detail) {
  return fmt::format(
      "the results database '{}' is locked by another process ({}); wait for it to finish, or "
      "use --db with another path",
      path, detail);
}

std::string RunInfo::state() const {
  if (status != "running") return status;
  // Still marked running: alive only if its process exists on this host (a killed process that
  // its parent has not reaped yet, a zombie, is gone).
  if (host != this_host() || pid <= 0) return "incomplete";
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return "incomplete";
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (std::getline(stat, line)) {
    const auto close = line.rfind(')');  // "pid (name) S ...": the state follows the name
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z')
      return "incomplete";
  }
  return "running";
}

Store::Store(std::string path) : path_(std::move(path)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

std::expected<Store, std::string> Store::open_read_only(const std::string& path,
                                                        Seconds busy_timeout) {
  Store s(path);
  s.busy_timeout_ = busy_timeout;
  try {
    s.db_ = open_reading(path, busy_timeout);
    const int version = s.db_->execAndGet("PRAGMA user_version").getInt();
    if (version < kSchemaVersion)
      return std::unexpected(fmt::format(
          "the results database '{}' has schema {} and this racktwin reads schema {}; it cannot "
          "upgrade it here because this user may not write the file or its directory. Open it "
          "once where it can be written (racktwin runs list --db FILE upgrades it)",
          path, version, kSchemaVersion));
  } catch (const SQLite::Exception& e) {
    if (is_locked(e)) return std::unexpected(locked_text(path, e, busy_timeout));
    return std::unexpected(
        fmt::format("cannot read the results database '{}': {}", path, e.what()));
  }
  return s;
}

std::expected<Store, std::string> Store::open(const std::string& path, Mode mode,
                                              Seconds busy_timeout) {
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (!exists && mode != Mode::create)
    return std::unexpected(
        fmt::format("no results database at '{}' ('racktwin run' creates one there)", path));
  if (exists) {
    std::string why;
    try {
      why = refuse_reason(path, busy_timeout);
    } catch (const SQLite::Exception& e) {  // only a lock held by another process comes here
      return std::unexpected(locked_text(path, e, busy_timeout));
    }
    if (!why.empty())
      return std::unexpected(fmt::format(
          "'{}' is not a racktwin results database: {}. It was left untouched; choose another "
          "path with --db or RACKTWIN_DB",
          path, why));
    if (!writable(path)) {
      if (mode == Mode::read) return open_read_only(path, busy_timeout);
      return std::unexpected(fmt::format(
          "cannot write the results database '{}': this user may not write the file or its "
          "directory (SQLite writes its journal beside it); it can still be read (racktwin runs "
          "list, show, export). Copy it to a writable directory, or use --db with another path",
          path));
    }
  }
  Store s(path);
  s.busy_timeout_ = busy_timeout;
  try {
    s.db_ = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE,
                                               milliseconds(busy_timeout));
    SQLite::Database& db = *s.db_;
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    // Readers of an up-to-date database take no write lock (a run may be writing its points).
    if (db.execAndGet("PRAGMA user_version").getInt() < kSchemaVersion) {
      SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
      int version = db.execAndGet("PRAGMA user_version").getInt();  // again, under the lock
      if (version == 0) db.exec(fmt::format("PRAGMA application_id = {}", kApplicationId));
      for (; version < kSchemaVersion; ++version) {
        db.exec(kMigrations[static_cast<std::size_t>(version)]);
        db.exec(fmt::format("PRAGMA user_version = {}", version + 1));
      }
      tx.commit();
    }
  } catch (const SQLite::Exception& e) {
    if (is_locked(e)) return std::unexpected(locked_text(path, e, busy_timeout));
    return std::unexpected(
        fmt::format("cannot open the results database '{}': {}", path, e.what()));
  }
  return s;
}

namespace {

std::string join_ids(const std::vector<std::int64_t>& ids) {
  std::string out;
  for (auto id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

std::vector<std::int64_t> split_ids(const std::string& text) {
  std::vector<std::int64_t> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    out.push_back(std::stoll(text.substr(at, comma - at)));
    at = comma + 1;
  }
  return out;
}

PlanRecord plan_of(SQLite::Statement& q, bool with_document) {
  PlanRecord p;
  p.id = q.getColumn(0).getInt64();
  p.name = q.getColumn(1).getString();
  p.file = q.getColumn(2).getString();
  p.text = q.getColumn(3).getString();
  p.hash = q.getColumn(4).getString();
  p.version = q.getColumn(5).getString();
  p.commit = q.getColumn(6).getString();
  p.catalog_hash = q.getColumn(7).getString();
  p.throughput_runs = split_ids(q.getColumn(8).getString());
  p.created_at = q.getColumn(9).getString();
  if (with_document) p.document = q.getColumn(10).getString();
  return p;
}

constexpr const char* kPlanColumns =
    "id, name, file, text, hash, racktwin_version, racktwin_commit, catalog_hash, "
    "throughput_runs, created_at, document";

}  // namespace

std::int64_t Store::add_plan(PlanRecord p) try {
  SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement q(*db_,
                      "INSERT INTO plans (name, file, text, hash, racktwin_version, "
                      "racktwin_commit, catalog_hash, throughput_runs, created_at, document) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  SQLite::bind(q, p.name, p.file, p.text, p.hash, p.version, p.commit, p.catalog_hash,
               join_ids(p.throughput_runs), now_utc(), p.document);
  q.exec();
  const std::int64_t id = db_->getLastInsertRowid();
  tx.commit();
  return id;
} catch (const SQLite::Exception& e) {
  throw_if_locked(e);
  throw;
}

std::vector<PlanRecord> Store::plans() const {
  std::vector<PlanRecord> out;
  SQLite::Statement q(*db_, std::string("SELECT ") + kPlanColumns + " FROM plans ORDER BY id DESC");
  while (q.executeStep()) out.push_back(plan_of(q, false));
  return out;
}

std::optional<PlanRecord> Store::plan(std::int64_t id) const {
  SQLite::Statement q(*db_, std::string("SELECT ") + kPlanColumns + " FROM plans WHERE id = ?");
  q.bind(1, id);
  if (!q.executeStep()) return std::nullopt;
  return plan_of(q, true);
}

std::int64_t Store::begin_run(RunInfo info, const std::vector<Assumption>& assumptions) try {
  SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement q(*db_,
                      "INSERT INTO runs (status, scenario_name, scenario_file, scenario_text, "
                      "scenario_hash, seed, racktwin_version, racktwin_commit, catalog_hash, "
                      "calibration_hash, options, started_at, pid, host) "
                      "VALUES ('running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  SQLite::bind(q, info.scenario_name, info.scenario_file, info.scenario_text, info.scenario_hash,
               static_cast<std::int64_t>(info.seed), info.version, info.commit, info.catalog_hash,
               info.calibration_hash, info.options, now_utc(),
               static_cast<std::int64_t>(::getpid()), this_host());
  q.exec();
  const std::int64_t id = db_->getLastInsertRowid();
  SQLite::Statement a(*db_,
                      "INSERT INTO assumptions (run_id, ord, entry_kind, entry_id, field, value, "
                      "reason) VALUES (?, ?, ?, ?, ?, ?, ?)");
  std::int64_t ord = 0;
  for (const auto& x : assumptions) {
    SQLite::bind(a, id, ord++, x.entry_kind, x.entry_id, x.field, x.value, x.reason);
    a.exec();
    a.reset();
  }
  tx.commit();
  return id;
} catch (const SQLite::Exception& e) {
  throw_if_locked(e);
  throw;
}

void Store::add_points(std::int64_t run, const std::vector<sim::PointResult>& points) {
  std::int64_t next =
      db_->execAndGet(fmt::format("SELECT COUNT(*) FROM points WHERE run_id = {}", run)).getInt64();
  std::vector<StoredPoint> stored;
  for (const auto& r : points) stored.push_back(stored_point(r, next++));
  add_stored(run, stored);
}

void Store::add_stored(std::int64_t run, const std::vector<StoredPoint>& points) try {
  SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
  std::int64_t metric_ord =
      db_->execAndGet(fmt::format("SELECT COUNT(*) FROM metrics WHERE run_id = {}", run))
          .getInt64();
  SQLite::Statement ins_point(
      *db_,
      "INSERT INTO points (run_id, idx, system, model, workload, layout, "
      "precision, serving, arrivals, concurrency, rate_req_s, replicas, xpus, error) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  SQLite::Statement ins_metric(
      *db_, "INSERT OR IGNORE INTO metrics (run_id, ord, name, unit) VALUES (?, ?, ?, ?)");
  SQLite::Statement ins_value(
      *db_, "INSERT INTO point_values (point_id, metric, value) VALUES (?, ?, ?)");
  SQLite::Statement ins_pct(*db_,
                            "INSERT INTO latency_percentiles (point_id, metric, percentile, "
                            "value_s) VALUES (?, ?, ?, ?)");
  SQLite::Statement ins_second(*db_,
                               "INSERT INTO timeseries (point_id, second, output_tokens, "
                               "prefill_tokens, completed, xpu_power_w) VALUES (?, ?, ?, ?, ?, ?)");
  auto step = [](SQLite::Statement& q) {
    q.exec();
    q.reset();
  };
  for (const auto& p : points) {
    const PointKey& k = p.key;
    SQLite::bind(ins_point, run, p.index, k.system, k.model, k.workload, k.layout, k.precision,
                 k.serving, k.arrivals, k.concurrency, k.rate, k.replicas, p.xpus, p.error);
    step(ins_point);
    const std::int64_t pid = db_->getLastInsertRowid();
    for (const Metric& m : p.metrics) {
      SQLite::bind(ins_metric, run, metric_ord, m.name, m.unit);
      ins_metric.exec();
      if (db_->getChanges() > 0) ++metric_ord;
      ins_metric.reset();
      SQLite::bind(ins_value, pid, m.name, m.value);
      step(ins_value);
    }
    if (!p.error.empty()) continue;
    for (const auto& [name, values] : p.percentiles_s) {
      for (std::size_t q = 0; q < values.size(); ++q) {
        SQLite::bind(ins_pct, pid, name, static_cast<std::int64_t>(q), values[q]);
        step(ins_pct);
      }
    }
    for (std::size_t t = 0; t < p.timeseries.size(); ++t) {
      const auto& s = p.timeseries[t];
      SQLite::bind(ins_second, pid, static_cast<std::int64_t>(t), s.output_tokens, s.prefill_tokens,
                   s.completed, s.xpu_power_w);
      step(ins_second);
    }
  }
  tx.commit();
} catch (const SQLite::Exception& e) {
  throw_if_locked(e);
  throw;
}

std::optional<std::int64_t> Store::find_resumable(const RunInfo& like) const {
  SQLite::Statement q(*db_,
                      "SELECT id FROM runs WHERE status != 'finished' AND scenario_hash = ? AND "
                      "seed = ? AND racktwin_version = ? AND racktwin_commit = ? AND "
                      "catalog_hash = ? AND calibration_hash = ? AND options = ? ORDER BY id DESC");
  SQLite::bind(q, like.scenario_hash, static_cast<std::int64_t>(like.seed), like.version,
               like.commit, like.catalog_hash, like.calibration_hash, like.options);
  while (q.executeStep()) {
    const std::int64_t id = q.getColumn(0).getInt64();
    const auto r = info(id);
    if (r && r->state() != "running") return id;
  }
  return std::nullopt;
}

std::optional<std::int64_t> Store::find_finished(const RunInfo& like) const {
  SQLite::Statement q(*db_,
                      "SELECT id FROM runs WHERE status = 'finished' AND error = '' AND "
                      "scenario_hash = ? AND seed = ? AND racktwin_version = ? AND "
                      "racktwin_commit = ? AND catalog_hash = ? AND calibration_hash = ? AND "
                      "options = ? ORDER BY id DESC LIMIT 1");
  SQLite::bind(q, like.scenario_hash, static_cast<std::int64_t>(like.seed), like.version,
               like.commit, like.catalog_hash, like.calibration_hash, like.options);
  if (q.executeStep()) return q.getColumn(0).getInt64();
  return std::nullopt;
}

void Store::reopen_run(std::int64_t run) try {
  SQLite::Statement q(*db_,
                      "UPDATE runs SET status = 'running', finished_at = NULL, wall_s = NULL, "
                      "error = '', pid = ?, host = ? WHERE id = ?");
  SQLite::bind(q, static_cast<std::int64_t>(::getpid()), this_host(), run);
  q.exec();
} catch (const SQLite::Exception& e) {
  throw_if_locked(e);
  throw;
}

std::vector<std::int64_t> Store::point_indices(std::int64_t run) const {
  std::vector<std::int64_t> out;
  SQLite::Statement q(*db_, "SELECT idx FROM points WHERE run_id = ? ORDER BY idx");
  q.bind(1, run);
  while (q.executeStep()) out.push_back(q.getColumn(0).getInt64());
  return out;
}

void Store::finish_run(std::int64_t run, double wall_s, const std::string& error) try {
  SQLite::Statement q(*db_,
                      "UPDATE runs SET status = ?, finished_at = ?, wall_s = ?, error = ? "
                      "WHERE id = ?");
  SQLite::bind(q, error.empty() ? "finished" : "failed", now_utc(), wall_s, error, run);
  q.exec();
} catch (const SQLite::Exception& e) {
  throw_if_locked(e);
  throw;
}

std::vector<RunInfo> Store::list() const {
  SQLite::Statement q(*db_, fmt::format("SELECT {} FROM runs r ORDER BY r.id DESC", kRunColumns));
  std::vector<RunInfo> out;
  while (q.executeStep()) out.push_back(read_run(q));
  return out;
}

std::optional<RunInfo> Store::info(std::int64_t run) const {
  SQLite::Statement q(*db_, fmt::format("SELECT {} FROM runs r WHERE r.id = ?", kRunColumns));
  q.bind(1, run);
  if (!q.executeStep()) return std::nullopt;
  return read_run(q);
}

std::optional<std::int64_t> Store::latest() const {
  SQLite::Statement q(*db_, "SELECT MAX(id) FROM runs");
  if (!q.executeStep() || q.getColumn(0).isNull()) return std::nullopt;
  return q.getColumn(0).getInt64();
}

std::optional<StoredRun> Store::load(std::int64_t run, const LoadOptions& what) const {
  auto info_ = info(run);
  if (!info_) return std::nullopt;
  StoredRun out;
  out.info = std::move(*info_);
  {
    SQLite::Statement q(*db_,
                        "SELECT entry_kind, entry_id, field, value, reason FROM assumptions "
                        "WHERE run_id = ? ORDER BY ord");
    q.bind(1, run);
    while (q.executeStep())
      out.assumptions.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(),
                                 q.getColumn(2).getString(), q.getColumn(3).getString(),
                                 q.getColumn(4).getString()});
  }
  std::map<std::string, std::size_t> order;
  {
    SQLite::Statement q(*db_, "SELECT name, unit FROM metrics WHERE run_id = ? ORDER BY ord");
    q.bind(1, run);
    while (q.executeStep()) {
      order[q.getColumn(0).getString()] = out.metrics.size();
      out.metrics.push_back({q.getColumn(0).getString(), q.getColumn(1).getString()});
    }
  }
  std::map<std::int64_t, std::size_t> by_id;  // point row id -> index in out.points
  {
    SQLite::Statement q(*db_,
                        "SELECT id, idx, system, model, workload, layout, precision, serving, "
                        "arrivals, concurrency, rate_req_s, replicas, xpus, error FROM points "
                        "WHERE run_id = ? ORDER BY idx");
    q.bind(1, run);
    while (q.executeStep()) {
      StoredPoint p;
      p.index = q.getColumn(1).getInt64();
      p.key.system = q.getColumn(2).getString();
      p.key.model = q.getColumn(3).getString();
      p.key.workload = q.getColumn(4).getString();
      p.key.layout = q.getColumn(5).getString();
      p.key.precision = q.getColumn(6).getString();
      p.key.serving = q.getColumn(7).getString();
      p.key.arrivals = q.getColumn(8).getString();
      p.key.concurrency = q.getColumn(9).getInt();
      p.key.rate = q.getColumn(10).getDouble();
      p.key.replicas = q.getColumn(11).getInt();
      p.xpus = q.getColumn(12).getInt();
      p.error = q.getColumn(13).getString();
      by_id[q.getColumn(0).getInt64()] = out.points.size();
      out.points.push_back(std::move(p));
    }
  }
  {
    SQLite::Statement q(*db_,
                        "SELECT v.point_id, v.metric, v.value FROM point_values v "
                        "JOIN points p ON p.id = v.point_id WHERE p.run_id = ?");
    q.bind(1, run);
    while (q.executeStep()) {
      StoredPoint& p = out.points[by_id.at(q.getColumn(0).getInt64())];
      const std::string name = q.getColumn(1).getString();
      const auto it = order.find(name);
      const std::string unit = it == order.end() ? std::string() : out.metrics[it->second].unit;
      p.metrics.push_back({name, q.getColumn(2).getDouble(), unit});
    }
    for (auto& p : out.points)
      std::sort(p.metrics.begin(), p.metrics.end(),
                [&](const Metric& a, const Metric& b) { return order[a.name] < order[b.name]; });
  }
  if (what.percentiles) {
    SQLite::Statement q(*db_,
                        "SELECT l.point_id, l.metric, l.value_s FROM latency_percentiles l "
                        "JOIN points p ON p.id = l.point_id WHERE p.run_id = ? "
                        "ORDER BY l.point_id, l.metric, l.percentile");
    q.bind(1, run);
    while (q.executeStep())
      out.points[by_id.at(q.getColumn(0).getInt64())]
          .percentiles_s[q.getColumn(1).getString()]
          .push_back(q.getColumn(2).getDouble());
  }
  if (what.timeseries) {
    SQLite::Statement q(*db_,
                        "SELECT t.point_id, t.output_tokens, t.prefill_tokens, t.completed, "
                        "t.xpu_power_w FROM timeseries t JOIN points p ON p.id = t.point_id "
                        "WHERE p.run_id = ? ORDER BY t.point_id, t.second");
    q.bind(1, run);
    while (q.executeStep())
      out.points[by_id.at(q.getColumn(0).getInt64())].timeseries.push_back(
          {q.getColumn(1).getDouble(), q.getColumn(2).getDouble(), q.getColumn(3).getDouble(),
           q.getColumn(4).getDouble()});
  }
  return out;
}

bool Store::remove(std::int64_t run) try {
  SQLite::Statement q(*db_, "DELETE FROM runs WHERE id = ?");
  q.bind(1, run);
  return q.exec() > 0;
} catch (const SQLite::Exception& e) {
  throw_if_locked(e);
  throw;
}

void Store::throw_if_locked(const SQLite::Exception& e) const {
  if (is_locked(e)) throw DatabaseLocked(locked_text(path_, e, busy_timeout_));
}

}  // namespace racktwin::db
