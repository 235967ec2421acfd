#pragma once
// Console rendering shared by the commands: plain-text tables (columns padded to their widest
// cell), JSON documents and input errors.

#include <string>
#include <vector>

#include "app/json.hpp"

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

// Prints the document, indented by two, and a newline on stdout.
void print_json(const app::Json& j);

// Prints "racktwin: MESSAGE" and, when given, an indented hint line on stderr; returns the exit
// code of an input error.
int input_error(const std::string& message, const std::string& hint = "");

}  // namespace racktwin::cli
