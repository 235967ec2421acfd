#include "scenarios/plan_loader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "scenarios/figure_reader.hpp"
#include "scenarios/yaml_reader.hpp"

namespace racktwin {
namespace {

namespace fs = std::filesystem;
using yaml::assumed;
using yaml::Context;
using yaml::FigureReader;
using yaml::MapReader;
using yaml::sourced;

constexpr double kMaxUnitsPerQuarter = 1e7;
constexpr int kMaxQuarters = 200;

PlanDefaults make_defaults() {
  PlanDefaults d;
  auto& c = d.costs;
  c.electricity_price =
      assumed(usd_per_kwh(0.08).value(), "central value of the blended 2026 range $0.065-0.090/kWh",
              "reference specs section 6: blended $0.065-0.090/kWh for AI datacenters in 2026");
  c.facility_capex = sourced(10.7,
                             "reference specs section 7: facility build $7.7M-10.7M/MW (CBRE "
                             "average); AI-optimised halls $20M+/MW (unverified)");
  c.depreciation_years = sourced(5,
                                 "reference specs section 6: servers depreciated over 5-6 years "
                                 "at hyperscalers (Amazon 5-6, Meta 5.5, Microsoft and Google 6)");
  c.facility_years = assumed(15,
                             "not in the reference: a common life for datacenter shells and "
                             "electrical plant");
  c.maintenance = assumed(0.03,
                          "not in the reference: hardware maintenance and spares per year as "
                          "a share of hardware capex");
  c.financing_rate = assumed(0.08,
                             "not in the reference: a cost of capital for a large "
                             "infrastructure borrower");
  c.utilisation = sourced(1.0,
                          "InferenceX's cost per million tokens assumes the fleet serves at "
                          "its measured throughput all the time (reference specs section 7)");
  c.output_price_ratio = assumed(4,
                                 "not in the reference: output tokens priced 4x input tokens, as "
                                 "in common API price lists");
  d.pue = sourced(1.10,
                  "reference specs section 6: new liquid-cooled AI halls 1.05-1.15, central "
                  "1.10");
  d.dock_to_rack = assumed(4 * 7 * 86400.0,
                           "not in the reference: four weeks from the dock to a "
                           "rack ready to commission");
  return d;
}

std::optional<Quarter> read_quarter(Context& ctx, const YAML::Node& n, const std::string& path) {
  auto s = yaml::read_string(ctx, n, path);
  if (!s) return std::nullopt;
  auto q = quarter_from_string(*s);
  if (!q)
    ctx.error(n, path, "expected a quarter such as 2026Q3, got '" + *s + "'",
              "write the year and the quarter: 2026Q3");
  return q;
}

// A mapping from quarters to values, e.g. {2026Q3: 100 MW, 2027Q1: 400 MW}.
template <class Read>
std::map<Quarter, double> read_quarter_map(Context& ctx, MapReader& m, std::string_view key,
                                           const Read& read_value) {
  std::map<Quarter, double> out;
  const YAML::Node node = m.get(key);
  const std::string path = m.child(key);
  if (!node.IsMap()) {
    ctx.error(node, path,
              "expected a mapping from quarters to values, e.g. {2026Q3: 100, 2027Q1: 400}");
    return out;
  }
  for (const auto& kv : node) {
    const std::string kpath = yaml::join_path(path, kv.first.Scalar());
    auto q = read_quarter(ctx, kv.first, kpath);
    auto v = read_value(kv.second, kpath);
    if (!q || !v) continue;
    if (!out.emplace(*q, *v).second)
      ctx.error(kv.first, kpath, "quarter " + to_string(*q) + " is given twice",
                "give each quarter once");
  }
  return out;
}

class PlanReader {
 public:
  PlanReader(Context& ctx, const Catalog& cat, std::string base_dir)
      : ctx_(ctx), cat_(cat), figures_(ctx), base_dir_(std::move(base_dir)) {}

