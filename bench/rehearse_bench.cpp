// Wall time of rehearsing a month of the shipped 100 MW Jalapeno site (35 domains): the first call
// simulates (or reads) the serving sweep; then the rehearsal with its stored sweep, and the
// spare-capacity search; and the request-level replay of its worst failure (two simulations of a
// slice of the site, in worker processes). Prints the figures the closing notes quote.
// Usage: build/bench/racktwin_rehearse_bench [FILE]
//        (default: scenarios/rehearsals/jalapeno-100mw-month.yaml)

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "app/rehearse.hpp"
#include "app/rehearse_replay.hpp"
#include "bench/support.hpp"

int main(int argc, char** argv) {
  using namespace racktwin;
  using bench::seconds_since;
  const std::string src = RACKTWIN_SOURCE_DIR;
  const std::string file = argc > 1 ? argv[1] : src + "/scenarios/rehearsals/jalapeno-100mw-month.yaml";
  auto cat = bench::shipped_catalog();
  if (!cat) return 1;
  app::RehearseRequest rq;
  rq.file = file;
  rq.db = "/tmp/racktwin-rehearse-bench-" + std::to_string(::getpid()) + ".db";
  auto t0 = std::chrono::steady_clock::now();
  auto first = app::rehearse_file(*cat, rq);
  const double cold = seconds_since(t0);
  if (!first) {
    std::fprintf(stderr, "rehearsal failed: %s\n", first.error().message.c_str());
    for (const auto& d : first.error().diagnostics) std::fprintf(stderr, "  %s\n", d.to_string().c_str());
    ::unlink(rq.db.c_str());
    return 1;
  }
  std::vector<double> warm;
  for (int i = 0; i < 5; ++i) {
    t0 = std::chrono::steady_clock::now();
    if (!app::rehearse_file(*cat, rq)) return 1;
    warm.push_back(seconds_since(t0));
  }
  ::unlink(rq.db.c_str());
  std::sort(warm.begin(), warm.end());
  // The worst failure replayed request by request (serving rehearsals only).
  double replay_s = -1;
  std::optional<app::ReplayOutcome> replay;
  if (first->serving_point) {
    t0 = std::chrono::steady_clock::now();
    auto r = app::replay_failure(*cat, *first, "worst", app::JobOptions{});
    replay_s = seconds_since(t0);
    if (!r) {
      std::fprintf(stderr, "replay failed: %s\n", r.error().c_str());
      return 1;
    }
    replay = std::move(*r);
  }
  const auto& e = first->outcome;
  std::printf("rehearsal %s: %s x %d domains (%d XPUs), %.0f days, %zu failures\n",
              first->rehearsal.name.c_str(), first->rehearsal.system.c_str(),
              first->rehearsal.domains, e.xpus_total, first->rehearsal.horizon.value() / 86400,
              e.events.size());
  std::printf("  first call (serving sweep simulated or read): %.2f s\n", cold);
  std::printf("  rehearsal with the sweep stored: median %.2f s of %zu (min %.2f, max %.2f)\n",
              warm[warm.size() / 2], warm.size(), warm.front(), warm.back());
  if (first->spare_needed)
    std::printf("  spare racks for %.1f%% attainment: %d of %d\n", first->rehearsal.attainment_goal * 100,
                *first->spare_needed, first->racks);
  std::printf("  availability %.4f%%, attainment %.4f%%, tokens lost %.4f%%, technicians busy %.1f%%\n",
              e.availability * 100, e.attainment * 100,
              e.tokens_offered > 0 ? 100 * e.tokens_lost / e.tokens_offered : 0.0,
              e.technician_utilisation * 100);
  if (replay)
    std::printf("  worst failure (%s) replayed on %d replicas: %d requests per run, two runs in %.2f s\n",
                replay->failure.part.c_str(), replay->slice_replicas, replay->requests, replay_s);
  return 0;
}
