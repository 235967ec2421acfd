#include "core/rehearsal.hpp"

#include "core/enum_names.hpp"

namespace racktwin {

namespace {
constexpr EnumWords<PartClass, kAllPartClasses.size()> kClasses{
    "xpu,hbm,software,link,compute_tray,psu,switch_tray,host,cpu_dram,power_feed"};
constexpr EnumWords<RepairTier, 3> kTiers{"restart,swap,facility"};
}  // namespace

std::string to_string(PartClass c) { return std::string(kClasses.name(c)); }
std::optional<PartClass> part_class_from_string(std::string_view s) { return kClasses.parse(s); }
std::vector<std::string> part_class_names() { return kClasses.all(); }

std::string to_string(RepairTier t) { return std::string(kTiers.name(t)); }
std::optional<RepairTier> repair_tier_from_string(std::string_view s) { return kTiers.parse(s); }

}  // namespace racktwin