  void read(MapReader& top, Plan& p) {
    const auto& d = plan_defaults();
    if (auto v = top.string("name", true)) p.name = *v;
    if (auto v = top.string("description", false)) p.description = *v;
    read_quarters(top, p);
    if (auto b = top.choice("power_basis", true, power_basis_names()))
      p.basis = *power_basis_from_string(*b);
    read_list(top, "workloads", false,
              [&](MapReader& m, std::size_t) { p.workloads.push_back(read_workload(m)); });
    read_list(top, "sites", true,
              [&](MapReader& m, std::size_t) { p.sites.push_back(read_site(m)); });
    read_list(top, "generations", true, [&](MapReader& m, std::size_t) {
      p.generations.push_back(read_generation(m, false));
    });
    read_list(top, "comparators", false, [&](MapReader& m, std::size_t) {
      p.comparators.push_back(read_generation(m, true));
    });
    p.dock_to_rack = figures_.read_or(top, "dock_to_rack", Seconds::kDimension, 0,
                                      5 * 365 * 86400.0, d.dock_to_rack);
    read_costs(top, p.costs);
    read_uncertainty(top, p);
    check_ids(p);
    check_quarters(p);
    check_all_in(top, p);
    bool simulated = false;
    for (const auto* list : {&p.generations, &p.comparators})
      for (const auto& g : *list) simulated = simulated || !g.throughput;
    if (simulated && p.workloads.empty() && !top.has("workloads"))
      top.missing("workloads",
                  "the workload mix whose simulated sweeps give the throughput at the "
                  "service target (or give every generation a throughput:)");
  }

 private:
  void read_quarters(MapReader& top, Plan& p) {
    if (!top.has("quarters")) {
      top.missing("quarters", "a mapping such as {from: 2026Q3, to: 2029Q4}");
      return;
    }
    MapReader q(ctx_, top.get("quarters"), top.child("quarters"));
    if (!q.ok()) return;
    auto from = q.has("from") ? read_quarter(ctx_, q.get("from"), q.child("from")) : std::nullopt;
    auto to = q.has("to") ? read_quarter(ctx_, q.get("to"), q.child("to")) : std::nullopt;
    if (!q.has("from")) q.missing("from", "the first quarter, e.g. 2026Q3");
    if (!q.has("to")) q.missing("to", "the last quarter, e.g. 2029Q4");
    if (from && to) {
      if (*to < *from)
        ctx_.error(q.get("to"), q.child("to"), "the last quarter is before the first",
                   "swap from and to");
      else if (to->index() - from->index() >= kMaxQuarters)
        ctx_.error(q.get("to"), q.child("to"),
                   "a plan spans at most " + std::to_string(kMaxQuarters) + " quarters",
                   "plan 50 years at a time");
      p.first = *from;
      p.last = *to;
    }
    q.finish();
  }

  template <class F>
  void read_list(MapReader& top, std::string_view key, bool required, const F& each) {
    if (!top.has(key)) {
      if (required) top.missing(key, "a list of entries, each starting with '- '");
      return;
    }
    const YAML::Node list = top.get(key);
    if (!list.IsSequence() || list.size() == 0) {
      ctx_.error(list, top.child(key), "expected a non-empty list, each entry starting with '- '");
      return;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      MapReader m(ctx_, list[i], yaml::index_path(top.child(key), i));
      if (!m.ok()) continue;
      each(m, i);
      m.finish();
    }
  }

