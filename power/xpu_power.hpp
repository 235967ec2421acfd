#pragma once
// XPU package power as a function of compute and memory activity, and the energy it draws.
//
// Model (docs/power.md):
//
//   P(c, m) = P_idle + (P_max - P_idle) x ((1 - s) x c + s x m)
//
//   c, m    compute and memory activity: the fractions of time the compute units and the memory
//           system are busy, each in [0, 1] (given by the performance model);
//   s       the share of the dynamic power that memory activity drives (power.xpu_memory_share);
//   P_idle  the package power with no activity (power.xpu_idle);
//   P_max   the most the package draws at full activity: the chip's measured sustained power where
//           published (Jalapeno: 550 W), else its rated TDP.
//
// Contract: P_idle <= P(c, m) <= P_max <= rated TDP for every activity in [0, 1]; P grows with
// each activity; energy over a stretch of constant activity is P x duration, and the energy of a
// trace is the sum over its stretches. Activities outside [0, 1] (or NaN) throw InputError.

#include <expected>
#include <span>
#include <string>

#include "core/catalog.hpp"
#include "core/units.hpp"

namespace racktwin::power {

struct Activity {
  double compute = 0.0;  // fraction of time the compute units are busy, in [0, 1]
  double memory = 0.0;   // fraction of time the memory system is busy, in [0, 1]
};

// A stretch of time at constant activity.
struct ActivitySpan {
  Activity activity;
  Seconds duration;
};

class XpuPower {
 public:
  // The XPU of a catalog system. Fails, naming the field, when power.xpu_idle or
  // power.xpu_memory_share is missing.
  static std::expected<XpuPower, std::string> of(const System& s);

  // Throws InputError unless 0 <= idle < sustained_max <= tdp and memory_share is in [0, 1].
  XpuPower(Watts idle, Watts sustained_max, Watts tdp, double memory_share);

  Watts idle() const { return idle_; }
  Watts sustained_max() const { return max_; }
  Watts tdp() const { return tdp_; }
  double memory_share() const { return memory_share_; }

  // Package power at `a`.
  Watts at(Activity a) const;
  // Energy of a stretch at constant activity: at(a) x duration (duration >= 0).
  Joules energy(Activity a, Seconds duration) const;
  // Energy of consecutive stretches.
  Joules energy(std::span<const ActivitySpan> trace) const;

 private:
  Watts idle_;
  Watts max_;
  Watts tdp_;
  double memory_share_ = 0.0;
};

}  // namespace racktwin::power
