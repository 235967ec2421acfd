#pragma once
// Strict, error-collecting reading of YAML into typed values. Internal to scenarios/.
//
// A MapReader walks one YAML mapping. Every key the caller asks about is "known"; finish() reports
// the keys of the mapping that nobody asked about as unknown (with the nearest known key). Reading
// never throws and never stops at the first problem: each problem becomes a Diagnostic with the
// file, line, column and key path, and the typed getters return std::nullopt.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <expected>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/units.hpp"

namespace racktwin::yaml {

class Context {
 public:
  explicit Context(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  SourceLocation location(const YAML::Node& node) const;
  void error(const YAML::Node& at, std::string path, std::string message, std::string hint = {});
  void error(SourceLocation where, std::string path, std::string message, std::string hint = {});
  const Diagnostics& diagnostics() const { return diagnostics_; }
  Diagnostics& diagnostics() { return diagnostics_; }
  bool ok() const { return diagnostics_.empty(); }

 private:
  std::string file_;
  Diagnostics diagnostics_;
};

// The bytes of a file; when it cannot be opened, a diagnostic saying "cannot open <what>".
std::expected<std::string, Diagnostics> read_text_file(const std::string& path,
                                                       const std::string& what);

// Parses YAML text; a syntax error becomes a diagnostic.
std::optional<YAML::Node> load_string(Context& ctx, const std::string& text);

std::string join_path(std::string_view parent, std::string_view key);
std::string index_path(std::string_view parent, std::size_t index);

// Readers of scalar nodes; each reports its own error at the node.
std::optional<std::string> read_string(Context& ctx, const YAML::Node& n, const std::string& path);
std::optional<std::int64_t> read_integer(Context& ctx, const YAML::Node& n, const std::string& path,
                                         std::int64_t min, std::int64_t max);
std::optional<double> read_number(Context& ctx, const YAML::Node& n, const std::string& path,
                                  double min, double max);
// A count such as "671B", "37B", "1.04T", "128K" or "1e9".
std::optional<double> read_count(Context& ctx, const YAML::Node& n, const std::string& path);
std::optional<bool> read_bool(Context& ctx, const YAML::Node& n, const std::string& path);
std::optional<double> read_quantity(Context& ctx, const YAML::Node& n, const std::string& path,
                                    const Dimension& dim);

class MapReader {
 public:
  // Reports an error (and becomes !ok()) if `node` is not a mapping. Duplicate keys are errors.
  MapReader(Context& ctx, const YAML::Node& node, std::string path);

  bool ok() const { return ok_; }
  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  Context& context() { return ctx_; }
  std::string child(std::string_view key) const { return join_path(path_, key); }

  // Marks the key as known and tells whether it is present (and not null).
  bool has(std::string_view key);
  // Marks the key as known; returns the node (undefined when absent).
  YAML::Node get(std::string_view key);
  // Marks keys as known without reading them.
  void allow(std::initializer_list<std::string_view> keys);
  // Reports a missing required key at this mapping.
  void missing(std::string_view key, std::string_view expected);

  std::optional<std::string> string(std::string_view key, bool required);
  std::optional<std::int64_t> integer(std::string_view key, bool required, std::int64_t min,
                                      std::int64_t max);
  std::optional<double> number(std::string_view key, bool required, double min, double max);
  std::optional<bool> boolean(std::string_view key, bool required);
  template <class Q>
  std::optional<Q> quantity(std::string_view key, bool required) {
    if (!has(key)) {
      if (required)
        missing(key, a_dimension(Q::kDimension) + " such as " + dimension_example(Q::kDimension));
      return std::nullopt;
    }
    auto v = read_quantity(ctx_, get(key), child(key), Q::kDimension);
    if (!v) return std::nullopt;
    return Q(*v);
  }
  // One of `choices`; anything else is an error listing them.
  std::optional<std::string> choice(std::string_view key, bool required,
                                    const std::vector<std::string>& choices);

  // Reports every key that was never asked about. Call once, after reading.
  void finish();

 private:
  Context& ctx_;
  YAML::Node node_;
  std::string path_;
  bool ok_ = true;
  bool finished_ = false;
  std::set<std::string, std::less<>> known_;
};

// Parses `text` (named `name` in messages) as one YAML mapping and hands its reader to `read`,
// which returns the value; every problem found is returned instead. An empty file is an error
// naming `what` ("plan") and the page `docs` that shows a complete one.
template <class T, class Read>
std::expected<T, Diagnostics> read_document(const std::string& text, const std::string& name,
                                            const std::string& what, const std::string& docs,
                                            Read&& read) {
  Context ctx(name);
  auto root = load_string(ctx, text);
  if (!root) return std::unexpected(ctx.diagnostics());
  if (root->IsNull()) {
    ctx.error(SourceLocation{name, 1, 1}, "", "the " + what + " file is empty",
              docs + " shows a complete " + what);
    return std::unexpected(ctx.diagnostics());
  }
  MapReader top(ctx, *root, "");
  if (!top.ok()) return std::unexpected(ctx.diagnostics());
  T value = read(ctx, top);
  top.finish();
  if (!ctx.ok()) return std::unexpected(ctx.diagnostics());
  return value;
}

}  // namespace racktwin::yaml
