#include "scenarios/yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

namespace racktwin::yaml {
namespace {

// What a node is, without its contents.
std::string kind_of(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "a text value";
}

// A node as an error message shows it: a scalar quoted and cut to a few dozen characters.
std::string describe(const YAML::Node& n) {
  if (!n.IsScalar()) return kind_of(n);
  constexpr std::size_t kShown = 40;
  const std::string& s = n.Scalar();
  return "'" + (s.size() > kShown ? s.substr(0, kShown) + "..." : s) + "'";
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

SourceLocation mark_location(const std::string& file, const YAML::Mark& m) {
  SourceLocation loc{file, 0, 0};
  if (m.line >= 0) loc.line = m.line + 1;
  if (m.column >= 0) loc.column = m.column + 1;
  return loc;
}

// The root of each document of a YAML stream as the parser reads it: where it is and whether it
// holds anything (a null root is an empty document).
class DocumentRoots : public YAML::EventHandler {
 public:
  struct Root {
    YAML::Mark mark;
    bool content = false;
  };
  const std::optional<Root>& last() const { return last_; }

  void OnDocumentStart(const YAML::Mark&) override {
    root_pending_ = true;
    last_.reset();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { root(m, false); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { root(m, true); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    root(m, true);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    root(m, true);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    root(m, true);
  }
  void OnMapEnd() override {}

 private:
  void root(const YAML::Mark& m, bool content) {
    if (!root_pending_) return;
    root_pending_ = false;
    last_ = Root{m, content};
  }
  bool root_pending_ = false;
  std::optional<Root> last_;
};

// Checks that `text` holds one YAML document, reporting a second one with content (after a '---'
// separator: it would otherwise be ignored without a word) and a parser that stops moving. Every
// document the parser reads starts past the previous one; yaml-cpp 0.7 (jbeder/yaml-cpp#1040)
// returns empty documents at the same place without end on a stray ',' outside a list or mapping,
// so YAML::LoadAll fills the memory.
bool single_document(Context& ctx, const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentRoots roots;
  std::optional<YAML::Mark> previous;
  for (std::size_t document = 0; parser.HandleNextDocument(roots); ++document) {
    const auto& root = roots.last();
    // More documents than bytes, or a root that does not start past the previous one: the
    // parser no longer moves (a document takes at least one byte of the text).
    if (document > text.size() || (root && previous && root->mark.pos <= previous->pos)) {
      const YAML::Mark at = root ? root->mark : previous.value_or(YAML::Mark());
      const auto pos = static_cast<std::size_t>(std::max(at.pos, 0));
      const bool comma = pos < text.size() && text[pos] == ',';
      ctx.error(mark_location(ctx.file(), at), "",
                comma ? "invalid YAML: a ',' outside a [ ] list or a { } mapping"
                      : "invalid YAML: the parser cannot read past this point",
                "fix the syntax at this line");
      return false;
    }
    if (!root) continue;
    if (document > 0 && root->content) {
      ctx.error(mark_location(ctx.file(), root->mark), "",
                "a second YAML document starts here (after a '---' separator); racktwin reads "
                "one document per file",
                "remove the '---' line, or move what follows it into a file of its own");
      return false;
    }
    previous = root->mark;
  }
  return true;
}

std::optional<YAML::Node> parse(Context& ctx, const std::string& text) {
  try {
    if (!single_document(ctx, text)) return std::nullopt;
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    ctx.error(mark_location(ctx.file(), e.mark), "", "invalid YAML: " + e.msg,
              "fix the syntax at this line; indentation must use spaces");
  } catch (const YAML::Exception& e) {
    ctx.error(mark_location(ctx.file(), e.mark), "", std::string("invalid YAML: ") + e.what());
  }
  return std::nullopt;
}

// The length of the UTF-8 sequence starting at s[i], or 0 when it is not valid UTF-8 (a stray
// continuation byte, a truncated or overlong sequence, a surrogate, or above U+10FFFF).
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  const std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
  if (n == 0 || c > 0xF4 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(k) & 0xC0) != 0x80) return 0;
  if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F) || (c == 0xF0 && b(1) < 0x90) ||
      (c == 0xF4 && b(1) > 0x8F))
    return 0;
  return n;
}

// The byte offset of the first byte that is not valid UTF-8, or npos when all of `s` is.
std::size_t invalid_utf8_at(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

}  // namespace

std::expected<std::string, Diagnostics> read_text_file(const std::string& path,
                                                       const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::unexpected(
        Diagnostics{Diagnostic{SourceLocation{path, 0, 0}, "", "cannot open " + what,
                               "check that the path exists and is readable"}});
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

SourceLocation Context::location(const YAML::Node& node) const {
  if (!node.IsDefined()) return SourceLocation{file_, 0, 0};
  return mark_location(file_, node.Mark());
}

void Context::error(const YAML::Node& at, std::string path, std::string message, std::string hint) {
  error(location(at), std::move(path), std::move(message), std::move(hint));
}

void Context::error(SourceLocation where, std::string path, std::string message, std::string hint) {
  diagnostics_.push_back(
      Diagnostic{std::move(where), std::move(path), std::move(message), std::move(hint)});
}

std::optional<YAML::Node> load_string(Context& ctx, const std::string& text) {
  return parse(ctx, text);
}

std::string join_path(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return std::string(parent) + "." + std::string(key);
}

std::string index_path(std::string_view parent, std::size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

std::optional<std::string> read_string(Context& ctx, const YAML::Node& n, const std::string& path) {
  if (!n.IsScalar()) {
    ctx.error(n, path, "expected a text value, found " + describe(n));
    return std::nullopt;
  }
  // Text ends up in JSON output and the results database, which hold UTF-8 only.
  if (const auto at = invalid_utf8_at(n.Scalar()); at != std::string_view::npos) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(n.Scalar()[at]));
    ctx.error(n, path,
              "the text is not valid UTF-8 (byte " + std::to_string(at + 1) + " of the value is " +
                  byte + ")",
              "save the file as UTF-8, or keep to ASCII in names and ids");
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<std::int64_t> read_integer(Context& ctx, const YAML::Node& n, const std::string& path,
                                         std::int64_t min, std::int64_t max) {
  const std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (!n.IsScalar()) {
    ctx.error(n, path, "expected " + range + ", found " + describe(n));
    return std::nullopt;
  }
  const std::string s = trim(n.Scalar());
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || ptr != s.data() + s.size() || s.empty()) {
    ctx.error(n, path, "expected " + range + ", found '" + n.Scalar() + "'");
    return std::nullopt;
  }
  if (v < min || v > max) {
    ctx.error(n, path, "expected " + range + ", found " + s);
    return std::nullopt;
  }
  return v;
}

std::optional<double> read_number(Context& ctx, const YAML::Node& n, const std::string& path,
                                  double min, double max) {
  std::ostringstream range;
  range << "a number from " << min << " to " << max;
  if (!n.IsScalar()) {
    ctx.error(n, path, "expected " + range.str() + ", found " + describe(n));
    return std::nullopt;
  }
  auto q = parse_quantity(n.Scalar());
  if (!q || !q->dimension.dimensionless()) {
    ctx.error(n, path, "expected " + range.str() + ", found '" + n.Scalar() + "'");
    return std::nullopt;
  }
  if (q->base_value < min || q->base_value > max) {
    ctx.error(n, path, "expected " + range.str() + ", found " + n.Scalar());
    return std::nullopt;
  }
  return q->base_value;
}

std::optional<double> read_count(Context& ctx, const YAML::Node& n, const std::string& path) {
  const std::string expected = "expected a count such as '671B', '5.1B', '1.04T' or '7e10'";
  if (!n.IsScalar()) {
    ctx.error(n, path, expected + ", found " + describe(n));
    return std::nullopt;
  }
  std::string s = trim(n.Scalar());
  double scale = 1.0;
  if (!s.empty()) {
    switch (s.back()) {
      case 'K':
        scale = 1e3;
        break;
      case 'M':
        scale = 1e6;
        break;
      case 'B':
        scale = 1e9;
        break;
      case 'T':
        scale = 1e12;
        break;
      default:
        break;
    }
    if (scale != 1.0) s = trim(s.substr(0, s.size() - 1));
  }
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || ptr != s.data() + s.size() || !std::isfinite(v * scale) ||
      v < 0) {
    ctx.error(n, path, expected + ", found '" + n.Scalar() + "'");
    return std::nullopt;
  }
  return v * scale;
}

std::optional<bool> read_bool(Context& ctx, const YAML::Node& n, const std::string& path) {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  ctx.error(n, path, "expected true or false, found " + describe(n));
  return std::nullopt;
}

std::optional<double> read_quantity(Context& ctx, const YAML::Node& n, const std::string& path,
                                    const Dimension& dim) {
  if (!n.IsScalar()) {
    ctx.error(n, path,
              "expected " + a_dimension(dim) + " such as " + dimension_example(dim) + ", found " +
                  describe(n));
    return std::nullopt;
  }
  auto v = parse_si(n.Scalar(), dim);
  if (!v) {
    ctx.error(n, path, v.error());
    return std::nullopt;
  }
  if (*v < 0) {
    ctx.error(n, path,
              "expected " + a_dimension(dim) + " of zero or more, found '" + n.Scalar() + "'");
    return std::nullopt;
  }
  return *v;
}

MapReader::MapReader(Context& ctx, const YAML::Node& node, std::string path)
    : ctx_(ctx), node_(node), path_(std::move(path)) {
  if (!node.IsMap()) {
    ok_ = false;
    finished_ = true;
    // At the root of a file, the value may be the whole of a file that is not YAML at all:
    // say what it is without echoing it.
    ctx_.error(node, path_,
               "expected a mapping of keys to values, found " +
                   (path_.empty() ? kind_of(node) : describe(node)));
    return;
  }
  std::map<std::string, int> first_line;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node k = it->first;
    if (!k.IsScalar()) {
      ctx_.error(k, path_, "expected a text key, found " + describe(k));
      continue;
    }
    const int line = ctx_.location(k).line;
    auto [pos, inserted] = first_line.emplace(k.Scalar(), line);
    if (!inserted)
      ctx_.error(k, child(k.Scalar()),
                 "duplicate key (first given at line " + std::to_string(pos->second) + ")",
                 "keep one of the two");
  }
}

