#include "mutator.hpp"

#include <algorithm>
#include <set>

namespace racktwin::fuzz {
namespace {

// Bytes that mean something to YAML or JSON.
constexpr std::string_view kSyntaxBytes = "\n\r\t :-[]{},#&*!|>'\"%@`?\\0.\x7f";

// Values at and past the edges of what a field may hold.
constexpr std::string_view kExtremeNumbers[]{"1e308",
                                             "-1e308",
                                             "1e400",
                                             "-1",
                                             "-0",
                                             "0",
                                             "0.0",
                                             "nan",
                                             ".nan",
                                             "NaN",
                                             "inf",
                                             ".inf",
                                             "-.inf",
                                             "5e-324",
                                             "1e-320",
                                             "1e18",
                                             "1e9",
                                             "16777217",
                                             "1048577",
                                             "2147483647",
                                             "2147483648",
                                             "4294967296",
                                             "9223372036854775807",
                                             "9223372036854775808",
                                             "-9223372036854775809",
                                             "18446744073709551616",
                                             "99999999999999999999999999999999999999",
                                             "0x10",
                                             "1_000",
                                             "1e308 PW",
                                             "$1e308M/kWh",
                                             "1e300 ms",
                                             "-1 s"};

// Tokens of YAML and JSON syntax, valid and not.
constexpr std::string_view kSyntaxTokens[]{
    "---\n", "...\n",       "&a ",     "*a",      "<<: *a\n", "!!binary ",   "!!str ", "!tag ",
    "? ",    "|\n",         ">-\n",    "~",       "null",     "[]",          "{}",     "- ",
    "\t",    "%YAML 1.2\n", "\"",      "'",       ": ",       ", ",          "#",      "{\"a\": ",
    "]",     "}",           "\\u0000", "\\ud800", "\"\\",     "\xef\xbb\xbf"};

// Invalid UTF-8 (a stray continuation byte, truncated, overlong, a surrogate, above U+10FFFF) and
// valid but unusual sequences (a byte order mark, a line separator, a zero byte).
constexpr std::string_view kOddUtf8[]{"\xff",
                                      "\xfe",
                                      "\x80",
                                      "\xc3",
                                      "\xc3\x28",
                                      "\xe2\x82",
                                      "\xc0\xaf",
                                      "\xed\xa0\x80",
                                      "\xf4\x90\x80\x80",
                                      "\xf8\x88\x80\x80\x80",
                                      "\xef\xbb\xbf",
                                      "\xe2\x80\xa8",
                                      std::string_view("\0", 1)};

// Most mutants stay small, so that a run tries many; one nesting or duplication in kRareOneIn is
// huge (the size limit of the mutator still applies).
constexpr std::size_t kNestingDepths[]{16, 64, 256, 1024, 4096};
constexpr std::size_t kDuplicates[]{1, 1, 2, 10, 100};
constexpr std::size_t kHugeNesting = 100000;
constexpr std::size_t kHugeDuplicates = 20000;
constexpr std::size_t kRareOneIn = 32;

// A random element of `a`.
template <class T, std::size_t N>
const T& pick(Rng& rng, const T (&a)[N]) {
  return a[rng.below(N)];
}

bool is_word_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '_' ||
         c == '.' || c == '%' || c == '$' || c == '/' || c == '-';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// [begin, end) byte ranges of the lines of `s` (without their '\n').
std::vector<std::pair<std::size_t, std::size_t>> line_ranges(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> r;
  std::size_t b = 0;
  while (b <= s.size()) {
    std::size_t e = s.find('\n', b);
    if (e == std::string::npos) e = s.size();
    r.emplace_back(b, e);
    if (e == s.size()) break;
    b = e + 1;
  }
  return r;
}

// [begin, end) of the numbers of `s`: a digit run not inside a word, with its sign, decimals and
// exponent.
std::vector<std::pair<std::size_t, std::size_t>> number_ranges(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> r;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!is_digit(s[i]) || (i > 0 && (is_word_byte(s[i - 1]) && s[i - 1] != '-'))) continue;
    std::size_t b = i > 0 && s[i - 1] == '-' ? i - 1 : i;
    std::size_t e = i;
    while (e < s.size() && (is_digit(s[e]) || s[e] == '.' || s[e] == 'e' || s[e] == 'E' ||
                            ((s[e] == '+' || s[e] == '-') && (s[e - 1] == 'e' || s[e - 1] == 'E'))))
      ++e;
    r.emplace_back(b, e);
    i = e;
  }
  return r;
}

