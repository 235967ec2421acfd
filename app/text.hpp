#pragma once
// Descriptions a front end shows as they are: labelled lines and titled sections of a summary.
// The values carry them beside their typed figures, so every front end says the same thing.

#include <cstddef>
#include <string>
#include <vector>

namespace racktwin::app {

// A labelled line: "compute rack" -> "16 Vindaloo trays x 8 XPUs = 128 XPUs per rack". An empty
// label continues the line above.
struct Fact {
  std::string label;
  std::string text;
};

// A titled part of a description: labelled lines, then a table, then lines of their own.
struct Section {
  std::string title;  // empty: no title line
  std::vector<Fact> facts;
  std::vector<std::vector<std::string>> table;  // the first row is the header; empty: no table
  std::vector<std::size_t> right;               // table columns holding numbers
  std::vector<std::string> notes;
};

}  // namespace racktwin::app