  PlanWorkload read_workload(MapReader& m) {
    PlanWorkload w;
    w.where = ctx_.location(m.node());
    if (auto s = m.string("scenario", true)) {
      w.scenario =
          fs::path(*s).is_absolute() ? *s : (fs::path(base_dir_) / *s).lexically_normal().string();
      std::error_code ec;  // a name too long for the file system is a file that is not there
      if (!fs::exists(w.scenario, ec))
        ctx_.error(m.get("scenario"), m.child("scenario"), "no scenario file " + w.scenario,
                   "the path is relative to the plan file");
    }
    if (auto s = m.string("workload", true)) w.workload = *s;
    if (auto s = m.string("model", true)) {
      w.model = *s;
      if (cat_.find_model(*s) == nullptr)
        ctx_.error(m.get("model"), m.child("model"),
                   "unknown model '" + *s + "'" + did_you_mean(*s, cat_.model_ids()),
                   "racktwin catalog list shows the catalog's ids");
    }
    if (auto f = figures_.read(m, "share", Dimension{}, 1e-6, 1.0)) w.share = f->value;
    if (m.has("target")) {
      MapReader t(ctx_, m.get("target"), m.child("target"));
      if (t.ok()) {
        auto sec = [&](std::string_view k) -> std::optional<Seconds> {
          auto f = figures_.read(t, k, Seconds::kDimension, 1e-6, 3600);
          return f ? std::optional<Seconds>(Seconds(f->value)) : std::nullopt;
        };
        w.tpot_p50 = sec("tpot_p50");
        w.tpot_p99 = sec("tpot_p99");
        w.ttft_p99 = sec("ttft_p99");
        if (!w.tpot_p50 && !w.tpot_p99 && !w.ttft_p99 && ctx_.ok())
          ctx_.error(m.get("target"), m.child("target"), "the target sets no limit",
                     "give tpot_p50, tpot_p99 or ttft_p99, e.g. {tpot_p50: 20 ms, ttft_p99: 5 s}");
        t.finish();
      }
    } else {
      m.missing("target", "a service target such as {tpot_p50: 20 ms, ttft_p99: 5 s}");
    }
    return w;
  }

  PlanSite read_site(MapReader& m) {
    PlanSite s;
    s.where = ctx_.location(m.node());
    if (auto v = m.string("id", true)) s.id = *v;
    s.pue = figures_.read_or(m, "pue", Dimension{}, 1.0, 3.0, plan_defaults().pue);
    if (m.has("ramp")) {
      auto ramp = read_quarter_map(ctx_, m, "ramp", [&](const YAML::Node& n, const std::string& p) {
        auto v = yaml::read_quantity(ctx_, n, p, Watts::kDimension);
        if (v && (!std::isfinite(*v) || *v < 0 || *v > 1e12)) {
          ctx_.error(n, p, "power out of range: expected 0 W to 1 TW", "check the unit");
          return std::optional<double>();
        }
        return v;
      });
      double last = 0;
      for (const auto& [q, w] : ramp) {
        if (w < last)
          ctx_.error(m.get("ramp"), m.child("ramp"),
                     "the energised power falls in " + to_string(q) +
                         " (ramp values are "
                         "cumulative)",
                     "give the total power energised by each quarter");
        last = w;
        s.ramp.emplace(q, Watts(w));
      }
      if (ramp.empty() && ctx_.ok())
        ctx_.error(m.get("ramp"), m.child("ramp"), "the ramp is empty",
                   "give the facility power energised by a quarter, e.g. {2026Q3: 100 MW}");
    } else {
      m.missing("ramp", "the facility power energised by each quarter, e.g. {2026Q3: 100 MW}");
    }
    if (auto v = m.number("commission_per_week", true, 1e-3, 1e6)) s.commission_per_week = *v;
    return s;
  }

  Generation read_generation(MapReader& m, bool comparator) {
    Generation g;
    g.where = ctx_.location(m.node());
    g.unlimited_supply = comparator;
    auto system = m.string("system", true);
    if (system) {
      g.system = *system;
      if (cat_.find_system(*system) == nullptr)
        ctx_.error(m.get("system"), m.child("system"),
                   "unknown system '" + *system + "'" + did_you_mean(*system, cat_.system_ids()),
                   "racktwin catalog list shows the catalog's ids");
    }
    auto id = m.string("id", false);
    g.id = id ? *id : g.system;
    g.perf_per_watt = figures_.read(m, "perf_per_watt", Dimension{}, 0.01, 100);
    if (g.perf_per_watt && !g.perf_per_watt->origin.assumption &&
        g.perf_per_watt->origin.source.empty())
      ctx_.error(m.get("perf_per_watt"), m.child("perf_per_watt"),
                 "perf_per_watt needs its source or the flag of an assumption",
                 "write {value: 1.25, assumption: true, reason: \"...\"}");
    if (m.has("from")) g.from = read_quarter(ctx_, m.get("from"), m.child("from"));
    if (m.has("until")) g.until = read_quarter(ctx_, m.get("until"), m.child("until"));
    if (m.has("supply")) {
      g.unlimited_supply = false;
      g.supply =
          read_quarter_map(ctx_, m, "supply", [&](const YAML::Node& n, const std::string& p) {
            return yaml::read_number(ctx_, n, p, 0, kMaxUnitsPerQuarter);
          });
    } else if (!comparator) {
      m.missing("supply", "the units delivered per quarter, e.g. {2026Q3: 50, 2027Q1: 300}");
    }
    read_generation_costs(m, g);
    if (m.has("throughput")) g.throughput = read_throughput(m);
    if (m.has("availability")) read_availability(m, g);
    return g;
  }

