#pragma once
// The results database: every run of `racktwin run` kept in one SQLite file, through SQLiteCpp.
//
// Contract:
// - open() refuses, without writing a byte, any existing file that is not a racktwin database: a
//   file that is not SQLite, an SQLite database without racktwin's application_id, or one written
//   by a newer schema. An empty (0-byte) file counts as new.
// - The schema is versioned by PRAGMA user_version and migrated in one transaction on open; the
//   journal is WAL and foreign keys are on, so deleting a run deletes everything it owns.
// - begin_run() commits the run row (status "running") in its own transaction; add_points() writes
//   points in transactions; finish_run() marks the run. A process killed in between leaves the
//   database readable, earlier runs intact, and this run "running", which list() reports as
//   "incomplete" once its process is gone.
// - Reading is deterministic: points in their sweep order, metrics in the order they were written.
// - Failures of SQLite throw SQLite::Exception (a std::exception) with SQLite's message.
// - Every connection waits up to a busy timeout (kBusyTimeout unless open() is given another) for
//   another process's lock. Still locked after it: open() fails and writes throw DatabaseLocked,
//   both saying that the database is locked by another process (not that it is not racktwin's).
// Schema and columns: docs/results.md.

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "db/metrics.hpp"
#include "sim/serving.hpp"

namespace SQLite {
class Database;
class Exception;
}  // namespace SQLite

namespace racktwin::db {

inline constexpr int kSchemaVersion = 2;
inline constexpr std::int32_t kApplicationId = 0x52545744;  // "RTWD"
// How long a connection waits for a lock another process holds before giving up.
inline constexpr Seconds kBusyTimeout{5.0};

// A write that found the database locked by another process for longer than the busy timeout.
class DatabaseLocked : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "the results database PATH is locked by another process (DETAIL); wait for it or use --db ..."
std::string locked_message(const std::string& path, const std::string& detail);

// An assumption a run rests on: a catalog value flagged `assumption: true`, with its reason.
struct Assumption {
  std::string entry_kind;  // system, chip, model, efficiency
  std::string entry_id;
  std::string field;
  std::string value;
  std::string reason;
  auto operator<=>(const Assumption&) const = default;
};

struct RunInfo {
  std::int64_t id = 0;
  std::string status;  // running, finished, failed
  std::string scenario_name, scenario_file, scenario_text, scenario_hash;
  std::uint64_t seed = 0;
  std::string version, commit;
  std::string catalog_hash, calibration_hash;
  std::string options;                  // JSON object of the run options that change results
  std::string started_at, finished_at;  // UTC, ISO 8601; finished_at empty while running
  std::optional<double> wall_s;
  std::string error;  // why a failed run failed
  std::int64_t pid = 0;
  std::string host;
  // Filled when read: points stored, of which failed (an error instead of metrics).
  std::int64_t points = 0, failed_points = 0;
  std::vector<std::string> systems;  // of its points, ascending
  // status, except "incomplete" for a run still marked running whose process is gone.
  std::string state() const;
};

using SecondSample = sim::PointResult::Second;

struct StoredPoint {
  std::int64_t index = 0;  // position in the run's sweep
  PointKey key;
  int xpus = 0;
  std::string error;
  std::vector<Metric> metrics;                               // empty when error is set
  std::map<std::string, std::vector<double>> percentiles_s;  // ttft_s, tpot_s, e2e_s: 0..100
  std::vector<SecondSample> timeseries;                      // loaded on request
  std::optional<double> metric(std::string_view name) const { return find_metric(metrics, name); }
};

struct MetricInfo {
  std::string name, unit;
};

struct StoredRun {
  RunInfo info;
  std::vector<Assumption> assumptions;
  std::vector<MetricInfo> metrics;  // every metric name the run's points carry, in order
  std::vector<StoredPoint> points;
};

// A fleet plan as `racktwin plan` stored it: the plan text, what it rests on, and the whole
// `racktwin plan --json` document.
struct PlanRecord {
  std::int64_t id = 0;
  std::string name, file, text, hash;
  std::string version, commit, catalog_hash;
  std::vector<std::int64_t> throughput_runs;  // the runs of this database its throughput came from
  std::string created_at;
  std::string document;  // JSON
};

struct LoadOptions {
  bool percentiles = true;
  bool timeseries = false;
};

class Store {
 public:
  // create: creating the file if absent; existing: an existing database, to write; read: an
  // existing database, to read. A database this user may not write (a read-only file or
  // directory) opens only to read, and is then read as it is on disk.
  enum class Mode { create, existing, read };
  // Opens the database at `path`; the error says what is wrong with the path and that it was left
  // untouched, or that another process holds its lock.
  static std::expected<Store, std::string> open(const std::string& path, Mode mode,
                                                Seconds busy_timeout = kBusyTimeout);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::string& path() const { return path_; }

  // Inserts the run (status running; started_at, pid and host filled here) and its assumptions;
  // returns its id.
  std::int64_t begin_run(RunInfo info, const std::vector<Assumption>& assumptions);
  // Writes the points of a run (metrics, latency percentiles, one-second series), continuing the
  // run's point indices.
  void add_points(std::int64_t run, const std::vector<sim::PointResult>& points);
  // Writes points with the indices they carry, in one transaction.
  void add_stored(std::int64_t run, const std::vector<StoredPoint>& points);

  // The newest finished run (no error) of the same inputs, to reuse its points unchanged.
  std::optional<std::int64_t> find_finished(const RunInfo& like) const;
  // A run to resume: the newest run with the same scenario hash, seed, version, commit, catalog
  // and calibration hashes and options as `like` that did not finish (failed, or running with its
  // process gone).
  std::optional<std::int64_t> find_resumable(const RunInfo& like) const;
  // Marks a resumed run running again, owned by this process.
  void reopen_run(std::int64_t run);
  // The indices of the points a run holds.
  std::vector<std::int64_t> point_indices(std::int64_t run) const;
  // Marks the run finished (or failed, with the reason), with its wall time.
  void finish_run(std::int64_t run, double wall_s, const std::string& error = {});

  std::vector<RunInfo> list() const;  // newest first
  std::optional<RunInfo> info(std::int64_t run) const;
  std::optional<StoredRun> load(std::int64_t run, const LoadOptions& what = {}) const;
  std::optional<std::int64_t> latest() const;
  bool remove(std::int64_t run);  // false when there is no such run

  // Plans (schema 2): stored whole, listed newest first without their documents.
  std::int64_t add_plan(PlanRecord plan);  // created_at filled here; returns the id
  std::vector<PlanRecord> plans() const;
  std::optional<PlanRecord> plan(std::int64_t id) const;

 private:
  explicit Store(std::string path);
  static std::expected<Store, std::string> open_read_only(const std::string& path,
                                                          Seconds busy_timeout);
  // Throws DatabaseLocked when `e` is SQLite's "locked" (the writes rethrow anything else).
  void throw_if_locked(const SQLite::Exception& e) const;
  std::string path_;
  Seconds busy_timeout_ = kBusyTimeout;
  std::unique_ptr<SQLite::Database> db_;
};

}  // namespace racktwin::db
