#include "targets.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <typeinfo>

#include "core/units.hpp"
#include "scenarios/catalog_loader.hpp"
#include "scenarios/plan_loader.hpp"
#include "scenarios/points_loader.hpp"
#include "scenarios/rehearsal_loader.hpp"
#include "scenarios/scenario_loader.hpp"
#include "scenarios/trace_loader.hpp"

namespace racktwin::fuzz {
namespace {

namespace fs = std::filesystem;

const std::string kScenarios = std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read seed " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The files of `dir` ending in `ext`, in name order.
std::vector<std::string> files_in(const std::string& dir, const std::string& ext) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ext) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The shipped catalog's files, and the catalog they make.
const std::vector<std::string>& catalog_files() {
  static const std::vector<std::string> f = files_in(kScenarios + "catalog", ".yaml");
  return f;
}

const Catalog& shipped_catalog() {
  static const Catalog c = [] {
    auto cat = load_catalog_files(catalog_files());
    if (!cat)
      throw std::runtime_error("the shipped catalog does not load: " +
                               cat.error().front().to_string());
    return std::move(*cat);
  }();
  return c;
}

// Adds `what` to the problems when `ok` is false.
void expect(Verdict& v, bool ok, const std::string& what) {
  if (!ok) v.problems.push_back("accepted " + what);
}

bool finite_at_least(double x, double min) {
  return std::isfinite(x) && x >= min;
}

void check_text(Verdict& v, const std::string& s, const std::string& what) {
  expect(v, valid_utf8(s), what + " that is not valid UTF-8");
}

void check_scenario(const Scenario& sc, Verdict& v) {
  check_text(v, sc.name, "a name");
  check_text(v, sc.description, "a description");
  expect(v, !sc.systems.empty() && !sc.models.empty() && !sc.workloads.empty(),
         "a scenario without systems, models or workloads");
  for (const auto& w : sc.workloads) {
    check_text(v, w.id, "a workload id");
    const auto& x = w.inferencex;
    if (w.kind == WorkloadKind::inferencex || w.kind == WorkloadKind::poisson)
      expect(v, x.isl >= 1 && x.osl >= 1 && finite_at_least(x.range_ratio, 0),
             "a workload with lengths below 1 token or a range ratio that is not a number");
    for (double r : x.rates) expect(v, std::isfinite(r) && r > 0, "a rate that is not above 0");
    if (x.mtp_acceptance) expect(v, std::isfinite(*x.mtp_acceptance), "an infinite mtp_acceptance");
    if (w.kind == WorkloadKind::agentic) {
      const auto& a = w.agentic;
      expect(v,
             a.turns_min <= a.turns_max && a.first_context_min <= a.first_context_max &&
                 a.tool_result_min <= a.tool_result_max && a.output_min <= a.output_max &&
                 a.subagents_min <= a.subagents_max &&
                 a.subagent_turns_min <= a.subagent_turns_max &&
                 a.subagent_context_min <= a.subagent_context_max,
             "an agentic range whose minimum is above its maximum");
      expect(v,
             finite_at_least(a.tool_pause_min_s, 0) && finite_at_least(a.tool_pause_max_s, 0) &&
                 a.tool_pause_min_s <= a.tool_pause_max_s,
             "tool pauses that are not finite, negative or out of order");
      expect(v, finite_at_least(a.subagent_probability, 0) && a.subagent_probability <= 1,
             "a sub-agent probability outside 0..1");
    }
    if (w.kind == WorkloadKind::trace) {
      expect(v, w.trace.requests && !w.trace.requests->empty(), "a trace without requests");
      expect(v, std::isfinite(w.trace.time_scale) && w.trace.time_scale > 0,
             "a trace time scale that is not above 0");
    }
  }
  for (int c : sc.concurrency) expect(v, c >= 1, "a concurrency below 1");
  expect(v, finite_at_least(sc.host_offload, 0) && sc.host_offload <= 1,
         "a host offload outside 0..1");
  for (const auto& f : sc.failures) {
    expect(v, finite_at_least(f.at_s, 0), "a failure time that is not finite and 0 or later");
    if (f.repair_s)
      expect(v, std::isfinite(*f.repair_s) && *f.repair_s > 0, "a repair not above 0");
    expect(v, f.at_s <= sc.limits.span_s, "a failure after the simulated span");
  }
  expect(v, finite_at_least(sc.facility.pue, 1), "a PUE below 1 or not finite");
  expect(v, finite_at_least(sc.facility.electricity_price.value(), 0),
         "an electricity price that is not finite");
  if (sc.facility.power_budget)
    expect(
        v,
        std::isfinite(sc.facility.power_budget->value()) && sc.facility.power_budget->value() > 0,
        "a power budget that is not finite and above 0");
  expect(v, std::isfinite(sc.limits.span_s) && sc.limits.span_s > 0, "a span limit not above 0");
}

void check_figure(Verdict& v, const Figure& f, const std::string& what) {
  expect(v, std::isfinite(f.value), what + " that is not finite");
}

void check_plan(const Plan& p, Verdict& v) {
  check_text(v, p.name, "a name");
  expect(v, !(p.last < p.first), "a plan whose last quarter is before its first");
  for (const auto& w : p.workloads)
    expect(v, std::isfinite(w.share) && w.share > 0 && w.share <= 1, "a share outside (0, 1]");
  for (const auto& s : p.sites) {
    check_figure(v, s.pue, "a site PUE");
    for (const auto& [q, w] : s.ramp) expect(v, finite_at_least(w.value(), 0), "a ramp below 0");
    expect(v, finite_at_least(s.commission_per_week, 0), "a commissioning rate below 0");
  }
  for (const auto* gens : {&p.generations, &p.comparators})
    for (const auto& g : *gens) {
      for (const auto& [q, n] : g.supply) expect(v, finite_at_least(n, 0), "a supply below 0");
      if (g.capex_per_unit) check_figure(v, *g.capex_per_unit, "a capex per unit");
      if (g.cost_per_xpu_hour) check_figure(v, *g.cost_per_xpu_hour, "a cost per XPU-hour");
      if (g.perf_per_watt) check_figure(v, *g.perf_per_watt, "a perf per watt");
      if (g.throughput)
        expect(v, std::isfinite(g.throughput->tps_per_xpu) && g.throughput->tps_per_xpu > 0,
               "a given throughput that is not above 0");
    }
  check_figure(v, p.dock_to_rack, "a dock-to-rack time");
  for (const Figure* f :
       {&p.costs.electricity_price, &p.costs.facility_capex, &p.costs.depreciation_years,
        &p.costs.facility_years, &p.costs.maintenance, &p.costs.financing_rate,
        &p.costs.utilisation, &p.costs.output_price_ratio})
    check_figure(v, *f, "a cost figure");
  for (const auto& u : p.uncertainty.figures)
    expect(v, std::isfinite(u.low) && std::isfinite(u.high) && u.low <= u.high,
           "an uncertainty range that is not finite or out of order");
}

void check_rehearsal(const Rehearsal& r, Verdict& v) {
  check_text(v, r.name, "a name");
  expect(v, r.domains >= 1, "fewer than one domain");
  expect(v, std::isfinite(r.horizon.value()) && r.horizon.value() > 0, "a horizon not above 0");
  expect(v, std::isfinite(r.sample_every.value()) && r.sample_every.value() > 0,
         "a sampling step not above 0");
  expect(v, std::isfinite(r.attainment_goal) && r.attainment_goal > 0 && r.attainment_goal <= 1,
         "an attainment goal outside (0, 1]");
  for (const auto& c : r.classes) {
    expect(v, finite_at_least(c.rate.value, 0), "a failure rate below 0 or not finite");
    expect(v, std::isfinite(c.shape.value) && c.shape.value > 0, "a Weibull shape not above 0");
  }
  for (const Figure* f : {&r.repair.restart, &r.repair.reschedule, &r.repair.swap,
                          &r.repair.vendor_return, &r.repair.feed_repair})
    expect(v, finite_at_least(f->value, 0), "a repair time below 0 or not finite");
  if (r.jobs)
    for (int s : r.jobs->sizes) expect(v, s >= 1, "a job size below 1");
}

void check_catalog(const Catalog& c, Verdict& v) {
  for (const auto& [id, chip] : c.chips) {
    check_text(v, id, "a chip id");
    expect(v,
           std::isfinite(chip->tdp.value()) && chip->tdp.value() > 0 &&
               std::isfinite(chip->hbm_bandwidth.value()) &&
               std::isfinite(chip->hbm_capacity.value()),
           "a chip whose TDP, HBM bandwidth or capacity is not finite");
  }
  for (const auto& [id, s] : c.systems) {
    check_text(v, id, "a system id");
    expect(v, s->chip != nullptr, "a system without its chip");
    expect(v, s->domain_xpus >= 1, "a system whose domain has no XPU");
  }
  for (const auto& [id, m] : c.models) {
    check_text(v, id, "a model id");
    expect(v, std::isfinite(m->params_total) && m->params_total > 0 && m->layers >= 1,
           "a model without parameters or layers");
  }
}

// The catalog of the shipped files with `name`'s text replaced by `text`.
std::vector<CatalogText> catalog_with(const std::string& text, const std::string& name) {
  static const std::vector<CatalogText> shipped = [] {
    std::vector<CatalogText> t;
    for (const auto& f : catalog_files()) t.push_back({f, read_file(f)});
    return t;
  }();
  std::vector<CatalogText> out = shipped;
  bool found = false;
  for (auto& t : out)
    if (t.name == name) {
      t.text = text;
      found = true;
    }
  if (!found) out.push_back({name, text});
  return out;
}

std::vector<Seed> seeds_of(const std::vector<std::string>& files) {
  std::vector<Seed> out;
  for (const auto& f : files) out.push_back({f, read_file(f)});
  return out;
}

// plans/ holds plans and the scenarios they name; a plan is told by its `quarters:` key.
bool is_plan(const Seed& s) {
  return s.text.starts_with("quarters:") || s.text.find("\nquarters:") != std::string::npos;
}

std::vector<Seed> plans_folder(bool plans) {
  std::vector<Seed> out;
  for (auto& s : seeds_of(files_in(kScenarios + "plans", ".yaml")))
    if (is_plan(s) == plans) out.push_back(std::move(s));
  return out;
}

std::vector<Seed> operator+(std::vector<Seed> a, std::vector<Seed> b) {
  a.insert(a.end(), std::make_move_iterator(b.begin()), std::make_move_iterator(b.end()));
  return a;
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\"'");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\"'");
  return std::string(s.substr(b, e - b + 1));
}

