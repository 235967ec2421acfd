// The charts of a plan: facility MW by generation, tokens/s and $/Mtok by quarter beside the
// comparator fleets on the same power.
#include <QChart>
#include <cmath>
#include <filesystem>

#include "app/plan.hpp"
#include "charts/charts.hpp"

namespace racktwin::app {
namespace {

std::vector<std::string> quarter_labels(const plan::Rollout& r) {
  std::vector<std::string> out;
  for (const auto& q : r.quarters) out.push_back(to_string(q.quarter));
  return out;
}

}  // namespace

charts::CategoryChart mw_by_generation_chart(const PlanOutcome& o) {
  charts::CategoryChart c{"Facility power in use by generation — " + o.plan.name, "MW",
                          quarter_labels(o.rollout), {}};
  for (std::size_t g = 0; g < o.plan.generations.size(); ++g) {
    charts::CategorySeries s{o.plan.generations[g].id, {}};
    for (const auto& q : o.rollout.quarters) s.values.push_back(q.generations[g].installed.facility_w / 1e6);
    c.series.push_back(std::move(s));
  }
  return c;
}

namespace {

// One series for the plan and one per comparator of `value` by quarter.
template <class F>
charts::CategoryChart by_fleet(const PlanOutcome& o, std::string title, std::string y, const F& value) {
  charts::CategoryChart c{std::move(title) + " — " + o.plan.name, std::move(y),
                          quarter_labels(o.rollout), {}};
  auto add = [&](const plan::Rollout& r, const std::string& name) {
    charts::CategorySeries s{name, {}};
    for (const auto& q : r.quarters) s.values.push_back(value(q));
    c.series.push_back(std::move(s));
  };
  add(o.rollout, "plan (" + o.plan.generations.front().system + " and successors)");
  for (const auto& r : o.comparators) add(r, r.fleet + " on the same power");
  return c;
}

}  // namespace

charts::CategoryChart tokens_chart(const PlanOutcome& o) {
  return by_fleet(o, "Tokens per second at the service target", "million tok/s",
                  [](const plan::QuarterRow& q) { return q.total.tps / 1e6; });
}

charts::CategoryChart usd_per_mtok_chart(const PlanOutcome& o) {
  return by_fleet(o, "Cost per million tokens (blended)", "$ per million tokens",
                  [](const plan::QuarterRow& q) { return q.usd_per_mtok; });
}

charts::CategoryChart tokens_per_mw_chart(const PlanOutcome& o) {
  return by_fleet(o, "Tokens per second per facility MW", "million tok/s per MW",
                  [](const plan::QuarterRow& q) { return q.tps_per_facility_mw / 1e6; });
}

charts::CategoryChart capacities_chart(const PlanOutcome& o) {
  const std::string unit = o.units.empty() ? "units" : o.units.front().unit.unit_name + "s";
  charts::CategoryChart c{"Capacities per quarter, the lowest binds — " + o.plan.name,
                          unit + " of the newest generation", quarter_labels(o.rollout), {}};
  charts::CategorySeries power{"power (room on energised power)", {}},
      supply{"supply (units ready to install)", {}}, crews{"deployment (commissioning crews)", {}};
  // Unlimited supply has no line: a value that is not finite is left out (as 0 on a log scale).
  auto finite = [](double v) { return std::isfinite(v) ? v : 0.0; };
  for (const auto& q : o.rollout.quarters) {
    power.values.push_back(finite(q.room_units));
    supply.values.push_back(finite(q.ready_units));
    crews.values.push_back(finite(q.crew_units));
  }
  c.series = {power, supply, crews};
  return c;
}

namespace {

// The ten largest swings of the final quarter's value, figure by figure.
template <class F>
charts::CategoryChart tornado(const PlanOutcome& o, const std::vector<plan::Swing>& swings,
                              std::string title, std::string x, const F& at) {
  charts::CategoryChart c{std::move(title) + " — " + o.plan.name, std::move(x), {}, {}};
  charts::CategorySeries lo{"figure at its low", {}}, hi{"figure at its high", {}};
  const std::size_t n = std::min<std::size_t>(swings.size(), 10);
  for (std::size_t i = n; i-- > 0;) {  // largest at the top
    c.categories.push_back(swings[i].figure);
    lo.values.push_back(at(swings[i], false));
    hi.values.push_back(at(swings[i], true));
  }
  c.series = {lo, hi};
  return c;
}

charts::CategoryChart band(const PlanOutcome& o) {
  charts::CategoryChart c{"Tokens per second, Monte Carlo P10/P50/P90 (" +
                              std::to_string(o.monte_carlo->draws) + " draws) — " + o.plan.name,
                          "million tok/s", quarter_labels(o.rollout), {}};
  charts::CategorySeries p10{"P10", {}}, p50{"P50", {}}, p90{"P90", {}};
  for (const auto& q : o.monte_carlo->quarters) {
    p10.values.push_back(q.tps.p10 / 1e6);
    p50.values.push_back(q.tps.p50 / 1e6);
    p90.values.push_back(q.tps.p90 / 1e6);
  }
  c.series = {p10, p50, p90};
  return c;
}

void uncertainty_charts(const PlanOutcome& o, std::vector<charts::NamedChart>& all) {
  if (!o.sensitivity || !o.monte_carlo) return;
  const std::string q = to_string(o.plan.last);
  all.push_back({"tornado-usd-per-mtok",
                 charts::tornado_chart(
                     tornado(o, o.sensitivity->by_cost, "Sensitivity of $ per million tokens in " + q,
                             "change in $ per million tokens",
                             [](const plan::Swing& w, bool high) {
                               return high ? w.usd_per_mtok_high : w.usd_per_mtok_low;
                             }),
                     o.sensitivity->usd_per_mtok)});
  all.push_back({"tornado-tokens",
                 charts::tornado_chart(
                     tornado(o, o.sensitivity->by_tokens, "Sensitivity of tokens per second in " + q,
                             "change in million tok/s",
                             [](const plan::Swing& w, bool high) {
                               return (high ? w.tps_high : w.tps_low) / 1e6;
                             }),
                     o.sensitivity->tps / 1e6)});
  all.push_back({"monte-carlo-tokens", charts::category_line_chart(band(o), true)});
}

}  // namespace

std::expected<std::vector<std::string>, std::string> render_plan_plots(const PlanOutcome& o,
                                                                       const std::string& dir,
                                                                       charts::Formats formats) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return std::unexpected("cannot create " + dir + ": " + ec.message());
  std::vector<charts::NamedChart> all;
  all.push_back({"mw-by-generation", charts::stacked_bar_chart(mw_by_generation_chart(o))});
  all.push_back({"tokens-per-second", charts::category_line_chart(tokens_chart(o), true)});
  all.push_back({"usd-per-mtok", charts::category_line_chart(usd_per_mtok_chart(o))});
  all.push_back({"tokens-per-mw", charts::category_line_chart(tokens_per_mw_chart(o))});
  uncertainty_charts(o, all);
  std::vector<std::string> files;
  for (auto& c : all) {
    const std::string stem = (std::filesystem::path(dir) / (o.plan.name + "-" + c.name)).string();
    auto f = charts::save_chart(std::move(c.chart), stem, formats);
    if (!f) return std::unexpected(f.error());
    files.insert(files.end(), f->begin(), f->end());
  }
  return files;
}

}  // namespace racktwin::app
