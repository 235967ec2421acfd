#include "core/catalog.hpp"

#include <algorithm>

#include "core/enum_names.hpp"

namespace racktwin {

namespace {
constexpr EnumWords<ComputeClass, 3> kComputeClasses{"fp4,fp8,bf16"};
constexpr EnumWords<HostPlacement, 3> kHostPlacements{"separate_rack,in_compute_tray,in_server"};
}  // namespace

std::string to_string(ComputeClass c) {
  return std::string(kComputeClasses.name(c));
}

std::optional<ComputeClass> compute_class_from_string(std::string_view s) {
  return kComputeClasses.parse(s);
}

std::string to_string(ScaleUpTopology t) {
  return t == ScaleUpTopology::switched ? "switched" : "full_mesh";
}

std::string to_string(HostPlacement p) {
  return std::string(kHostPlacements.name(p));
}

std::string to_string(AttentionKind k) {
  return k == AttentionKind::gqa ? "gqa" : "mla";
}

int System::racks_per_domain() const {
  const int per_rack = xpus_per_rack();
  if (per_rack <= 0) return 0;
  return (domain_xpus + per_rack - 1) / per_rack;
}

int System::host_parts_per_compute_tray() const {
  switch (host.placement) {
    case HostPlacement::separate_rack:
      return host.per_compute_tray;
    case HostPlacement::in_compute_tray:
      return std::max(host.cpus, 1);
    case HostPlacement::in_server:
      return 1;
  }
  return 1;
}

const System* Catalog::find_system(std::string_view id) const {
  auto it = systems.find(std::string(id));
  return it == systems.end() ? nullptr : it->second.get();
}

const Model* Catalog::find_model(std::string_view id) const {
  auto it = models.find(std::string(id));
  return it == models.end() ? nullptr : it->second.get();
}

const EfficiencyPrior* Catalog::efficiency_prior_for(std::string_view system_id) const {
  for (const auto& [id, p] : efficiency_priors)
    for (const auto& s : p.systems)
      if (s == system_id) return &p;
  auto it = efficiency_priors.find("default");
  return it == efficiency_priors.end() ? nullptr : &it->second;
}

std::optional<EfficiencyChoice> Catalog::efficiency_for(std::string_view system_id) const {
  if (auto it = calibrated.find(std::string(system_id)); it != calibrated.end())
    return EfficiencyChoice{it->second.values, "calibrated"};
  const EfficiencyPrior* prior = efficiency_prior_for(system_id);
  if (prior == nullptr) return std::nullopt;
  if (auto it = calibrated_families.find(prior->id); it != calibrated_families.end())
    return EfficiencyChoice{it->second.values, "family " + prior->id};
  return EfficiencyChoice{prior->values, "prior " + prior->id};
}

std::vector<const MultiNodeRecipe*> Catalog::recipes_for(std::string_view system,
                                                         std::string_view model,
                                                         std::string_view precision, int isl,
                                                         int osl) const {
  std::vector<const MultiNodeRecipe*> out;
  for (const auto& r : multinode_recipes)
    if (r.system == system && r.model == model && r.precision == precision && r.isl == isl &&
        r.osl == osl)
      out.push_back(&r);
  return out;
}

std::vector<std::string> Catalog::system_ids() const {
  std::vector<std::string> ids;
  for (const auto& [id, _] : systems) ids.push_back(id);
  return ids;
}

std::vector<std::string> Catalog::model_ids() const {
  std::vector<std::string> ids;
  for (const auto& [id, _] : models) ids.push_back(id);
  return ids;
}

}  // namespace racktwin
