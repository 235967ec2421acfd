#include "scenarios/catalog_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "scenarios/yaml_reader.hpp"

namespace racktwin {
namespace {

using yaml::Context;
using yaml::MapReader;

constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

// A reference from one entry to another, checked once every file is read.
struct PendingRef {
  SourceLocation where;
  std::string path;
  std::string kind;  // "source", "chip", "format"
  std::string id;
};

// Collects the provenance of every value of one catalog entry.
class EntryFields {
 public:
  EntryFields(Context& ctx, std::string entry_path, std::vector<PendingRef>& refs)
      : ctx_(ctx), entry_path_(std::move(entry_path)), refs_(refs) {}

  // Reads the entry-level `source:` that plain values inherit.
  void read_default_source(MapReader& m) {
    if (!m.has("source")) return;
    Provenance p;
    if (read_sources(m.get("source"), m.child("source"), p.sources)) default_ = std::move(p);
  }

  // Reads `key` as a sourced value; `convert(node, path)` turns the value node into T.
  template <class T>
  std::optional<T> read(
      MapReader& m, std::string_view key, bool required, std::string_view expected,
      const std::function<std::optional<T>(const YAML::Node&, const std::string&)>& convert) {
    if (!m.has(key)) {
      if (required) m.missing(key, expected);
      return std::nullopt;
    }
    const YAML::Node node = m.get(key);
    const std::string path = m.child(key);
    Provenance prov;
    YAML::Node value = node;
    if (node.IsMap()) {
      MapReader v(ctx_, node, path);
      if (!v.has("value")) {
        v.missing("value", expected);
        v.allow({"source", "assumption", "reason", "note"});
        v.finish();
        return std::nullopt;
      }
      value.reset(v.get("value"));
      if (v.has("source")) read_sources(v.get("source"), v.child("source"), prov.sources);
      if (auto a = v.boolean("assumption", false)) prov.assumption = *a;
      if (auto r = v.string("reason", false)) prov.reason = *r;
      if (auto n = v.string("note", false)) prov.note = *n;
      if (prov.assumption && prov.reason.empty())
        ctx_.error(node, path, "an assumption needs a 'reason'",
                   "say why this value was chosen, e.g. reason: \"not published; ...\"");
      if (!prov.assumption && prov.sources.empty()) {
        if (default_) {
          prov.sources = default_->sources;
        } else {
          ctx_.error(node, path, "value has no provenance",
                     "add 'source: <id>' or 'assumption: true' with a 'reason'");
        }
      }
      v.finish();
    } else {
      if (!default_) {
        ctx_.error(node, path, "value has no source",
                   "write {value: ..., source: <id>} or give the entry a 'source:'");
      } else {
        prov = *default_;
      }
    }
    auto out = convert(value, path);
    if (out && value.IsScalar()) {
      std::string rel = path;
      if (rel.rfind(entry_path_ + ".", 0) == 0) rel = rel.substr(entry_path_.size() + 1);
      records_.push_back(FieldRecord{rel, value.Scalar(), std::move(prov)});
    }
    return out;
  }

  template <class Q>
  std::optional<Q> quantity(MapReader& m, std::string_view key, bool required) {
    const std::string expected =
        a_dimension(Q::kDimension) + " such as " + dimension_example(Q::kDimension);
    auto v =
        read<double>(m, key, required, expected, [&](const YAML::Node& n, const std::string& p) {
          return yaml::read_quantity(ctx_, n, p, Q::kDimension);
        });
    if (!v) return std::nullopt;
    return Q(*v);
  }

  std::optional<int> integer(MapReader& m, std::string_view key, bool required, int min = 0,
                             std::int64_t max = kMaxInt) {
    auto v = read<std::int64_t>(m, key, required, "an integer",
                                [&](const YAML::Node& n, const std::string& p) {
                                  return yaml::read_integer(ctx_, n, p, min, max);
                                });
    if (!v) return std::nullopt;
    return static_cast<int>(*v);
  }

  std::optional<double> count(MapReader& m, std::string_view key, bool required) {
    return read<double>(
        m, key, required, "a count such as '671B'",
        [&](const YAML::Node& n, const std::string& p) { return yaml::read_count(ctx_, n, p); });
  }

  std::optional<bool> flag(MapReader& m, std::string_view key, bool required) {
    return read<bool>(
        m, key, required, "true or false",
        [&](const YAML::Node& n, const std::string& p) { return yaml::read_bool(ctx_, n, p); });
  }

  std::optional<double> number(MapReader& m, std::string_view key, bool required, double min,
                               double max) {
    return read<double>(m, key, required, "a number",
                        [&](const YAML::Node& n, const std::string& p) {
                          return yaml::read_number(ctx_, n, p, min, max);
                        });
  }

  FieldRecords take() { return std::move(records_); }
  // The entry-level `source:` read by read_default_source; none when absent or invalid.
  const std::optional<Provenance>& default_provenance() const { return default_; }

 private:
  bool read_sources(const YAML::Node& n, const std::string& path, std::vector<std::string>& out) {
    if (n.IsScalar()) {
      out.push_back(n.Scalar());
      refs_.push_back({ctx_.location(n), path, "source", n.Scalar()});
      return true;
    }
    if (n.IsSequence() && n.size() > 0) {
      for (std::size_t i = 0; i < n.size(); ++i) {
        if (!n[i].IsScalar()) {
          ctx_.error(n[i], yaml::index_path(path, i), "expected a source id");
          return false;
        }
        out.push_back(n[i].Scalar());
        refs_.push_back({ctx_.location(n[i]), yaml::index_path(path, i), "source", n[i].Scalar()});
      }
      return true;
    }
    ctx_.error(n, path, "expected a source id or a list of source ids");
    return false;
  }

  Context& ctx_;
  std::string entry_path_;
  std::vector<PendingRef>& refs_;
  std::optional<Provenance> default_;
  FieldRecords records_;
};

// State shared by all files of one catalog load.
struct Loader {
  Catalog catalog;
  Diagnostics diagnostics;
  std::vector<PendingRef> refs;
  std::map<std::string, SourceLocation> first_seen;  // "kind:id" -> where it was defined
  // Where each system's power.xpu_idle was written: checked against its chip once chips are linked.
  std::map<std::string, PendingRef> pending_idle;
  // Where each system's calibrated power was written: applied to the system once chips are linked.
  std::map<std::string, PendingRef> pending_power;
  // Where each multi-node recipe was written, in Catalog::multinode_recipes order.
  std::vector<PendingRef> recipe_at;

  bool claim_id(Context& ctx, const YAML::Node& at, const std::string& path,
                const std::string& kind, const std::string& id) {
    const std::string key = kind + ":" + id;
    auto [it, inserted] = first_seen.emplace(key, ctx.location(at));
    if (!inserted) {
      ctx.error(at, path,
                kind + " id '" + id + "' is defined twice (first at " + it->second.file + ":" +
                    std::to_string(it->second.line) + ")",
                "ids must be unique across the catalog");
      return false;
    }
    return true;
  }

  template <class F>
  void each_entry(Context& ctx, MapReader& top, std::string_view key, F&& f) {
    if (!top.has(key)) return;
    const YAML::Node list = top.get(key);
    const std::string path = top.child(key);
    if (!list.IsSequence()) {
      ctx.error(list, path, "expected a list of entries (each starting with '- id: ...')");
      return;
    }
    for (std::size_t i = 0; i < list.size(); ++i) f(list[i], yaml::index_path(path, i));
  }