  // `availability`: a share with its source or the flag of an assumption, or
  // {rehearsal: FILE, spares: BOOL}, a failure rehearsal of the generation's system whose
  // availability (or, with spares, share of replicas offered at the target) is used.
  void read_availability(MapReader& m, Generation& g) {
    const YAML::Node n = m.get("availability");
    g.availability_where = ctx_.location(n);
    if (n.IsMap() && n["rehearsal"]) {
      MapReader a(ctx_, n, m.child("availability"));
      if (auto f = a.string("rehearsal", true)) {
        g.availability_rehearsal = fs::path(*f).is_absolute()
                                       ? *f
                                       : (fs::path(base_dir_) / *f).lexically_normal().string();
        std::error_code ec;
        if (!fs::is_regular_file(g.availability_rehearsal, ec))
          ctx_.error(a.get("rehearsal"), a.child("rehearsal"),
                     "no rehearsal file " + g.availability_rehearsal,
                     "the path is relative to the plan file");
      }
      g.availability_holds_spares = a.boolean("spares", false).value_or(false);
      a.finish();
      return;
    }
    g.availability = figures_.read(m, "availability", Dimension{}, 0.01, 1.0);
    if (g.availability && !g.availability->origin.assumption &&
        g.availability->origin.source.empty())
      ctx_.error(n, m.child("availability"),
                 "availability needs its source or the flag of an assumption",
                 "write {value: 0.995, assumption: true, reason: \"...\"}, or "
                 "{rehearsal: ../rehearsals/FILE.yaml} to take it from a failure rehearsal");
  }

  void read_generation_costs(MapReader& m, Generation& g) {
    g.capex_per_unit = figures_.read(m, "capex_per_unit", Usd::kDimension, 0, 1e12);
    if (m.has("cost_per_xpu_hour")) {
      const YAML::Node n = m.get("cost_per_xpu_hour");
      if (n.IsScalar() && n.Scalar() == "catalog") {
        g.cost_from_catalog = true;
        const System* s = cat_.find_system(g.system);
        if (s != nullptr && !s->tco_per_xpu)
          ctx_.error(n, m.child("cost_per_xpu_hour"),
                     "the catalog has no cost per XPU-hour for " + g.system,
                     "give a value such as '$2.21/h' with its source, or capex_per_unit");
      } else {
        g.cost_per_xpu_hour =
            figures_.read(m, "cost_per_xpu_hour", UsdPerSecond::kDimension, 0, 1e6);
      }
    }
    if (!g.capex_per_unit && !g.cost_per_xpu_hour && !g.cost_from_catalog)
      m.missing("capex_per_unit",
                "the price of one deployment unit such as '$3.4M' (or "
                "cost_per_xpu_hour: '$2.21/h' or cost_per_xpu_hour: catalog)");
    if (g.capex_per_unit && (g.cost_per_xpu_hour || g.cost_from_catalog))
      ctx_.error(m.get("cost_per_xpu_hour"), m.child("cost_per_xpu_hour"),
                 "give either capex_per_unit or cost_per_xpu_hour, not both",
                 "capex_per_unit builds the cost up from capex, power and maintenance; "
                 "cost_per_xpu_hour is an all-in owned cost");
  }

