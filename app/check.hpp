#pragma once
// Checking a scenario file, as `racktwin check` and the GUI do before a run: every problem with
// its file:line:column, or what the scenario sweeps and the catalog assumptions it rests on.
//
// Contract: reads the scenario file or takes its text (and reads the traces it names); no
// simulation. The assumptions are
// those a stored run of the scenario records (db::assumptions_of over sim::build_sweep), in the
// same order.

#include <optional>
#include <string>
#include <vector>

#include "app/json.hpp"
#include "app/text.hpp"
#include "core/catalog.hpp"
#include "core/error.hpp"
#include "core/scenario.hpp"
#include "db/store.hpp"

namespace racktwin::app {

struct ScenarioCheck {
  std::string file;
  Diagnostics errors;                // every problem found; empty when the scenario is valid
  std::optional<Scenario> scenario;  // when valid
  std::size_t loads = 0;   // per layout: concurrencies of closed loops plus rates of open loops
  std::size_t points = 0;  // per layout: systems x models x loads
  std::vector<db::Assumption> assumptions;   // as a stored run of the scenario records them
  std::optional<std::string> sweep_problem;  // why the sweep cannot be built (no assumptions)
  // What the scenario sweeps, line by line: seed, systems, models, workloads (one line each),
  // layouts, concurrency, replicas and routing, engine, facility, outputs, sweep size,
  // assumptions.
  std::vector<Fact> summary;
  // The engine settings: the scenario's over the simulation's defaults, and what each system's
  // points run with ("by_system"); null when the scenario is invalid.
  Json engine;
  bool valid() const { return errors.empty(); }
};
Json to_json(const ScenarioCheck& c);

ScenarioCheck check_scenario(const Catalog& cat, const std::string& path);
// The same check of a scenario's text (an editor's buffer, saved or not), named `file` in its
// messages; relative paths in it (traces, reference points) are relative to the folder of `file`.
ScenarioCheck check_scenario_text(const Catalog& cat, const std::string& text,
                                  const std::string& file);

}  // namespace racktwin::app
