#include "core/perf/memory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/perf/step.hpp"

namespace racktwin::perf {
namespace {

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

}  // namespace

Bytes workspace_bytes(const Model& model, const Layout& layout, const MemoryParams& mem) {
  const double tokens = mem.max_batched_tokens;
  const double per_token = model.hidden * 2.0;  // one BF16 hidden state
  if (!layout.dp_attention || layout.tp <= 1)
    return Bytes(tokens * per_token * mem.workspace_bytes_per_token_hidden);
  // DP attention: each rank computes its own slice of the iteration's tokens, and holds one
  // gathered copy of every rank's hidden states for the layers that mix them.
  const double slice = std::ceil(tokens / layout.tp);
  return Bytes(slice * per_token * mem.workspace_bytes_per_token_hidden + tokens * per_token);
}

MemoryPlan plan_memory(const Model& model, const System& system, const Catalog& catalog,
                       const Layout& layout, const std::string& precision, const MemoryParams& mem,
                       double min_tokens, int draft_tokens) {
  MemoryPlan p;
  p.min_tokens = min_tokens;
  p.hbm = system.chip->hbm_capacity;
  p.usable =
      Bytes(std::max(0.0, p.hbm.value() * mem.memory_utilization - mem.runtime_reserve.value()));
  const Speculation spec{draft_tokens, 1.0};
  if (auto problem = layout_problem(model, system, catalog, layout, precision, spec)) {
    p.rejection = problem->reason;
    p.reason = problem->detail;
    return p;
  }
  // layout_problem() found nothing, so create() succeeds.
  const StepModel sm =
      StepModel::create(model, system, catalog, layout, precision, Efficiency{}, spec, mem).value();
  p.weights = sm.weights_per_xpu();
  p.workspace = workspace_bytes(model, layout, mem);
  p.kv_free = p.usable - p.weights - p.workspace;
  p.kv_per_token = sm.kv_bytes_per_token_per_xpu();
  p.kv_tokens = sm.kv_tokens(p.usable - p.workspace);
  if (p.weights + p.workspace > p.usable) {
    p.rejection = LayoutRejection::weights_exceed_hbm;
    p.reason = "does not fit in HBM: weights " + gb(p.weights.value()) + " + workspace " +
               gb(p.workspace.value()) + " per XPU exceed the " + gb(p.usable.value()) +
               " usable of " + gb(p.hbm.value());
  } else if (p.kv_tokens < min_tokens) {
    p.rejection = LayoutRejection::kv_below_min_tokens;
    char buf[160];
    std::snprintf(
        buf, sizeof buf,
        "does not fit in HBM: KV cache holds %.0f tokens, fewer than one %.0f-token sequence",
        p.kv_tokens, min_tokens);
    p.reason = buf;
  } else {
    p.fits = true;
  }
  return p;
}

std::vector<int> default_replica_sizes(const System& system) {
  std::vector<int> sizes;
  for (int n = 1; n <= system.domain_xpus; n *= 2) sizes.push_back(n);
  for (int n : {system.compute_tray.xpus, system.xpus_per_rack(), system.domain_xpus})
    if (n >= 1 && n <= system.domain_xpus) sizes.push_back(n);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::vector<LayoutOption> enumerate_layouts(const Model& model, const System& system,
                                            const Catalog& catalog, const LayoutQuery& query) {
  const std::string precision =
      query.precision.empty() ? best_precision(model, system, catalog) : query.precision;
  const std::vector<int> sizes =
      query.replica_xpus.empty() ? default_replica_sizes(system) : query.replica_xpus;
  std::vector<LayoutOption> out;
  for (int n : sizes) {
    for (int pp = 1; pp <= std::max(1, query.max_pp) && pp <= n; pp *= 2) {
      if (n % pp != 0) continue;
      const int tp = n / pp;
      std::vector<int> eps{1};
      if (model.is_moe() && tp > 1) eps.push_back(tp);
      for (int ep : eps) {
        for (bool dpa : {false, true}) {
          if (dpa && tp == 1) continue;
          LayoutOption o;
          o.layout = Layout{"", tp, ep, pp, dpa};
          o.layout.name = o.layout.label();
          o.memory = plan_memory(model, system, catalog, o.layout, precision, query.memory,
                                 query.min_tokens, query.draft_tokens);
          o.valid = o.memory.fits;
          o.rejection = o.memory.rejection;
          o.reason = o.memory.reason;
          out.push_back(std::move(o));
        }
      }
    }
  }
  return out;
}

}  // namespace racktwin::perf
