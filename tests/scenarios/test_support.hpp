#pragma once
// Helpers shared by the scenarios/ tests: the shipped catalog, temporary files, diagnostics lookup.

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "scenarios/catalog_loader.hpp"

namespace racktwin::test {

inline std::string shipped_catalog_dir() {
  return std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/catalog";
}

inline const Catalog& shipped_catalog() {
  static const Catalog cat = [] {
    auto c = load_catalog_dir(shipped_catalog_dir());
    if (!c) {
      std::string all;
      for (const auto& d : c.error()) all += d.to_string() + "\n";
      ADD_FAILURE() << "shipped catalog does not load:\n" << all;
      return Catalog{};
    }
    return *c;
  }();
  return cat;
}

// A system of the shipped catalog; throws when there is none, so a test fails with the id.
inline const System& shipped_system(const std::string& id) {
  const System* s = shipped_catalog().find_system(id);
  if (s == nullptr) throw std::runtime_error("no system " + id + " in the shipped catalog");
  return *s;
}

// A file in a fresh temporary directory, removed with the object.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text) {
    dir_ = std::filesystem::temp_directory_path() /
           ("racktwin-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / name).string();
    std::ofstream(path_) << text;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& path() const { return path_; }
  std::string dir() const { return dir_.string(); }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path dir_;
  std::string path_;
};

// The diagnostic whose message contains `needle`, or nullptr.
inline const Diagnostic* find_diag(const Diagnostics& d, const std::string& needle) {
  for (const auto& x : d)
    if (x.to_string().find(needle) != std::string::npos) return &x;
  return nullptr;
}

inline std::string dump(const Diagnostics& d) {
  std::string s;
  for (const auto& x : d) s += x.to_string() + "\n";
  return s;
}

}  // namespace racktwin::test
