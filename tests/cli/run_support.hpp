#pragma once
// Runs the real racktwin binary (RACKTWIN_BIN) for the end-to-end tests.

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace racktwin::test {

// Runs write to the results database: unless a test names one, each test process gets its own in a
// temporary directory (RACKTWIN_DB), removed when the process ends, never racktwin.db in the build
// or source tree.
struct TempResultsDb {
  std::filesystem::path dir;
  TempResultsDb() {
    if (const char* set = std::getenv("RACKTWIN_DB"); set != nullptr && *set != '\0') return;
    dir =
        std::filesystem::temp_directory_path() / ("racktwin-e2e-db-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    ::setenv("RACKTWIN_DB", (dir / "racktwin.db").c_str(), 1);
  }
  ~TempResultsDb() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};
inline TempResultsDb temp_results_db;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `racktwin ARGS`: its exit code, standard output and standard error. `shell_prefix` runs before it
// in the same shell (such as "ulimit -v 1000000; ").
inline Result run(const std::string& args, const std::string& shell_prefix = "") {
  const auto err_path = std::filesystem::temp_directory_path() /
                        ("racktwin-e2e-" + std::to_string(::getpid()) + ".err");
  const std::string cmd =
      shell_prefix + std::string(RACKTWIN_BIN) + " " + args + " 2>" + err_path.string();
  Result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  std::filesystem::remove(err_path);
  return r;
}

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