// [begin, end) of the word runs of `s`.
std::vector<std::pair<std::size_t, std::size_t>> word_ranges(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> r;
  for (std::size_t i = 0; i < s.size();) {
    if (!is_word_byte(s[i])) {
      ++i;
      continue;
    }
    std::size_t e = i;
    while (e < s.size() && is_word_byte(s[e])) ++e;
    r.emplace_back(i, e);
    i = e;
  }
  return r;
}

// Where a value starts: just after a ": " or a "- ", else a random byte.
std::size_t value_position(Rng& rng, const std::string& s) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i + 1 < s.size(); ++i)
    if ((s[i] == ':' || s[i] == '-' || s[i] == ',') && s[i + 1] == ' ') at.push_back(i + 2);
  if (at.empty()) return s.empty() ? 0 : rng.below(s.size() + 1);
  return at[rng.below(at.size())];
}

// The end of the value starting at `b`: the next ',', '}', ']' or end of line.
std::size_t value_end(const std::string& s, std::size_t b) {
  std::size_t e = b;
  while (e < s.size() && s[e] != '\n' && s[e] != ',' && s[e] != '}' && s[e] != ']') ++e;
  return e;
}

std::string nesting(Rng& rng, bool json) {
  const std::size_t depth = rng.one_in(kRareOneIn) ? kHugeNesting : pick(rng, kNestingDepths);
  switch (rng.below(json ? 2 : 3)) {
    case 0:
      return std::string(depth, '[') + "1" + std::string(depth, ']');
    case 1: {
      std::string s;
      s.reserve(depth * 7);
      for (std::size_t i = 0; i < depth; ++i) s += json ? "{\"a\": " : "{a: ";
      s += "1";
      s.append(depth, '}');
      return s;
    }
    default: {
      // Block nesting: one "- " per level on one line.
      std::string s;
      s.reserve(depth * 2 + 1);
      for (std::size_t i = 0; i < depth; ++i) s += "- ";
      return s + "1";
    }
  }
}

}  // namespace

