#pragma once
// The memory planner and layout enumeration: does a replica of a model fit on a system's XPUs,
// how many KV-cache tokens remain, and which parallel layouts are valid (with the reason each
// invalid one is rejected). Pure functions; docs/model.md states the equations.

#include <string>
#include <vector>

#include "core/catalog.hpp"
#include "core/perf/efficiency.hpp"
#include "core/perf/step.hpp"
#include "core/scenario.hpp"

namespace racktwin::perf {

struct MemoryPlan {
  Bytes hbm;              // per XPU
  Bytes usable;           // hbm x memory_utilization - runtime reserve
  Bytes weights;          // on the busiest XPU (the fullest pipeline stage)
  Bytes workspace;        // activation workspace for max_batched_tokens
  Bytes kv_free;          // usable - weights - workspace; negative when the weights do not fit
  Bytes kv_per_token;     // KV-cache bytes one token adds on the busiest XPU
  double kv_tokens = 0;   // KV-cache capacity of the replica, in tokens
  double min_tokens = 0;  // the capacity needed to call the layout valid (one longest sequence)
  bool fits = false;
  LayoutRejection rejection = LayoutRejection::none;  // why it does not fit (or cannot run)
  std::string reason;                                 // the rejection's detail; empty when it fits
};

// The activation workspace one XPU holds for mem.max_batched_tokens tokens per iteration: every
// token's activations, or under DP attention its rank's slice of them plus one gathered copy of
// every rank's hidden states.
Bytes workspace_bytes(const Model& model, const Layout& layout, const MemoryParams& mem);

// `min_tokens`: the layout fits only if the KV cache holds at least this many tokens (one sequence
// of the longest context to be served).
// `draft_tokens` > 0 also holds the model's MTP modules and their cache.
MemoryPlan plan_memory(const Model& model, const System& system, const Catalog& catalog,
                       const Layout& layout, const std::string& precision, const MemoryParams& mem,
                       double min_tokens, int draft_tokens = 0);

struct LayoutOption {
  Layout layout;
  bool valid = false;
  LayoutRejection rejection = LayoutRejection::none;  // none when valid
  std::string reason;                                 // its detail; empty when valid
  MemoryPlan memory;  // computed when the layout is structurally valid
};

struct LayoutQuery {
  std::vector<int>
      replica_xpus;       // empty: powers of two up to the domain, the tray, rack and domain
  int max_pp = 8;         // pipeline depths tried: 1, 2, 4, ... up to max_pp
  std::string precision;  // empty: best_precision()
  MemoryParams memory;
  double min_tokens = 9216;  // one 8k/1k InferenceX sequence
  int draft_tokens = 0;      // speculative decoding: MTP modules are held too
};

// Every layout tried, valid or not. EP is either off (ep = 1) or spans the TP group (ep = tp); DP
// attention is tried for every tp > 1. Named layouts in a scenario may use other EP degrees.
std::vector<LayoutOption> enumerate_layouts(const Model& model, const System& system,
                                            const Catalog& catalog, const LayoutQuery& query);

// The replica sizes enumerate_layouts() tries by default for a system.
std::vector<int> default_replica_sizes(const System& system);

}  // namespace racktwin::perf
