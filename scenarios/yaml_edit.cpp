#include "scenarios/yaml_edit.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <functional>

#include "scenarios/yaml_reader.hpp"

namespace racktwin {
namespace {

constexpr auto npos = std::string::npos;

struct Step {
  std::string key;                   // a mapping's key, or
  std::optional<std::size_t> index;  // a sequence's entry
};

// "workloads[0].isl" -> workloads, [0], isl.
std::optional<std::vector<Step>> parse_path(const std::string& path) {
  std::vector<Step> steps;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '[') {
      const std::size_t close = path.find(']', i);
      if (close == npos || close == i + 1) return std::nullopt;
      std::size_t n = 0;
      for (std::size_t k = i + 1; k < close; ++k) {
        if (!std::isdigit(static_cast<unsigned char>(path[k]))) return std::nullopt;
        n = n * 10 + static_cast<std::size_t>(path[k] - '0');
      }
      steps.push_back({{}, n});
      i = close + 1;
    } else {
      const std::size_t end = std::min(path.find_first_of(".[", i), path.size());
      if (end == i) return std::nullopt;
      steps.push_back({path.substr(i, end - i), std::nullopt});
      i = end;
    }
    if (i < path.size() && path[i] == '.') ++i;
  }
  if (steps.empty()) return std::nullopt;
  return steps;
}

// A mapping's entry: its key node and value node.
struct Entry {
  YAML::Node key, value;
};

std::optional<Entry> entry(const YAML::Node& map, const std::string& key) {
  if (!map.IsMap()) return std::nullopt;
  for (const auto& kv : map)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return Entry{kv.first, kv.second};
  return std::nullopt;
}

std::optional<YAML::Node> child(const YAML::Node& node, const Step& s) {
  if (!s.index) {
    auto e = entry(node, s.key);
    return e ? std::optional<YAML::Node>(e->value) : std::nullopt;
  }
  if (!node.IsSequence() || *s.index >= node.size()) return std::nullopt;
  const YAML::Node& seq = node;
  return seq[*s.index];
}

// The node at the steps [0, n) of a path.
std::optional<YAML::Node> node_at(const YAML::Node& root, const std::vector<Step>& steps,
                                  std::size_t n) {
  YAML::Node node;
  node.reset(root);  // reset() rebinds; assignment would write into the document
  for (std::size_t s = 0; s < n; ++s) {
    auto next = child(node, steps[s]);
    if (!next) return std::nullopt;
    node.reset(*next);
  }
  return node;
}

std::optional<YAML::Node> parse(const std::string& text) {
  yaml::Context ctx("");
  return yaml::load_string(ctx, text);
}

void make_flow(YAML::Node n) {
  if (n.IsSequence() || n.IsMap()) n.SetStyle(YAML::EmitterStyle::Flow);
  if (n.IsSequence())
    for (auto c : n) make_flow(c);
  if (n.IsMap())
    for (auto kv : n) make_flow(kv.second);
}

std::string flow_text(const YAML::Node& n) {
  YAML::Node copy = YAML::Clone(n);
  make_flow(copy);
  YAML::Emitter e;
  e << copy;
  return e.c_str();
}

YamlValue value_of(const YAML::Node& n) {
  YamlValue v;
  v.flow = flow_text(n);
  if (n.IsScalar()) {
    v.scalar = n.Scalar();
    v.items = std::vector<std::string>{n.Scalar()};
  } else if (n.IsSequence()) {
    std::vector<std::string> items;
    for (const auto& c : n)
      if (c.IsScalar()) items.push_back(c.Scalar());
    if (items.size() == n.size()) v.items = std::move(items);
  }
  return v;
}

// Positions in the text.

bool blank(char c) {
  return c == ' ' || c == '\t';
}

std::size_t line_end(const std::string& t, std::size_t pos) {
  return std::min(t.find('\n', pos), t.size());
}