  // One file's text; `file` names it in messages and in Catalog::files.
  void read_text(const std::string& file, const std::string& text);
  void read_source(Context& ctx, const YAML::Node& n, const std::string& path);
  void read_format(Context& ctx, const YAML::Node& n, const std::string& path);
  void read_chip(Context& ctx, const YAML::Node& n, const std::string& path);
  void read_system(Context& ctx, const YAML::Node& n, const std::string& path);
  void read_model(Context& ctx, const YAML::Node& n, const std::string& path);
  void read_efficiency_prior(Context& ctx, const YAML::Node& n, const std::string& path);
  void read_calibration(Context& ctx, const YAML::Node& n, const std::string& path);
  void read_multinode_recipe(Context& ctx, const YAML::Node& n, const std::string& path);
  std::optional<CalibratedEfficiency> read_calibrated(Context& ctx, const YAML::Node& n,
                                                      const std::string& path, bool family);
  std::optional<CalibratedEfficiency::Power> read_calibrated_power(Context& ctx, MapReader& m);
  void apply_calibrated_power(System& sys, const Chip& chip);
  void resolve();
};

// Reads the efficiency parameters with `number(key, lo, hi)` and `time(key, required)` (each
// returns an optional); false when one of them is missing or invalid. The ranges are the loader's
// checks. `seq_overhead` and `request_latency` are optional (0 when absent), and so is `attn_eff`
// (mfu when absent: the attention core at the GEMMs' efficiency), and so is `dequant_eff` (1 when
// absent: dequantising GEMMs at the native rates): files written before they existed load, with the
// costs they were fitted without. `has(key)` says whether the key is given.
template <class Number, class Time, class Has>
bool read_efficiency_values(perf::Efficiency& e, Number number, Time time, Has has) {
  bool ok = true;
  auto frac = [&](std::string_view key, double& out, double lo, double hi) {
    if (auto v = number(key, lo, hi))
      out = *v;
    else
      ok = false;
  };
  auto t = [&](std::string_view key, Seconds& out) {
    if (auto v = time(key, true))
      out = *v;
    else
      ok = false;
  };
  frac("mfu", e.mfu, 0.01, 1.0);
  frac("mbu", e.mbu, 0.01, 1.0);
  if (has("attn_eff"))
    frac("attn_eff", e.attn_eff, 0.01, 1.0);
  else
    e.attn_eff = e.mfu;
  frac("comm_eff", e.comm_eff, 0.01, 1.0);
  t("alpha", e.alpha);
  frac("overlap", e.overlap, 0.0, 0.99);
  t("layer_overhead", e.layer_overhead);
  t("step_overhead", e.step_overhead);
  frac("moe_imbalance", e.moe_imbalance, 1.0, 8.0);
  if (has("dequant_eff"))
    frac("dequant_eff", e.dequant_eff, 0.01, 1.0);
  else
    e.dequant_eff = 1.0;
  if (auto v = time("seq_overhead", false))
    e.seq_overhead = *v;
  else
    ok = false;
  if (auto v = time("request_latency", false))
    e.request_latency = *v;
  else
    ok = false;
  return ok;
}

std::optional<std::string> read_id(Context& ctx, MapReader& m) {
  auto id = m.string("id", true);
  if (!id) return std::nullopt;
  const bool valid = !id->empty() && std::all_of(id->begin(), id->end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
  });
  if (!valid) {
    ctx.error(m.get("id"), m.child("id"), "invalid id '" + *id + "'",
              "use lower-case letters, digits, '-', '.' and '_'");
    return std::nullopt;
  }
  return id;
}

void Loader::read_text(const std::string& file, const std::string& text) {
  Context ctx(file);
  auto root = yaml::load_string(ctx, text);
  if (root) {
    if (root->IsNull()) {
      ctx.error(SourceLocation{file, 1, 1}, "", "the file is empty",
                "a catalog file holds lists under sources, formats, chips, systems, models or "
                "multinode_recipes");
    } else {
      MapReader top(ctx, *root, "");
      each_entry(ctx, top, "sources",
                 [&](const auto& n, const auto& p) { read_source(ctx, n, p); });
      each_entry(ctx, top, "formats",
                 [&](const auto& n, const auto& p) { read_format(ctx, n, p); });
      each_entry(ctx, top, "chips", [&](const auto& n, const auto& p) { read_chip(ctx, n, p); });
      each_entry(ctx, top, "systems",
                 [&](const auto& n, const auto& p) { read_system(ctx, n, p); });
      each_entry(ctx, top, "models", [&](const auto& n, const auto& p) { read_model(ctx, n, p); });
      each_entry(ctx, top, "efficiency_priors",
                 [&](const auto& n, const auto& p) { read_efficiency_prior(ctx, n, p); });
      each_entry(ctx, top, "multinode_recipes",
                 [&](const auto& n, const auto& p) { read_multinode_recipe(ctx, n, p); });
      if (top.has("calibration")) read_calibration(ctx, top.get("calibration"), "calibration");
      top.finish();
    }
  }
  catalog.files.push_back(file);
  for (auto& d : ctx.diagnostics()) diagnostics.push_back(std::move(d));
}

void Loader::read_source(Context& ctx, const YAML::Node& n, const std::string& path) {
  MapReader m(ctx, n, path);
  if (!m.ok()) return;
  Source s;
  auto id = read_id(ctx, m);
  auto citation = m.string("citation", true);
  if (auto url = m.string("url", false)) s.url = *url;
  m.finish();
  if (!id || !citation) return;
  if (!claim_id(ctx, n, path, "source", *id)) return;
  s.id = *id;
  s.citation = *citation;
  catalog.sources.emplace(s.id, std::move(s));
}

void Loader::read_format(Context& ctx, const YAML::Node& n, const std::string& path) {
  MapReader m(ctx, n, path);
  if (!m.ok()) return;
  NumberFormat f;
  auto id = read_id(ctx, m);
  EntryFields fields(ctx, path, refs);
  fields.read_default_source(m);
  if (auto d = m.string("description", false)) f.description = *d;
  auto bits = fields.number(m, "bits_per_element", true, 1.0, 64.0);
  auto compute = m.choice("compute", true, {"fp4", "fp8", "bf16"});
  m.finish();
  if (!id || !bits || !compute) return;
  if (!claim_id(ctx, n, path, "format", *id)) return;
  f.id = *id;
  f.bits_per_element = *bits;
  f.compute = *compute_class_from_string(*compute);
  f.fields = fields.take();
  catalog.formats.emplace(f.id, std::move(f));
}

void Loader::read_chip(Context& ctx, const YAML::Node& n, const std::string& path) {
  MapReader m(ctx, n, path);
  if (!m.ok()) return;
  auto c = std::make_shared<Chip>();
  auto id = read_id(ctx, m);
  EntryFields fields(ctx, path, refs);
  fields.read_default_source(m);
  auto name = m.string("name", true);
  if (auto v = m.string("vendor", false)) c->vendor = *v;
  if (auto v = m.string("description", false)) c->description = *v;
  if (auto v = m.string("memory_kind", false)) c->memory_kind = *v;
  if (auto v = fields.integer(m, "compute_dies", false, 1, 64)) c->compute_dies = *v;
  auto cap = fields.quantity<Bytes>(m, "hbm_capacity", true);
  auto bw = fields.quantity<BytesPerSecond>(m, "hbm_bandwidth", true);
  auto tdp = fields.quantity<Watts>(m, "tdp", true);
  c->sustained_power = fields.quantity<Watts>(m, "sustained_power", false);
  bool peak_ok = false;
  if (m.has("dense_peak")) {
    MapReader p(ctx, m.get("dense_peak"), m.child("dense_peak"));
    for (auto cls : {ComputeClass::fp4, ComputeClass::fp8, ComputeClass::bf16}) {
      if (auto v = fields.quantity<FlopsPerSecond>(p, to_string(cls), false)) {
        c->dense_peak[cls] = *v;
        peak_ok = true;
      }
    }
    if (p.ok() && !peak_ok)
      ctx.error(m.get("dense_peak"), m.child("dense_peak"),
                "no peak given; expected at least one of fp4, fp8, bf16");
    p.finish();
  } else {
    m.missing("dense_peak",
              "a mapping of fp4 / fp8 / bf16 to a compute rate such as '2250 TFLOPS'");
  }
  m.finish();
  if (!id || !name || !cap || !bw || !tdp || !peak_ok) return;
  if (c->sustained_power && *c->sustained_power > *tdp)
    ctx.error(m.get("sustained_power"), m.child("sustained_power"),
              "sustained power is above the rated TDP", "check both figures");
  if (!claim_id(ctx, n, path, "chip", *id)) return;
  c->id = *id;
  c->name = *name;
  c->hbm_capacity = *cap;
  c->hbm_bandwidth = *bw;
  c->tdp = *tdp;
  c->fields = fields.take();
  catalog.chips.emplace(c->id, std::move(c));
}

// The sections of a system entry. Each reads its keys in the entry's order of reading (the field
// records, and so `racktwin catalog show`, keep that order) and clears `ok` when a required value
// is missing or invalid; an inconsistency that leaves every value readable is reported without
// clearing it.

// name, description, status and the chip, whose id is checked once every file is read.
void read_system_heading(Context& ctx, MapReader& m, std::vector<PendingRef>& refs, System& s,
                         bool& ok) {
  if (auto v = m.string("name", true))
    s.name = *v;
  else
    ok = false;
  if (auto v = m.string("description", false)) s.description = *v;
  if (auto v = m.string("status", false)) s.status = *v;
  if (auto chip = m.string("chip", true)) {
    s.chip_id = *chip;
    refs.push_back({ctx.location(m.get("chip")), m.child("chip"), "chip", *chip});
  } else {
    ok = false;
  }
}

// The compute tray (name, XPUs, CPUs) and the compute trays per rack.
void read_compute_trays(Context& ctx, MapReader& m, EntryFields& fields, System& s, bool& ok) {
  if (m.has("compute_tray")) {
    MapReader t(ctx, m.get("compute_tray"), m.child("compute_tray"));
    if (auto v = t.string("name", true))
      s.compute_tray.name = *v;
    else
      ok = false;
    if (auto v = fields.integer(t, "xpus", true, 1, 1024))
      s.compute_tray.xpus = *v;
    else
      ok = false;
    if (auto v = fields.integer(t, "cpus", false, 0, 64)) s.compute_tray.cpus = *v;
    t.finish();
  } else {
    m.missing("compute_tray", "a mapping with name and xpus");
    ok = false;
  }
  if (auto v = fields.integer(m, "compute_trays_per_rack", true, 1, 1024))
    s.compute_trays_per_rack = *v;
  else
    ok = false;
}

// The scale-up switch trays; absent for a direct mesh or an on-board switch.
void read_switch_trays(Context& ctx, MapReader& m, EntryFields& fields, SwitchTrays& sw, bool& ok) {
  if (!m.has("switch_trays")) return;
  MapReader t(ctx, m.get("switch_trays"), m.child("switch_trays"));
  if (auto v = t.string("name", true))
    sw.name = *v;
  else
    ok = false;
  if (auto v = fields.integer(t, "per_rack", true, 0, 1024))
    sw.per_rack = *v;
  else
    ok = false;
  if (auto v = t.string("asic", false)) sw.asic = *v;
  if (auto v = fields.integer(t, "asics_per_tray", false, 0, 64)) sw.asics_per_tray = *v;
  if (auto v = fields.quantity<BytesPerSecond>(t, "asic_bandwidth", false)) sw.asic_bandwidth = *v;
  if (auto v = fields.integer(t, "local_domain_trays", false, 0, 1024)) sw.local_domain_trays = *v;
  if (auto v = fields.integer(t, "uplink_trays", false, 0, 1024)) sw.uplink_trays = *v;
  if (t.ok() && sw.local_domain_trays + sw.uplink_trays > sw.per_rack)
    ctx.error(t.node(), t.path(), "local_domain_trays + uplink_trays exceeds per_rack");
  t.finish();
}

// The host CPUs: where they sit, how many, their DRAM and their link to the XPUs.
void read_host(Context& ctx, MapReader& m, EntryFields& fields, HostSpec& host, bool& ok) {
  if (!m.has("host")) {
    m.missing("host", "a mapping describing the host CPUs");
    ok = false;
    return;
  }
  MapReader h(ctx, m.get("host"), m.child("host"));
  if (auto v = h.string("name", true))
    host.name = *v;
  else
    ok = false;
  if (auto v = h.choice("placement", true, {"separate_rack", "in_compute_tray", "in_server"})) {
    host.placement = *v == "separate_rack"     ? HostPlacement::separate_rack
                     : *v == "in_compute_tray" ? HostPlacement::in_compute_tray
                                               : HostPlacement::in_server;
  } else {
    ok = false;
  }
  if (auto v = fields.integer(h, "per_compute_tray", false, 1, 64)) host.per_compute_tray = *v;
  // Only a separate host rack needs its trays per rack.
  const bool separate = host.placement == HostPlacement::separate_rack;
  if (auto v = fields.integer(h, "trays_per_rack", separate, 1, 1024))
    host.trays_per_rack = *v;
  else if (separate)
    ok = false;
  if (auto v = fields.integer(h, "cpus", true, 0, 64))
    host.cpus = *v;
  else
    ok = false;
  if (auto v = h.string("cpu_model", false)) host.cpu_model = *v;
  if (auto v = fields.quantity<Bytes>(h, "dram", true))
    host.dram = *v;
  else
    ok = false;
  if (auto v = fields.quantity<BytesPerSecond>(h, "link_bandwidth_per_xpu", true))
    host.link_bandwidth_per_xpu = *v;
  else
    ok = false;
  h.finish();
}

// One scale-up network tier; it must span more XPUs than the tiers `inner` to it.
NetworkTier read_network_tier(Context& ctx, const YAML::Node& n, const std::string& path,
                              EntryFields& fields, const std::vector<NetworkTier>& inner,
                              bool& ok) {
  MapReader t(ctx, n, path);
  NetworkTier tier;
  if (auto v = t.string("name", true))
    tier.name = *v;
  else
    ok = false;
  if (auto v = fields.integer(t, "xpus", true, 1, 1 << 20))
    tier.xpus = *v;
  else
    ok = false;
  if (auto v = fields.integer(t, "switch_hops", true, 0, 16))
    tier.switch_hops = *v;
  else
    ok = false;
  if (auto v = fields.quantity<BytesPerSecond>(t, "bandwidth_per_xpu", true))
    tier.bandwidth_per_xpu = *v;
  else
    ok = false;
  if (auto v = fields.quantity<Seconds>(t, "latency", true))
    tier.latency = *v;
  else
    ok = false;
  if (t.ok() && !inner.empty() && tier.xpus <= inner.back().xpus)
    ctx.error(n, t.child("xpus"),
              "tiers must grow: this tier has no more XPUs than the previous one");
  t.finish();
  return tier;
}

// The tiers of the scale-up network, innermost first; the outermost must span the domain. That
// check runs only while `ok` holds for the whole entry so far (domain_xpus and every tier read).
void read_network_tiers(Context& ctx, MapReader& u, EntryFields& fields, System& s, bool& ok) {
  if (!u.has("tiers") || !u.get("tiers").IsSequence() || u.get("tiers").size() == 0) {
    if (u.has("tiers"))
      ctx.error(u.get("tiers"), u.child("tiers"), "expected a non-empty list of network tiers");
    else
      u.missing("tiers",
                "a list of network tiers (name, xpus, switch_hops, bandwidth_per_xpu, latency)");
    ok = false;
    return;
  }
  const YAML::Node tiers = u.get("tiers");
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    NetworkTier tier = read_network_tier(ctx, tiers[i], yaml::index_path(u.child("tiers"), i),
                                         fields, s.scale_up, ok);
    s.scale_up.push_back(std::move(tier));
  }
  if (ok && s.scale_up.back().xpus != s.domain_xpus)
    ctx.error(tiers[tiers.size() - 1], yaml::index_path(u.child("tiers"), tiers.size() - 1),
              "the last tier spans " + std::to_string(s.scale_up.back().xpus) +
                  " XPUs but domain_xpus is " + std::to_string(s.domain_xpus),
              "the outermost tier must span the whole scale-up domain");
}

