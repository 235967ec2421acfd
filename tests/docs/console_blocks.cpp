#include "console_blocks.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace racktwin::docs {
namespace {

bool is_blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::string rstrip(const std::string& s) {
  const auto e = s.find_last_not_of(" \t\r");
  return e == std::string::npos ? std::string{} : s.substr(0, e + 1);
}

bool is_ellipsis(const std::string& line) {
  return trim(line) == "...";
}

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// A token of a normalised line: text, compared exactly, or a number, compared within a tolerance.
struct Token {
  bool number = false;
  std::string text;
  double value = 0;
};

// Reads a number at `i`: digits with an optional fraction and exponent, with a sign when one
// precedes it. It is a number only when it stands alone: not preceded by a letter, digit, '_' or
// '.', and not followed by one (nor by '.' and a digit), so "tp8", "8k1k", "0.1.0" and hex hashes
// stay text.
std::optional<std::size_t> number_end(const std::string& s, std::size_t i) {
  const std::size_t start = i;
  if (start > 0 && (is_word_char(s[start - 1]) || s[start - 1] == '.')) return std::nullopt;
  if (s[i] == '-' || s[i] == '+') ++i;
  std::size_t digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.' && i + 1 < s.size() && is_digit(s[i + 1])) {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '-' || s[j] == '+')) ++j;
    if (j < s.size() && is_digit(s[j])) {
      while (j < s.size() && is_digit(s[j])) ++j;
      i = j;
    }
  }
  if (i < s.size() && is_word_char(s[i])) return std::nullopt;
  if (i + 1 < s.size() && s[i] == '.' && is_digit(s[i + 1])) return std::nullopt;
  return i;
}

std::vector<Token> tokenise(const std::string& s) {
  std::vector<Token> out;
  std::string text;
  for (std::size_t i = 0; i < s.size();) {
    const bool may_start =
        is_digit(s[i]) || ((s[i] == '-' || s[i] == '+') && i + 1 < s.size() && is_digit(s[i + 1]));
    if (may_start) {
      if (const auto end = number_end(s, i)) {
        if (!text.empty()) out.push_back({false, std::exchange(text, {}), 0});
        const std::string num = s.substr(i, *end - i);
        out.push_back({true, num, std::strtod(num.c_str(), nullptr)});
        i = *end;
        continue;
      }
    }
    text += s[i++];
  }
  if (!text.empty()) out.push_back({false, text, 0});
  return out;
}

bool numbers_close(double a, double b, double relative) {
  if (a == b) return true;
  return std::fabs(a - b) <= relative * std::max(std::fabs(a), std::fabs(b));
}

// A table's rule line ("-----  ---"): only dashes and blanks.
bool is_rule(const std::string& s) {
  return s.find('-') != std::string::npos && s.find_first_not_of("- ") == std::string::npos;
}
int rule_columns(const std::string& s) {
  int n = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] == '-' && (i == 0 || s[i - 1] == ' ')) ++n;
  return n;
}

// Both lines already normalised.
bool normalised_match(const std::string& e, const std::string& a, double relative) {
  if (e == a) return true;
  if (is_rule(e) && is_rule(a)) return rule_columns(e) == rule_columns(a);
  const auto te = tokenise(e);
  const auto ta = tokenise(a);
  if (te.size() != ta.size()) return false;
  for (std::size_t k = 0; k < te.size(); ++k) {
    if (te[k].number != ta[k].number) return false;
    if (te[k].number ? !numbers_close(te[k].value, ta[k].value, relative)
                     : te[k].text != ta[k].text)
      return false;
  }
  return true;
}

// The shape of a line: normalised, its numbers as '#'. Used to find a trimmed block's parts again.
std::string shape(const std::string& line) {
  std::string out;
  for (const auto& t : tokenise(normalise(line))) out += t.number ? "#" : t.text;
  return out;
}

std::vector<std::string> without_trailing_blanks(std::vector<std::string> v) {
  while (!v.empty() && is_blank(v.back())) v.pop_back();
  return v;
}

std::string quote(const std::string& s) {
  return "\"" + s + "\"";
}

