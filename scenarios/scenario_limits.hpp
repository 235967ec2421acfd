#pragma once
// The `limits:` key of a scenario and the checks of its workloads and failures against the limits,
// made when the file is read so that `racktwin check` reports them. Internal to scenarios/.

#include "core/scenario.hpp"
#include "scenarios/yaml_reader.hpp"

namespace racktwin {

// Reads `limits: {points, requests, span}` into `limits` (defaults for the keys not given).
void read_limits(yaml::Context& ctx, yaml::MapReader& top, RunLimits& limits);

// Reports each workload whose requests per point or simulated span, and each failure whose time,
// passes the scenario's limits, with the limit and how to raise it. Call on a scenario read
// without error (the workload and failure indices are those of the file).
void check_limits(yaml::Context& ctx, yaml::MapReader& top, const Scenario& sc);

}  // namespace racktwin