// The scale-up network: the domain's XPUs, its topology and its tiers.
void read_scale_up(Context& ctx, MapReader& m, EntryFields& fields, System& s, bool& ok) {
  if (!m.has("scale_up")) {
    m.missing("scale_up", "a mapping with domain_xpus, topology and tiers");
    ok = false;
    return;
  }
  MapReader u(ctx, m.get("scale_up"), m.child("scale_up"));
  if (auto v = fields.integer(u, "domain_xpus", true, 1, 1 << 20))
    s.domain_xpus = *v;
  else
    ok = false;
  if (auto v = u.choice("topology", true, {"switched", "full_mesh"}))
    s.topology = *v == "switched" ? ScaleUpTopology::switched : ScaleUpTopology::full_mesh;
  else
    ok = false;
  read_network_tiers(ctx, u, fields, s, ok);
  u.finish();
}

// The scale-out network: bandwidth per XPU and latency.
void read_scale_out(Context& ctx, MapReader& m, EntryFields& fields, System& s, bool& ok) {
  if (!m.has("scale_out")) {
    m.missing("scale_out", "a mapping with bandwidth_per_xpu and latency");
    ok = false;
    return;
  }
  MapReader o(ctx, m.get("scale_out"), m.child("scale_out"));
  if (auto v = fields.quantity<BytesPerSecond>(o, "bandwidth_per_xpu", true))
    s.scale_out_bandwidth_per_xpu = *v;
  else
    ok = false;
  if (auto v = fields.quantity<Seconds>(o, "latency", true))
    s.scale_out_latency = *v;
  else
    ok = false;
  o.finish();
}

