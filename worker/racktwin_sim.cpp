// racktwin-sim JOB --group G: simulates one group of a job file's points and writes the results as
// JSON lines on standard output (app/sim_job.hpp). Started by the job runner, not by users.
// racktwin-sim JOB --serve: reads the job file and its catalog once, then simulates the groups
// named on standard input, one number a line, until it ends: each in a child process forked for
// it (SimGrid runs one engine per process), so a job of many groups pays for starting a process,
// reading the job and loading the catalog once per worker rather than once per group.

#include <fcntl.h>
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

// The child's side of serve_group: standard output to `out`, standard input from /dev/null, and
// it dies with the worker (checked after the request, as the worker may have died before it).
[[noreturn]] void run_group_child(const racktwin::app::LoadedJob& job, std::size_t group, int out,
                                  pid_t worker) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != worker) ::_exit(1);
  if (::dup2(out, STDOUT_FILENO) < 0) ::_exit(1);
  ::close(out);
  if (const int null = ::open("/dev/null", O_RDONLY); null >= 0) {
    ::dup2(null, STDIN_FILENO);
    ::close(null);
  }
  auto ok = racktwin::app::run_group(job, group, emit);
  if (!ok) emit_error(group, ok.error());
  std::fflush(stdout);
  ::_exit(ok ? 0 : 1);
}

// Copies the child's complete lines from `in` to standard output until it closes its end, and
// returns the last one; a line it left unfinished (killed while writing) is dropped.
std::string relay_lines(int in) {
  std::string buffer, last;
  char chunk[65536];
  while (true) {
    const ssize_t n = ::read(in, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    std::size_t done = 0, line = 0;  // the end of the complete lines; the start of the last
    for (std::size_t nl; (nl = buffer.find('\n', done)) != std::string::npos; done = nl + 1)
      line = done;
    if (done == 0) continue;
    last.assign(buffer, line, done - 1 - line);
    std::fwrite(buffer.data(), 1, done, stdout);
    std::fflush(stdout);
    buffer.erase(0, done);
  }
  return last;
}

// Whether `line` is an error line (the child's own account of why it stopped).
bool is_error(const std::string& line) {
  const auto j = racktwin::app::Json::parse(line, nullptr, false);
  return j.is_object() && j.contains("error");
}

// Simulates one group in a child process, relaying its lines. 0 when the child sent the group's
// points and done; else 1, with the reason sent (by the child, or here when it ended without one:
// killed, or exited without its results).
int serve_group(const racktwin::app::LoadedJob& job, std::size_t group) {
  int fd[2];
  if (::pipe2(fd, O_CLOEXEC) != 0) {
    emit_error(group, std::string("cannot create a pipe: ") + std::strerror(errno));
    return 1;
  }
  std::fflush(stdout);  // nothing buffered is written twice
  const pid_t worker = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    emit_error(group, std::string("cannot start a process for a group of points: ") +
                          std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    ::close(fd[0]);
    run_group_child(job, group, fd[1], worker);
  }
  ::close(fd[1]);
  const std::string last = relay_lines(fd[0]);
  ::close(fd[0]);
  const int status = racktwin::app::reap(pid);
  if (last == racktwin::app::Json{{"done", group}}.dump()) return 0;
  if (!is_error(last))
    emit_error(group, "the simulation of a group of points " + racktwin::app::exit_text(status) +
                          " before sending its results");
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
