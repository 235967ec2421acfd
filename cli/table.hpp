#pragma once
// Console rendering shared by the commands: plain-text tables (columns padded to their widest
// cell), JSON documents and input errors.

#include <string>
#include <vector>

#include "app/json.hpp"
#include "app/text.hpp"

namespace racktwin::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  // Columns whose index is in `right` are right-aligned (numbers).
  std::string render(const std::vector<std::size_t>& right = {}) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// A table whose first row is the header.
std::string render_rows(const std::vector<std::vector<std::string>>& rows,
                        const std::vector<std::size_t>& right = {});

// The column indices first .. columns - 1: a table whose columns from `first` on hold numbers.
std::vector<std::size_t> numbers_from(std::size_t first, std::size_t columns);

// "  LABEL TEXT" per fact on stdout, the labels padded to `width`.
void print_facts(const std::vector<app::Fact>& facts, std::size_t width);
// A blank line (unless the section says not), the title, the facts (labels padded to the
// section's label width, else `width`), the table, then the notes.
void print_section(const app::Section& s, std::size_t width);
// Each section in turn: a use case's description (app/describe.hpp).
void print_sections(const std::vector<app::Section>& sections);

// Prints the document, indented by two, and a newline on stdout.
void print_json(const app::Json& j);

// Prints "racktwin: MESSAGE" and, when given, an indented hint line on stderr; returns the exit
// code of an input error.
int input_error(const std::string& message, const std::string& hint = "");

}  // namespace racktwin::cli
