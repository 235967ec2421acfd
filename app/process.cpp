#include "app/process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace racktwin::app {

std::expected<PipedProcess, std::string> spawn_piped(const std::vector<std::string>& argv,
                                                     bool own_group, bool input) {
  if (argv.empty()) return std::unexpected("no program to start");
  int fd[2];
  if (::pipe2(fd, O_CLOEXEC) != 0)
    return std::unexpected(std::string("cannot create a pipe: ") + std::strerror(errno));
  int sv[2] = {-1, -1};
  if (input && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd[0]);
    ::close(fd[1]);
    return std::unexpected("cannot create a socket pair: " + why);
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
  if (input) posix_spawn_file_actions_adddup2(&fa, sv[1], STDIN_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (own_group) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(fd[1]);
  if (input) ::close(sv[1]);
  if (rc != 0) {
    ::close(fd[0]);
    if (input) ::close(sv[0]);
    return std::unexpected("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  return PipedProcess{pid, fd[0], sv[0]};
}

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace racktwin::app
