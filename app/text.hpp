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
  std::string title{};  // empty: no title line; may hold several lines
  std::vector<Fact> facts{};
  std::vector<std::vector<std::string>> table{};  // the first row is the header; empty: no table
  std::vector<std::size_t> right{};               // table columns holding numbers
  std::vector<std::string> notes{};
  std::size_t label_width = 0;  // the facts' labels padded to this; 0: the front end chooses
  bool gap = true;              // set apart from what comes before (a blank line in text)
};

// A published or predicted figure with 3-4 significant digits: 25711, 137.2, 3.89, 0.0421.
std::string figure_text(double v);

}  // namespace racktwin::app
