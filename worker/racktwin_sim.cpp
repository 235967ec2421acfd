// racktwin-sim JOB --group G: simulates one group of a job file's points and writes the results as
// JSON lines on standard output (app/sim_job.hpp). Started by the job runner, not by users.

#include <sys/prctl.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "app/json.hpp"
#include "app/sim_job.hpp"

int main(int argc, char** argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker never outlives the process that started it
  if (argc != 4 || std::string(argv[2]) != "--group") {
    std::fprintf(stderr, "usage: racktwin-sim JOB_FILE --group N (started by racktwin run)\n");
    return 2;
  }
  std::size_t group = 0;
  try {
    group = std::stoul(argv[3]);
  } catch (const std::exception&) {
    std::fprintf(stderr, "racktwin-sim: --group takes a group number, not '%s'\n", argv[3]);
    return 2;
  }
  auto emit = [](const std::string& line) {
    std::fputs(line.c_str(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  };
  auto ok = racktwin::app::run_worker(argv[1], group, emit);
  if (!ok) {
    emit(racktwin::app::Json{{"group", group}, {"error", ok.error()}}.dump());
    return 1;
  }
  return 0;
}