// The power figures, all optional. Returns where xpu_idle was written, when it was: it is checked
// against the chip once chips are linked.
std::optional<PendingRef> read_power(Context& ctx, MapReader& m, EntryFields& fields,
                                     PowerFigures& pw) {
  if (!m.has("power")) return std::nullopt;
  MapReader p(ctx, m.get("power"), m.child("power"));
  pw.compute_rack = fields.quantity<Watts>(p, "compute_rack", false);
  pw.host_rack_provisioned = fields.quantity<Watts>(p, "host_rack_provisioned", false);
  pw.host_rack_production = fields.quantity<Watts>(p, "host_rack_production", false);
  pw.rack_pair = fields.quantity<Watts>(p, "rack_pair", false);
  pw.server = fields.quantity<Watts>(p, "server", false);
  pw.all_in_per_xpu = fields.quantity<Watts>(p, "all_in_per_xpu", false);
  pw.xpu_idle = fields.quantity<Watts>(p, "xpu_idle", false);
  pw.xpu_busy_share = fields.number(p, "xpu_busy_share", false, 0.0, 1.0);
  pw.xpu_memory_share = fields.number(p, "xpu_memory_share", false, 0.0, 1.0);
  pw.xpu_link_share = fields.number(p, "xpu_link_share", false, 0.0, 1.0);
  if (pw.xpu_memory_share && pw.xpu_link_share && *pw.xpu_memory_share + *pw.xpu_link_share > 1.0)
    ctx.error(p.get("xpu_link_share"), p.child("xpu_link_share"),
              "xpu_memory_share and xpu_link_share add up to more than 1",
              "compute drives what memory and links leave of the activity-dependent power");
  pw.compute_tray_overhead = fields.quantity<Watts>(p, "compute_tray_overhead", false);
  pw.switch_tray = fields.quantity<Watts>(p, "switch_tray", false);
  pw.host = fields.quantity<Watts>(p, "host", false);
  pw.host_production = fields.quantity<Watts>(p, "host_production", false);
  if (pw.host && pw.host_production && *pw.host_production > *pw.host)
    ctx.error(p.get("host_production"), p.child("host_production"),
              "host_production is above the rated host power", "check both figures");
  std::optional<PendingRef> idle_check;
  if (pw.xpu_idle)
    idle_check = PendingRef{ctx.location(p.get("xpu_idle")), p.child("xpu_idle"), "power", ""};
  p.finish();
  return idle_check;
}

// The serving stack: engine name, the features it offers (MTP, disaggregation), the concurrency
// its published benchmark sweeps reached and the engine settings they ran, single-server and
// multi-node.
void read_serving_stack(Context& ctx, MapReader& m, EntryFields& fields, ServingStack& serving,
                        std::vector<PendingRef>& refs) {
  if (!m.has("serving")) return;
  MapReader v(ctx, m.get("serving"), m.child("serving"));
  if (auto e = v.string("engine", false)) serving.engine = *e;
  if (auto b = v.boolean("mtp", false)) serving.mtp = *b;
  if (auto b = v.boolean("disaggregation", false)) serving.disaggregation = *b;
  serving.benchmark_concurrency = fields.integer(v, "benchmark_concurrency", false, 1, 1 << 20);
  if (v.has("benchmark_concurrency_by_model")) {
    const YAML::Node by = v.get("benchmark_concurrency_by_model");
    MapReader b(ctx, by, v.child("benchmark_concurrency_by_model"));
    if (b.ok())
      for (const auto& kv : by) {
        if (!kv.first.IsScalar()) continue;  // MapReader reported the key
        const std::string model = kv.first.Scalar();
        refs.push_back({ctx.location(kv.first), b.child(model), "model", model});
        if (auto c = fields.integer(b, model, true, 1, 1 << 20))
          serving.benchmark_concurrency_by_model[model] = *c;
      }
    b.finish();
  }
  if (v.has("engine_limits")) {
    MapReader e(ctx, v.get("engine_limits"), v.child("engine_limits"));
    EngineLimits& l = serving.engine_limits;
    // The same ranges as the scenario's `engine:` keys (docs/scenarios.md, "Engine").
    l.max_seqs = fields.integer(e, "max_seqs", false, 1, 1 << 20);
    l.max_batched_tokens = fields.integer(e, "max_batched_tokens", false, 16, 1 << 24);
    l.memory_utilization = fields.number(e, "memory_utilization", false, 0.05, 1.0);
    l.reserve_output = fields.number(e, "reserve_output", false, 0.0, 1.0);
    l.dp_attention = fields.flag(e, "dp_attention", false);
    e.finish();
  }
  if (v.has("multinode")) {
    MapReader e(ctx, v.get("multinode"), v.child("multinode"));
    serving.multinode.concurrency = fields.integer(e, "concurrency", false, 1, 1 << 20);
    serving.multinode.max_seqs_per_rank = fields.integer(e, "max_seqs_per_rank", false, 1, 1 << 20);
    e.finish();
  }
  v.finish();
}

