#pragma once
// Reading and editing single values of a YAML document's text in place, for the GUI's scenario
// form: the value at a key path ("seed", "systems", "workloads[0].isl") is replaced by one line of
// flow-style YAML, and everything else (comments, key order, blank lines, the style of the other
// values) is kept byte for byte.
//
// Contract:
// - Pure; never throws, prints or exits.
// - An edit is refused, with the reason, when the text does not parse, the path names no mapping
//   or sequence entry, the value is not one line of YAML, or the edited text would not read back
//   as the old document with only that value changed (which the edit checks by parsing it again).
// - A value that spans lines in block style (a list written one "- item" per line) is replaced by
//   the flow form on the key's line; comments inside that block go with it.
// - A key missing from a mapping is added at the mapping's end (a new line in a block mapping, the
//   last entry of a { } mapping).

#include <expected>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace racktwin {

struct YamlValue {
  std::string flow;                               // the value as one line of flow-style YAML
  std::optional<std::string> scalar;              // a scalar's text
  std::optional<std::vector<std::string>> items;  // a list of scalars (or a scalar, as one item)
};

// The values at `paths` of a document, read in one parse; a path with no value is left out.
// Nothing when the text is not one YAML document.
std::optional<std::map<std::string, YamlValue>> yaml_values(const std::string& text,
                                                            const std::vector<std::string>& paths);

// `text` with the value at `path` set to `value` (one line of YAML in flow style).
std::expected<std::string, std::string> set_yaml_value(const std::string& text,
                                                       const std::string& path,
                                                       const std::string& value);

// A text as a YAML scalar (quoted when it would not read back as the same text), and a list of
// texts as a flow list: "[a, b]".
std::string yaml_scalar(const std::string& s);
std::string yaml_flow_list(const std::vector<std::string>& items);

}  // namespace racktwin
