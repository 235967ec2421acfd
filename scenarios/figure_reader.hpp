#pragma once
// Figures with their origin: a value in the file, written plainly or as {value, source,
// assumption, reason}, or a documented default with its source or flagged as an assumption.
// Internal to scenarios/.

#include <optional>
#include <string>
#include <string_view>

#include "core/plan.hpp"
#include "scenarios/yaml_reader.hpp"

namespace racktwin::yaml {

// A default figure that is an assumption (with the reason), or one with a source.
Figure assumed(double v, std::string reason, std::string source = {});
Figure sourced(double v, std::string source);

// Reads figures of a mapping; every problem is reported to the context.
class FigureReader {
 public:
  explicit FigureReader(Context& ctx) : ctx_(ctx) {}

  // The figure at `key` in base units of `dim`, between min and max; nullopt when the key is
  // absent or its value is wrong (the error reported).
  std::optional<Figure> read(MapReader& m, std::string_view key, const Dimension& dim, double min,
                             double max);
  // The same, or `fallback` when the key is absent or wrong.
  Figure read_or(MapReader& m, std::string_view key, const Dimension& dim, double min, double max,
                 const Figure& fallback);

 private:
  Context& ctx_;
};

}  // namespace racktwin::yaml
