#include "app/explain.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <expected>
#include <map>
#include <stdexcept>
#include <string_view>

#include "core/error.hpp"
#include "db/provenance.hpp"
#include "power/power_model.hpp"
#include "scenarios/scenario_loader.hpp"

namespace racktwin::app {
namespace {

constexpr std::string_view kDocsMetrics = "docs/simulation.md §6";
constexpr std::string_view kDocsNormalisations =
    "docs/simulation.md §6.2; docs/power.md \"All-in power and the normalisations\"";
constexpr std::string_view kDocsXpuPower = "docs/power.md \"XPU power\"; docs/simulation.md §6.2";
constexpr std::string_view kDocsRacks = "docs/power.md \"Racks, pairs and deployments\"";
constexpr std::string_view kDocsAllIn = "docs/power.md \"All-in power and the normalisations\"";
constexpr std::string_view kDocsShare =
    "docs/power.md \"All-in power and the normalisations\" (where an XPU's power goes); "
    "docs/results.md §5";

class Context;
using ValueFn = double (*)(const Context&);

// How a metric is derived. Inputs name stored metrics (expanded with their own entry, or shown as
// simulation outputs) or the power and catalog terms of terms() below.
struct Recipe {
  std::vector<std::string_view> names;  // the newest name first, then former ones
  std::string_view label;
  std::string_view unit;  // when the run does not store the metric
  std::string_view formula;
  std::string_view docs;
  std::vector<std::string_view> inputs;
  ValueFn value;  // through the functions the simulation uses
};

// The point, the run and the catalog a derivation reads.
class Context {
 public:
  Context(const Catalog& catalog, const db::StoredRun& stored_run, const db::StoredPoint& at,
          const FacilitySpec& facility_spec, bool facility_was_read)
      : cat(catalog),
        run(stored_run),
        point(at),
        facility(facility_spec),
        facility_read(facility_was_read),
        model_(model_of(catalog, at, facility_spec)) {}

  const Catalog& cat;
  const db::StoredRun& run;
  const db::StoredPoint& point;
  const FacilitySpec& facility;
  bool facility_read;  // false: the scenario's facility could not be read, defaults are used

  // A stored metric under any of its names; nullopt when the point does not store it.
  std::optional<double> stored(std::string_view name) const;
  double need(std::string_view name) const {
    if (auto v = stored(name)) return *v;
    throw InputError({Diagnostic{
        {},
        "METRIC",
        fmt::format("point {} of run {} stores no '{}'", point.index, run.info.id, name),
        "the run was stored by a racktwin that did not record it"}});
  }
  // The unit the run stores a metric with; empty when it does not store it.
  std::string unit(std::string_view name) const {
    for (const auto& m : run.metrics)
      if (m.name == name) return m.unit;
    return {};
  }
  const power::PowerModel& power() const {
    if (!model_)
      throw InputError({Diagnostic{
          {},
          "POINT",
          fmt::format("the power of point {} cannot be derived: {}", point.index, model_.error()),
          "give the catalog the run was simulated with: racktwin --catalog DIR explain ..."}});
    return *model_;
  }
  // The point's system; throws like power() when the catalog cannot model it.
  const System& sys() const { return power().system(); }
  power::Activity activity() const {
    return {need("compute_activity"), need("memory_activity"), need("link_activity"),
            need("busy_activity")};
  }
  TokensPerSecond tps() const { return TokensPerSecond(need("total_tps_per_xpu")); }
  power::Operating operating() const { return power::Operating::at(activity()); }
  power::XpuPowerShare share() const { return power().share_per_xpu(operating()); }
  power::Normalised norms() const { return power::normalise(power(), tps(), activity()); }

