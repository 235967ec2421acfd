#pragma once
// Where a fleet's deployment units stand at each site, quarter by quarter, for drawing: the plan
// describes sites only by their energised power, so the halls, rows and positions are derived.
//
// The derived layout (docs/plan.md "Site layout"):
// - A row holds kPositionsPerRow units side by side (16: one Jalapeno scale-up domain of 16 rack
//   pairs; 16 NVL72 racks), a hall kRowsPerHall rows (32, 512 units: about 82 MW of IT power in
//   Jalapeno rack pairs at 160 kW).
// - Each site has as many positions as it ever holds: the most, over the plan's quarters, of its
//   units installed plus the units its energised power still has room for. Halls are filled
//   in order, row by row.
// - Units take positions in the order they are installed: quarter by quarter, and within a quarter
//   newest generation first (as the rollout installs them). Units are never moved or removed, so a
//   position keeps its unit from quarter to quarter.
// - At a quarter a position is one of: serving (installed in an earlier quarter), installed this
//   quarter, energised and empty (room at the site for a unit of the newest generation in its
//   delivery window), or not energised yet.
//
// Contract: pure; counts are whole units and match the rollout (the installed positions of a site
// at a quarter are its units installed then).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/plan.hpp"
#include "plan/rollout.hpp"

namespace racktwin::plan {

inline constexpr int kPositionsPerRow = 16;
inline constexpr int kRowsPerHall = 32;
inline constexpr int kPositionsPerHall = kPositionsPerRow * kRowsPerHall;

enum class PositionState : std::uint8_t { serving, installed, energised, dark };
std::string to_string(PositionState s);

// Units of one generation installed at a site in one quarter: positions [first, first + count).
struct SiteCohort {
  int quarter = 0;  // index from the plan's first quarter
  std::size_t generation = 0;
  std::size_t first = 0, count = 0;
};

struct SiteLayout {
  std::string site;
  std::size_t positions = 0;  // a whole number of rows
  std::vector<SiteCohort> cohorts;  // in position order
  int halls() const { return static_cast<int>((positions + kPositionsPerHall - 1) / kPositionsPerHall); }
};

struct FleetLayout {
  std::string fleet;  // the rollout's fleet
  std::vector<SiteLayout> sites;
};

// A position's hall, row (within the hall) and place in the row, from 0.
struct PositionPlace {
  int hall = 0, row = 0, place = 0;
};
PositionPlace place_of(std::size_t position);

// One position at one quarter.
struct PositionAt {
  PositionState state = PositionState::dark;
  std::uint8_t generation = 0;  // serving and installed: the unit's generation
};

// What one site's positions are at one quarter, in position order, with the counts of each state.
struct SiteAt {
  std::vector<PositionAt> positions;
  std::size_t serving = 0, installed = 0, energised = 0, dark = 0;
};

FleetLayout lay_out(const Plan& plan, const Rollout& rollout, const std::vector<UnitModel>& units);

// Every site at quarter `quarter` (index from the plan's first quarter, < rollout quarters).
std::vector<SiteAt> positions_at(const FleetLayout& layout, const Plan& plan, const Rollout& rollout,
                                 const std::vector<UnitModel>& units, int quarter);

// The cohort a position belongs to, if a unit stands there by the end of the plan.
const SiteCohort* cohort_of(const SiteLayout& site, std::size_t position);

}  // namespace racktwin::plan