  GivenThroughput read_throughput(MapReader& m) {
    GivenThroughput t;
    MapReader r(ctx_, m.get("throughput"), m.child("throughput"));
    if (!r.ok()) return t;
    if (auto f = figures_.read(r, "tps_per_xpu", TokensPerSecond::kDimension, 1e-6, 1e9)) {
      t.tps_per_xpu = f->value;
      t.origin = f->origin;
      if (!f->origin.assumption && f->origin.source.empty())
        ctx_.error(r.get("tps_per_xpu"), r.child("tps_per_xpu"),
                   "a given throughput needs its source or the flag of an assumption",
                   "write {value: 5000 tok/s, source: \"...\"}");
    } else if (!r.has("tps_per_xpu")) {
      r.missing("tps_per_xpu", "total tok/s per XPU at the service target, e.g. '5000 tok/s'");
    }
    if (auto f = figures_.read(r, "output_share", Dimension{}, 0, 1))
      t.output_share = f->value;
    else if (!r.has("output_share"))
      r.missing("output_share",
                "the share of output tokens in the total, e.g. 0.1 for 8k/1k "
                "(it splits $/Mtok into input and output prices)");
    r.finish();
    return t;
  }

  void read_costs(MapReader& top, PlanCosts& c) {
    c = plan_defaults().costs;
    if (!top.has("costs")) return;
    MapReader m(ctx_, top.get("costs"), top.child("costs"));
    if (!m.ok()) return;
    c.electricity_price = figures_.read_or(m, "electricity_price", UsdPerJoule::kDimension, 0,
                                           usd_per_kwh(10).value(), c.electricity_price);
    c.facility_capex =
        figures_.read_or(m, "facility_capex", UsdPerWatt::kDimension, 0, 1000, c.facility_capex);
    c.depreciation_years =
        figures_.read_or(m, "depreciation_years", Dimension{}, 1, 50, c.depreciation_years);
    c.facility_years = figures_.read_or(m, "facility_years", Dimension{}, 1, 100, c.facility_years);
    c.maintenance = figures_.read_or(m, "maintenance", Dimension{}, 0, 1, c.maintenance);
    c.financing_rate = figures_.read_or(m, "financing_rate", Dimension{}, 0, 1, c.financing_rate);
    c.utilisation = figures_.read_or(m, "utilisation", Dimension{}, 0.01, 1, c.utilisation);
    c.output_price_ratio =
        figures_.read_or(m, "output_price_ratio", Dimension{}, 0.01, 100, c.output_price_ratio);
    m.finish();
  }

  // uncertainty: {draws, seed, figures: {NAME: {low, high}}}, read after everything it names.
  void read_uncertainty(MapReader& top, Plan& p) {
    if (!top.has("uncertainty")) return;
    MapReader m(ctx_, top.get("uncertainty"), top.child("uncertainty"));
    if (!m.ok()) return;
    if (auto v = m.integer("draws", false, 1, 1'000'000))
      p.uncertainty.draws = static_cast<int>(*v);
    if (auto v = m.integer("seed", false, 0, std::numeric_limits<std::int64_t>::max()))
      p.uncertainty.seed = static_cast<std::uint64_t>(*v);
    if (!m.has("figures")) {
      m.missing("figures",
                "the uncertain figures, e.g. {costs.electricity_price: {low: "
                "$0.065/kWh, high: $0.09/kWh}}");
    } else {
      MapReader f(ctx_, m.get("figures"), m.child("figures"));
      if (f.ok())
        for (const auto& kv : f.node()) read_uncertain(f, kv.first.Scalar(), p);
    }
    m.finish();
  }