void Loader::read_system(Context& ctx, const YAML::Node& n, const std::string& path) {
  MapReader m(ctx, n, path);
  if (!m.ok()) return;
  auto s = std::make_shared<System>();
  auto id = read_id(ctx, m);
  bool ok = id.has_value();
  EntryFields fields(ctx, path, refs);
  fields.read_default_source(m);
  read_system_heading(ctx, m, refs, *s, ok);
  read_compute_trays(ctx, m, fields, *s, ok);
  read_switch_trays(ctx, m, fields, s->switches, ok);
  read_host(ctx, m, fields, s->host, ok);
  read_scale_up(ctx, m, fields, *s, ok);
  read_scale_out(ctx, m, fields, *s, ok);
  std::optional<PendingRef> idle_check = read_power(ctx, m, fields, s->power);
  s->tco_per_xpu = fields.quantity<UsdPerSecond>(m, "tco_per_xpu", false);
  read_serving_stack(ctx, m, fields, s->serving, refs);
  m.finish();

  if (ok && s->domain_xpus % s->compute_tray.xpus != 0)
    ctx.error(n, m.child("scale_up.domain_xpus"),
              "domain_xpus is not a whole number of compute trays of " +
                  std::to_string(s->compute_tray.xpus) + " XPUs");
  if (!ok || !id) return;
  if (!claim_id(ctx, n, path, "system", *id)) return;
  s->id = *id;
  s->fields = fields.take();
  if (idle_check) pending_idle.emplace(s->id, std::move(*idle_check));
  catalog.systems.emplace(s->id, std::move(s));
}

void Loader::read_model(Context& ctx, const YAML::Node& n, const std::string& path) {
  MapReader m(ctx, n, path);
  if (!m.ok()) return;
  auto md = std::make_shared<Model>();
  bool ok = true;
  auto id = read_id(ctx, m);
  if (!id) ok = false;
  EntryFields fields(ctx, path, refs);
  fields.read_default_source(m);
  if (auto v = m.string("name", true))
    md->name = *v;
  else
    ok = false;
  if (auto v = fields.count(m, "params_total", true))
    md->params_total = *v;
  else
    ok = false;
  if (auto v = fields.count(m, "params_active", true))
    md->params_active = *v;
  else
    ok = false;
  if (auto v = fields.integer(m, "layers", true, 1, 10000))
    md->layers = *v;
  else
    ok = false;
  if (auto v = fields.integer(m, "hidden", true, 1, 1 << 20))
    md->hidden = *v;
  else
    ok = false;
  if (auto v = fields.integer(m, "vocab", true, 1, 1 << 24))
    md->vocab = *v;
  else
    ok = false;
  if (auto v = m.choice("activation", false, {"swiglu", "gelu"}))
    md->activation = *v;
  else
    md->activation = "swiglu";
  if (auto v = fields.integer(m, "mtp_layers", false, 0, 16)) md->mtp_layers = *v;
  if (auto v = m.boolean("tied_embeddings", false)) md->tied_embeddings = *v;
  md->dense_ffn = fields.integer(m, "dense_ffn", false, 1, 1 << 24);

  if (m.has("attention")) {
    MapReader a(ctx, m.get("attention"), m.child("attention"));
    auto& at = md->attention;
    auto kind = a.choice("kind", true, {"gqa", "mla"});
    if (!kind) ok = false;
    at.kind = kind && *kind == "mla" ? AttentionKind::mla : AttentionKind::gqa;
    if (auto v = fields.integer(a, "q_heads", true, 1, 4096))
      at.q_heads = *v;
    else
      ok = false;
    if (at.kind == AttentionKind::gqa) {
      if (auto v = fields.integer(a, "kv_heads", true, 1, 4096))
        at.kv_heads = *v;
      else
        ok = false;
      if (auto v = fields.integer(a, "head_dim", true, 1, 4096))
        at.head_dim = *v;
      else
        ok = false;
      if (ok && at.q_heads % at.kv_heads != 0)
        ctx.error(a.get("kv_heads"), a.child("kv_heads"), "q_heads is not a multiple of kv_heads");
    } else {
      if (auto v = fields.integer(a, "q_lora_rank", false, 0, 1 << 16)) at.q_lora_rank = *v;
      if (auto v = fields.integer(a, "kv_lora_rank", true, 1, 1 << 16))
        at.kv_lora_rank = *v;
      else
        ok = false;
      if (auto v = fields.integer(a, "qk_nope_head_dim", true, 1, 4096))
        at.qk_nope_head_dim = *v;
      else
        ok = false;
      if (auto v = fields.integer(a, "qk_rope_head_dim", true, 1, 4096))
        at.qk_rope_head_dim = *v;
      else
        ok = false;
      if (auto v = fields.integer(a, "v_head_dim", true, 1, 4096))
        at.v_head_dim = *v;
      else
        ok = false;
    }
    at.sliding_window = fields.integer(a, "sliding_window", false, 1, 1 << 24);
    if (auto v = a.boolean("attention_sinks", false)) at.attention_sinks = *v;
    a.finish();
  } else {
    m.missing("attention", "a mapping with kind (gqa or mla) and its dimensions");
    ok = false;
  }

  if (m.has("moe")) {
    MapReader e(ctx, m.get("moe"), m.child("moe"));
    MoE moe;
    if (auto v = fields.integer(e, "routed_experts", true, 1, 1 << 16))
      moe.routed_experts = *v;
    else
      ok = false;
    if (auto v = fields.integer(e, "shared_experts", false, 0, 64)) moe.shared_experts = *v;
    if (auto v = fields.integer(e, "top_k", true, 1, 1024))
      moe.top_k = *v;
    else
      ok = false;
    if (auto v = fields.integer(e, "expert_ffn", true, 1, 1 << 20))
      moe.expert_ffn = *v;
    else
      ok = false;
    if (auto v = fields.integer(e, "dense_layers", false, 0, 10000)) md->dense_layers = *v;
    if (ok && moe.top_k > moe.routed_experts)
      ctx.error(e.get("top_k"), e.child("top_k"), "top_k exceeds routed_experts");
    e.finish();
    md->moe = moe;
    if (ok && md->dense_layers > 0 && !md->dense_ffn)
      m.missing("dense_ffn", "the intermediate size of the leading dense layers");
  } else {
    md->dense_layers = md->layers;
    if (!md->dense_ffn) {
      m.missing("dense_ffn", "the FFN intermediate size (or a 'moe:' section)");
      ok = false;
    }
  }

  // Weight variants by precision.
  auto default_precision = m.string("default_precision", true);
  if (!default_precision) ok = false;
  if (m.has("variants") && m.get("variants").IsMap()) {
    const YAML::Node variants = m.get("variants");
    MapReader vs(ctx, variants, m.child("variants"));
    for (auto it = variants.begin(); it != variants.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      const std::string prec = it->first.Scalar();
      vs.allow({prec});
      MapReader v(ctx, it->second, vs.child(prec));
      if (!v.ok()) continue;
      WeightVariant w;
      w.precision = prec;
      if (auto d = v.string("description", false)) w.description = *d;
      auto fmt = [&](std::string_view key, bool required, std::string& out) {
        if (auto f = v.string(key, required)) {
          out = *f;
          refs.push_back({ctx.location(v.get(key)), v.child(key), "format", *f});
        }
      };
      fmt("attention", true, w.attention);
      fmt("embeddings", true, w.embeddings);
      fmt("lm_head", true, w.lm_head);
      fmt("kv_cache", true, w.kv_cache);
      fmt("dense_ffn", md->dense_layers > 0, w.dense_ffn);
      fmt("routed_experts", md->is_moe(), w.routed_experts);
      fmt("shared_experts", md->is_moe() && md->moe->shared_experts > 0, w.shared_experts);
      v.finish();
      md->variants.emplace(prec, std::move(w));
    }
    vs.finish();
  } else {
    m.missing("variants", "a mapping of precision name to the weight formats of each part");
    ok = false;
  }
  if (ok && default_precision && !md->variants.contains(*default_precision)) {
    std::vector<std::string> names;
    for (const auto& [k, _] : md->variants) names.push_back(k);
    ctx.error(
        m.get("default_precision"), m.child("default_precision"),
        "no variant named '" + *default_precision + "'" + did_you_mean(*default_precision, names));
    ok = false;
  }
  if (default_precision) md->default_precision = *default_precision;
  if (ok && md->params_active > md->params_total)
    ctx.error(m.get("params_active"), m.child("params_active"),
              "params_active exceeds params_total");
  if (ok && md->dense_layers > md->layers)
    ctx.error(n, m.child("moe.dense_layers"), "more dense layers than layers");
  m.finish();
  if (!ok || !id) return;
  if (!claim_id(ctx, n, path, "model", *id)) return;
  md->id = *id;
  md->fields = fields.take();
  catalog.models.emplace(md->id, std::move(md));
}

