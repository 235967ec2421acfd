#pragma once
// Simulation as jobs behind a process boundary. SimGrid keeps one engine per process, so every
// simulation runs in a worker process (racktwin-sim) that reads the points from a job file and
// sends complete results back as JSON lines (db/codec.hpp). A SimJob runs the workers of one batch
// of points, locally (up to `jobs` at once) or under Open MPI (one mpirun of racktwin-sim-mpi,
// whose rank 0 hands out groups to every rank).
//
// Contract:
// - The points go out in groups fixed by the points alone (costliest first; the grouping does not
//   depend on the number of jobs or ranks), and each group runs in a process of its own (a local
//   worker reads the job once and forks one per group it is handed: racktwin-sim --serve); so the
//   results do not depend on the backend or the number of workers, byte for byte.
// - A group's results are delivered whole, once its worker has ended cleanly, through on_group.
//   Groups whose points were all delivered before (skip()) are not simulated again: a killed
//   sweep resumes where it stopped.
// - No fork: workers start with posix_spawn, so a threaded process (the GUI) may run jobs. run()
//   blocks; cancel() may be called from any thread and makes run() end, with its workers killed.
// - Never prints. A worker's standard error goes to this process's.

#include <atomic>
#include <cstdint>
#include <expected>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog.hpp"
#include "db/store.hpp"
#include "sim/serving.hpp"

namespace racktwin::app {

enum class Backend { local, mpi };

struct JobOptions {
  Backend backend = Backend::local;
  int jobs = 0;   // local worker processes at once; 0: the machine's cores
  int ranks = 2;  // MPI ranks (mpirun -n)
  // The MPI launcher command before "-n": "mpirun", or e.g. "mpirun --hostfile hosts".
  std::string mpirun = "mpirun";
  bool fuse = true;  // sim::SimOptions::fuse
  // Executables; empty: $RACKTWIN_SIM / $RACKTWIN_SIM_MPI, else beside this executable, else the
  // ones this build made.
  std::string worker, mpi_worker;
  std::string temp_dir;                       // where the job file goes; empty: $TMPDIR, else /tmp
  const std::atomic<bool>* cancel = nullptr;  // set from any thread to stop the job
};

// The machine's cores (at least 1).
int default_jobs();

// The groups a batch of points goes out in: indices into the batch, costliest group first; at
// most 32, and none much cheaper than a second of simulation unless that would leave the batch
// fewer than 4 groups.
std::vector<std::vector<std::size_t>> plan_groups(const std::vector<sim::PointSpec>& specs);

class SimJob {
 public:
  SimJob(const Catalog& catalog, std::vector<sim::PointSpec> specs, JobOptions options);

  // Points already simulated (their indices): groups made only of such points are skipped.
  void skip(const std::set<std::int64_t>& done);
  // Points the job will simulate (those of the groups not skipped).
  std::size_t points_to_simulate() const;

  struct Callbacks {
    // Each finished group's points, with their indices, in completion order.
    std::function<void(std::vector<db::StoredPoint>)> on_group;
    // Share of the job's simulation done, from 0 to 1, by estimated cost.
    std::function<void(double)> on_progress;
  };
  // Simulates the groups not skipped. Fails with the first worker's error, or "cancelled".
  std::expected<void, std::string> run(const Callbacks& cb);
  void cancel() { cancelled_ = true; }

 private:
  const Catalog* catalog_;
  std::vector<sim::PointSpec> specs_;
  JobOptions options_;
  std::vector<std::vector<std::size_t>> groups_;
  std::vector<double> group_cost_;
  std::vector<bool> skipped_;
  std::atomic<bool> cancelled_{false};
};

// Simulates every point in workers and returns the results in order (for validate and
// calibrate): the same results sim::simulate() gives for the points.
std::expected<std::vector<sim::PointResult>, std::string> simulate_in_workers(
    const Catalog& catalog, const std::vector<sim::PointSpec>& specs, const JobOptions& options);

// Job files are named racktwin-job-PID-XXXXXX after the process that wrote it, which removes it
// when the job ends. A run killed outright (kill -9) cannot: the next job removes from `dir` the
// job files whose process is gone and that are older than a day (a process of another PID
// namespace sharing the directory may still be running its job). Returns how many it removed.
int remove_orphaned_job_files(const std::string& dir);

// The worker side: simulates group `group` of the job file and emits its lines (progress, every
// point, then done), one JSON document per call, without a newline. Fails with the reason when
// the job file cannot be used; a simulation error is emitted as an error line.
std::expected<void, std::string> run_worker(const std::string& job_file, std::size_t group,
                                            const std::function<void(const std::string&)>& emit);

// The same in two stages, for a worker that serves several groups of one job (racktwin-sim
// --serve): the job file and its catalog read and checked once, then any group of it simulated
// (in a fresh process each: one SimGrid engine per process).
struct LoadedJob {
  std::string file;
  nlohmann::json job;
  Catalog catalog;
};
std::expected<LoadedJob, std::string> load_job(const std::string& job_file);
std::expected<void, std::string> run_group(const LoadedJob& job, std::size_t group,
                                           const std::function<void(const std::string&)>& emit);

}  // namespace racktwin::app
