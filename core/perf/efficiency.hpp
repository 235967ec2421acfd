#pragma once
// Efficiency parameters of one system (chip + software stack): how far from the hardware roofline
// real kernels, collectives and engines run. The values used for a system come from the catalog
// (efficiency_priors in scenarios/catalog/efficiency.yaml, with their reasons); the member defaults
// below mirror the catalog's "default" prior for code that builds an Efficiency by hand.
// docs/model.md defines each one.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"

namespace racktwin::perf {

struct Efficiency {
  double mfu = 0.5;  // achieved / peak tensor FLOP/s for GEMMs (projections, FFN, experts) (0-1]
  double mbu = 0.75;      // achieved / peak HBM bandwidth (0-1]
  // Achieved / peak tensor FLOP/s of the attention core (scores and values) on long key spans:
  // fused FlashAttention / FlashMLA-class kernels, whose efficiency is not that of the GEMMs.
  // Spans of a few key tiles run slower (StepModel: attention_core_efficiency). (0-1]
  double attn_eff = 0.6;
  double comm_eff = 0.7;  // achieved / link bandwidth for collectives (0-1]
  Seconds alpha{2e-6};    // software cost per collective step, added to the tier's hop latency
  double overlap = 0.0;   // fraction of communication hidden behind computation [0-1)
  Seconds layer_overhead{4e-6};   // fixed cost per layer per pass (kernel launches, norms, sync)
  Seconds step_overhead{150e-6};  // fixed cost per engine iteration (scheduler, sampling, host)
  // Host cost per sequence per engine iteration on the busiest scheduler (one per replica, one
  // per attention rank under DP attention): input preparation, sampling and detokenisation,
  // block-table and bookkeeping work that grows with the batch.
  Seconds seq_overhead{10e-6};
  double moe_imbalance = 1.25;  // tokens on the busiest EP rank / mean tokens per EP rank (>= 1)
  // Achieved rate of a GEMM that dequantises its weights in the kernel (weights narrower than the
  // tensor-core class it computes in: MXFP4 experts on a chip without FP4, INT4 weight-only), as a
  // share of the native GEMMs' rates (mfu x peak, mbu x bandwidth); it scales both. (0-1]
  double dequant_eff = 1.0;
  // Latency the serving front end adds to every request before it reaches a replica (HTTP,
  // tokenization, routing). It delays the request's first token and its end, not the engine.
  Seconds request_latency{0.0};
};

// The parameter names as catalogs, calibration files and `racktwin calibrate --params` spell
// them, in the order of the struct.
const std::vector<std::string>& efficiency_parameter_names();
// A parameter by name, in SI units (seconds for alpha and the overheads); nullopt for an unknown
// name. set_efficiency_parameter returns false for an unknown name.
std::optional<double> efficiency_parameter(const Efficiency& e, std::string_view name);
bool set_efficiency_parameter(Efficiency& e, std::string_view name, double value);

// Serving-engine memory parameters used by the memory planner.
struct MemoryParams {
  double memory_utilization = 0.90;  // share of HBM the engine may use (weights + KV + workspace)
  Bytes runtime_reserve{2.0 * 1073741824.0};  // per XPU: runtime, kernels, graphs, fragmentation
  double workspace_bytes_per_token_hidden = 16.0;  // activation workspace per batched token, in
                                                   // units of the hidden size x 2 bytes
  int max_batched_tokens = 16384;  // tokens per iteration the workspace is sized for
  double activation_passes =
      6.0;  // bf16 passes over the hidden state per token per layer (traffic)
};

}  // namespace racktwin::perf
