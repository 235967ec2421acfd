#include "plan/site_layout.hpp"

#include <algorithm>
#include <cmath>

namespace racktwin::plan {
namespace {

// The unit whose power measures a site's empty room: the newest generation delivering that
// quarter (else the newest).
const UnitModel& room_unit(const Plan& p, const std::vector<UnitModel>& units, int qi) {
  const Quarter q = Quarter::of_index(p.first.index() + qi);
  for (std::size_t g = units.size(); g-- > 0;) {
    const Generation& gen = units[g].generation;
    if (!(gen.from && q < *gen.from) && !(gen.until && *gen.until < q)) return units[g];
  }
  return units.back();
}

double empty_units(const SiteQuarter& s, const UnitModel& u) {
  const double room = s.energised_w / s.pue - s.installed.it_w;
  return std::max(0.0, std::floor(room / u.it_power.value() + 1e-9));
}

std::size_t whole_rows(double units) {
  const auto n = static_cast<std::size_t>(std::max(0.0, units));
  return (n + kPositionsPerRow - 1) / kPositionsPerRow * kPositionsPerRow;
}

}  // namespace

std::string to_string(PositionState s) {
  switch (s) {
    case PositionState::serving: return "serving";
    case PositionState::installed: return "installed this quarter";
    case PositionState::energised: return "energised, empty";
    case PositionState::dark: return "not energised yet";
  }
  return "";
}

PositionPlace place_of(std::size_t position) {
  const auto hall = position / kPositionsPerHall;
  const auto in_hall = position % kPositionsPerHall;
  return {static_cast<int>(hall), static_cast<int>(in_hall / kPositionsPerRow),
          static_cast<int>(in_hall % kPositionsPerRow)};
}

FleetLayout lay_out(const Plan& p, const Rollout& r, const std::vector<UnitModel>& units) {
  FleetLayout out{r.fleet, {}};
  for (std::size_t s = 0; s < p.sites.size(); ++s) {
    SiteLayout site{p.sites[s].id, 0, {}};
    std::size_t next = 0;
    double most = 0;
    for (std::size_t qi = 0; qi < r.quarters.size(); ++qi) {
      const SiteQuarter& sq = r.quarters[qi].sites[s];
      for (std::size_t g = sq.generations.size(); g-- > 0;) {
        const auto added = static_cast<std::size_t>(std::llround(sq.generations[g].installed.added));
        if (added == 0) continue;
        site.cohorts.push_back({static_cast<int>(qi), g, next, added});
        next += added;
      }
      if (!units.empty())
        most = std::max(most, sq.installed.units +
                                  empty_units(sq, room_unit(p, units, static_cast<int>(qi))));
    }
    site.positions = whole_rows(std::max(most, static_cast<double>(next)));
    out.sites.push_back(std::move(site));
  }
  return out;
}

std::vector<SiteAt> positions_at(const FleetLayout& layout, const Plan& p, const Rollout& r,
                                 const std::vector<UnitModel>& units, int qi) {
  std::vector<SiteAt> out;
  const auto q = static_cast<std::size_t>(qi);
  for (std::size_t s = 0; s < layout.sites.size(); ++s) {
    const SiteLayout& site = layout.sites[s];
    SiteAt at;
    at.positions.assign(site.positions, PositionAt{});
    std::size_t filled = 0;
    for (const SiteCohort& c : site.cohorts) {
      if (c.quarter > qi) break;
      const PositionState state = c.quarter == qi ? PositionState::installed : PositionState::serving;
      for (std::size_t i = c.first; i < c.first + c.count; ++i)
        at.positions[i] = {state, static_cast<std::uint8_t>(c.generation)};
      (state == PositionState::serving ? at.serving : at.installed) += c.count;
      filled = c.first + c.count;
    }
    const double empty =
        units.empty() || q >= r.quarters.size() ? 0 : empty_units(r.quarters[q].sites[s], room_unit(p, units, qi));
    const std::size_t end = std::min(site.positions, filled + static_cast<std::size_t>(empty));
    for (std::size_t i = filled; i < end; ++i) at.positions[i].state = PositionState::energised;
    at.energised = end - filled;
    at.dark = site.positions - end;
    out.push_back(std::move(at));
  }
  return out;
}

const SiteCohort* cohort_of(const SiteLayout& site, std::size_t position) {
  auto it = std::upper_bound(site.cohorts.begin(), site.cohorts.end(), position,
                             [](std::size_t p, const SiteCohort& c) { return p < c.first; });
  if (it == site.cohorts.begin()) return nullptr;
  --it;
  return position < it->first + it->count ? &*it : nullptr;
}

}  // namespace racktwin::plan
