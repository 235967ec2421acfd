// Wall time of a scenario's sweep through the job runner with one worker, two workers and Open MPI
// (two ranks), and the ratios, for the closing notes. Each run starts fresh (--fresh) in its own
// database, so nothing is resumed.
// Usage: build/bench/racktwin_jobs_bench [SCENARIO]   (default: scenarios/inferencex-8k1k.yaml)

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

double wall_of(const std::string& args, const std::string& db) {
  ::unlink(db.c_str());
  const std::string cmd = std::string(RACKTWIN_BIN) + " run " + args + " --quiet --fresh --db " +
                          db + " > /dev/null";
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = std::system(cmd.c_str());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::unlink(db.c_str());
  if (rc != 0) {
    std::fprintf(stderr, "failed: %s\n", cmd.c_str());
    std::exit(1);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string scenario =
      argc > 1 ? argv[1] : std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/inferencex-8k1k.yaml";
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  ::setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
  const std::string db = "/tmp/racktwin-jobs-bench-" + std::to_string(::getpid()) + ".db";
  const double one = wall_of(scenario + " --jobs 1", db);
  const double two = wall_of(scenario + " --jobs 2", db);
  const double mpi = wall_of(scenario + " --backend mpi --ranks 2", db);
  std::printf("%s\n", scenario.c_str());
  std::printf("  --jobs 1                  %7.2f s\n", one);
  std::printf("  --jobs 2                  %7.2f s   (%.2f of --jobs 1)\n", two, two / one);
  std::printf("  --backend mpi --ranks 2   %7.2f s   (%.2f of --jobs 1)\n", mpi, mpi / one);
  return 0;
}