// Past the closing quote of the quoted scalar opening at `pos`.
std::size_t quoted_end(const std::string& t, std::size_t pos) {
  const char q = t[pos];
  for (std::size_t i = pos + 1; i < t.size(); ++i) {
    if (q == '"' && t[i] == '\\') {
      ++i;
    } else if (t[i] == q) {
      if (q == '\'' && i + 1 < t.size() && t[i + 1] == '\'') {
        ++i;
        continue;
      }
      return i + 1;
    }
  }
  return t.size();
}

// The end of the plain scalar at `pos`: its line's end or comment, and in a flow collection the
// next ',', ']' or '}'; trailing blanks excluded.
std::size_t plain_end(const std::string& t, std::size_t pos, bool flow) {
  std::size_t i = pos;
  for (; i < t.size() && t[i] != '\n'; ++i) {
    if (t[i] == '#' && i > pos && blank(t[i - 1])) break;
    if (flow && (t[i] == ',' || t[i] == ']' || t[i] == '}')) break;
  }
  while (i > pos && blank(t[i - 1])) --i;
  return i;
}

// Past the bracket that closes the flow collection opening at `pos`.
std::size_t flow_end(const std::string& t, std::size_t pos) {
  int depth = 0;
  for (std::size_t i = pos; i < t.size(); ++i) {
    const char c = t[i];
    const bool token_start =
        i == pos || blank(t[i - 1]) || std::string_view("[{,:\n").find(t[i - 1]) != npos;
    if ((c == '"' || c == '\'') && token_start) {
      i = quoted_end(t, i) - 1;
    } else if (c == '#' && i > pos && blank(t[i - 1])) {
      i = line_end(t, i) - 1;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && --depth == 0) {
      return i + 1;
    }
  }
  return t.size();
}

// The end of the last line after the one ending at `from` that belongs to the block: lines whose
// indentation `inside` accepts (given the indentation and whether the line starts with "- "),
// over blank and comment lines; the first other line ends the block.
std::size_t block_end(const std::string& t, std::size_t from,
                      const std::function<bool(std::size_t, bool)>& inside) {
  std::size_t end = from;
  for (std::size_t at = from; at < t.size();) {
    const std::size_t start = at + 1, e = line_end(t, start);
    std::size_t first = start;
    while (first < e && blank(t[first])) ++first;
    if (first < e && t[first] != '#') {
      const bool dash = t[first] == '-' && (first + 1 == e || blank(t[first + 1]));
      if (!inside(first - start, dash)) break;
      end = e;
    }
    at = e;
  }
  return end;
}

struct Span {
  std::size_t begin = 0, end = 0;
  std::string text;
};

std::size_t pos_of(const YAML::Node& n) {
  return static_cast<std::size_t>(std::max(n.Mark().pos, 0));
}

// Where the value of an existing entry is, with what replaces it.
std::optional<Span> value_span(const std::string& t, const YAML::Node& parent, const Entry& e,
                               const std::string& value) {
  const std::size_t kpos = pos_of(e.key);
  std::size_t i = t[kpos] == '"' || t[kpos] == '\'' ? quoted_end(t, kpos) : kpos;
  while (i < t.size() && t[i] != ':' && t[i] != '\n') ++i;
  if (i >= t.size() || t[i] != ':') return std::nullopt;
  const std::size_t after = i + 1;
  const bool same_line = e.value.Mark().line == e.key.Mark().line;
  if (e.value.IsNull() && !same_line) return Span{after, after, " " + value};
  const std::size_t vpos = pos_of(e.value);
  const char c = vpos < t.size() ? t[vpos] : '\0';
  if (same_line && c != '|' && c != '>') {
    if (e.value.IsSequence() || e.value.IsMap()) return Span{vpos, flow_end(t, vpos), value};
    if (c == '"' || c == '\'') return Span{vpos, quoted_end(t, vpos), value};
    const bool flow = parent.Style() == YAML::EmitterStyle::Flow;
    return Span{vpos, plain_end(t, vpos, flow), value};
  }
  // A block collection on the lines below the key, or a block scalar.
  const auto col = static_cast<std::size_t>(std::max(e.key.Mark().column, 0));
  const auto deeper = [col](std::size_t indent, bool dash) {
    return indent > col || (indent == col && dash);
  };
  return Span{after, block_end(t, line_end(t, after), deeper), " " + value};
}