  void read_uncertain(MapReader& f, const std::string& name, Plan& p) {
    const auto ref = find_figure(p, name);
    if (!ref) {
      ctx_.error(f.get(name), f.child(name),
                 "no figure '" + name + "' in this plan" + did_you_mean(name, figure_names(p)),
                 "name a cost (costs.maintenance), a site's PUE (sites.ID.pue) or a generation's "
                 "perf_per_watt, capex_per_unit, cost_per_xpu_hour, throughput or supply");
      return;
    }
    MapReader r(ctx_, f.get(name), f.child(name));
    if (!r.ok()) return;
    auto lo = figures_.read(r, "low", ref->dimension, -1e300, 1e300);
    auto hi = figures_.read(r, "high", ref->dimension, -1e300, 1e300);
    if (!r.has("low")) r.missing("low", "the low end of the range");
    if (!r.has("high")) r.missing("high", "the high end of the range");
    r.finish();
    if (!lo || !hi) return;
    if (!ref->base) {
      ctx_.error(f.get(name), f.child(name), ref->problem, "give the figure a value to vary");
    } else if (!(lo->value <= *ref->base && *ref->base <= hi->value && lo->value < hi->value)) {
      ctx_.error(f.get(name), f.child(name),
                 "the range must hold the plan's value " +
                     format_quantity(*ref->base, ref->dimension) + " with low below high",
                 "the value is the most likely one (the mode of a triangular distribution)");
    } else {
      p.uncertainty.figures.push_back({name, lo->value, hi->value, ctx_.location(f.get(name))});
    }
  }

  void check_ids(const Plan& p) {
    std::set<std::string> seen;
    for (const auto* list : {&p.generations, &p.comparators})
      for (const auto& g : *list)
        if (!g.id.empty() && !seen.insert(g.id).second)
          ctx_.error(g.where, "", "generation id '" + g.id + "' is used twice",
                     "give each generation and comparator its own id");
    std::set<std::string> sites;
    for (const auto& s : p.sites)
      if (!s.id.empty() && !sites.insert(s.id).second)
        ctx_.error(s.where, "", "site id '" + s.id + "' is used twice",
                   "give each site its own id");
    double share = 0;
    for (const auto& w : p.workloads) share += w.share;
    if (!p.workloads.empty() && std::fabs(share - 1.0) > 1e-6)
      ctx_.error(p.workloads.front().where, "workloads",
                 "the workload shares add up to " + std::to_string(share) + ", not 1",
                 "give each workload its share of the fleet's tokens, adding up to 100%");
  }

  // All-in power has the PUE in it: one PUE for every site keeps units x power x PUE exact.
  void check_all_in(MapReader& top, const Plan& p) {
    if (p.basis != PowerBasis::all_in) return;
    for (const auto& s : p.sites)
      if (s.pue.value != p.sites.front().pue.value)
        ctx_.error(top.get("power_basis"), top.child("power_basis"),
                   "power_basis all_in needs one PUE at every site (" + s.id + " differs)",
                   "give the sites the same pue, or plan on another basis");
  }

  void check_quarters(const Plan& p) {
    for (const auto* list : {&p.generations, &p.comparators})
      for (const auto& g : *list)
        if (g.from && g.until && *g.until < *g.from)
          ctx_.error(
              g.where, "",
              g.id + ": until " + to_string(*g.until) + " is before from " + to_string(*g.from),
              "swap them");
  }

  Context& ctx_;
  const Catalog& cat_;
  FigureReader figures_;
  std::string base_dir_;
};

}  // namespace

const PlanDefaults& plan_defaults() {
  static const PlanDefaults d = make_defaults();
  return d;
}

std::expected<Plan, Diagnostics> load_plan_string(const std::string& text, const std::string& name,
                                                  const std::string& base_dir,
                                                  const Catalog& catalog) {
  return yaml::read_document<Plan>(text, name, "plan", "docs/plan.md",
                                   [&](Context& ctx, MapReader& top) {
                                     Plan p;
                                     p.file = name;
                                     p.text = text;
                                     PlanReader(ctx, catalog, base_dir).read(top, p);
                                     return p;
                                   });
}

std::expected<Plan, Diagnostics> load_plan_file(const std::string& path, const Catalog& catalog) {
  auto text = yaml::read_text_file(path, "the plan file");
  if (!text) return std::unexpected(text.error());
  return load_plan_string(*text, path, fs::path(path).parent_path().string(), catalog);
}

}  // namespace racktwin