// The values of the shipped YAML files that the unit parser reads: each piece of a line between
// ',', '{', '}', '[' and ']', after its last ': '.
std::vector<Seed> unit_seeds() {
  std::vector<std::string> files = files_in(kScenarios, ".yaml");
  for (const char* dir : {"catalog", "plans", "rehearsals", "reference"}) {
    const auto more = files_in(kScenarios + dir, ".yaml");
    files.insert(files.end(), more.begin(), more.end());
  }
  std::vector<Seed> out;
  std::set<std::string> seen;
  for (const auto& f : files) {
    std::istringstream in(read_file(f));
    for (std::string line; std::getline(in, line);) {
      std::size_t b = 0;
      while (b <= line.size()) {
        const std::size_t e = std::min(line.find_first_of(",{}[]", b), line.size());
        std::string_view piece(line.data() + b, e - b);
        if (const auto colon = piece.rfind(": "); colon != std::string_view::npos)
          piece.remove_prefix(colon + 2);
        std::string value = trim(piece);
        if (!value.empty() && parse_quantity(value) && seen.insert(value).second)
          out.push_back({"unit", value});
        b = e + 1;
      }
    }
  }
  return out;
}

// The quantities a unit parser is asked to read, each with the dimension a caller would expect.
const std::vector<Dimension>& unit_dimensions() {
  static const std::vector<Dimension> d{Dimension{},           Seconds::kDimension,
                                        Watts::kDimension,     Joules::kDimension,
                                        Bytes::kDimension,     BytesPerSecond::kDimension,
                                        Flops::kDimension,     FlopsPerSecond::kDimension,
                                        Tokens::kDimension,    TokensPerSecond::kDimension,
                                        Usd::kDimension,       UsdPerJoule::kDimension,
                                        UsdPerWatt::kDimension};
  return d;
}

