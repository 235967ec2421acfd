#pragma once
// The analytic performance model as `racktwin perf` and `racktwin layouts` and the GUI use it: one
// engine iteration's time and breakdown for a layout, and every layout of a model on a system with
// its KV capacity or the typed reason it is rejected.
//
// Contract: pure functions of the catalog and the request. An unknown system, model, weight
// variant, efficiency prior or layout is returned as a Problem.

#include <optional>
#include <string>
#include <vector>

#include "app/json.hpp"
#include "app/problem.hpp"
#include "core/catalog.hpp"
#include "core/perf/memory.hpp"
#include "core/perf/step.hpp"

namespace racktwin::app {

struct PerfRequest {
  std::string system, model;
  std::string layout;     // e.g. "tp8-ep8-dpa"
  std::string precision;  // empty: the system's best
  double batch = 1;       // decode sequences in the iteration
  double context = 0;     // context of each decode sequence, tokens
  double prefill = 0;     // tokens of one prefill chunk; 0: none
  double prefill_context = 0;
  int draft = 0;  // speculative / MTP draft tokens per step
  double acceptance = 1.0;
  bool prior = false;  // the system's efficiency prior, not the efficiencies `run` uses
};

struct IterationTime {
  PerfRequest request;
  Layout layout;
  int xpus = 0;
  std::string precision;
  std::string weights;  // the variant's number formats, e.g. "attention fp8, experts fp4, KV fp8"
  std::string prior;    // efficiency prior id
  // Where `efficiency` comes from, as Catalog::efficiency_for says it ("calibrated", "family <prior
  // id>", "prior <prior id>"): the values `run` uses, unless the request asked for the prior.
  std::string efficiency_origin;
  perf::Efficiency efficiency;
  perf::Breakdown breakdown;
  double output_tokens = 0;        // per iteration and replica
  double output_tokens_per_s = 0;  // per replica; 0 when the iteration takes no time
  double output_tokens_per_s_per_xpu = 0;
  Seconds time_per_output_token;  // per decode sequence
};
Json to_json(const IterationTime& t);

Result<IterationTime> iteration_time(const Catalog& cat, const PerfRequest& req);

struct LayoutsRequest {
  std::string system, model;
  std::string precision;      // empty: the system's best
  std::vector<int> xpus;      // replica sizes; empty: perf::default_replica_sizes()
  int max_pp = 8;             // deepest pipeline tried
  double min_context = 9216;  // KV tokens a valid layout must hold
};

struct LayoutRow {
  perf::LayoutOption option;
  double sequences = 0;  // sequences of min_context tokens the KV cache holds
};

// Rejected layouts that share a kind of reason: the memory reasons, the divisibility reasons, and
// each other reason by its detail.
struct RejectionGroup {
  perf::LayoutRejection reason = perf::LayoutRejection::none;  // of the first layout
  std::string label;  // "does not fit in HBM", "not divisible", or the detail
  int count = 0;
  std::string example;  // "LAYOUT: detail" of the first
};

struct LayoutList {
  LayoutsRequest request;
  std::string precision;
  std::string weights;
  Bytes hbm;                      // per XPU
  double memory_utilization = 0;  // usable share of HBM
  Bytes runtime_reserve;
  std::vector<LayoutRow> layouts;  // every layout tried, in enumeration order
  int valid = 0;
  std::vector<RejectionGroup> rejections;  // by label
};
Json to_json(const LayoutList& l);

Result<LayoutList> layout_list(const Catalog& cat, const LayoutsRequest& req);

}  // namespace racktwin::app
