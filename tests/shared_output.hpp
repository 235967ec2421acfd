#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

namespace racktwin::test {

// An expensive output (a simulated sweep) that the tests of one executable share within one CTest
// run. CTest's fixture (racktwin_add_test(... SHARED_OUTPUT), tests/CMakeLists.txt) removes the
// directory RACKTWIN_E2E_SHARED before the run and after it; the first test to need a file makes it
// while the others wait on a lock, and the later ones read it. A test run outside CTest makes its
// own in a temporary directory, removed when the object is destroyed.
class SharedOutput {
 public:
  SharedOutput() {
    if (const char* set = std::getenv("RACKTWIN_E2E_SHARED"); set != nullptr && *set != '\0') {
      dir_ = set;
    } else {
      dir_ = std::filesystem::temp_directory_path() /
             ("racktwin-e2e-shared-" + std::to_string(::getpid()));
      own_ = true;
    }
    std::filesystem::create_directories(dir_);
  }
  ~SharedOutput() {
    std::error_code ec;
    if (own_) std::filesystem::remove_all(dir_, ec);
  }
  SharedOutput(const SharedOutput&) = delete;
  SharedOutput& operator=(const SharedOutput&) = delete;

  const std::filesystem::path& dir() const { return dir_; }

  // The path of `file` in dir(). Unless it is there, `make` is called, under the lock, with a
  // temporary path to write; what it wrote becomes `file`. A `make` that fails writes nothing, and
  // the next test tries again.
  std::filesystem::path once(const std::string& file,
                             const std::function<void(const std::filesystem::path&)>& make) const {
    const auto path = dir_ / file;
    const int fd = ::open((dir_ / ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd >= 0) ::flock(fd, LOCK_EX);
    if (!std::filesystem::exists(path)) {
      const auto partial = dir_ / (file + ".partial");
      std::filesystem::remove(partial);
      make(partial);
      std::error_code ec;
      if (std::filesystem::exists(partial)) std::filesystem::rename(partial, path, ec);
    }
    if (fd >= 0) ::close(fd);
    return path;
  }

 private:
  std::filesystem::path dir_;
  bool own_ = false;
};

}  // namespace racktwin::test
