#include "scenarios/figure_reader.hpp"

#include <cmath>

namespace racktwin::yaml {

Figure assumed(double v, std::string reason, std::string source) {
  return Figure{v, {FigureOrigin::Kind::default_value, {}, std::move(source), true, std::move(reason)}};
}
Figure sourced(double v, std::string source) {
  return Figure{v, {FigureOrigin::Kind::default_value, {}, std::move(source), false, {}}};
}


std::optional<Figure> FigureReader::read(MapReader& m, std::string_view key, const Dimension& dim,
                                       double min, double max) {
  if (!m.has(key)) return std::nullopt;
  const YAML::Node node = m.get(key);
  const std::string path = m.child(key);
  Figure f;
  f.origin.kind = FigureOrigin::Kind::plan;
  f.origin.where = ctx_.location(node);
  YAML::Node value = node;
  if (node.IsMap()) {
    MapReader v(ctx_, node, path);
    if (!v.has("value")) {
      v.missing("value", a_dimension(dim) + " such as " + dimension_example(dim));
      v.allow({"source", "assumption", "reason"});
      v.finish();
      return std::nullopt;
    }
    value.reset(v.get("value"));
    if (auto s = v.string("source", false)) f.origin.source = *s;
    if (auto a = v.boolean("assumption", false)) f.origin.assumption = *a;
    if (auto r = v.string("reason", false)) f.origin.reason = *r;
    if (f.origin.assumption && f.origin.reason.empty())
      ctx_.error(node, path, "an assumption needs a 'reason'",
                 "say why this value was chosen, e.g. reason: \"not published; ...\"");
    v.finish();
  }
  auto x = yaml::read_quantity(ctx_, value, path, dim);
  if (!x) return std::nullopt;
  if (!std::isfinite(*x) || *x < min || *x > max) {
    ctx_.error(value, path,
               "value out of range: expected " + format_quantity(min, dim) + " to " +
                   format_quantity(max, dim),
               "check the unit and the magnitude");
    return std::nullopt;
  }
  f.value = *x;
  return f;
}

Figure FigureReader::read_or(MapReader& m, std::string_view key, const Dimension& dim, double min,
                           double max, const Figure& fallback) {
  auto f = read(m, key, dim, min, max);
  return f ? *f : fallback;
}


}  // namespace racktwin::yaml