// Where a new entry goes at the end of a mapping.
std::optional<Span> insertion(const std::string& t, const YAML::Node& map, const std::string& key,
                              const std::string& value) {
  const std::string line = yaml_scalar(key) + ": " + value;
  const std::size_t mpos = pos_of(map);
  if (map.Style() == YAML::EmitterStyle::Flow) {
    const std::size_t end = flow_end(t, mpos);
    if (end == 0 || t[end - 1] != '}') return std::nullopt;
    return Span{end - 1, end - 1, (map.size() == 0 ? "" : ", ") + line};
  }
  const auto col = static_cast<std::size_t>(std::max(map.Mark().column, 0));
  const std::size_t end =
      block_end(t, line_end(t, mpos), [col](std::size_t indent, bool) { return indent >= col; });
  return Span{end, end, "\n" + std::string(col, ' ') + line};
}

std::string dump(const YAML::Node& n) {
  YAML::Emitter e;
  e << n;
  return e.c_str();
}

// Whether `edited` reads as `before` with the value at `steps` set to `value`.
bool only_value_changed(const YAML::Node& before, const std::vector<Step>& steps,
                        const YAML::Node& value, const std::string& edited) {
  const auto after = parse(edited);
  if (!after) return false;
  YAML::Node expected = YAML::Clone(before);
  auto parent = node_at(expected, steps, steps.size() - 1);
  if (!parent) return false;
  (*parent)[steps.back().key] = YAML::Clone(value);
  return dump(expected) == dump(*after);
}

}  // namespace

std::optional<std::map<std::string, YamlValue>> yaml_values(const std::string& text,
                                                            const std::vector<std::string>& paths) {
  const auto root = parse(text);
  if (!root) return std::nullopt;
  std::map<std::string, YamlValue> out;
  for (const auto& p : paths) {
    const auto steps = parse_path(p);
    if (!steps) continue;
    const auto n = node_at(*root, *steps, steps->size());
    if (n && n->IsDefined() && !n->IsNull()) out.emplace(p, value_of(*n));
  }
  return out;
}

std::expected<std::string, std::string> set_yaml_value(const std::string& text,
                                                       const std::string& path,
                                                       const std::string& value) {
  const auto steps = parse_path(path);
  if (!steps || steps->back().index) return std::unexpected("'" + path + "' is not a key path");
  if (value.empty() || value.find('\n') != npos)
    return std::unexpected("the value of " + path + " must be one line of YAML");
  const auto parsed = parse(value);
  if (!parsed || !parsed->IsDefined()) return std::unexpected("'" + value + "' is not YAML");
  const auto root = parse(text);
  if (!root) return std::unexpected("the text is not valid YAML; fix it first");
  const auto parent = node_at(*root, *steps, steps->size() - 1);
  if (!parent || !parent->IsMap())
    return std::unexpected("the text has no mapping to hold " + path);
  const auto e = entry(*parent, steps->back().key);
  const auto span =
      e ? value_span(text, *parent, *e, value) : insertion(text, *parent, steps->back().key, value);
  if (!span) return std::unexpected("cannot place " + path + " in the text; edit it there");
  std::string edited = text.substr(0, span->begin) + span->text + text.substr(span->end);
  if (!only_value_changed(*root, *steps, *parsed, edited))
    return std::unexpected("setting " + path +
                           " in place would change more than its value; "
                           "edit it in the text");
  return edited;
}

std::string yaml_scalar(const std::string& s) {
  YAML::Emitter e;
  e << s;
  std::string out = e.c_str();
  if (out.find('\n') == npos) return out;
  YAML::Emitter quoted;
  quoted << YAML::DoubleQuoted << s;
  return quoted.c_str();
}

std::string yaml_flow_list(const std::vector<std::string>& items) {
  YAML::Emitter e;
  e << YAML::Flow << YAML::BeginSeq;
  for (const auto& i : items) e << i;
  e << YAML::EndSeq;
  return e.c_str();
}

}  // namespace racktwin
