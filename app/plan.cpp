#include "app/plan.hpp"

#include <fmt/core.h>

#include <map>
#include <set>

#include "app/locations.hpp"
#include "app/rehearse.hpp"
#include "db/provenance.hpp"
#include "db/store.hpp"
#include "power/power_model.hpp"
#include "racktwin/version.hpp"
#include "scenarios/plan_loader.hpp"

namespace racktwin::app {
namespace {

using Results = std::map<std::string, RunOutcome>;  // by scenario file

// Simulates (or takes from the database) each scenario the plan's workloads name.
std::expected<Results, Failure> throughput_runs(const Catalog& cat, const Plan& p,
                                                const PlanRequest& rq, const PlanHooks& hooks) {
  std::vector<std::string> files;
  for (const auto& w : p.workloads)
    if (std::find(files.begin(), files.end(), w.scenario) == files.end())
      files.push_back(w.scenario);
  Results out;
  for (std::size_t i = 0; i < files.size(); ++i) {
    RunRequest r;
    r.scenario_file = files[i];
    r.db = rq.db;
    r.reuse_finished = !rq.fresh;
    r.job = rq.job;
    RunHooks h;
    h.note = hooks.note;
    h.cancel = hooks.cancel;
    if (hooks.progress)
      h.progress = [&, i](double f) {
        hooks.progress((static_cast<double>(i) + f) / static_cast<double>(files.size()));
      };
    auto o = run_scenario(cat, r, h);
    if (!o) return std::unexpected(o.error());
    if (hooks.note)
      hooks.note(o->reused ? "throughput of " + files[i] + ": run " + std::to_string(o->run_id) +
                                 " taken from " + o->db_path
                           : "throughput of " + files[i] + ": simulated as run " +
                                 std::to_string(o->run_id));
    out.emplace(files[i], std::move(*o));
  }
  return out;
}

Diagnostic at(const SourceLocation& where, std::string path, std::string message,
              std::string hint) {
  return Diagnostic{where, std::move(path), std::move(message), std::move(hint)};
}

// The generation's throughput per workload at the target, from the sweeps.
std::expected<std::vector<ThroughputOrigin>, Diagnostic> simulated_throughput(const Plan& p,
                                                                              const Generation& g,
                                                                              const Results& runs) {
  std::vector<ThroughputOrigin> out;
  for (const auto& w : p.workloads) {
    const RunOutcome& run = runs.at(w.scenario);
    auto best = plan::best_at_target(run.results, g.system, w);
    if (!best) {
      const bool absent =
          std::find(run.systems.begin(), run.systems.end(), g.system) == run.systems.end();
      return std::unexpected(at(
          g.where, g.id,
          absent ? "the scenario " + w.scenario + " does not simulate " + g.system : best.error(),
          absent ? "add " + g.system +
                       " to the scenario's systems, or give the generation a "
                       "throughput: {tps_per_xpu: ..., source: ...}"
                 : "relax the workload's target, or widen the scenario's sweep (concurrency, "
                   "layouts)"));
    }
    out.push_back({w.workload, w.scenario, run.run_id, *best});
  }
  return out;
}

struct UnitPower {
  double provisioned = 0, production = 0, operating = 0;  // IT W per unit
  double all_in = 0;  // utility W per unit: the published all-in figure, else provisioned x PUE
};

UnitPower unit_power(const power::PowerModel& pm, int xpus, power::Activity a) {
  UnitPower u;
  u.all_in = pm.all_in().per_xpu.value() * xpus;
  u.provisioned = pm.it_per_xpu(power::Operating::rated()).value() * xpus;
  u.production = pm.it_per_xpu(power::Operating{std::nullopt, true}).value() * xpus;
  u.operating = pm.it_per_xpu(power::Operating::at(a)).value() * xpus;
  return u;
}

void set_costs(const Catalog& cat, const Generation& g, plan::UnitModel& u) {
  if (g.capex_per_unit) u.capex_per_unit = g.capex_per_unit->value;
  if (g.cost_per_xpu_hour) u.cost_per_xpu_s = g.cost_per_xpu_hour->value;
  if (g.cost_from_catalog) {
    const System* s = cat.find_system(g.system);
    if (s != nullptr && s->tco_per_xpu) u.cost_per_xpu_s = s->tco_per_xpu->value();
  }
}

std::expected<PlannedUnit, Diagnostic> plan_unit(const Catalog& cat, const Plan& p,
                                                 const Generation& g, const Results& runs,
                                                 bool comparator) {
  const System& sys = *cat.find_system(g.system);
  const double pue = p.sites.empty() ? 1.0 : p.sites.front().pue.value;
  auto pm = power::PowerModel::of(sys, power::Facility{pue, {}});
  if (!pm)
    return std::unexpected(at(g.where, g.id, pm.error(), "complete the system's power figures"));
  PlannedUnit pu;
  pu.generation = g.id;
  pu.system = g.system;
  pu.comparator = comparator;
  plan::UnitModel& u = pu.unit;
  u.generation = g;
  const bool pair = pm->separate_host_rack();
  u.unit_name = pair ? "rack pair" : "rack";
  u.racks = pair ? 2 : 1;
  u.xpus = sys.xpus_per_rack();
  u.domain_xpus = sys.domain_xpus;
  // A given throughput has no operating point: rated power.
  power::Activity activity = power::Activity::full();
  if (g.throughput) {
    u.tps_per_xpu = g.throughput->tps_per_xpu;
    u.output_share = g.throughput->output_share;
    pu.throughput_note = "given in the plan";
  } else {
    auto t = simulated_throughput(p, g, runs);
    if (!t) return std::unexpected(t.error());
    pu.throughput = std::move(*t);
    std::vector<plan::ServicePoint> pts;
    for (const auto& o : pu.throughput) pts.push_back(o.point);
    const plan::Blend b = plan::blend(pts, p.workloads);
    u.tps_per_xpu = b.tps_per_xpu;
    u.output_share = b.output_share;
    activity = b.activity;
    pu.throughput_note = "simulated";
  }
  if (g.perf_per_watt) u.tps_per_xpu *= g.perf_per_watt->value;
  if (g.availability) {
    u.tps_per_xpu *= g.availability->value;
    pu.availability = g.availability->value;
    const FigureOrigin& o = g.availability->origin;
    pu.availability_note = o.assumption ? "assumption: " + o.reason : o.source;
  }
  const UnitPower w = unit_power(*pm, u.xpus, activity);
  pu.it_power_provisioned_w = w.provisioned;
  pu.it_power_production_w = w.production;
  u.operating_it_power = Watts(w.operating);
  u.it_power = Watts(p.basis == PowerBasis::provisioned  ? w.provisioned
                     : p.basis == PowerBasis::production ? w.production
                     : p.basis == PowerBasis::measured   ? w.operating
                                                         : w.all_in / pue);
  set_costs(cat, g, u);
  return pu;
}

std::string figure_text(const Figure& f, const Dimension& d) {
  return format_quantity(f.value, d);
}

void note_assumption(std::vector<PlanAssumption>& out, const std::string& what, const Figure& f,
                     const Dimension& d) {
  if (!f.origin.assumption) return;
  const std::string where = f.origin.kind == FigureOrigin::Kind::plan
                                ? f.origin.where.file + ":" + std::to_string(f.origin.where.line)
                                : "default";
  out.push_back({what, figure_text(f, d), where, f.origin.reason, f.origin.source});
}

std::vector<PlanAssumption> assumptions_of(const Plan& p) {
  std::vector<PlanAssumption> a;
  const PlanCosts& c = p.costs;
  note_assumption(a, "costs.electricity_price", c.electricity_price, UsdPerJoule::kDimension);
  note_assumption(a, "costs.facility_capex", c.facility_capex, UsdPerWatt::kDimension);
  note_assumption(a, "costs.depreciation_years", c.depreciation_years, Dimension{});
  note_assumption(a, "costs.facility_years", c.facility_years, Dimension{});
  note_assumption(a, "costs.maintenance", c.maintenance, Dimension{});
  note_assumption(a, "costs.financing_rate", c.financing_rate, Dimension{});
  note_assumption(a, "costs.utilisation", c.utilisation, Dimension{});
  note_assumption(a, "costs.output_price_ratio", c.output_price_ratio, Dimension{});
  note_assumption(a, "dock_to_rack", p.dock_to_rack, Seconds::kDimension);
  for (const auto& s : p.sites) note_assumption(a, "sites." + s.id + ".pue", s.pue, Dimension{});
  for (const auto* list : {&p.generations, &p.comparators})
    for (const auto& g : *list) {
      if (g.perf_per_watt)
        note_assumption(a, g.id + ".perf_per_watt", *g.perf_per_watt, Dimension{});
      if (g.capex_per_unit)
        note_assumption(a, g.id + ".capex_per_unit", *g.capex_per_unit, Usd::kDimension);
      if (g.cost_per_xpu_hour)
        note_assumption(a, g.id + ".cost_per_xpu_hour", *g.cost_per_xpu_hour,
                        UsdPerSecond::kDimension);
      if (g.availability) note_assumption(a, g.id + ".availability", *g.availability, Dimension{});
      if (g.throughput && g.throughput->origin.assumption)
        note_assumption(a, g.id + ".throughput.tps_per_xpu",
                        Figure{g.throughput->tps_per_xpu, g.throughput->origin},
                        TokensPerSecond::kDimension);
    }
  return a;
}

std::expected<std::int64_t, std::string> store_plan(const Catalog& cat, PlanOutcome& o,
                                                    const std::string& db_flag) {
  if (o.db_path.empty()) o.db_path = db_path(db_flag, std::nullopt);
  auto store = db::Store::open(o.db_path, db::Store::Mode::create);
  if (!store) return std::unexpected(store.error());
  db::PlanRecord r;
  r.name = o.plan.name;
  r.file = o.plan.file;
  r.text = o.plan.text;
  r.hash = db::content_hash(o.plan.text);
  r.version = kVersion;
  r.commit = kGitCommit;
  r.catalog_hash = db::catalog_hash(cat);
  for (const auto& u : o.units)
    for (const auto& t : u.throughput)
      if (std::find(r.throughput_runs.begin(), r.throughput_runs.end(), t.run_id) ==
          r.throughput_runs.end())
        r.throughput_runs.push_back(t.run_id);
  r.document = o.to_json().dump();
  try {
    return store->add_plan(std::move(r));
  } catch (const std::exception& e) {
    return std::unexpected(std::string("cannot store the plan in ") + o.db_path + ": " + e.what());
  }
}

// What a plan takes from a failure rehearsal: its system, whether it serves, its availability and
// where that comes from, and the share of its replicas offered at the target with the spare racks
// its search holds back (none when no spare capacity it tried meets the goal).
struct RehearsedAvailability {
  std::string file, system;
  bool serving = false;
  double availability = 0;
  std::string source;
  std::optional<double> offered_share;
  std::string offered_source;
};

std::expected<RehearsedAvailability, Failure> rehearse_for_plan(const Catalog& cat,
                                                                const std::string& file,
                                                                const PlanRequest& rq,
                                                                const PlanHooks& hooks) {
  RehearseRequest r;
  r.file = file;
  r.db = rq.db;
  r.fresh = rq.fresh;
  r.job = rq.job;
  RehearseHooks h;
  h.note = hooks.note;
  h.cancel = hooks.cancel;
  auto o = rehearse_file(cat, r, h);
  if (!o) return std::unexpected(o.error());
  const Rehearsal& re = o->rehearsal;
  RehearsedAvailability a{
      re.file, re.system, re.serving.has_value(), o->outcome.availability,
      fmt::format(
          "racktwin rehearse {}: {}'s replicas up, time-averaged over {:g} days of {} domains "
          "(seed {})",
          re.file, re.system, re.horizon.value() / 86400.0, re.domains, o->seed),
      std::nullopt, ""};
  if (o->spare_needed && o->outcome.replicas_total > 0) {
    const SpareTrial& held = o->search_curve.back();
    a.offered_share = held.offered_replicas / static_cast<double>(o->outcome.replicas_total);
    a.offered_source = fmt::format(
        "racktwin rehearse {}: {}'s replicas offered at the target, {:g} of {:g}: with {} of "
        "the site's {} racks spare, {:g}% attainment holds over {:g} days of {} domains (seed {})",
        re.file, re.system, held.offered_replicas,
        static_cast<double>(o->outcome.replicas_total), *o->spare_needed,
        o->racks, 100.0 * re.attainment_goal, re.horizon.value() / 86400.0, re.domains, o->seed);
  }
  return a;
}

// Availability depends on the parts of a domain and their repair, not on the chip's speed: a
// rehearsal of a system built the same way (Jalapeno A0 for B0) holds for the generation.
bool built_the_same_way(const System* a, const System* b) {
  return a && b && a->domain_xpus == b->domain_xpus &&
         a->compute_tray.xpus == b->compute_tray.xpus &&
         a->compute_trays_per_rack == b->compute_trays_per_rack &&
         a->host.placement == b->host.placement &&
         a->host_parts_per_compute_tray() == b->host_parts_per_compute_tray() &&
         a->switches.per_rack == b->switches.per_rack;
}

// The generation's availability from the rehearsal, or why the rehearsal does not apply to it.
std::expected<Figure, Diagnostic> availability_of(const Catalog& cat, const Generation& g,
                                                  const RehearsedAvailability& r) {
  auto wrong = [&](const std::string& message, const std::string& hint) {
    return std::unexpected(at(g.availability_where, g.id + ".availability", message, hint));
  };
  if (!built_the_same_way(cat.find_system(r.system), cat.find_system(g.system)))
    return wrong("the rehearsal " + r.file + " rehearses " + r.system +
                     ", whose domains are not built as " + g.system + "'s",
                 "name a rehearsal of the generation's system, or of one with the same trays, "
                 "racks, hosts and domain");
  if (!r.serving)
    return wrong("the rehearsal " + r.file + " rehearses jobs, not serving",
                 "name a rehearsal with a serving section");
  if (g.availability_holds_spares && !r.offered_share)
    return wrong("no spare capacity the rehearsal " + r.file + " tried holds its attainment goal",
                 "lower the rehearsal's spare_capacity.attainment_goal, or drop spares: true to "
                 "count the replicas up");
  Figure f;
  f.value = g.availability_holds_spares ? *r.offered_share : r.availability;
  f.origin.kind = FigureOrigin::Kind::plan;
  f.origin.where = g.availability_where;
  f.origin.source = g.availability_holds_spares ? r.offered_source : r.source;
  return f;
}

// Every generation that names a failure rehearsal takes its availability from it, each checked on
// its own; a file named by several generations is rehearsed once.
std::expected<void, Failure> rehearse_availability(const Catalog& cat, Plan& p,
                                                   const PlanRequest& rq, const PlanHooks& hooks) {
  std::map<std::string, RehearsedAvailability> done;
  Diagnostics problems;
  for (auto* list : {&p.generations, &p.comparators})
    for (auto& g : *list) {
      if (g.availability_rehearsal.empty()) continue;
      auto it = done.find(g.availability_rehearsal);
      if (it == done.end()) {
        auto r = rehearse_for_plan(cat, g.availability_rehearsal, rq, hooks);
        if (!r) return std::unexpected(r.error());
        it = done.emplace(g.availability_rehearsal, std::move(*r)).first;
      }
      if (auto f = availability_of(cat, g, it->second))
        g.availability = *f;
      else
        problems.push_back(f.error());
    }
  if (!problems.empty()) return std::unexpected(Failure::input(problems, p.file));
  return {};
}

}  // namespace

std::expected<PlanOutcome, Failure> plan_fleet(const Catalog& cat, const PlanRequest& rq,
                                               const PlanHooks& hooks) {
  auto loaded = load_plan_file(rq.plan_file, cat);
  if (!loaded) return std::unexpected(Failure::input(loaded.error(), rq.plan_file));
  auto p = plan::apply(std::move(*loaded), rq.what_if);
  if (!p) return std::unexpected(Failure::input(p.error(), rq.plan_file));
  PlanOutcome out;
  out.plan = std::move(*p);
  bool simulate = false;
  for (const auto* list : {&out.plan.generations, &out.plan.comparators})
    for (const auto& g : *list) simulate = simulate || !g.throughput;
  Results runs;
  if (simulate) {
    auto r = throughput_runs(cat, out.plan, rq, hooks);
    if (!r) return std::unexpected(r.error());
    runs = std::move(*r);
    if (!runs.empty()) out.db_path = runs.begin()->second.db_path;
  }
  if (auto a = rehearse_availability(cat, out.plan, rq, hooks); !a)
    return std::unexpected(a.error());
  Diagnostics problems;
  auto add = [&](const Generation& g, bool comparator) {
    auto u = plan_unit(cat, out.plan, g, runs, comparator);
    if (u)
      out.units.push_back(std::move(*u));
    else
      problems.push_back(u.error());
  };
  for (const auto& g : out.plan.generations) add(g, false);
  for (const auto& g : out.plan.comparators) add(g, true);
  if (!problems.empty()) return std::unexpected(Failure::input(problems, rq.plan_file));
  std::vector<plan::UnitModel> fleet;
  for (const auto& u : out.units)
    if (!u.comparator) fleet.push_back(u.unit);
  out.rollout = plan::roll_out(out.plan, fleet, "plan");
  for (const auto& u : out.units)
    if (u.comparator) out.comparators.push_back(plan::roll_out(out.plan, {u.unit}, u.generation));
  out.assumptions = assumptions_of(out.plan);
  if (!out.plan.uncertainty.figures.empty()) {
    out.sensitivity = plan::sensitivity(out.plan, fleet);
    out.monte_carlo = plan::monte_carlo(out.plan, fleet);
  }
  if (rq.store) {
    auto id = store_plan(cat, out, rq.db);
    if (!id) return std::unexpected(Failure::of(Failure::Kind::runtime, id.error()));
    out.plan_id = *id;
  }
  return out;
}

std::vector<plan::UnitModel> fleet_units(const PlanOutcome& o, const std::string& fleet) {
  std::vector<plan::UnitModel> out;
  for (const auto& u : o.units)
    if (fleet == "plan" ? !u.comparator : u.comparator && u.generation == fleet)
      out.push_back(u.unit);
  return out;
}

const plan::Rollout* fleet_rollout(const PlanOutcome& o, const std::string& fleet) {
  if (fleet == "plan") return &o.rollout;
  for (const auto& c : o.comparators)
    if (c.fleet == fleet) return &c;
  return nullptr;
}

}  // namespace racktwin::app
