// racktwin-sim JOB --group G: simulates one group of a job file's points and writes the results as
// JSON lines on standard output (app/sim_job.hpp). Started by the job runner, not by users.
// racktwin-sim JOB --serve: reads the job file and its catalog once, then simulates the groups
// named on standard input, one number a line, until it ends: each in a child process forked for
// it (SimGrid runs one engine per process), so a job of many groups pays for starting a process,
// reading the job and loading the catalog once per worker rather than once per group.

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "app/json.hpp"
#include "app/process.hpp"
#include "app/sim_job.hpp"

namespace {

void emit(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void emit_error(std::size_t group, const std::string& why) {
  emit(racktwin::app::Json{{"group", group}, {"error", why}}.dump());
}

// Simulates one group in a child process. 0 when the child ended cleanly (it sent the group's
// points and done, or the simulation's error); else 1, with the reason sent (by the child, or
// here when a signal killed it).
int serve_group(const racktwin::app::LoadedJob& job, std::size_t group) {
  std::fflush(stdout);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    emit_error(group, std::string("cannot start a process for a group of points: ") +
                          std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    auto ok = racktwin::app::run_group(job, group, emit);
    if (!ok) emit_error(group, ok.error());
    std::fflush(stdout);
    ::_exit(ok ? 0 : 1);
  }
  const int status = racktwin::app::reap(pid);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (WIFSIGNALED(status))  // an exit status of 1 already sent its error
    emit_error(group, "the simulation of a group of points " + racktwin::app::exit_text(status));
  return 1;
}

int serve(const char* job_file) {
  auto job = racktwin::app::load_job(job_file);
  if (!job) {
    emit_error(0, job.error());
    return 1;
  }
  for (std::string line; std::getline(std::cin, line);) {
    std::size_t group = 0;
    const auto [end, bad] = std::from_chars(line.data(), line.data() + line.size(), group);
    if (bad != std::errc() || end != line.data() + line.size()) {
      emit_error(0, "racktwin-sim --serve takes group numbers, one a line, not '" + line + "'");
      return 2;
    }
    if (serve_group(*job, group) != 0) return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker never outlives the process that started it
  if (argc == 3 && std::string(argv[2]) == "--serve") return serve(argv[1]);
  if (argc != 4 || std::string(argv[2]) != "--group") {
    std::fprintf(stderr,
                 "usage: racktwin-sim JOB_FILE --group N | --serve (started by racktwin run)\n");
    return 2;
  }
  std::size_t group = 0;
  try {
    group = std::stoul(argv[3]);
  } catch (const std::exception&) {
    std::fprintf(stderr, "racktwin-sim: --group takes a group number, not '%s'\n", argv[3]);
    return 2;
  }
  auto ok = racktwin::app::run_worker(argv[1], group, emit);
  if (!ok) {
    emit(racktwin::app::Json{{"group", group}, {"error", ok.error()}}.dump());
    return 1;
  }
  return 0;
}