// The client counts of a recipe: a non-empty list of distinct counts, kept ascending.
std::optional<std::vector<int>> read_client_counts(Context& ctx, MapReader& m) {
  if (!m.has("concurrency")) {
    m.missing("concurrency", "the client counts the deployment ran at, e.g. [1024, 2048]");
    return std::nullopt;
  }
  const YAML::Node list = m.get("concurrency");
  const std::string path = m.child("concurrency");
  if (!list.IsSequence() || list.size() == 0) {
    ctx.error(list, path, "expected a non-empty list of client counts", "e.g. [1024, 2048]");
    return std::nullopt;
  }
  std::vector<int> out;
  bool ok = true;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto v = yaml::read_integer(ctx, list[i], yaml::index_path(path, i), 1, 1 << 20);
    if (!v) {
      ok = false;
      continue;
    }
    if (std::find(out.begin(), out.end(), static_cast<int>(*v)) != out.end()) {
      ctx.error(list[i], yaml::index_path(path, i),
                "client count " + std::to_string(*v) + " is listed twice", "list each count once");
      ok = false;
    }
    out.push_back(static_cast<int>(*v));
  }
  if (!ok) return std::nullopt;
  std::sort(out.begin(), out.end());
  return out;
}

// A label read with `parse` (parse_serving_mode, parse_layout); its message becomes the error.
template <class T, class Parse>
std::optional<T> read_label(Context& ctx, MapReader& m, std::string_view key,
                            std::string_view expected, Parse parse) {
  auto text = m.string(key, false);
  if (!text) {
    if (!m.has(key)) m.missing(key, expected);
    return std::nullopt;
  }
  auto v = parse(*text);
  if (!v) {
    ctx.error(m.get(key), m.child(key), v.error(), std::string("give ") + std::string(expected));
    return std::nullopt;
  }
  return *v;
}

void Loader::read_multinode_recipe(Context& ctx, const YAML::Node& n, const std::string& path) {
  MapReader m(ctx, n, path);
  if (!m.ok()) return;
  MultiNodeRecipe r;
  auto system = m.string("system", true);
  if (system) refs.push_back({ctx.location(m.get("system")), m.child("system"), "system", *system});
  auto model = m.string("model", true);
  if (model) refs.push_back({ctx.location(m.get("model")), m.child("model"), "model", *model});
  auto precision = m.string("precision", true);
  if (model && precision)
    refs.push_back({ctx.location(m.get("precision")), m.child("precision"),
                    "precision:" + *model, *precision});
  auto isl = m.integer("isl", true, 1, 1 << 20);
  auto osl = m.integer("osl", true, 1, 1 << 20);
  auto serving = read_label<ServingMode>(ctx, m, "serving",
                                         "disaggregated pools such as 4p1d/tp4-ep4-dpa",
                                         parse_serving_mode);
  if (serving && !serving->disaggregated()) {
    ctx.error(m.get("serving"), m.child("serving"),
              "a multi-node recipe is disaggregated, not aggregated",
              "give its prefill and decode workers, e.g. 4p1d/tp4-ep4-dpa");
    serving.reset();
  } else if (serving && !serving->prefill_layout) {
    ctx.error(m.get("serving"), m.child("serving"),
              "a multi-node recipe names its prefill workers' layout",
              "add it after '/', e.g. " + serving->label() + "/tp8");
    serving.reset();
  }
  auto decode = read_label<Layout>(ctx, m, "decode", "the decode workers' layout, e.g. tp8-ep8-dpa",
                                   parse_layout);
  auto seqs = m.integer("max_seqs_per_rank", false, 1, 1 << 20);
  auto clients = read_client_counts(ctx, m);
  EntryFields fields(ctx, path, refs);
  if (!m.has("source")) m.missing("source", "the id of the source that lists the deployment");
  fields.read_default_source(m);
  if (auto note = m.string("note", false)) r.provenance.note = *note;
  m.finish();
  if (!system || !model || !precision || !isl || !osl || !serving || !decode || !clients ||
      !fields.default_provenance())
    return;
  r.system = *system;
  r.model = *model;
  r.precision = *precision;
  r.isl = static_cast<int>(*isl);
  r.osl = static_cast<int>(*osl);
  r.serving = *serving;
  r.decode = *decode;
  if (seqs) r.max_seqs_per_rank = static_cast<int>(*seqs);
  r.concurrency = std::move(*clients);
  r.provenance.sources = fields.default_provenance()->sources;
  recipe_at.push_back({ctx.location(n), path, "recipe", r.system});
  catalog.multinode_recipes.push_back(std::move(r));
}

void Loader::read_efficiency_prior(Context& ctx, const YAML::Node& n, const std::string& path) {
  MapReader m(ctx, n, path);
  if (!m.ok()) return;
  EfficiencyPrior p;
  bool ok = true;
  auto id = read_id(ctx, m);
  if (!id) ok = false;
  EntryFields fields(ctx, path, refs);
  fields.read_default_source(m);
  if (auto d = m.string("description", false)) p.description = *d;
  if (m.has("systems")) {
    const YAML::Node list = m.get("systems");
    if (!list.IsSequence()) {
      ctx.error(list, m.child("systems"), "expected a list of system ids");
      ok = false;
    } else {
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string ip = yaml::index_path(m.child("systems"), i);
        if (auto s = yaml::read_string(ctx, list[i], ip)) {
          p.systems.push_back(*s);
          refs.push_back({ctx.location(list[i]), ip, "system", *s});
        }
      }
    }
  }
  const bool values_ok = read_efficiency_values(
      p.values,
      [&](std::string_view key, double lo, double hi) {
        return fields.number(m, key, true, lo, hi);
      },
      [&](std::string_view key, bool required) -> std::optional<Seconds> {
        if (!required && !m.has(key)) return Seconds(0.0);
        return fields.quantity<Seconds>(m, key, true);
      },
      [&](std::string_view key) { return m.has(key); });
  ok = ok && values_ok;
  m.finish();
  if (!ok || !id) return;
  if (*id != "default" && p.systems.empty())
    ctx.error(n, m.child("systems"),
              "a prior other than 'default' must list the systems it applies to");
  if (!claim_id(ctx, n, path, "efficiency prior", *id)) return;
  p.id = *id;
  p.fields = fields.take();
  catalog.efficiency_priors.emplace(p.id, std::move(p));
}

