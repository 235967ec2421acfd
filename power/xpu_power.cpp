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
  if (!s.power.xpu_idle) return std::unexpected(s.id + ": power.xpu_idle is not in the catalog");
  if (!s.power.xpu_memory_share)
    return std::unexpected(s.id + ": power.xpu_memory_share is not in the catalog");
  const Watts max = s.chip->sustained_power.value_or(s.chip->tdp);
  if (!(*s.power.xpu_idle < max))
    return std::unexpected(s.id + ": power.xpu_idle is not below the XPU's sustained maximum");
  return XpuPower(*s.power.xpu_idle, max, s.chip->tdp, *s.power.xpu_memory_share);
}

XpuPower::XpuPower(Watts idle, Watts sustained_max, Watts tdp, double memory_share)
    : idle_(idle), max_(sustained_max), tdp_(tdp), memory_share_(memory_share) {
  if (!(idle.value() >= 0.0 && idle < sustained_max && sustained_max <= tdp))
    invalid("power", "XPU power figures out of order: need 0 <= idle < sustained maximum <= TDP",
            "check power.xpu_idle, the chip's sustained_power and tdp");
  if (!(memory_share >= 0.0 && memory_share <= 1.0))
    invalid("power.xpu_memory_share", "memory share is outside [0, 1]", "");
}

Watts XpuPower::at(Activity a) const {
  check_fraction(a.compute, "activity.compute");
  check_fraction(a.memory, "activity.memory");
  const double load = (1.0 - memory_share_) * a.compute + memory_share_ * a.memory;
  const Watts p = idle_ + (max_ - idle_) * load;
  return p < tdp_ ? p : tdp_;  // load <= 1 keeps p <= max_ <= tdp_; the bound is the contract
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
