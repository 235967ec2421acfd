#pragma once
// The fuzz targets: each loader of scenarios/ (and the unit parser of core/) behind one entry point
// that takes a text and the file name it is read as, and the properties every input must keep.
//
// Every input, however broken, must be either accepted with values that make sense, or rejected
// with diagnostics that say where and what: at least one with a file name and a line from 1, every
// one with a file name and a message, and a line within the input when it points into the input.
// No exception other than InputError (the documented one, checked the same way) may escape.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace racktwin::fuzz {

// What a loader made of one input.
struct Verdict {
  bool accepted = false;
  // The diagnostics of a rejection, and for a points file those of its rejected points.
  Diagnostics diagnostics;
  // Properties the input broke, in words; empty when it kept them all.
  std::vector<std::string> problems;
};

// An input mutants start from, and the file name it is read as.
struct Seed {
  std::string name;
  std::string text;
};

struct Target {
  std::string name;  // "scenario", "plan", ...
  // Where the target's files live: a corpus input is read as a file of this folder (so that its
  // relative paths resolve as a shipped file's do); empty for the unit parser.
  std::string home;
  std::vector<Seed> seeds;  // the shipped files (for the unit parser: the values in them)
  // Loads `text` read as the file `name` (a seed's path, so that relative paths resolve as they
  // do for the seed); fills accepted, diagnostics and the problems of an accepted value.
  std::function<void(const std::string& text, const std::string& name, Verdict& v)> load;
  // Whether a rejection must carry file:line diagnostics (not for the unit parser, whose errors
  // are text that its callers place).
  bool located = true;
};

// scenario, plan, rehearsal, points, trace, catalog, units.
const std::vector<Target>& targets();
const Target& target(std::string_view name);

// Runs the target on `text` read as `name` and checks every property: the exception that escaped,
// the diagnostics of a rejection and the values of an acceptance.
Verdict execute(const Target& t, const std::string& text, const std::string& name);

// The problems of the diagnostics `d` of a rejected `text` read as `name`.
std::vector<std::string> diagnostic_problems(const Diagnostics& d, const std::string& text,
                                             const std::string& name);

// Whether `s` is valid UTF-8 (no stray or truncated sequence, no overlong form, no surrogate,
// nothing above U+10FFFF).
bool valid_utf8(std::string_view s);

}  // namespace racktwin::fuzz
