#pragma once
// XPU package power as a function of its activity, and the energy it draws.
//
// Model (docs/power.md):
//
//   P(a) = P_idle + (P_max - P_idle) x (b x u + (1 - b) x ((1 - s - l) x c + s x m + l x n))
//
//   u       busy: the fraction of time the package runs a step (active clock and voltage);
//   c, m    compute and memory activity: the fractions of time the compute units and the memory
//           system are busy (the step model's roofline times over the step time);
//   n       link activity: the fraction of time the scale-up links carry collectives;
//           every activity in [0, 1];
//   b       the share of dynamic power drawn for being busy at all, whichever unit binds
//           (power.xpu_busy_share);
//   s, l    the shares of the rest that memory and link activity drive (power.xpu_memory_share,
//           power.xpu_link_share); compute drives 1 - s - l;
//   P_idle  the package power with no activity (power.xpu_idle);
//   P_max   the rated TDP: the most the package draws at full activity. A measured sustained
//           power (Jalapeno: at most 550 W on the InferenceX 8k/1k runs) is a figure the twin's
//           operating points are checked against, not a ceiling.
//
// Contract: P_idle <= P(a) <= P_max = rated TDP for every activity in [0, 1]; P grows with each
// activity whose share is above zero; energy over a stretch of constant activity is P x duration,
// and the energy of a trace is the sum over its stretches. Activities outside [0, 1] (or NaN)
// throw InputError.

#include <expected>
#include <span>
#include <string>

#include "core/catalog.hpp"
#include "core/units.hpp"

namespace racktwin::power {

struct Activity {
  double compute = 0.0;  // fraction of time the compute units are busy, in [0, 1]
  double memory = 0.0;   // fraction of time the memory system is busy, in [0, 1]
  double link = 0.0;     // fraction of time the scale-up links carry collectives, in [0, 1]
  double busy = 0.0;     // fraction of time the package runs a step, in [0, 1]

  static Activity full() { return {1.0, 1.0, 1.0, 1.0}; }
};

// How the dynamic power (P_max - P_idle) divides between the activities.
struct PowerShares {
  double busy = 0.0;    // b: drawn for running a step at all
  double memory = 0.0;  // s: of the rest, driven by memory activity
  double link = 0.0;    // l: of the rest, driven by link activity (compute: 1 - s - l)
};

// A stretch of time at constant activity.
struct ActivitySpan {
  Activity activity;
  Seconds duration;
};

class XpuPower {
 public:
  // The XPU of a catalog system. Fails, naming the field, when power.xpu_idle or a share is
  // missing.
  static std::expected<XpuPower, std::string> of(const System& s);

  // Throws InputError unless 0 <= idle < tdp, every share is in [0, 1] and memory + link <= 1.
  XpuPower(Watts idle, Watts tdp, PowerShares shares);

  Watts idle() const { return idle_; }
  Watts tdp() const { return tdp_; }  // P_max
  const PowerShares& shares() const { return shares_; }

  // Package power at `a`.
  Watts at(Activity a) const;
  // Energy of a stretch at constant activity: at(a) x duration (duration >= 0).
  Joules energy(Activity a, Seconds duration) const;
  // Energy of consecutive stretches.
  Joules energy(std::span<const ActivitySpan> trace) const;

 private:
  Watts idle_;
  Watts tdp_;
  PowerShares shares_;
};

}  // namespace racktwin::power
