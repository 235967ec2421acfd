// Evaluations per second of the step-time model, the simulator's innermost call.
// Target: at least one million decode-step evaluations per second on one core.

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "core/perf/step.hpp"
#include "scenarios/catalog_loader.hpp"

namespace {

using namespace racktwin;

const Catalog& catalog() {
  static const Catalog c = [] {
    auto r = load_catalog_dir(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/catalog");
    if (!r) std::abort();
    return *r;
  }();
  return c;
}

perf::StepModel model(const char* m, const char* s, const char* layout) {
  const Catalog& c = catalog();
  const System& sys = *c.find_system(s);
  const Model& md = *c.find_model(m);
  auto sm =
      perf::StepModel::create(md, sys, c, *parse_layout(layout), perf::best_precision(md, sys, c),
                              c.efficiency_prior_for(s)->values);
  if (!sm) std::abort();
  return *sm;
}

// Decode steps with a batch that changes every call, as in a simulation.
void BM_DecodeStep(benchmark::State& state, const char* m, const char* s, const char* layout) {
  const perf::StepModel sm = model(m, s, layout);
  double batch = 1;
  for (auto _ : state) {
    const auto b = sm.step(perf::IterationShape::decode(batch, batch * 8192.0));
    benchmark::DoNotOptimize(b.total);
    batch = batch >= 512 ? 1 : batch + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_DecodeStep, deepseek_r1_jalapeno_dep8, "deepseek-r1", "jalapeno-a0",
                  "tp8-ep8-dpa");
BENCHMARK_CAPTURE(BM_DecodeStep, gpt_oss_gb200_tp4, "gpt-oss-120b", "gb200-nvl72", "tp4-ep4");
BENCHMARK_CAPTURE(BM_DecodeStep, llama_h100_tp8, "llama-3.3-70b", "h100-hgx", "tp8");

// Mixed steps: decode plus one chunked-prefill chunk.
void BM_MixedStep(benchmark::State& state) {
  const perf::StepModel sm = model("deepseek-r1", "gb300-nvl72", "tp8-ep8-dpa");
  double batch = 1;
  for (auto _ : state) {
    perf::IterationShape s = perf::IterationShape::decode(batch, batch * 8192.0);
    s.add_prefill_chunk(2048, 4096, false);
    const auto b = sm.step(s);
    benchmark::DoNotOptimize(b.total);
    batch = batch >= 512 ? 1 : batch + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MixedStep);

// Building the per-replica constants (done once per replica, not per step).
void BM_Create(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(model("deepseek-r1", "jalapeno-a0", "tp8-ep8-dpa"));
}
BENCHMARK(BM_Create);

}  // namespace
