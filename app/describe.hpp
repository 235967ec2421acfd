#pragma once
// What a front end shows for a use case's value, as titled sections (app/text.hpp) built from the
// value's typed figures: the topology report and failure assessment, one iteration's breakdown, a
// model's layouts, a run's summary and a stored run. `racktwin` prints them as they are; the
// to_json of each value holds the same figures for machines.

#include <vector>

#include "app/perf.hpp"
#include "app/run.hpp"
#include "app/text.hpp"
#include "app/topology.hpp"
#include "db/store.hpp"

namespace racktwin::app {

using Sections = std::vector<Section>;

// The parts and links, bisection and paths, the power sheets against the published figures and
// the all-in power of a deployment (app/describe_topology.cpp).
Sections describe(const TopologyReport& r);
// What the failed parts take out, and the replicas that still fit.
Sections describe(const FailureAssessment& a);
// The route between two XPUs, or that there is none.
Sections describe(const PathView& p);

// The iteration's time by term and by part of the model, and what it gives per output token
// (app/describe_perf.cpp).
Sections describe(const IterationTime& t);
// The valid layouts with their KV capacity, then the rejected ones: every one with its reason
// when `every_rejection`, else grouped by reason.
Sections describe(const LayoutList& l, bool every_rejection);

// The comparison per model and workload, with the power budget, failures, overloaded points and
// published figures beside it (app/describe_run.cpp).
Sections describe(const RunOutcome& o);
// A stored run: its record, the assumptions it rests on and the headline metrics of every point.
Sections describe(const db::StoredRun& run);
// The stored runs and plans, newest first; the first row is the header.
std::vector<std::vector<std::string>> run_list_table(const std::vector<db::RunInfo>& runs);
std::vector<std::vector<std::string>> plan_list_table(const std::vector<db::PlanRecord>& plans);

}  // namespace racktwin::app
