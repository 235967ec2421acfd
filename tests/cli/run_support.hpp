#pragma once
// Runs the real racktwin binary (RACKTWIN_BIN) for the end-to-end tests.

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/shared_output.hpp"

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

}  // namespace racktwin::test
