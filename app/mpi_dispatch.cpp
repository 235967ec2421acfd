#include "app/mpi_dispatch.hpp"

#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "app/process.hpp"

namespace racktwin::app {
namespace {

constexpr int kTagAsk = 1;     // worker rank -> 0: its group's output (empty on the first ask)
constexpr int kTagAssign = 2;  // 0 -> worker rank: a group index, or -1 to stop

std::expected<PipedProcess, std::string> start_group(const std::string& worker,
                                                     const std::string& job, long group) {
  return spawn_piped({worker, job, "--group", std::to_string(group)}, false);
}

// Everything the worker writes until it ends; `between` runs whenever no output is waiting.
std::string collect(PipedProcess w, const std::function<void()>& between) {
  if (between) ::fcntl(w.fd, F_SETFL, O_NONBLOCK);
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(w.fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) break;
    if (errno == EAGAIN) {
      between();
      ::usleep(2000);
    }
  }
  ::close(w.fd);
  reap(w.pid);
  return out;
}

// Emits each complete line of a worker's output.
void emit_lines(const std::string& out, const std::function<void(const std::string&)>& emit) {
  std::size_t at = 0;
  for (std::size_t nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1)
    if (nl > at) emit(out.substr(at, nl - at));
}

std::string error_line(long group, const std::string& why) {
  std::string escaped;
  for (char c : why) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c == '\n' ? ' ' : c;
  }
  return "{\"group\":" + std::to_string(group) + ",\"error\":\"" + escaped + "\"}\n";
}

}  // namespace

std::expected<void, std::string> mpi_dispatch(const std::string& worker, const std::string& job,
                                              const std::vector<std::size_t>& groups,
                                              const std::function<void(const std::string&)>& emit) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0) {
    // Ask for a group, run it, send its output with the next ask; until told to stop.
    std::string out;
    for (;;) {
      MPI_Send(out.data(), static_cast<int>(out.size()), MPI_CHAR, 0, kTagAsk, MPI_COMM_WORLD);
      long g = -1;
      MPI_Recv(&g, 1, MPI_LONG, 0, kTagAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (g < 0) return {};
      auto w = start_group(worker, job, g);
      out = w ? collect(*w, {}) : error_line(g, w.error());
    }
  }
  // Rank 0: serve the other ranks between its own groups, costliest first to whoever asks.
  std::size_t next = 0;
  int stopped = 0;
  auto serve = [&](bool block) {
    for (;;) {
      int ready = 0;
      MPI_Status st;
      if (block)
        MPI_Probe(MPI_ANY_SOURCE, kTagAsk, MPI_COMM_WORLD, &st), ready = 1;
      else
        MPI_Iprobe(MPI_ANY_SOURCE, kTagAsk, MPI_COMM_WORLD, &ready, &st);
      if (!ready) return;
      int n = 0;
      MPI_Get_count(&st, MPI_CHAR, &n);
      std::string out(static_cast<std::size_t>(n), '\0');
      MPI_Recv(out.data(), n, MPI_CHAR, st.MPI_SOURCE, kTagAsk, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      emit_lines(out, emit);
      long g = next < groups.size() ? static_cast<long>(groups[next++]) : -1;
      if (g < 0) ++stopped;
      MPI_Send(&g, 1, MPI_LONG, st.MPI_SOURCE, kTagAssign, MPI_COMM_WORLD);
      if (block) return;
    }
  };
  while (next < groups.size()) {
    serve(false);
    if (next >= groups.size()) break;
    const long g = static_cast<long>(groups[next++]);
    auto w = start_group(worker, job, g);
    emit_lines(w ? collect(*w, [&] { serve(false); }) : error_line(g, w.error()), emit);
  }
  while (stopped < size - 1) serve(true);
  return {};
}

}  // namespace racktwin::app