// The [open, close) line indices of the file's ```console fences, in order.
std::vector<std::pair<std::size_t, std::size_t>> console_fences(
    const std::vector<std::string>& lines) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string t = trim(lines[i]);
    if (!t.starts_with("```")) continue;
    const bool console = t == "```console";
    std::size_t j = i + 1;
    while (j < lines.size() && !trim(lines[j]).starts_with("```")) ++j;
    if (console) out.emplace_back(i, j);
    i = j;
  }
  return out;
}

const std::regex& directive_regex() {
  static const std::regex re(R"(^\s*<!--\s*docs-test:(.*)-->\s*$)");
  return re;
}

}  // namespace

double Tolerances::for_line(const std::string& expected_line) const {
  for (const auto& r : rules)
    if (r.lines && std::regex_search(expected_line, *r.lines)) return r.relative;
  return relative;
}

Tolerances parse_directive(const std::string& body, Tolerances into) {
  static const std::regex clause(
      R"re(^\s*numbers within ([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)(%?)(?: on lines matching "([^"]*)")?\s*(?:\(.*\))?\s*$)re");
  std::stringstream ss(body);
  std::string part;
  while (std::getline(ss, part, ';')) {
    if (is_blank(part)) continue;
    std::smatch m;
    if (!std::regex_match(part, m, clause))
      throw std::invalid_argument(
          "docs-test directive: expected 'numbers within X%' or 'numbers within X% on lines "
          "matching \"REGEX\"', found '" +
          trim(part) + "'");
    double rel = std::strtod(m[1].str().c_str(), nullptr);
    if (m[2].matched && m[2].length() > 0) rel /= 100;
    if (m[3].matched) {
      ToleranceRule r;
      r.relative = rel;
      r.pattern = m[3].str();
      r.lines = std::regex(r.pattern);
      into.rules.push_back(std::move(r));
    } else {
      into.relative = rel;
    }
  }
  return into;
}

std::string Block::name() const {
  std::string n;
  for (char c : file) n += std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
  return n + "_" + std::to_string(index);
}

bool Block::runs_racktwin() const {
  return std::any_of(commands.begin(), commands.end(), [](const Command& c) {
    return c.text.starts_with("build/cli/racktwin ") || c.text.starts_with("racktwin ") ||
           c.text == "racktwin" || c.text == "build/cli/racktwin";
  });
}

void PrintTo(const Block& b, std::ostream* os) {
  *os << b.file << ":" << b.line;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::stringstream ss(text);
  while (std::getline(ss, line)) lines.push_back(line);
  return lines;
}

std::vector<Block> parse_blocks(const std::string& markdown, const std::string& file) {
  const auto lines = split_lines(markdown);
  std::vector<Block> blocks;
  int index = 0;
  for (const auto& [open, close] : console_fences(lines)) {
    Block b;
    b.file = file;
    b.index = index++;
    b.line = static_cast<int>(open) + 1;
    // Directives: the comment lines just before the fence (blank lines between are allowed).
    std::vector<std::string> directives;
    for (std::size_t k = open; k-- > 0;) {
      if (is_blank(lines[k])) continue;
      std::smatch m;
      if (!std::regex_match(lines[k], m, directive_regex())) break;
      directives.insert(directives.begin(), m[1].str());
    }
    try {
      for (const auto& d : directives) b.tolerances = parse_directive(d, b.tolerances);
    } catch (const std::exception& e) {
      b.error = e.what();
    }
    for (std::size_t k = open + 1; k < close; ++k) {
      if (lines[k].starts_with("$ "))
        b.commands.push_back({lines[k].substr(2), {}});
      else if (!b.commands.empty())
        b.commands.back().expected.push_back(lines[k]);
    }
    blocks.push_back(std::move(b));
  }
  return blocks;
}

std::vector<std::string> doc_files(const std::filesystem::path& source_dir) {
  std::vector<std::string> files{"README.md"};
  std::vector<std::string> docs;
  for (const auto& e : std::filesystem::directory_iterator(source_dir / "docs"))
    if (e.is_regular_file() && e.path().extension() == ".md")
      docs.push_back("docs/" + e.path().filename().string());
  std::sort(docs.begin(), docs.end());
  files.insert(files.end(), docs.begin(), docs.end());
  return files;
}

std::string normalise(const std::string& line, const std::string& tmp_dir) {
  struct Rule {
    std::regex re;
    std::string to;
  };
  static const std::vector<Rule> rules{
      // ISO 8601 dates, with a time and zone when given.
      {std::regex(
           R"(\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?)"),
       "<date>"},
      // The git commit of the build: "commit 0123abc", "0.1.0 (0123abcd4567-modified)", JSON.
      {std::regex(R"(\bcommit [0-9a-f]{7,40}(?:-modified)?)"), "commit <commit>"},
      {std::regex(R"(("(?:racktwin_)?commit": ?")[0-9a-f]{7,40}(?:-modified)?")"), "$1<commit>\""},
      {std::regex(R"((\b\d+\.\d+\.\d+ \()[0-9a-f]{7,40}(?:-modified)?\))"), "$1<commit>)"},
      {std::regex(R"((\bracktwin_commit,)[0-9a-f]{7,40}(?:-modified)?)"), "$1<commit>"},
      // Process ids and host names of the run record.
      {std::regex(R"(("pid": ?)\d+)"), "$1<pid>"},
      {std::regex(R"(\b(pid|process) \d+)"), "$1 <pid>"},
      {std::regex(R"(("host": ?")[^"]*")"), "$1<host>\""},
      {std::regex(R"(\bpid,\d+)"), "pid,<pid>"},
      {std::regex(R"(\bhost,[^,\s]*)"), "host,<host>"},
  };
  std::string s = line;
  if (!tmp_dir.empty())
    for (std::size_t p = s.find(tmp_dir); p != std::string::npos; p = s.find(tmp_dir, p))
      s.replace(p, tmp_dir.size(), "<tmp>");
  for (const auto& r : rules) s = std::regex_replace(s, r.re, r.to);
  // Runs of blanks collapse to one: column widths follow the widths of the numbers.
  std::string out;
  for (char c : rstrip(s)) {
    if (c == '\t' || c == '\r') c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  return out;
}

bool line_matches(const std::string& expected, const std::string& actual, double relative,
                  const std::string& tmp_dir) {
  return normalised_match(normalise(expected, tmp_dir), normalise(actual, tmp_dir), relative);
}

Comparison compare_output(const std::vector<std::string>& expected_raw,
                          const std::vector<std::string>& actual_raw, const Tolerances& tolerances,
                          const std::string& tmp_dir) {
  const auto expected = without_trailing_blanks(expected_raw);
  const auto actual = without_trailing_blanks(actual_raw);
  std::vector<std::string> ne, na;
  std::vector<double> tol;
  for (const auto& l : expected) {
    ne.push_back(normalise(l, tmp_dir));
    tol.push_back(tolerances.for_line(l));
  }
  for (const auto& l : actual) na.push_back(normalise(l, tmp_dir));

  // Glob matching with "..." as the wildcard: on a mismatch, back up to the last "..." and let it
  // take one more line. The deepest failure is the one reported.
  std::size_t i = 0, j = 0;
  std::optional<std::size_t> star_i;
  std::size_t star_j = 0;
  std::size_t fail_i = 0, fail_j = 0;
  bool failed = false;
  auto note_failure = [&] {
    if (!failed || i > fail_i || (i == fail_i && j > fail_j)) {
      fail_i = i;
      fail_j = j;
      failed = true;
    }
  };
  while (j < na.size()) {
    if (i < ne.size() && is_ellipsis(expected[i])) {
      star_i = i++;
      star_j = j;
      continue;
    }
    if (i < ne.size() && normalised_match(ne[i], na[j], tol[i])) {
      ++i;
      ++j;
      continue;
    }
    note_failure();
    if (!star_i) break;
    i = *star_i + 1;
    j = ++star_j;
  }
  if (j >= na.size()) {
    while (i < ne.size() && is_ellipsis(expected[i])) ++i;
    if (i == ne.size()) return {true, {}};
    note_failure();
  }

  std::ostringstream msg;
  if (fail_i < expected.size() && fail_j < actual.size()) {
    msg << "expected line " << fail_i + 1 << " of " << expected.size() << ": "
        << quote(expected[fail_i]) << "\n  printed line " << fail_j + 1 << " of " << actual.size()
        << ": " << quote(actual[fail_j]);
    if (tol[fail_i] > 1e-9) msg << "\n  (numbers within " << tol[fail_i] * 100 << "%)";
  } else if (fail_i < expected.size()) {
    msg << "the output ends after " << actual.size() << " lines; expected line " << fail_i + 1
        << " of " << expected.size() << ": " << quote(expected[fail_i]);
  } else {
    msg << "the block ends after " << expected.size() << " lines; printed line " << fail_j + 1
        << " of " << actual.size() << ": " << quote(actual[fail_j]);
  }
  return {false, msg.str()};
}

std::vector<std::string> retrim(const std::vector<std::string>& expected_raw,
                                const std::vector<std::string>& actual_raw) {
  const auto expected = without_trailing_blanks(expected_raw);
  std::vector<std::string> actual;
  for (const auto& l : without_trailing_blanks(actual_raw)) actual.push_back(rstrip(l));
  if (std::none_of(expected.begin(), expected.end(), is_ellipsis)) return actual;

  // The parts between "..." lines, each with the "..." line before it (empty for the first part
  // when the block does not start with one).
  struct Part {
    std::string dots;
    std::vector<std::string> lines;
  };
  std::vector<Part> parts(1);
  for (const auto& l : expected) {
    if (is_ellipsis(l))
      parts.push_back({l, {}});
    else
      parts.back().lines.push_back(l);
  }
  std::string trailing_dots;
  if (parts.back().lines.empty()) trailing_dots = parts.back().dots;

  std::vector<std::string> out;
  std::size_t pos = 0;
  std::string pending_dots;  // a "..." to write before the next part taken
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const Part& p = parts[k];
    if (!p.dots.empty() && pending_dots.empty()) pending_dots = p.dots;
    if (p.lines.empty()) continue;
    const bool last = k + 1 == parts.size();
    std::optional<std::size_t> start;
    if (k == 0 && p.dots.empty()) {
      start = 0;
    } else {
      const std::string want = shape(p.lines.front());
      for (std::size_t j = pos; j < actual.size() && !start; ++j)
        if (shape(actual[j]) == want) start = j;
      // A block that ends with this part ends where the output ends.
      if (!start && last && trailing_dots.empty())
        start = actual.size() >= p.lines.size() + pos ? actual.size() - p.lines.size() : pos;
    }
    if (!start) continue;  // this part is gone from the output; a "..." stays for it
    if (*start > pos || (out.empty() && !pending_dots.empty() && *start > 0))
      out.push_back(pending_dots.empty() ? std::string("...") : pending_dots);
    pending_dots.clear();
    const std::size_t n = last && trailing_dots.empty()
                              ? actual.size() - *start
                              : std::min(p.lines.size(), actual.size() - *start);
    out.insert(out.end(), actual.begin() + static_cast<std::ptrdiff_t>(*start),
               actual.begin() + static_cast<std::ptrdiff_t>(*start + n));
    pos = *start + n;
  }
  if (pos < actual.size())
    out.push_back(!trailing_dots.empty()
                      ? trailing_dots
                      : (!pending_dots.empty() ? pending_dots : std::string("...")));
  return out;
}

std::string replace_block(const std::string& markdown, int index,
                          const std::vector<Command>& commands) {
  auto lines = split_lines(markdown);
  const auto fences = console_fences(lines);
  if (index < 0 || static_cast<std::size_t>(index) >= fences.size())
    throw std::runtime_error("no console block " + std::to_string(index));
  const auto [open, close] = fences[static_cast<std::size_t>(index)];
  std::vector<std::string> old_commands;
  for (std::size_t k = open + 1; k < close; ++k)
    if (lines[k].starts_with("$ ")) old_commands.push_back(lines[k].substr(2));
  std::vector<std::string> body;
  std::vector<std::string> new_commands;
  for (const auto& c : commands) {
    new_commands.push_back(c.text);
    body.push_back("$ " + c.text);
    body.insert(body.end(), c.expected.begin(), c.expected.end());
  }
  if (old_commands != new_commands)
    throw std::runtime_error("console block " + std::to_string(index) +
                             " has other commands than the ones run");
  lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(open + 1),
              lines.begin() + static_cast<std::ptrdiff_t>(close));
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(open + 1), body.begin(), body.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  if (!markdown.empty() && markdown.back() != '\n') out.pop_back();
  return out;
}

}  // namespace racktwin::docs
