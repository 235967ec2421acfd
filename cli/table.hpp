#pragma once
// Plain-text tables for the console: columns padded to their widest cell.

#include <string>
#include <vector>

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

}  // namespace racktwin::cli
