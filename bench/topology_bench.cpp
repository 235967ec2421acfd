// Speed of building a topology and querying it, for one 2,048-XPU Jalapeno domain and more.

#include <benchmark/benchmark.h>

#include <cmath>
#include <stdexcept>

#include "power/power_model.hpp"
#include "scenarios/catalog_loader.hpp"
#include "topology/queries.hpp"

namespace {

using namespace racktwin;

const System& jalapeno() {
  static const Catalog cat = [] {
    auto c = load_catalog_dir(RACKTWIN_SOURCE_DIR "/scenarios/catalog");
    if (!c) throw std::runtime_error("the shipped catalog does not load");
    return *c;
  }();
  return *cat.find_system("jalapeno-a0");
}

void BM_BuildJalapeno(benchmark::State& state) {
  const int domains = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(topology::build(jalapeno(), domains));
  state.SetItemsProcessed(state.iterations() * domains * 2048);
}
BENCHMARK(BM_BuildJalapeno)->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond);

void BM_AssessRackFeed(benchmark::State& state) {
  const auto t = topology::build(jalapeno(), 1);
  const topology::PartId feed = t.at("rack3/feed");
  for (auto _ : state) benchmark::DoNotOptimize(topology::assess(t, std::span(&feed, 1)));
}
BENCHMARK(BM_AssessRackFeed)->Unit(benchmark::kMillisecond);

void BM_BisectionJalapenoDomain(benchmark::State& state) {
  const auto t = topology::build(jalapeno(), 1);
  for (auto _ : state) benchmark::DoNotOptimize(topology::bisection(t, 0));
}
BENCHMARK(BM_BisectionJalapenoDomain)->Unit(benchmark::kMillisecond);

void BM_XpuPower(benchmark::State& state) {
  const auto x = power::XpuPower::of(jalapeno());
  double c = 0.0;
  for (auto _ : state) {
    c = std::fmod(c + 0.001, 1.0);
    benchmark::DoNotOptimize(x->at({c, 1.0 - c}));
  }
}
BENCHMARK(BM_XpuPower);

}  // namespace
