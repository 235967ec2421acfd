#include "scenarios/points_loader.hpp"

#include <cstdio>
#include <set>

#include "scenarios/yaml_reader.hpp"

namespace racktwin {
namespace {

using yaml::Context;
using yaml::MapReader;

constexpr std::int64_t kMaxTokens = 10'000'000;

void read_workload(Context& ctx, MapReader& m, InferenceXWorkload& w, const Model* model) {
  if (!m.has("workload")) {
    m.missing("workload", "a mapping such as {isl: 8192, osl: 1024, range_ratio: 0.8, mtp: false}");
    return;
  }
  MapReader r(ctx, m.get("workload"), m.child("workload"));
  if (!r.ok()) return;
  r.choice("kind", false, {"inferencex"});
  if (auto v = r.integer("isl", true, 1, kMaxTokens)) w.isl = static_cast<int>(*v);
  if (auto v = r.integer("osl", true, 1, kMaxTokens)) w.osl = static_cast<int>(*v);
  if (auto v = r.number("range_ratio", false, 0.0, 1.0)) {
    w.range_ratio = *v;
    if (*v <= 0.0)
      ctx.error(r.get("range_ratio"), r.child("range_ratio"),
                "range_ratio must be above 0 (lengths are drawn from [range_ratio x L, L])");
  }
  if (auto v = r.boolean("mtp", false)) w.mtp = *v;
  w.mtp_acceptance = r.number("mtp_acceptance", false, 1.0, 16.0);
  if (w.mtp_acceptance && !w.mtp)
    ctx.error(r.get("mtp_acceptance"), r.child("mtp_acceptance"),
              "mtp_acceptance is set but mtp is false", "set mtp: true or remove mtp_acceptance");
  if (auto p = r.choice("precision", false, {"fp4", "fp8", "bf16"})) {
    w.precision = *p;
    if (model != nullptr && !model->variants.contains(*p)) {
      std::string known;
      for (const auto& [k, _] : model->variants) known += (known.empty() ? "" : ", ") + k;
      ctx.error(
          r.get("precision"), r.child("precision"),
          "model '" + model->id + "' has no '" + *p + "' weight variant (it has " + known + ")",
          "use one of its variants, or remove precision to use the system's best");
    }
  }
  r.finish();
}

std::optional<std::string> read_catalog_id(Context& ctx, MapReader& m, std::string_view key,
                                           const std::vector<std::string>& known) {
  auto id = m.string(key, true);
  if (id && std::find(known.begin(), known.end(), *id) == known.end()) {
    ctx.error(m.get(key), m.child(key),
              "unknown " + std::string(key) + " '" + *id + "'" + did_you_mean(*id, known),
              "racktwin catalog list shows the catalog's ids");
    return std::nullopt;
  }
  return id;
}

}  // namespace

std::string content_hash(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::expected<PointsFile, Diagnostics> load_points_string(const std::string& text,
                                                          const std::string& name,
                                                          const Catalog& catalog) {
  PointsFile out;
  out.file = name;
  out.hash = content_hash(text);
  Context ctx(name);
  auto root = yaml::load_string(ctx, text);
  if (!root) return std::unexpected(ctx.diagnostics());
  if (root->IsNull()) {
    ctx.error(SourceLocation{name, 1, 1}, "", "the points file is empty",
              "a points file holds a list 'points:' (see docs/validation.md)");
    return std::unexpected(ctx.diagnostics());
  }
  MapReader top(ctx, *root, "");
  if (!top.ok()) return std::unexpected(ctx.diagnostics());
  top.allow({"name", "description"});
  if (!top.has("points")) {
    top.missing("points", "a list of points, each starting with '- id: ...'");
    return std::unexpected(ctx.diagnostics());
  }
  const YAML::Node list = top.get("points");
  if (!list.IsSequence()) {
    ctx.error(list, top.child("points"), "expected a list of points (each '- id: ...')");
    return std::unexpected(ctx.diagnostics());
  }
  top.finish();
  if (!ctx.ok()) {
    // Unknown top-level keys: reported against the file, the points are still read.
    for (auto& d : ctx.diagnostics()) out.rejected.push_back(RejectedPoint{"(file)", d.where, {d}});
  }
  const auto systems = catalog.system_ids();
  const auto models = catalog.model_ids();
  std::set<std::string> ids;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = yaml::index_path("points", i);
    Context pc(name);
    ReferencePoint p;
    p.where = pc.location(list[i]);
    p.id = path;
    MapReader m(pc, list[i], path);
    if (m.ok()) {
      if (auto id = m.string("id", true)) {
        if (id->empty())
          pc.error(m.get("id"), m.child("id"), "the id is empty", "give the point a unique slug");
        else if (!ids.insert(*id).second)
          pc.error(m.get("id"), m.child("id"), "id '" + *id + "' is used by an earlier point",
                   "ids must be unique in a points file");
        else
          p.id = *id;
      }
      if (auto s = read_catalog_id(pc, m, "system", systems)) p.system = *s;
      auto model = read_catalog_id(pc, m, "model", models);
      if (model) p.model = *model;
      read_workload(pc, m, p.workload, model ? catalog.find_model(*model) : nullptr);
      bool metric_ok = false;
      if (auto metric = m.string("metric", true)) {
        if (auto k = metric_from_string(*metric)) {
          p.metric = *k;
          metric_ok = true;
        } else {
          pc.error(m.get("metric"), m.child("metric"),
                   "unknown metric '" + *metric + "'" + did_you_mean(*metric, metric_names()),
                   "docs/validation.md lists the metric vocabulary");
        }
      }
      p.at = m.number("at", false, 1e-9, 1e12);
      if (auto v = m.number("value", true, -1e18, 1e18)) {
        p.value = *v;
        if (*v <= 0.0)
          pc.error(m.get("value"), m.child("value"), "value must be above 0",
                   "a published figure in the metric's unit");
      }
      if (auto s = m.string("source", false)) p.source = *s;
      if (metric_ok && metric_needs_at(p.metric) && !m.has("at"))
        m.missing("at", "the interactivity in tok/s/user at which " + to_string(p.metric) +
                            " is read off the curve");
      if (metric_ok && !metric_needs_at(p.metric) && m.has("at"))
        pc.error(m.get("at"), m.child("at"),
                 "'at' applies only to the *_at metrics, not to " + to_string(p.metric),
                 "remove it");
      m.finish();
    }
    if (pc.ok())
      out.points.push_back(std::move(p));
    else
      out.rejected.push_back(RejectedPoint{p.id, p.where, pc.diagnostics()});
  }
  return out;
}

std::expected<PointsFile, Diagnostics> load_points_file(const std::string& path,
                                                        const Catalog& catalog) {
  auto text = yaml::read_text_file(path, "the points file");
  if (!text) return std::unexpected(text.error());
  return load_points_string(*text, path, catalog);
}

std::expected<PointsFile, Diagnostics> load_points_files(const std::vector<std::string>& paths,
                                                         const Catalog& catalog) {
  PointsFile out;
  Diagnostics unreadable;
  std::set<std::string> ids;
  std::string hashes;
  for (const auto& path : paths) {
    auto one = load_points_file(path, catalog);
    if (!one) {
      unreadable.insert(unreadable.end(), one.error().begin(), one.error().end());
      continue;
    }
    out.file += (out.file.empty() ? "" : " + ") + one->file;
    hashes += one->hash;
    out.rejected.insert(out.rejected.end(), one->rejected.begin(), one->rejected.end());
    for (auto& p : one->points) {
      if (ids.insert(p.id).second) {
        out.points.push_back(std::move(p));
        continue;
      }
      Diagnostic d{p.where, "id", "id '" + p.id + "' is used by a point of an earlier file",
                   "ids must be unique across the points files of one command"};
      out.rejected.push_back(RejectedPoint{p.id, p.where, {d}});
    }
    if (paths.size() == 1) out.hash = one->hash;
  }
  if (!unreadable.empty()) return std::unexpected(unreadable);
  // Several files: the hash of their hashes in the order given.
  if (paths.size() != 1) out.hash = content_hash(hashes);
  return out;
}

}  // namespace racktwin
