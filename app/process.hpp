#pragma once
// Child processes for the simulation jobs: started with posix_spawn (no fork: the job runner may
// live in a threaded Qt process, and MPI discourages fork in ranks), standard output through a pipe.

#include <sys/types.h>

#include <expected>
#include <string>
#include <vector>

namespace racktwin::app {

struct PipedProcess {
  pid_t pid = -1;
  int fd = -1;  // the read end of its standard output; close-on-exec
  int in = -1;  // with `input`: a socket to its standard input (send with MSG_NOSIGNAL)
};

// Starts argv[0] (searched on PATH when it has no slash) with argv. With `own_group` the child
// leads a new process group, so that killing the group ends it and its children. With `input` its
// standard input is a socket whose other end is returned in `in` (a socket, not a pipe, so that
// writing to a child that died fails with EPIPE rather than killing this process); without, it
// inherits this process's.
std::expected<PipedProcess, std::string> spawn_piped(const std::vector<std::string>& argv,
                                                     bool own_group, bool input = false);

// Waits for the process to end and returns its waitpid status.
int reap(pid_t pid);

// "exited with status N" or "was killed by signal N".
std::string exit_text(int status);

}  // namespace racktwin::app