std::vector<Target> make_targets() {
  std::vector<Target> t;
  t.push_back({"scenario", kScenarios,
               seeds_of(files_in(kScenarios, ".yaml")) + plans_folder(false),
               [](const std::string& text, const std::string& name, Verdict& v) {
                 auto sc = load_scenario_string(text, name, shipped_catalog());
                 v.accepted = sc.has_value();
                 if (sc)
                   check_scenario(*sc, v);
                 else
                   v.diagnostics = sc.error();
               }});
  t.push_back({"plan", kScenarios + "plans/", plans_folder(true),
               [](const std::string& text, const std::string& name, Verdict& v) {
                 auto p = load_plan_string(text, name, fs::path(name).parent_path().string(),
                                           shipped_catalog());
                 v.accepted = p.has_value();
                 if (p)
                   check_plan(*p, v);
                 else
                   v.diagnostics = p.error();
               }});
  t.push_back({"rehearsal", kScenarios + "rehearsals/",
               seeds_of(files_in(kScenarios + "rehearsals", ".yaml")),
               [](const std::string& text, const std::string& name, Verdict& v) {
                 auto r = load_rehearsal_string(text, name, fs::path(name).parent_path().string(),
                                                shipped_catalog());
                 v.accepted = r.has_value();
                 if (r)
                   check_rehearsal(*r, v);
                 else
                   v.diagnostics = r.error();
               }});
  t.push_back(
      {"points", kScenarios + "reference/", seeds_of({kScenarios + "reference/published.yaml"}),
       [](const std::string& text, const std::string& name, Verdict& v) {
         auto p = load_points_string(text, name, shipped_catalog());
         v.accepted = p.has_value();
         if (!p) {
           v.diagnostics = p.error();
           return;
         }
         // A rejected point is a rejection of its own: its diagnostics are checked.
         for (const auto& r : p->rejected)
           v.diagnostics.insert(v.diagnostics.end(), r.problems.begin(), r.problems.end());
         for (const auto& r : p->rejected)
           if (r.problems.empty())
             v.problems.push_back("rejected point " + r.id + " without a diagnostic");
         for (const auto& pt : p->points) {
           check_text(v, pt.id, "a point id");
           expect(v, std::isfinite(pt.value) && pt.value > 0, "a point value that is not above 0");
           if (pt.at) expect(v, std::isfinite(*pt.at), "an 'at' that is not finite");
         }
       }});
  t.push_back({"trace", kScenarios + "traces/", seeds_of(files_in(kScenarios + "traces", ".jsonl")),
               [](const std::string& text, const std::string& name, Verdict& v) {
                 auto r = load_mooncake_trace_string(text, name);
                 v.accepted = r.has_value();
                 if (!r) {
                   v.diagnostics = r.error();
                   return;
                 }
                 for (const auto& q : *r) {
                   expect(v, finite_at_least(q.timestamp_s, 0), "a timestamp not finite and >= 0");
                   expect(v, q.input_length >= 1 && q.output_length >= 1, "a length below 1");
                   if (q.delay_s) expect(v, finite_at_least(*q.delay_s, 0), "a delay below 0");
                   expect(v, q.line >= 1, "a request without its line");
                 }
               }});
  t.push_back({"catalog", kScenarios + "catalog/", seeds_of(catalog_files()),
               [](const std::string& text, const std::string& name, Verdict& v) {
                 auto c = load_catalog_strings(catalog_with(text, name));
                 v.accepted = c.has_value();
                 if (c)
                   check_catalog(*c, v);
                 else
                   v.diagnostics = c.error();
               }});
  // The unit parser reads one value; its seeds are the values of the shipped YAML files.
  t.push_back({"units", "", unit_seeds(),
               [](const std::string& text, const std::string&, Verdict& v) {
                 auto q = parse_quantity(text);
                 v.accepted = q.has_value();
                 if (!q) {
                   if (q.error().empty()) v.problems.push_back("rejected without a message");
                   return;
                 }
                 expect(v, std::isfinite(q->base_value), "a quantity that is not finite");
                 if (format_quantity(q->base_value, q->dimension).empty())
                   v.problems.push_back("a quantity that formats to nothing");
                 for (const auto& d : unit_dimensions()) {
                   auto si = parse_si(text, d);
                   if (si)
                     expect(v, std::isfinite(*si), "a quantity that is not finite");
                   else if (si.error().empty())
                     v.problems.push_back("rejected by parse_si without a message");
                 }
               },
               false});
  return t;
}

