#include "core/plan.hpp"

#include <charconv>

#include "core/enum_names.hpp"

namespace racktwin {

namespace {
constexpr EnumWords<PowerBasis, 4> kBases{"provisioned,production,measured,all_in"};
}  // namespace

std::string to_string(PowerBasis b) {
  return std::string(kBases.name(b));
}

std::optional<PowerBasis> power_basis_from_string(std::string_view s) {
  return kBases.parse(s);
}

std::vector<std::string> power_basis_names() {
  return kBases.all();
}

std::string to_string(Quarter q) {
  return std::to_string(q.year) + "Q" + std::to_string(q.q);
}

std::optional<Quarter> quarter_from_string(std::string_view s) {
  if (s.size() != 6 && s.size() != 7) return std::nullopt;
  int year = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + 4, year);
  if (ec != std::errc() || p != s.data() + 4 || year < 1900 || year > 2200) return std::nullopt;
  std::string_view rest = s.substr(4);
  if (rest.front() == '-') rest.remove_prefix(1);
  if (rest.size() != 2 || (rest[0] != 'Q' && rest[0] != 'q') || rest[1] < '1' || rest[1] > '4')
    return std::nullopt;
  return Quarter{year, rest[1] - '0'};
}

namespace {

struct CostField {
  const char* name;
  Figure PlanCosts::*member;
  Dimension dimension;
};
const CostField kCostFields[] = {
    {"electricity_price", &PlanCosts::electricity_price, UsdPerJoule::kDimension},
    {"facility_capex", &PlanCosts::facility_capex, UsdPerWatt::kDimension},
    {"depreciation_years", &PlanCosts::depreciation_years, Dimension{}},
    {"facility_years", &PlanCosts::facility_years, Dimension{}},
    {"maintenance", &PlanCosts::maintenance, Dimension{}},
    {"financing_rate", &PlanCosts::financing_rate, Dimension{}},
    {"utilisation", &PlanCosts::utilisation, Dimension{}},
    {"output_price_ratio", &PlanCosts::output_price_ratio, Dimension{}},
};

std::optional<FigureRef> generation_figure(const Generation& g, std::string_view field) {
  if (field == "perf_per_watt")
    return FigureRef{Dimension{}, g.perf_per_watt ? g.perf_per_watt->value : 1.0, {}};
  if (field == "throughput" || field == "supply") return FigureRef{Dimension{}, 1.0, {}};
  if (field == "capex_per_unit")
    return g.capex_per_unit ? FigureRef{Usd::kDimension, g.capex_per_unit->value, {}}
                            : FigureRef{Usd::kDimension, std::nullopt, g.id + " has no capex_per_unit"};
  if (field == "cost_per_xpu_hour")
    return g.cost_per_xpu_hour
               ? FigureRef{UsdPerSecond::kDimension, g.cost_per_xpu_hour->value, {}}
               : FigureRef{UsdPerSecond::kDimension, std::nullopt,
                           g.id + " has no cost_per_xpu_hour value in the plan"};
  return std::nullopt;
}

}  // namespace

std::optional<FigureRef> find_figure(const Plan& p, std::string_view name) {
  for (const auto& c : kCostFields)
    if (name == std::string("costs.") + c.name)
      return FigureRef{c.dimension, (p.costs.*c.member).value, {}};
  if (name == "dock_to_rack") return FigureRef{Seconds::kDimension, p.dock_to_rack.value, {}};
  for (const auto& s : p.sites)
    if (name == "sites." + s.id + ".pue") return FigureRef{Dimension{}, s.pue.value, {}};
  for (const auto& g : p.generations) {
    const std::string prefix = g.id + ".";
    if (name.substr(0, prefix.size()) == prefix) return generation_figure(g, name.substr(prefix.size()));
  }
  return std::nullopt;
}

Figure* plan_figure(Plan& p, std::string_view name) {
  for (const auto& c : kCostFields)
    if (name == std::string("costs.") + c.name) return &(p.costs.*c.member);
  if (name == "dock_to_rack") return &p.dock_to_rack;
  for (auto& s : p.sites)
    if (name == "sites." + s.id + ".pue") return &s.pue;
  return nullptr;
}

std::vector<std::string> figure_names(const Plan& p) {
  std::vector<std::string> out;
  for (const auto& c : kCostFields) out.push_back(std::string("costs.") + c.name);
  out.push_back("dock_to_rack");
  for (const auto& s : p.sites) out.push_back("sites." + s.id + ".pue");
  for (const auto& g : p.generations)
    for (const char* f : {"perf_per_watt", "capex_per_unit", "cost_per_xpu_hour", "throughput", "supply"})
      out.push_back(g.id + "." + f);
  return out;
}

}  // namespace racktwin
