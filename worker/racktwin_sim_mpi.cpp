// racktwin-sim-mpi JOB --worker PATH --groups G,G,...: the Open MPI backend of a simulation job,
// run under mpirun by the job runner (app/mpi_dispatch.hpp).

#include <mpi.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "app/mpi_dispatch.hpp"

#ifdef __SANITIZE_ADDRESS__
// Open MPI's components, loaded at run time and unloaded before the process ends, keep memory until
// exit that LeakSanitizer can name no module for (so no suppression matches): leak checking is off
// in the ranks only. The simulations the ranks start are checked in their own processes.
extern "C" const char* __asan_default_options() {
  return "detect_leaks=0";
}
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 6 || std::string(argv[2]) != "--worker" || std::string(argv[4]) != "--groups") {
    if (rank == 0)
      std::fprintf(stderr,
                   "usage: mpirun -n K racktwin-sim-mpi JOB_FILE --worker racktwin-sim --groups "
                   "G,G,... (started by racktwin run --backend mpi)\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<std::size_t> groups;
  std::stringstream in(argv[5]);
  for (std::string g; std::getline(in, g, ',');) groups.push_back(std::stoul(g));
  auto emit = [](const std::string& line) {
    std::fputs(line.c_str(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  };
  auto ok = racktwin::app::mpi_dispatch(argv[3], argv[1], groups, emit);
  if (!ok && rank == 0) std::fprintf(stderr, "racktwin-sim-mpi: %s\n", ok.error().c_str());
  MPI_Finalize();
  return ok ? 0 : 1;
}
