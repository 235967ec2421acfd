#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

namespace racktwin {
namespace {

// A fresh name beside `path`: the process id, a counter and a random number, so that neither other
// processes nor a name guessed in advance can collide with it for long.
std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  thread_local std::mt19937_64 random{std::random_device{}()};
  return path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(random() % 1'000'000'000);
}

// The descriptor of a new, exclusively created temporary file, or -1 with errno set.
int create_exclusively(const std::string& path, std::string& tmp) {
  constexpr int kAttempts = 16;
  for (int i = 0; i < kAttempts; ++i) {
    tmp = temporary_name(path);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return ::fsync(fd) == 0;
}

std::string failure(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

std::expected<void, std::string> write_file_atomically(const std::string& path,
                                                       std::string_view bytes) {
  std::string tmp;
  const int fd = create_exclusively(path, tmp);
  if (fd < 0) return std::unexpected(failure("cannot create a temporary file beside", path));
  const bool written = write_all(fd, bytes);
  const int saved = errno;
  if (::close(fd) != 0 || !written) {
    errno = written ? errno : saved;
    std::string e = failure("cannot write", path) + " (disk full, or no permission?)";
    ::unlink(tmp.c_str());
    return std::unexpected(std::move(e));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string e = failure("cannot replace", path);
    ::unlink(tmp.c_str());
    return std::unexpected(std::move(e));
  }
  return {};
}

}  // namespace racktwin