bool MapReader::has(std::string_view key) {
  known_.emplace(key);
  if (!ok_) return false;
  const YAML::Node& cn = node_;
  const YAML::Node n = cn[std::string(key)];
  return n.IsDefined() && !n.IsNull();
}

YAML::Node MapReader::get(std::string_view key) {
  known_.emplace(key);
  if (!ok_) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node& cn = node_;
  return cn[std::string(key)];
}

void MapReader::allow(std::initializer_list<std::string_view> keys) {
  for (auto k : keys) known_.emplace(k);
}

void MapReader::missing(std::string_view key, std::string_view expected) {
  if (!ok_) return;
  ctx_.error(node_, child(key),
             "missing required field '" + std::string(key) + "'; expected " + std::string(expected),
             "add '" + std::string(key) + ":' to " + (path_.empty() ? "the file" : path_));
}

std::optional<std::string> MapReader::string(std::string_view key, bool required) {
  if (!has(key)) {
    if (required) missing(key, "a text value");
    return std::nullopt;
  }
  return read_string(ctx_, get(key), child(key));
}

std::optional<std::int64_t> MapReader::integer(std::string_view key, bool required,
                                               std::int64_t min, std::int64_t max) {
  if (!has(key)) {
    if (required)
      missing(key, "an integer from " + std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
  }
  return read_integer(ctx_, get(key), child(key), min, max);
}

std::optional<double> MapReader::number(std::string_view key, bool required, double min,
                                        double max) {
  if (!has(key)) {
    if (required) missing(key, "a number");
    return std::nullopt;
  }
  return read_number(ctx_, get(key), child(key), min, max);
}

std::optional<bool> MapReader::boolean(std::string_view key, bool required) {
  if (!has(key)) {
    if (required) missing(key, "true or false");
    return std::nullopt;
  }
  return read_bool(ctx_, get(key), child(key));
}

std::optional<std::string> MapReader::choice(std::string_view key, bool required,
                                             const std::vector<std::string>& choices) {
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  if (!has(key)) {
    if (required) missing(key, "one of " + list);
    return std::nullopt;
  }
  auto s = read_string(ctx_, get(key), child(key));
  if (!s) return std::nullopt;
  for (const auto& c : choices)
    if (c == *s) return s;
  ctx_.error(get(key), child(key),
             "expected one of " + list + ", found '" + *s + "'" + did_you_mean(*s, choices));
  return std::nullopt;
}

void MapReader::finish() {
  if (finished_) return;
  finished_ = true;
  const std::vector<std::string> known(known_.begin(), known_.end());
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string& k = it->first.Scalar();
    if (known_.contains(k)) continue;
    std::string allowed;
    for (const auto& x : known) allowed += (allowed.empty() ? "" : ", ") + x;
    const std::string hint = nearest(k, known);
    ctx_.error(it->first, child(k), "unknown key '" + k + "'",
               hint.empty() ? "known keys here: " + allowed : "did you mean '" + hint + "'?");
  }
}

}  // namespace racktwin::yaml