 private:
  static std::expected<power::PowerModel, std::string> model_of(const Catalog& catalog,
                                                                const db::StoredPoint& at,
                                                                const FacilitySpec& f) {
    const System* s = catalog.find_system(at.key.system);
    if (s == nullptr)
      return std::unexpected(fmt::format("system '{}' is not in the catalog", at.key.system));
    return power::PowerModel::of(*s, power::Facility::from(f));
  }
  std::expected<power::PowerModel, std::string> model_;
};

double per_mw_or_zero(TokensPerSecond tps, Watts w) {
  return w.value() > 0 ? power::per_mw(tps / w) : 0.0;
}

// One entry per metric. A rename is one line: put the new name first in `names` and keep the old
// one after it, so runs stored under either name are explained. tps_per_allin_mw and
// power_all_in_w are listed under the names db::point_metrics will store them as.
const std::vector<Recipe>& recipes() {
  static const std::vector<Recipe> table = {
      {{"tps_per_allin_provisioned_mw", "tps_per_allin_mw"},
       "tok/s per all-in MW",
       "tok/s per all-in MW",
       "total tok/s per XPU / all-in W per XPU x 1e6",
       kDocsNormalisations,
       {"total_tps_per_xpu", "all_in_w_per_xpu"},
       [](const Context& c) { return power::per_mw(c.norms().per_all_in); }},
      {{"tps_per_allin_operating_mw"},
       "tok/s per all-in MW at the point's activity",
       "tok/s per all-in MW",
       "total tok/s per XPU / all-in W per XPU at the point's activity x 1e6",
       kDocsShare,
       {"total_tps_per_xpu", "power_all_in_operating_w"},
       [](const Context& c) { return per_mw_or_zero(c.tps(), c.share().all_in()); }},
      {{"tps_per_rated_kw"},
       "tok/s per rated kW",
       "tok/s per rated kW",
       "total tok/s per XPU / XPU rated TDP x 1e3",
       kDocsNormalisations,
       {"total_tps_per_xpu", "xpu_tdp_w"},
       [](const Context& c) { return power::per_kw(c.norms().per_rated_tdp); }},
      {{"tps_per_measured_kw"},
       "tok/s per measured kW",
       "tok/s per measured kW",
       "total tok/s per XPU / XPU power P(c, m) x 1e3",
       kDocsNormalisations,
       {"total_tps_per_xpu", "xpu_power_w"},
       [](const Context& c) { return power::per_kw(c.norms().per_measured); }},
      {{"tps_per_it_kw"},
       "tok/s per IT kW",
       "tok/s per IT kW",
       "total tok/s per XPU / IT W per XPU at the point's activity x 1e3",
       kDocsNormalisations,
       {"total_tps_per_xpu", "it_w_per_xpu_operating"},
       [](const Context& c) { return power::per_kw(c.norms().per_it); }},
      {{"energy_usd_per_mtok"},
       "electricity cost per million tokens at the point",
       "$ per million tokens",
       "all-in W per XPU at the point's activity / total tok/s per XPU x electricity price x 1e6",
       kDocsShare,
       {"power_all_in_operating_w", "total_tps_per_xpu", "electricity_price"},
       [](const Context& c) {
         const double tps = c.tps().value();
         return tps > 0 ? c.share().all_in().value() / tps * c.facility.electricity_price.value() * 1e6
                        : 0.0;
       }},
      {{"power_all_in_operating_w", "power_all_in_w"},
       "all-in W per XPU at the point's activity",
       "W per XPU",
       "XPU + tray overhead + switch trays + hosts + conversion loss + facility overhead, per XPU",
       kDocsShare,
       {"power_xpu_w", "power_tray_overhead_w", "power_switches_w", "power_hosts_w",
        "power_conversion_loss_w", "power_facility_overhead_w"},
       [](const Context& c) { return c.share().all_in().value(); }},
      {{"power_xpu_w"},
       "the XPU itself at the point's activity",
       "W per XPU",
       "XPU power P(c, m)",
       kDocsShare,
       {"xpu_power_w"},
       [](const Context& c) { return c.share().xpu.value(); }},
      {{"power_tray_overhead_w"},
       "compute-tray overhead per XPU",
       "W per XPU",
       "compute trays per rack x tray overhead / XPUs per rack",
       kDocsShare,
       {"compute_trays_per_rack", "compute_tray_overhead_w", "xpus_per_rack"},
       [](const Context& c) { return c.share().tray_overhead.value(); }},
      {{"power_switches_w"},
       "scale-up switch trays per XPU",
       "W per XPU",
       "switch trays per rack x switch tray / XPUs per rack",
       kDocsShare,
       {"switch_trays_per_rack", "switch_tray_w", "xpus_per_rack"},
       [](const Context& c) { return c.share().switches.value(); }},
      {{"power_hosts_w"},
       "hosts per XPU in production",
       "W per XPU",
       "host parts per rack x host in production / XPUs per rack",
       kDocsShare,
       {"host_parts_per_rack", "host_production_w", "xpus_per_rack"},
       [](const Context& c) { return c.share().hosts.value(); }},
      {{"power_conversion_loss_w"},
       "conversion loss per XPU",
       "W per XPU",
       "(XPU + tray overhead + switch trays + hosts, per XPU) x (1 / conversion efficiency - 1)",
       kDocsShare,
       {"power_xpu_w", "power_tray_overhead_w", "power_switches_w", "power_hosts_w",
        "conversion_efficiency"},
       [](const Context& c) { return c.share().conversion_loss.value(); }},
      {{"power_facility_overhead_w"},
       "facility overhead per XPU",
       "W per XPU",
       "IT W per XPU at the point's activity x (PUE - 1)",
       kDocsShare,
       {"it_w_per_xpu_operating", "pue"},
       [](const Context& c) { return c.share().facility_overhead.value(); }},
      {{"xpu_power_w"},
       "XPU power P(a)",
       "W per XPU",
       "P_idle + (P_max - P_idle) x (b x u + (1 - b) x ((1 - s - l) x c + s x m + l x n))",
       kDocsXpuPower,
       {"xpu_idle_w", "xpu_max_w", "xpu_busy_share", "xpu_memory_share", "xpu_link_share",
        "busy_activity", "compute_activity", "memory_activity", "link_activity"},
       [](const Context& c) { return c.power().xpu().at(c.activity()).value(); }},
      {{"energy_per_token_j"},
       "XPU energy per token",
       "J/token",
       "XPU power P(a) / total tok/s per XPU",
       kDocsMetrics,
       {"xpu_power_w", "total_tps_per_xpu"},
       [](const Context& c) {
         const double tps = c.tps().value();
         return tps > 0 ? c.power().xpu().at(c.activity()).value() / tps : 0.0;
       }},
      {{"total_tps_per_xpu"},
       "total tok/s per XPU",
       "tok/s/XPU",
       "(input tokens + output tokens) / measured window / XPUs",
       kDocsMetrics,
       {"input_tokens", "output_tokens", "duration_s", "xpus"},
       [](const Context& c) {
         const double d = c.need("duration_s");
         return d > 0 ? (c.need("input_tokens") + c.need("output_tokens")) / d / c.point.xpus : 0.0;
       }},
      {{"output_tps_per_xpu"},
       "output tok/s per XPU",
       "tok/s/XPU",
       "output tokens / measured window / XPUs",
       kDocsMetrics,
       {"output_tokens", "duration_s", "xpus"},
       [](const Context& c) {
         const double d = c.need("duration_s");
         return d > 0 ? c.need("output_tokens") / d / c.point.xpus : 0.0;
       }},
      {{"input_tps_per_xpu"},
       "input tok/s per XPU",
       "tok/s/XPU",
       "input tokens / measured window / XPUs",
       kDocsMetrics,
       {"input_tokens", "duration_s", "xpus"},
       [](const Context& c) {
         const double d = c.need("duration_s");
         return d > 0 ? c.need("input_tokens") / d / c.point.xpus : 0.0;
       }},
      {{"interactivity_tok_s_user"},
       "interactivity",
       "tok/s/user",
       "1 / median TPOT",
       kDocsMetrics,
       {"tpot_median_s"},
       [](const Context& c) {
         const double t = c.need("tpot_median_s");
         return t > 0 ? 1.0 / t : 0.0;
       }},
  };
  return table;
}

const Recipe* find_recipe(std::string_view name) {
  for (const auto& r : recipes())
    if (std::find(r.names.begin(), r.names.end(), name) != r.names.end()) return &r;
  return nullptr;
}

std::optional<double> Context::stored(std::string_view name) const {
  if (const Recipe* r = find_recipe(name)) {
    for (const auto n : r->names)
      if (auto v = point.metric(n)) return v;
    return std::nullopt;
  }
  return point.metric(name);
}

// The name the point stores a metric under (one of its names), if any.
std::string stored_name(const Context& c, std::string_view name) {
  if (const Recipe* r = find_recipe(name)) {
    for (const auto n : r->names)
      if (c.point.metric(n)) return std::string(n);
    return {};
  }
  return c.point.metric(name) ? std::string(name) : std::string();
}

// Where the simulation documents an output it stores.
std::string simulation_docs(std::string_view metric) {
  static const std::vector<std::pair<std::string_view, std::string_view>> kSections = {
      {"ttft_", "§6, §6.1"},
      {"tpot_", "§6, §6.1"},
      {"e2e_", "§6, §6.1"},
      {"compute_activity", "§6.2"},
      {"memory_activity", "§6.2"},
      {"link_activity", "§6.2"},
      {"busy_activity", "§6.2"},
      {"all_in_computed", "§6.2"},
      {"iteration_", "§6.4"},
      {"roofline_ratio", "§6.4"},
      {"prefix_hit_rate", "§3.5"},
      {"offload", "§3.8"},
      {"host_tier_blocks", "§3.8"},
      {"kv_transfer_", "§3.7"},
      {"retried_requests", "§3.9"},
      {"replica_down_s", "§3.9"},
      {"recovery_s", "§3.9"},
      {"kv_capacity_tokens", "§3.2"},
      {"max_kv_used_tokens", "§3.2"},
      {"domains", "§2"},
      {"iterations", "§3.3, §8.2"},
      {"plans", "§3.3, §8.2"},
      {"preemptions", "§3.2, §8.2"},
  };
  for (const auto& [prefix, section] : kSections)
    if (metric.starts_with(prefix)) return fmt::format("docs/simulation.md {}", section);
  return std::string(kDocsMetrics);
}

const FieldRecord* find_field(const FieldRecords& fields, std::string_view path) {
  for (const auto& f : fields)
    if (f.path == path) return &f;
  return nullptr;
}

// A catalog figure of `entry` ("system jalapeno-a0", "chip jalapeno-a0") at `path`.
Term catalog_leaf(const Context& c, std::string label, double value, std::string unit,
                  const std::string& entry, const FieldRecords& fields, std::string_view path) {
  Term t;
  t.label = std::move(label);
  t.value = value;
  t.unit = std::move(unit);
  Origin o;
  o.kind = "catalog";
  o.where = fmt::format("{} {}", entry, path);
  if (const FieldRecord* f = find_field(fields, path)) {
    o.text = f->text;
    for (const auto& id : f->provenance.sources) {
      const auto it = c.cat.sources.find(id);
      o.sources.push_back(it == c.cat.sources.end()
                              ? CitedSource{id, "(not in the catalog's sources)", ""}
                              : CitedSource{id, it->second.citation, it->second.url});
    }
    o.assumption = f->provenance.assumption;
    o.reason = f->provenance.reason;
    o.note = f->provenance.note;
  } else {
    o.note = "the entry does not give it: the default applies";
  }
  t.origin = std::move(o);
  return t;
}

// A figure of the scenario's facility: given in the stored scenario text, or the default.
struct FacilityFigure {
  std::string label, unit;
  double value = 0;
  std::string_view docs;
};
Term facility_leaf(const Context& c, const FacilityFigure& f, const std::string& key, bool given,
                   const std::string& default_source) {
  Term t;
  t.label = f.label;
  t.unit = f.unit;
  t.value = f.value;
  t.docs = std::string(f.docs);
  Origin o;
  if (given) {
    o.kind = "scenario";
    o.where = fmt::format("scenario '{}' facility.{} (the text stored with run {})",
                          c.run.info.scenario_name, key, c.run.info.id);
  } else {
    o.kind = "default";
    o.where = "the default " + f.label + ": the scenario gives no facility." + key;
    o.note = default_source;
    if (!c.facility_read) o.note += "; the stored scenario's facility could not be read";
  }
  t.origin = o;
  return t;
}

Term system_leaf(const Context& c, std::string label, double value, std::string unit,
                 std::string_view path) {
  return catalog_leaf(c, std::move(label), value, std::move(unit), "system " + c.sys().id,
                      c.sys().fields, path);
}

Term chip_leaf(const Context& c, std::string label, double value, std::string_view path) {
  const Chip& chip = *c.power().system().chip;
  return catalog_leaf(c, std::move(label), value, "W", "chip " + chip.id, chip.fields, path);
}

Term constant_leaf(std::string label, double value, std::string where, std::string docs) {
  Term t;
  t.label = std::move(label);
  t.value = value;
  t.docs = std::move(docs);
  Origin o;
  o.kind = "constant";
  o.where = std::move(where);
  t.origin = std::move(o);
  return t;
}

Term term_of(const Context& c, std::string_view name);

Term inputs_of(Term t, const Context& c, std::initializer_list<std::string_view> names) {
  for (const auto n : names) t.inputs.push_back(term_of(c, n));
  return t;
}

// IT power per XPU (its share of the compute rack and of the host trays serving it), provisioned
// or at the point's activity, as PowerModel::it_per_xpu computes it.
Term it_term(const Context& c, bool provisioned) {
  const power::PowerModel& pm = c.power();
  const power::Operating op = provisioned ? power::Operating::rated() : c.operating();
  const power::XpuPowerShare share = pm.share_per_xpu(op);
  Term t;
  t.label = provisioned ? "IT W per XPU, provisioned" : "IT W per XPU at the point's activity";
  t.value = pm.it_per_xpu(op).value();
  t.unit = "W per XPU";
  t.docs = kDocsRacks;
  std::vector<std::string_view> parts{provisioned ? "XPU rated TDP" : "XPU P(c, m)"};
  t.inputs.push_back(term_of(c, provisioned ? "xpu_tdp_w" : "power_xpu_w"));
  if (share.tray_overhead.value() > 0) {
    parts.push_back("tray overhead");
    t.inputs.push_back(term_of(c, "power_tray_overhead_w"));
  }
  if (share.switches.value() > 0) {
    parts.push_back("switch trays");
    t.inputs.push_back(term_of(c, "power_switches_w"));
  }
  if (share.hosts.value() > 0) {
    parts.push_back(provisioned ? "hosts rated" : "hosts in production");
    t.inputs.push_back(term_of(c, provisioned ? "host_share_rated_w" : "power_hosts_w"));
  }
  std::string sum;
  for (const auto p : parts) sum += (sum.empty() ? "" : " + ") + std::string(p);
  t.formula = fmt::format("({}, per XPU) / conversion efficiency", sum);
  t.inputs.push_back(term_of(c, "conversion_efficiency"));
  return t;
}

// The host figure the point's operating activity uses: the production draw where the catalog has
// one, else the rating.
Term host_production(const Context& c) {
  const auto& p = c.sys().power;
  const std::string name = c.sys().host.name;
  if (p.host_production)
    return system_leaf(c, name + " in production", p.host_production->value(), "W",
                       "power.host_production");
  Term t = system_leaf(c, name + " rated", p.host.value_or(Watts{}).value(), "W", "power.host");
  t.note = "the catalog has no production draw for it: the rating is used";
  return t;
}

Term host_parts_per_rack(const Context& c) {
  const power::PowerModel& pm = c.power();
  const System& s = c.sys();
  Term t;
  t.label = s.host.name + " parts serving one compute rack";
  t.value = pm.compute_rack_parts().hosts + pm.host_rack_parts().hosts;
  t.unit = "parts";
  t.formula = "compute trays per rack x host parts per compute tray";
  t.docs = kDocsRacks;
  t.inputs.push_back(term_of(c, "compute_trays_per_rack"));
  const double per_tray = s.host_parts_per_compute_tray();
  switch (s.host.placement) {
    case HostPlacement::separate_rack:
      t.inputs.push_back(
          system_leaf(c, "host trays per compute tray", per_tray, "", "host.per_compute_tray"));
      break;
    case HostPlacement::in_compute_tray:
      t.inputs.push_back(system_leaf(c, "CPUs per compute tray", per_tray, "", "host.cpus"));
      break;
    case HostPlacement::in_server:
      t.inputs.push_back(constant_leaf("hosts per server", per_tray,
                                       "one host per server (System::host_parts_per_compute_tray)",
                                       std::string(kDocsRacks)));
      break;
  }
  return t;
}

// Terms that are not stored metrics: catalog figures, the facility, compiled-in constants, and
// the power model's intermediate figures.
const std::map<std::string_view, Term (*)(const Context&)>& terms() {
  static const std::map<std::string_view, Term (*)(const Context&)> table = {
      {"xpus",
       [](const Context& c) {
         Term t;
         t.label = "XPUs";
         t.value = c.point.xpus;
         t.unit = "XPUs";
         t.docs = kDocsMetrics;
         Origin o;
         o.kind = "point";
         o.where = "the point's layout (replicas x tp x pp, both pools when disaggregated)";
         o.text = fmt::format("{} x{} {}", c.point.key.layout, c.point.key.replicas,
                              c.point.key.serving);
         t.origin = o;
         return t;
       }},
      {"xpus_per_rack",
       [](const Context& c) {
         Term t;
         t.label = "XPUs per rack";
         t.value = c.power().system().xpus_per_rack();
         t.unit = "XPUs";
         t.formula = "XPUs per compute tray x compute trays per rack";
         t.docs = kDocsRacks;
         t.inputs.push_back(system_leaf(c, "XPUs per " + c.sys().compute_tray.name,
                                        c.sys().compute_tray.xpus, "XPUs", "compute_tray.xpus"));
         t.inputs.push_back(term_of(c, "compute_trays_per_rack"));
         return t;
       }},
      {"compute_trays_per_rack",
       [](const Context& c) {
         return system_leaf(c, c.sys().compute_tray.name + " trays per rack",
                            c.power().system().compute_trays_per_rack, "trays",
                            "compute_trays_per_rack");
       }},
      {"switch_trays_per_rack",
       [](const Context& c) {
         return system_leaf(c, c.sys().switches.name + " switch trays per rack",
                            c.power().system().switches.per_rack, "trays", "switch_trays.per_rack");
       }},
      {"host_parts_per_rack", host_parts_per_rack},
      {"compute_tray_overhead_w",
       [](const Context& c) {
         return system_leaf(c, c.power().system().compute_tray.name + " overhead",
                            c.sys().power.compute_tray_overhead.value_or(Watts{}).value(), "W",
                            "power.compute_tray_overhead");
       }},
      {"switch_tray_w",
       [](const Context& c) {
         return system_leaf(c, c.power().system().switches.name + " switch tray",
                            c.sys().power.switch_tray.value_or(Watts{}).value(), "W",
                            "power.switch_tray");
       }},
      {"host_production_w", host_production},
      {"host_share_rated_w",
       [](const Context& c) {
         Term t;
         t.label = "hosts per XPU, rated";
         t.value = c.power().share_per_xpu(power::Operating::rated()).hosts.value();
         t.unit = "W per XPU";
         t.formula = "host parts per rack x host rated / XPUs per rack";
         t.docs = kDocsRacks;
         t.inputs.push_back(term_of(c, "host_parts_per_rack"));
         t.inputs.push_back(system_leaf(c, c.sys().host.name + " rated",
                                        c.sys().power.host.value_or(Watts{}).value(), "W",
                                        "power.host"));
         t.inputs.push_back(term_of(c, "xpus_per_rack"));
         return t;
       }},
      {"xpu_tdp_w",
       [](const Context& c) {
         return chip_leaf(c, "XPU rated TDP", c.power().xpu().tdp().value(), "tdp");
       }},
      {"xpu_idle_w",
       [](const Context& c) {
         return system_leaf(c, "P_idle, XPU idle power", c.power().xpu().idle().value(), "W",
                            "power.xpu_idle");
       }},
      {"xpu_max_w",
       [](const Context& c) {
         Term t = chip_leaf(c, "P_max, XPU rated TDP", c.power().xpu().tdp().value(), "tdp");
         if (const auto& m = c.sys().chip->sustained_power)
           t.note = fmt::format("measured at load: {:g} W, a check on the model, not its ceiling",
                                m->value());
         return t;
       }},
      {"xpu_busy_share",
       [](const Context& c) {
         return system_leaf(c, "b, busy share of dynamic power", c.power().xpu().shares().busy,
                            "fraction", "power.xpu_busy_share");
       }},
      {"xpu_memory_share",
       [](const Context& c) {
         return system_leaf(c, "s, memory share of the rest", c.power().xpu().shares().memory,
                            "fraction", "power.xpu_memory_share");
       }},
      {"xpu_link_share",
       [](const Context& c) {
         return system_leaf(c, "l, link share of the rest", c.power().xpu().shares().link,
                            "fraction", "power.xpu_link_share");
       }},
      {"pue",
       [](const Context& c) {
         return facility_leaf(c, {"PUE", "", c.power().facility().pue, kDocsRacks}, "pue",
                              c.facility.pue_given,
                              "reference specs section 6: new liquid-cooled AI halls 1.05-1.15, "
                              "Google fleet about 1.10");
       }},
      {"electricity_price",
       [](const Context& c) {
         return facility_leaf(
             c, {"electricity price", "$ per J", c.facility.electricity_price.value(), kDocsShare},
             "electricity_price", c.facility.price_given,
             "reference specs section 6: blended $0.065-0.090/kWh for AI datacenters in 2026");
       }},
      {"conversion_efficiency",
       [](const Context& c) {
         const power::Conversion& k = c.power().facility().conversion;
         Term t;
         t.label = "conversion efficiency";
         t.value = k.efficiency();
         t.formula = "rectifier x point of load";
         t.docs = kDocsRacks;
         const std::string where =
             "racktwin's default (power::Conversion), from reference specs section 6: the ORNL "
             "ExaDigiT/RAPS Frontier configuration";
         t.inputs.push_back(
             constant_leaf("rectifier efficiency", k.rectifier, where, std::string(kDocsRacks)));
         t.inputs.push_back(constant_leaf("point-of-load efficiency", k.point_of_load, where,
                                          std::string(kDocsRacks)));
         return t;
       }},
      {"it_w_per_xpu_provisioned", [](const Context& c) { return it_term(c, true); }},
      {"it_w_per_xpu_operating", [](const Context& c) { return it_term(c, false); }},
      {"all_in_w_per_xpu",
       [](const Context& c) {
         const power::AllIn a = c.power().all_in();
         if (!a.computed) {
           Term t = system_leaf(c, "all-in W per XPU (published)", a.per_xpu.value(), "W per XPU",
                                "power.all_in_per_xpu");
           t.docs = kDocsAllIn;
           t.note = fmt::format(
               "the published InferenceX constant; the components and PUE would give {:.6g} W",
               a.computed_per_xpu.value());
           return t;
         }
         Term t;
         t.label = "all-in W per XPU, provisioned (computed)";
         t.value = a.per_xpu.value();
         t.unit = "W per XPU";
         t.formula = "IT W per XPU, provisioned x PUE";
         t.docs = kDocsAllIn;
         t.note = fmt::format(
             "computed: {} has no published InferenceX all-in figure (catalog "
             "power.all_in_per_xpu)",
             c.sys().id);
         return inputs_of(std::move(t), c, {"it_w_per_xpu_provisioned", "pue"});
       }},
  };
  return table;
}

Term metric_term(const Context& c, const Recipe& r, std::string_view asked) {
  Term t;
  const std::string stored_as = stored_name(c, asked);
  t.metric = stored_as.empty() ? std::string(asked) : stored_as;
  t.label = r.label;
  t.unit = stored_as.empty() ? std::string(r.unit) : c.unit(stored_as);
  if (t.unit.empty()) t.unit = r.unit;
  t.formula = r.formula;
  t.docs = r.docs;
  t.value = r.value(c);
  for (const auto n : r.inputs) t.inputs.push_back(term_of(c, n));
  return t;
}

Term simulation_leaf(const Context& c, std::string_view name) {
  Term t;
  t.label = std::string(name);
  t.metric = std::string(name);
  t.value = c.need(name);
  t.unit = c.unit(name);
  t.docs = simulation_docs(name);
  Origin o;
  o.kind = "simulation";
  o.where = "the simulation's output, stored with the point";
  t.origin = o;
  return t;
}

Term term_of(const Context& c, std::string_view name) {
  if (const Recipe* r = find_recipe(name)) return metric_term(c, *r, name);
  if (const auto it = terms().find(name); it != terms().end()) return it->second(c);
  return simulation_leaf(c, name);
}

// Every metric name the run or the table knows, for the error on an unknown one.
std::vector<std::string> known_names(const db::StoredRun& run) {
  std::vector<std::string> names;
  for (const auto& m : run.metrics) names.push_back(m.name);
  for (const auto& n : explained_metric_names())
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  return names;
}

std::vector<std::string> close_names(const std::string& word,
                                     const std::vector<std::string>& names) {
  std::vector<std::pair<std::size_t, std::string>> scored;
  const std::size_t limit = std::max<std::size_t>(3, word.size() / 3);
  for (const auto& n : names) {
    const std::size_t d = edit_distance(word, n);
    const bool contains = word.size() >= 3 &&
                          (n.find(word) != std::string::npos || word.find(n) != std::string::npos);
    if (d <= limit || contains) scored.emplace_back(contains ? 0 : d, n);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < 8; ++i) out.push_back(scored[i].second);
  return out;
}

[[noreturn]] void fail(std::string path, std::string message, std::string hint) {
  throw InputError({Diagnostic{{}, std::move(path), std::move(message), std::move(hint)}});
}

// The metric's value at a point: stored, else derived; nullopt when neither is possible.
std::optional<double> value_at(const Context& c, const std::string& metric) {
  if (auto v = c.stored(metric)) return v;
  const Recipe* r = find_recipe(metric);
  if (r == nullptr) return std::nullopt;
  try {
    return r->value(c);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Json origin_json(const Origin& o) {
  Json j{{"kind", o.kind}, {"where", o.where}};
  if (!o.text.empty()) j["text"] = o.text;
  if (!o.sources.empty()) {
    Json s = Json::array();
    for (const auto& x : o.sources)
      s.push_back({{"id", x.id}, {"citation", x.citation}, {"url", x.url}});
    j["sources"] = s;
  }
  j["assumption"] = o.assumption;
  if (!o.reason.empty()) j["reason"] = o.reason;
  if (!o.note.empty()) j["note"] = o.note;
  return j;
}

Json term_json(const Term& t) {
  Json j{{"label", t.label}};
  if (!t.metric.empty()) j["metric"] = t.metric;
  j["value"] = t.value;
  j["unit"] = t.unit;
  if (!t.formula.empty()) j["formula"] = t.formula;
  if (!t.docs.empty()) j["docs"] = t.docs;
  if (!t.note.empty()) j["note"] = t.note;
  if (t.origin) j["origin"] = origin_json(*t.origin);
  if (!t.inputs.empty()) {
    Json in = Json::array();
    for (const auto& x : t.inputs) in.push_back(term_json(x));
    j["inputs"] = in;
  }
  return j;
}

}  // namespace

std::vector<std::string> explained_metric_names() {
  std::vector<std::string> out;
  for (const auto& r : recipes())
    for (const auto n : r.names) out.emplace_back(n);
  return out;
}

bool Explanation::matches() const {
  if (!stored) return true;
  const double scale = std::max({std::abs(*stored), std::abs(term.value), 1e-300});
  return std::abs(*stored - term.value) <= 1e-9 * scale;
}

Json Explanation::to_json() const {
  Json j{{"run", run},
         {"scenario", scenario},
         {"point", {{"index", point}, {"label", point_label}, {"chosen", peak ? "peak" : "given"}}},
         {"metric", metric},
         {"stored_as", stored_as.empty() ? Json() : Json(stored_as)},
         {"stored", stored ? Json(*stored) : Json()},
         {"value", term.value},
         {"matches", matches()},
         {"derived", derived}};
  if (peak) j["point"]["compared"] = compared;
  if (!plain.empty()) j["plain"] = plain;
  j["notes"] = notes;
  j["term"] = term_json(term);
  return j;
}

Explanation explain(const Catalog& catalog, const db::StoredRun& run,
                    const ExplainRequest& request) {
  const std::string& metric = request.metric;
  const Recipe* recipe = find_recipe(metric);
  const auto names = known_names(run);
  if (recipe == nullptr && std::find(names.begin(), names.end(), metric) == names.end()) {
    const auto close = close_names(metric, names);
    std::string hint;
    for (const auto& n : close) hint += (hint.empty() ? "close names: " : ", ") + n;
    if (hint.empty()) hint = "the metrics are listed in docs/results.md §5";
    fail("METRIC", fmt::format("run {} has no metric '{}'", run.info.id, metric), hint);
  }

  Explanation e;
  e.run = run.info.id;
  e.scenario = run.info.scenario_name;
  e.metric = metric;
  auto facility = load_scenario_facility(run.info.scenario_text, run.info.scenario_file);
  const bool facility_read = facility.has_value();
  const FacilitySpec spec = facility_read ? *facility : FacilitySpec{};
  if (!facility_read)
    e.notes.push_back(fmt::format(
        "the facility of run {}'s stored scenario could not be read ({}): the defaults are used",
        run.info.id, facility.error().empty() ? "" : facility.error().front().to_string()));
  const std::string hash_now = db::catalog_hash(catalog);
  if (hash_now != run.info.catalog_hash)
    e.notes.push_back(fmt::format(
        "the catalog has changed since run {} was stored (catalog {} then, {} now): catalog "
        "figures are today's, and a value may differ from the stored one",
        run.info.id, run.info.catalog_hash, hash_now));

  const db::StoredPoint* chosen = nullptr;
  if (request.point) {
    for (const auto& p : run.points)
      if (p.index == *request.point) chosen = &p;
    if (chosen == nullptr)
      fail("POINT", fmt::format("run {} has no point {}", run.info.id, *request.point),
           run.points.empty()
               ? std::string("the run stored no point")
               : fmt::format("its points are {} to {} ('racktwin runs show {}' lists them)",
                             run.points.front().index, run.points.back().index, run.info.id));
    if (!chosen->error.empty())
      fail("POINT",
           fmt::format("point {} of run {} did not run: {}", chosen->index, run.info.id,
                       chosen->error),
           "choose a point that ran ('racktwin runs show " + std::to_string(run.info.id) + "')");
  } else {
    std::optional<double> best;
    for (const auto& p : run.points) {
      if (!p.error.empty()) continue;
      const Context c(catalog, run, p, spec, facility_read);
      const auto v = value_at(c, metric);
      if (!v) continue;
      ++e.compared;
      if (!best || *v > *best) {
        best = v;
        chosen = &p;
      }
    }
    if (chosen == nullptr)
      fail("METRIC", fmt::format("no point of run {} has a value of '{}'", run.info.id, metric),
           "the run's points did not run, or were stored without this metric");
    e.peak = true;
  }
  e.point = chosen->index;
  e.point_label = chosen->key.label();

  const Context c(catalog, run, *chosen, spec, facility_read);
  e.stored_as = stored_name(c, metric);
  e.stored = c.stored(metric);
  if (recipe != nullptr) {
    e.derived = true;
    e.term = metric_term(c, *recipe, metric);
    e.term.metric = metric;
  } else {
    e.term = simulation_leaf(c, metric);
    e.plain = fmt::format("no derivation recorded for {}; it is a simulation output: {}", metric,
                          simulation_docs(metric));
  }
  return e;
}

std::string Origin::describe(const std::string& docs,
                             std::map<std::string, CitedSource>& cited) const {
  std::string s;
  if (kind == "catalog") {
    s = "catalog " + where + (text.empty() ? "" : " = \"" + text + "\"");
    if (assumption) {
      s += "; assumption: " + reason;
    } else if (!sources.empty()) {
      std::string ids;
      for (const auto& x : sources) {
        ids += (ids.empty() ? "" : ", ") + x.id;
        cited.emplace(x.id, x);
      }
      s += "; source " + ids;
    }
  } else if (kind == "simulation") {
    s = where + (docs.empty() ? "" : " (" + docs + ")");
  } else {
    s = where + (text.empty() ? "" : ": " + text);
  }
  if (!note.empty()) s += " (" + note + ")";
  return s;
}

}  // namespace racktwin::app
