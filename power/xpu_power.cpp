#include "power/xpu_power.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace racktwin::power {
namespace {

[[noreturn]] void invalid(const std::string& path, const std::string& message,
                          const std::string& hint) {
  throw InputError({Diagnostic{{}, path, message, hint}});
}

// Every digit, so that 1.0000000001 does not print as 1.
std::string exact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void check_fraction(double v, const char* path) {
  if (!(v >= 0.0 && v <= 1.0))  // also rejects NaN
    invalid(path, "activity " + exact(v) + " is outside [0, 1]",
            "an activity is the fraction of time a unit is busy");
}

}  // namespace

std::expected<XpuPower, std::string> XpuPower::of(const System& s) {
  if (s.chip == nullptr) return std::unexpected(s.id + ": the system has no chip linked");
  const PowerFigures& pw = s.power;
  for (const auto& [value, field] :
       {std::pair{pw.xpu_busy_share.has_value(), "power.xpu_busy_share"},
        std::pair{pw.xpu_memory_share.has_value(), "power.xpu_memory_share"},
        std::pair{pw.xpu_link_share.has_value(), "power.xpu_link_share"},
        std::pair{pw.xpu_idle.has_value(), "power.xpu_idle"}})
    if (!value) return std::unexpected(s.id + ": " + field + " is not in the catalog");
  if (!(*pw.xpu_idle < s.chip->tdp))
    return std::unexpected(s.id + ": power.xpu_idle is not below the XPU's rated TDP");
  if (*pw.xpu_memory_share + *pw.xpu_link_share > 1.0)
    return std::unexpected(s.id +
                           ": power.xpu_memory_share and power.xpu_link_share add up to more than 1");
  return XpuPower(*pw.xpu_idle, s.chip->tdp,
                  {*pw.xpu_busy_share, *pw.xpu_memory_share, *pw.xpu_link_share});
}

XpuPower::XpuPower(Watts idle, Watts tdp, PowerShares shares)
    : idle_(idle), tdp_(tdp), shares_(shares) {
  if (!(idle.value() >= 0.0 && idle < tdp))
    invalid("power", "XPU power figures out of order: need 0 <= idle < rated TDP",
            "check power.xpu_idle and the chip's tdp");
  for (const auto& [v, path] : {std::pair{shares.busy, "power.xpu_busy_share"},
                                std::pair{shares.memory, "power.xpu_memory_share"},
                                std::pair{shares.link, "power.xpu_link_share"}})
    if (!(v >= 0.0 && v <= 1.0)) invalid(path, "share " + exact(v) + " is outside [0, 1]", "");
  if (!(shares.memory + shares.link <= 1.0))
    invalid("power.xpu_link_share", "memory and link shares add up to more than 1",
            "compute drives 1 - memory - link of the activity-dependent power");
}

Watts XpuPower::at(Activity a) const {
  check_fraction(a.compute, "activity.compute");
  check_fraction(a.memory, "activity.memory");
  check_fraction(a.link, "activity.link");
  check_fraction(a.busy, "activity.busy");
  const PowerShares& w = shares_;
  const double units =
      (1.0 - w.memory - w.link) * a.compute + w.memory * a.memory + w.link * a.link;
  // Every unit at full activity draws TDP exactly: the shares add to one, which their rounded
  // products may miss by an ulp.
  const bool full = a.compute == 1.0 && a.memory == 1.0 && a.link == 1.0 && a.busy == 1.0;
  const double load = full ? 1.0 : w.busy * a.busy + (1.0 - w.busy) * units;
  const Watts p = idle_ + (tdp_ - idle_) * load;
  return p < tdp_ ? p : tdp_;  // load <= 1 keeps p <= tdp_; the bound is the contract
}

Joules XpuPower::energy(Activity a, Seconds duration) const {
  if (!(duration.value() >= 0.0)) invalid("duration", "a duration cannot be negative", "");
  return at(a) * duration;
}

Joules XpuPower::energy(std::span<const ActivitySpan> trace) const {
  Joules total{};
  for (const auto& s : trace) total += energy(s.activity, s.duration);
  return total;
}

}  // namespace racktwin::power