// Reads a list of ids at `key` (absent: empty).
std::vector<std::string> read_id_list(Context& ctx, MapReader& m, std::string_view key) {
  std::vector<std::string> out;
  if (!m.has(key)) return out;
  const YAML::Node list = m.get(key);
  if (!list.IsSequence()) {
    ctx.error(list, m.child(key), "expected a list of ids");
    return out;
  }
  for (std::size_t i = 0; i < list.size(); ++i)
    if (auto s = yaml::read_string(ctx, list[i], yaml::index_path(m.child(key), i)))
      out.push_back(*s);
  return out;
}

std::optional<CalibratedEfficiency> Loader::read_calibrated(Context& ctx, const YAML::Node& n,
                                                            const std::string& path, bool family) {
  MapReader m(ctx, n, path);
  if (!m.ok()) return std::nullopt;
  CalibratedEfficiency c;
  c.family = family;
  bool ok = true;
  const char* id_key = family ? "prior" : "system";
  if (auto id = m.string(id_key, true)) {
    c.id = *id;
    refs.push_back(
        {ctx.location(m.get(id_key)), m.child(id_key), family ? "prior" : "system", *id});
  } else {
    ok = false;
  }
  if (family) {
    c.pooled = read_id_list(ctx, m, "pooled");
    for (std::size_t i = 0; i < c.pooled.size(); ++i)
      refs.push_back({ctx.location(m.get("pooled")), yaml::index_path(m.child("pooled"), i),
                      "system", c.pooled[i]});
  }
  if (auto v = m.integer("points", false, 0, kMaxInt)) c.points = static_cast<int>(*v);
  c.fitted = read_id_list(ctx, m, "fitted");
  c.pinned = read_id_list(ctx, m, "pinned");
  for (const auto* list : {&c.fitted, &c.pinned})
    for (const auto& name : *list)
      if (!perf::efficiency_parameter(perf::Efficiency{}, name)) {
        ctx.error(n, path,
                  "unknown efficiency parameter '" + name + "'" +
                      did_you_mean(name, perf::efficiency_parameter_names()));
        ok = false;
      }
  if (m.has("values")) {
    MapReader v(ctx, m.get("values"), m.child("values"));
    const bool values_ok = read_efficiency_values(
        c.values,
        [&](std::string_view key, double lo, double hi) { return v.number(key, true, lo, hi); },
        [&](std::string_view key, bool required) -> std::optional<Seconds> {
          if (!required && !v.has(key)) return Seconds(0.0);
          return v.quantity<Seconds>(key, true);
        },
        [&](std::string_view key) { return v.has(key); });
    ok = ok && values_ok;
    v.finish();
  } else {
    m.missing("values", "a mapping of the efficiency parameters");
    ok = false;
  }
  if (!family && m.has("power")) {
    c.power = read_calibrated_power(ctx, m);
    if (!c.power) ok = false;
    if (c.power && !c.id.empty())
      pending_power.emplace(
          c.id, PendingRef{ctx.location(m.get("power")), m.child("power"), "power", c.id});
  }
  if (m.has("residuals")) {
    const YAML::Node list = m.get("residuals");
    if (!list.IsSequence()) {
      ctx.error(list, m.child("residuals"), "expected a list of {id, error_pct}");
    } else {
      for (std::size_t i = 0; i < list.size(); ++i) {
        MapReader r(ctx, list[i], yaml::index_path(m.child("residuals"), i));
        if (!r.ok()) continue;
        auto id = r.string("id", true);
        auto err = r.number("error_pct", true, -1e9, 1e9);
        r.finish();
        if (id && err) c.residuals.push_back({*id, *err});
      }
    }
  }
  m.finish();
  if (!ok) return std::nullopt;
  return c;
}

std::optional<CalibratedEfficiency::Power> Loader::read_calibrated_power(Context& ctx,
                                                                         MapReader& m) {
  MapReader p(ctx, m.get("power"), m.child("power"));
  if (!p.ok()) return std::nullopt;
  CalibratedEfficiency::Power out;
  auto share = p.number("xpu_busy_share", true, 0.0, 1.0);
  auto measured = p.quantity<Watts>("measured", true);
  auto highest = p.quantity<Watts>("highest", true);
  if (auto at = p.string("highest_at", false)) out.highest_at = *at;
  if (auto n = p.integer("sweep_points", false, 0, kMaxInt))
    out.sweep_points = static_cast<int>(*n);
  p.finish();
  if (!share || !measured || !highest) return std::nullopt;
  out.xpu_busy_share = *share;
  out.measured = *measured;
  out.highest = *highest;
  return out;
}

void Loader::read_calibration(Context& ctx, const YAML::Node& n, const std::string& path) {
  MapReader m(ctx, n, path);
  if (!m.ok()) return;
  if (catalog.calibration) {
    ctx.error(n, path, "a second calibration (the first is in " + catalog.calibration->file + ")",
              "the catalog holds one calibration file");
    m.allow({"points_file", "points_hash", "date", "command", "median_abs_error_pct",
             "max_abs_error_pct", "systems", "families"});
    m.finish();
    return;
  }
  CalibrationRecord rec;
  rec.file = ctx.file();
  if (auto v = m.string("points_file", true)) rec.points_file = *v;
  if (auto v = m.string("points_hash", true)) rec.points_hash = *v;
  if (auto v = m.string("date", true)) rec.date = *v;
  if (auto v = m.string("command", false)) rec.command = *v;
  if (auto v = m.number("median_abs_error_pct", false, 0.0, 1e9)) rec.median_abs_error_pct = *v;
  if (auto v = m.number("max_abs_error_pct", false, 0.0, 1e9)) rec.max_abs_error_pct = *v;
  for (const bool family : {false, true}) {
    each_entry(ctx, m, family ? "families" : "systems", [&](const auto& e, const auto& p) {
      auto c = read_calibrated(ctx, e, p, family);
      if (!c) return;
      auto& into = family ? catalog.calibrated_families : catalog.calibrated;
      if (!into.emplace(c->id, *c).second)
        ctx.error(e, p, "'" + c->id + "' is calibrated twice", "keep one entry per id");
    });
  }
  m.finish();
  catalog.calibration = rec;
}

// The calibration's busy share, fitted to the chip's measured sustained power, replaces the
// catalog's assumed power.xpu_busy_share; its record names the measurement and the fit. A fit to a
// figure the chip no longer has is stale: the assumed share stays, and its record says why (an
// error would stop every command, `racktwin calibrate` too).
void Loader::apply_calibrated_power(System& sys, const Chip& chip) {
  auto c = catalog.calibrated.find(sys.id);
  if (c == catalog.calibrated.end() || !c->second.power) return;
  CalibratedEfficiency::Power& p = *c->second.power;
  auto text = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::string(buf);
  };
  const std::string path = "power.xpu_busy_share";
  auto record = std::find_if(sys.fields.begin(), sys.fields.end(),
                             [&](const FieldRecord& r) { return r.path == path; });
  // The file keeps 6 significant digits.
  if (!chip.sustained_power ||
      std::fabs(chip.sustained_power->value() - p.measured.value()) > 1e-5 * p.measured.value()) {
    const PendingRef& at = pending_power.at(sys.id);
    p.stale = "the calibration (" + at.where.file + ":" + std::to_string(at.where.line) +
              ") fitted a busy share of " + text(p.xpu_busy_share) +
              " to a measured sustained power of " + format(p.measured) + ", but chip '" + chip.id +
              "' has " +
              (chip.sustained_power ? format(*chip.sustained_power) : std::string("none")) +
              "; not applied: rerun racktwin calibrate";
    if (record != sys.fields.end())
      record->provenance.note += (record->provenance.note.empty() ? "" : "; ") + p.stale;
    return;
  }
  Provenance measured;  // of the chip's sustained power: the fit rests on it
  for (const auto& f : chip.fields)
    if (f.path == "sustained_power") measured = f.provenance;
  const std::string before = sys.power.xpu_busy_share ? text(*sys.power.xpu_busy_share) : "none";
  Provenance prov;
  prov.sources = measured.sources;
  prov.assumption = measured.assumption;
  if (measured.assumption)
    prov.reason = "fitted to the chip's assumed sustained power: " + measured.reason;
  prov.note = "fitted by racktwin calibrate (" +
              std::filesystem::path(catalog.calibration->file).filename().string() + ", " +
              catalog.calibration->date + ") to the chip's measured sustained power: at this " +
              "share the most any of " + std::to_string(p.sweep_points) +
              " calibration sweep points draws is " + format(p.highest) +
              (p.highest_at.empty() ? "" : " (" + p.highest_at + ")") + " against " +
              format(p.measured) + "; the catalog assumed " + before;
  sys.power.xpu_busy_share = p.xpu_busy_share;
  FieldRecord fitted{path, text(p.xpu_busy_share), std::move(prov)};
  if (record != sys.fields.end())
    *record = std::move(fitted);
  else
    sys.fields.push_back(std::move(fitted));
}