std::uint64_t Rng::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t hash_name(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

const char* to_string(Mutation m) {
  switch (m) {
    case Mutation::flip_bit:
      return "flip_bit";
    case Mutation::set_byte:
      return "set_byte";
    case Mutation::insert_bytes:
      return "insert_bytes";
    case Mutation::erase_bytes:
      return "erase_bytes";
    case Mutation::truncate:
      return "truncate";
    case Mutation::splice_line:
      return "splice_line";
    case Mutation::duplicate_line:
      return "duplicate_line";
    case Mutation::erase_line:
      return "erase_line";
    case Mutation::swap_lines:
      return "swap_lines";
    case Mutation::reindent:
      return "reindent";
    case Mutation::extreme_number:
      return "extreme_number";
    case Mutation::syntax_token:
      return "syntax_token";
    case Mutation::dictionary_word:
      return "dictionary_word";
    case Mutation::deep_nesting:
      return "deep_nesting";
    case Mutation::invalid_utf8:
      return "invalid_utf8";
  }
  return "?";
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b < text.size()) {
    std::size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    out.emplace_back(text.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  std::set<std::string, std::less<>> seen;
  const std::string s(text);
  for (auto [b, e] : word_ranges(s)) {
    if (e - b < 2 || e - b > 40) continue;
    std::string w = s.substr(b, e - b);
    if (seen.insert(w).second) out.push_back(std::move(w));
  }
  return out;
}

Mutator::Mutator(std::uint64_t seed, std::vector<std::string> lines, std::vector<std::string> words,
                 std::size_t max_size)
    : rng_(seed), lines_(std::move(lines)), words_(std::move(words)), max_size_(max_size) {}

std::string Mutator::mutate(const std::string& input) {
  std::string s = input;
  const std::size_t n = 1 + rng_.below(4);
  for (std::size_t i = 0; i < n; ++i) {
    std::string next = apply(static_cast<Mutation>(rng_.below(kMutationCount)), s);
    if (next.size() <= max_size_) s = std::move(next);
  }
  return s;
}

std::string Mutator::apply(Mutation m, const std::string& input) {
  std::string s = input;
  const bool json = !s.empty() && (s.front() == '{' || s.front() == '[');
  switch (m) {
    case Mutation::flip_bit: {
      if (s.empty()) return s;
      const std::size_t at = rng_.below(s.size());
      s[at] = static_cast<char>(s[at] ^ (1 << rng_.below(8)));
      return s;
    }
    case Mutation::set_byte: {
      if (s.empty()) return s;
      const char c = rng_.one_in(2) ? kSyntaxBytes[rng_.below(kSyntaxBytes.size())]
                                    : static_cast<char>(rng_.below(256));
      s[rng_.below(s.size())] = c;
      return s;
    }
    case Mutation::insert_bytes: {
      std::string bytes(1 + rng_.below(8), '\0');
      for (auto& c : bytes) c = static_cast<char>(rng_.below(256));
      s.insert(rng_.below(s.size() + 1), bytes);
      return s;
    }
    case Mutation::erase_bytes: {
      if (s.empty()) return s;
      const std::size_t at = rng_.below(s.size());
      s.erase(at, 1 + rng_.below(64));
      return s;
    }
    case Mutation::truncate:
      if (!s.empty()) s.resize(rng_.below(s.size()));
      return s;
    case Mutation::splice_line: {
      if (lines_.empty()) return s;
      const std::string& line = lines_[rng_.below(lines_.size())];
      const auto r = line_ranges(s);
      const auto [b, e] = r[rng_.below(r.size())];
      if (rng_.one_in(2))
        s.replace(b, e - b, line);
      else
        s.insert(b, line + "\n");
      return s;
    }
    case Mutation::duplicate_line: {
      const auto r = line_ranges(s);
      const auto [b, e] = r[rng_.below(r.size())];
      const std::string line = s.substr(b, e - b) + "\n";
      const std::size_t room = max_size_ > s.size() ? (max_size_ - s.size()) / line.size() : 0;
      const std::size_t wanted =
          rng_.one_in(kRareOneIn) ? kHugeDuplicates : pick(rng_, kDuplicates);
      const std::size_t times = std::min(wanted, std::max<std::size_t>(room, 1));
      std::string copies;
      copies.reserve(line.size() * times);
      for (std::size_t i = 0; i < times; ++i) copies += line;
      s.insert(b, copies);
      return s;
    }
    case Mutation::erase_line: {
      const auto r = line_ranges(s);
      const auto [b, e] = r[rng_.below(r.size())];
      s.erase(b, std::min(e + 1, s.size()) - b);
      return s;
    }
    case Mutation::swap_lines: {
      auto lines = split_lines(s);
      if (lines.size() < 2) return s;
      const std::size_t i = rng_.below(lines.size());
      std::swap(lines[i], lines[rng_.below(lines.size())]);
      std::string out;
      for (const auto& l : lines) out += l + "\n";
      return out;
    }
    case Mutation::reindent: {
      const auto r = line_ranges(s);
      const auto [b, e] = r[rng_.below(r.size())];
      std::size_t indent = b;
      while (indent < e && s[indent] == ' ') ++indent;
      const std::size_t width = rng_.below(9);
      s.replace(b, indent - b, rng_.one_in(8) ? std::string("\t") : std::string(width, ' '));
      return s;
    }
    case Mutation::extreme_number: {
      const auto r = number_ranges(s);
      if (r.empty()) return s;
      const auto [b, e] = r[rng_.below(r.size())];
      s.replace(b, e - b, pick(rng_, kExtremeNumbers));
      return s;
    }
    case Mutation::syntax_token: {
      const std::size_t at = rng_.below(s.size() + 1);
      s.insert(at, pick(rng_, kSyntaxTokens));
      return s;
    }
    case Mutation::dictionary_word: {
      if (words_.empty()) return s;
      const std::string& w = words_[rng_.below(words_.size())];
      const auto r = word_ranges(s);
      if (r.empty() || rng_.one_in(4)) {
        s.insert(rng_.below(s.size() + 1), w);
        return s;
      }
      const auto [b, e] = r[rng_.below(r.size())];
      s.replace(b, e - b, w);
      return s;
    }
    case Mutation::deep_nesting: {
      const std::size_t b = value_position(rng_, s);
      s.replace(b, value_end(s, b) - b, nesting(rng_, json));
      return s;
    }
    case Mutation::invalid_utf8: {
      const std::size_t b = value_position(rng_, s);
      const std::size_t at = std::min(b + rng_.below(4), s.size());
      s.insert(at, pick(rng_, kOddUtf8));
      return s;
    }
  }
  return s;
}

}  // namespace racktwin::fuzz
