#include "cli/table.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "cli/commands.hpp"

namespace racktwin::cli {
namespace {
// Display width of UTF-8 text: count code points, not bytes.
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}
}  // namespace

std::string Table::render(const std::vector<std::size_t>& right) const {
  std::vector<std::size_t> w(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& r) {
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  auto line = [&](const std::vector<std::string>& r) {
    std::string out;
    for (std::size_t i = 0; i < w.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      const std::string pad(w[i] - width(cell), ' ');
      const bool is_right = std::find(right.begin(), right.end(), i) != right.end();
      if (i > 0) out += "  ";
      out += is_right ? pad + cell : (i + 1 == w.size() ? cell : cell + pad);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_);
  std::vector<std::string> rule;
  for (auto x : w) rule.emplace_back(x, '-');
  out += line(rule);
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string render_rows(const std::vector<std::vector<std::string>>& rows,
                        const std::vector<std::size_t>& right) {
  if (rows.empty()) return "";
  Table t(rows.front());
  for (std::size_t i = 1; i < rows.size(); ++i) t.add(rows[i]);
  return t.render(right);
}

std::vector<std::size_t> numbers_from(std::size_t first, std::size_t columns) {
  std::vector<std::size_t> right;
  for (std::size_t i = first; i < columns; ++i) right.push_back(i);
  return right;
}

void print_facts(const std::vector<app::Fact>& facts, std::size_t width) {
  for (const auto& f : facts) fmt::print("  {:<{}}{}\n", f.label, width, f.text);
}

void print_section(const app::Section& s, std::size_t width) {
  fmt::print("{}{}", s.gap ? "\n" : "", s.title.empty() ? "" : s.title + "\n");
  print_facts(s.facts, s.label_width > 0 ? s.label_width : width);
  fmt::print("{}", render_rows(s.table, s.right));
  for (const auto& n : s.notes) fmt::print("  {}\n", n);
}

void print_sections(const std::vector<app::Section>& sections) {
  for (const auto& s : sections) print_section(s, 0);
}

// Text read from files is checked for UTF-8 on input; a value stored by an older build may still
// hold invalid bytes, which are written as U+FFFD so that the document stays valid JSON.
void print_json(const app::Json& j) {
  fmt::print("{}\n", j.dump(2, ' ', false, app::Json::error_handler_t::replace));
}

int input_error(const std::string& message, const std::string& hint) {
  fmt::print(stderr, "racktwin: {}\n", message);
  if (!hint.empty()) fmt::print(stderr, "  {}\n", hint);
  return kExitInput;
}

void print_diagnostics(const Diagnostics& d, const std::string& what) {
  for (const auto& x : d) fmt::print(stderr, "{}\n", x.to_string());
  fmt::print(stderr, "{} error{} in {}\n", d.size(), d.size() == 1 ? "" : "s", what);
}

}  // namespace racktwin::cli