void Loader::resolve() {
  auto report = [&](const PendingRef& r, const std::vector<std::string>& known) {
    diagnostics.push_back(Diagnostic{
        r.where, r.path, "unknown " + r.kind + " id '" + r.id + "'" + did_you_mean(r.id, known),
        "define it in the catalog or use a known id"});
  };
  std::vector<std::string> source_ids, chip_ids, format_ids;
  const std::vector<std::string> system_ids = catalog.system_ids();
  for (const auto& [k, _] : catalog.sources) source_ids.push_back(k);
  for (const auto& [k, _] : catalog.chips) chip_ids.push_back(k);
  for (const auto& [k, _] : catalog.formats) format_ids.push_back(k);
  for (const auto& r : refs) {
    if (r.kind == "source" && !catalog.sources.contains(r.id)) report(r, source_ids);
    if (r.kind == "chip" && !catalog.chips.contains(r.id)) report(r, chip_ids);
    if (r.kind == "format" && !catalog.formats.contains(r.id)) report(r, format_ids);
    if (r.kind == "system" && !catalog.systems.contains(r.id)) report(r, system_ids);
    if (r.kind == "model" && !catalog.models.contains(r.id)) report(r, catalog.model_ids());
    if (r.kind.starts_with("precision:")) {
      const Model* model = catalog.find_model(r.kind.substr(10));
      std::vector<std::string> precisions;
      if (model != nullptr)
        for (const auto& [k, _] : model->variants) precisions.push_back(k);
      if (model != nullptr && !model->variants.contains(r.id))
        diagnostics.push_back(Diagnostic{
            r.where, r.path,
            "model '" + model->id + "' has no precision '" + r.id + "'" +
                did_you_mean(r.id, precisions),
            "use one of the model's variants"});
    }
    if (r.kind == "prior" && !catalog.efficiency_priors.contains(r.id)) {
      std::vector<std::string> prior_ids;
      for (const auto& [k, _] : catalog.efficiency_priors) prior_ids.push_back(k);
      report(r, prior_ids);
    }
  }
  // A system may follow one prior only; the second listing in the file is the one reported.
  std::map<std::string, std::string> owner;
  auto listing = [&](const std::string& system) {
    const PendingRef* second = nullptr;
    int seen = 0;
    for (const auto& r : refs)
      if (r.kind == "system" && r.id == system && r.path.starts_with("efficiency_priors[") &&
          ++seen == 2)
        second = &r;
    return second;
  };
  for (const auto& [id, p] : catalog.efficiency_priors)
    for (const auto& s : p.systems)
      if (auto [it, inserted] = owner.emplace(s, id); !inserted) {
        const PendingRef* at = listing(s);
        diagnostics.push_back(Diagnostic{
            at ? at->where : SourceLocation{}, at ? at->path : "efficiency_priors",
            "system '" + s + "' is listed by both priors '" + it->second + "' and '" + id + "'",
            "list each system in one prior"});
      }
  // A multi-node recipe is a disaggregated deployment: its system must offer disaggregation.
  for (std::size_t i = 0; i < catalog.multinode_recipes.size(); ++i)
    if (const auto& r = catalog.multinode_recipes[i];
        catalog.systems.contains(r.system) && !catalog.systems.at(r.system)->serving.disaggregation)
      diagnostics.push_back(Diagnostic{
          recipe_at[i].where, recipe_at[i].path,
          "system '" + r.system + "' has serving.disaggregation: false, so its multi-node recipe "
          "would never run",
          "set disaggregation: true in its serving stack or remove the recipe"});
  // Link systems to their chips (systems are immutable once built: rebuild with the pointer set).
  for (auto& [id, sys] : catalog.systems) {
    auto it = catalog.chips.find(sys->chip_id);
    if (it == catalog.chips.end()) continue;
    auto linked = std::make_shared<System>(*sys);
    linked->chip = it->second;
    apply_calibrated_power(*linked, *it->second);
    sys = std::move(linked);
    // Idle power must sit below the most the XPU draws: its rated TDP, and below a measured
    // sustained power where one is published.
    const Chip& chip = *it->second;
    const Watts most = chip.sustained_power.value_or(chip.tdp);
    if (auto idle = pending_idle.find(id);
        idle != pending_idle.end() && sys->power.xpu_idle && *sys->power.xpu_idle >= most)
      diagnostics.push_back(Diagnostic{
          idle->second.where, idle->second.path,
          "xpu_idle " + format(*sys->power.xpu_idle) + " is not below the chip's " +
              (chip.sustained_power ? "measured sustained power " : "TDP ") + format(most),
          "idle power must be below what the XPU draws at load"});
  }
}

}  // namespace

std::expected<Catalog, Diagnostics> load_catalog_strings(const std::vector<CatalogText>& texts) {
  Loader loader;
  if (texts.empty()) {
    return std::unexpected(Diagnostics{
        Diagnostic{{}, "", "no catalog files given", "point --catalog at scenarios/catalog"}});
  }
  for (const auto& t : texts) loader.read_text(t.name, t.text);
  loader.resolve();
  if (!loader.diagnostics.empty()) return std::unexpected(std::move(loader.diagnostics));
  return std::move(loader.catalog);
}

std::expected<Catalog, Diagnostics> load_catalog_files(const std::vector<std::string>& files) {
  std::vector<CatalogText> texts;
  Diagnostics unreadable;
  for (const auto& f : files) {
    auto text = yaml::read_text_file(f, "the catalog file");
    if (text)
      texts.push_back({f, std::move(*text)});
    else
      unreadable.insert(unreadable.end(), text.error().begin(), text.error().end());
  }
  if (unreadable.empty()) return load_catalog_strings(texts);
  // The files that could not be read, then the problems of those that were.
  if (!texts.empty())
    if (auto catalog = load_catalog_strings(texts); !catalog)
      unreadable.insert(unreadable.end(), catalog.error().begin(), catalog.error().end());
  return std::unexpected(std::move(unreadable));
}

std::expected<Catalog, Diagnostics> load_catalog_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return std::unexpected(Diagnostics{
        Diagnostic{SourceLocation{dir, 0, 0}, "", "not a catalog directory",
                   "give a directory of catalog *.yaml files (--catalog or RACKTWIN_CATALOG)"}});
  }
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec) && e.path().extension() == ".yaml")
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    return std::unexpected(Diagnostics{Diagnostic{SourceLocation{dir, 0, 0}, "",
                                                  "the catalog directory has no *.yaml files",
                                                  "point --catalog at scenarios/catalog"}});
  }
  return load_catalog_files(files);
}

}  // namespace racktwin
