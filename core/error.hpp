#pragma once
// The project's error types. Library code never prints or exits: it returns std::expected or throws
// InputError, which carries every problem found in an input with where it is and what to do.

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace racktwin {

// A place in an input file. Line and column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

// One problem in an input: where, which key path, what was wrong (and what was expected), and a
// hint.
struct Diagnostic {
  SourceLocation where;
  std::string path;  // key path such as "systems[2].chip.hbm_bandwidth"; empty for the whole file
  std::string message;  // what was wrong and what was expected
  std::string hint;     // what to do about it; may be empty

  // "file:line:column: path: message (hint)"
  std::string to_string() const;
};

using Diagnostics = std::vector<Diagnostic>;

// Thrown when an input (YAML, command-line value) is invalid; holds every problem found.
class InputError : public std::runtime_error {
 public:
  explicit InputError(Diagnostics diagnostics);
  const Diagnostics& diagnostics() const { return diagnostics_; }

 private:
  Diagnostics diagnostics_;
};

// Edit distance between two strings (insertions, deletions, substitutions, adjacent swaps).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if it is close enough to be a plausible typo; else empty.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace racktwin
