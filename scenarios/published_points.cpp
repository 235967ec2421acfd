#include "scenarios/published_points.hpp"

#include "scenarios/yaml_reader.hpp"

namespace racktwin {

std::expected<std::vector<PublishedPoint>, Diagnostics> load_published_points(
    const std::string& path) {
  yaml::Context ctx(path);
  const auto root = yaml::load_file(ctx, path);
  if (!root) return std::unexpected(ctx.diagnostics());
  std::vector<PublishedPoint> out;
  yaml::MapReader top(ctx, *root, "");
  const YAML::Node list = top.get("points");
  if (!list.IsSequence()) {
    ctx.error(list.IsDefined() ? list : *root, "points", "expected a list of points");
  } else {
    for (std::size_t i = 0; i < list.size(); ++i) {
      yaml::MapReader r(ctx, list[i], yaml::index_path("points", i));
      if (!r.ok()) continue;
      PublishedPoint p;
      p.id = r.string("id", true).value_or("");
      p.system = r.string("system", true).value_or("");
      p.model = r.string("model", true).value_or("");
      p.metric =
          r.choice("metric", true,
                   {"peak_mixed_tps_per_kw_rated", "min_e2e_latency_s", "min_tbt_ms",
                    "max_interactivity_tok_s_user", "total_tps_per_allin_mw_at",
                    "total_tps_per_xpu_at", "output_tps_per_xpu_at", "peak_total_tps_per_xpu"})
              .value_or("");
      p.at = r.number("at", false, 0, 1e12);
      p.value = r.number("value", true, -1e300, 1e300).value_or(0);
      p.source = r.string("source", false).value_or("");
      if (p.metric.ends_with("_at") && !p.at) r.missing("at", "an interactivity in tok/s/user");
      if (r.has("workload")) {
        yaml::MapReader w(ctx, r.get("workload"), r.child("workload"));
        if (w.ok()) {
          p.isl = static_cast<int>(w.integer("isl", true, 1, 1 << 24).value_or(0));
          p.osl = static_cast<int>(w.integer("osl", true, 1, 1 << 24).value_or(0));
          p.range_ratio = w.number("range_ratio", false, 0, 1).value_or(1.0);
          p.mtp = w.boolean("mtp", false).value_or(false);
          p.precision = w.string("precision", false);
          w.finish();
        }
      } else {
        r.missing("workload", "a mapping {isl, osl, range_ratio, mtp}");
      }
      r.finish();
      out.push_back(std::move(p));
    }
  }
  top.finish();
  if (!ctx.ok()) return std::unexpected(ctx.diagnostics());
  return out;
}

}  // namespace racktwin