std::string type_name(const std::exception& e) {
  return typeid(e).name();
}

}  // namespace

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80                 ? 1
                          : c >= 0xC2 && c <= 0xDF ? 2
                          : c >= 0xE0 && c <= 0xEF ? 3
                          : c >= 0xF0 && c <= 0xF4 ? 4
                                                   : 0;
    if (n == 0 || i + n > s.size()) return false;
    const auto b1 = n > 1 ? static_cast<unsigned char>(s[i + 1]) : 0x80;
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    if ((c == 0xE0 && b1 < 0xA0) || (c == 0xED && b1 > 0x9F) || (c == 0xF0 && b1 < 0x90) ||
        (c == 0xF4 && b1 > 0x8F))
      return false;
    i += n;
  }
  return true;
}

const std::vector<Target>& targets() {
  static const std::vector<Target> t = make_targets();
  return t;
}

const Target& target(std::string_view name) {
  for (const auto& t : targets())
    if (t.name == name) return t;
  throw std::invalid_argument("no fuzz target " + std::string(name));
}

std::vector<std::string> diagnostic_problems(const Diagnostics& d, const std::string& text,
                                             const std::string& name) {
  std::vector<std::string> p;
  if (d.empty()) {
    p.push_back("rejected without a diagnostic");
    return p;
  }
  // Lines of the input: a diagnostic may point at the line after the last (the end of the file).
  const int lines = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  bool located = false;
  for (const auto& x : d) {
    const std::string shown = "'" + x.to_string() + "'";
    if (x.message.empty()) p.push_back("a diagnostic without a message: " + shown);
    if (x.where.file.empty()) p.push_back("a diagnostic without a file name: " + shown);
    if (x.where.line < 0 || x.where.column < 0)
      p.push_back("a diagnostic at a negative line or column: " + shown);
    if (x.where.file == name && x.where.line > lines)
      p.push_back("a diagnostic at line " + std::to_string(x.where.line) + " of an input of " +
                  std::to_string(lines) + " lines: " + shown);
    located = located || (!x.where.file.empty() && x.where.line >= 1 && !x.message.empty());
  }
  if (!located) p.push_back("no diagnostic with a file name and a line from 1");
  return p;
}

Verdict execute(const Target& t, const std::string& text, const std::string& name) {
  Verdict v;
  try {
    t.load(text, name, v);
  } catch (const InputError& e) {
    // The documented exception: a rejection whose diagnostics must say where, like any other.
    v = Verdict{};
    v.diagnostics = e.diagnostics();
  } catch (const std::exception& e) {
    v = Verdict{};
    v.problems.push_back("exception " + type_name(e) + " escaped: " + e.what());
    return v;
  } catch (...) {
    v = Verdict{};
    v.problems.push_back("an exception that is not a std::exception escaped");
    return v;
  }
  if (t.located && (!v.accepted || !v.diagnostics.empty())) {
    auto p = diagnostic_problems(v.diagnostics, text, name);
    v.problems.insert(v.problems.end(), p.begin(), p.end());
  }
  return v;
}

}  // namespace racktwin::fuzz
