// Speed of the serving simulation. SimGrid keeps one engine per process, so each case runs in a
// forked child that reports its figures through a pipe. Prints, for the closing notes:
//   - wall time of a full InferenceX 8k/1k sweep (C = 1 to 1024, doubling) for one system, model
//   and
//     layout (target: under 2 s);
//   - engine plans (SimGrid wake-ups) and iterations per request when OSL doubles from 1k to 2k
//     (target: plans per request do not double);
//   - wall time of a disaggregated point pair under load, and the prompts a KV transfer carries;
//   - a full Jalapeno domain serving agentic sessions.
// Usage: build/bench/racktwin_sim_bench

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "scenarios/catalog_loader.hpp"
#include "sim/serving.hpp"
#include "sim/sweep.hpp"

namespace {

using namespace racktwin;

struct Figures {
  double wall_s = 0;
  double requests = 0, plans = 0, iterations = 0;
  double peak_rss_mb = 0;
};

// A closed-loop point of `clients` clients on one system, model and layout at its best precision.
sim::PointSpec closed_loop(const Catalog& cat, const System& s, const Model& m, const char* layout,
                           int isl, int osl, int clients) {
  sim::PointSpec p;
  p.system = &s;
  p.model = &m;
  p.layout = *parse_layout(layout);
  p.precision = perf::best_precision(m, s, cat);
  p.workload.isl = isl;
  p.workload.osl = osl;
  p.arrivals = sim::ClosedLoop{clients};
  p.seed = sim::stream_seed(1, std::to_string(clients));
  return p;
}

// Simulates `specs` and returns the wall time, the requests, plans and iterations summed over
// the points, and the process's peak RSS; aborts when the batch or a point fails.
Figures timed(const Catalog& cat, const std::vector<sim::PointSpec>& specs,
              double* prompts_per_transfer = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = sim::simulate(cat, specs);
  const auto t1 = std::chrono::steady_clock::now();
  if (!r) std::abort();
  Figures f;
  f.wall_s = std::chrono::duration<double>(t1 - t0).count();
  double transfers = 0;
  for (const auto& x : *r) {
    if (!x.error.empty()) std::abort();
    f.requests += static_cast<double>(x.completed);
    f.plans += static_cast<double>(x.plans);
    f.iterations += static_cast<double>(x.iterations);
    if (x.kv_prompts_per_transfer > 0)
      transfers += static_cast<double>(x.completed) / x.kv_prompts_per_transfer;
  }
  if (prompts_per_transfer != nullptr && transfers > 0)
    *prompts_per_transfer = f.requests / transfers;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  f.peak_rss_mb = static_cast<double>(u.ru_maxrss) / 1024.0;
  return f;
}

Figures sweep(const char* system, const char* model, const char* layout, int isl, int osl,
              int max_c) {
  auto cat = load_catalog_dir(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/catalog");
  if (!cat) std::abort();
  const System& s = *cat->find_system(system);
  const Model& m = *cat->find_model(model);
  std::vector<sim::PointSpec> specs;
  for (int c = 1; c <= max_c; c *= 2) {
    sim::PointSpec p = closed_loop(*cat, s, m, layout, isl, osl, c);
    p.efficiency = cat->efficiency_prior_for(system)->values;
    specs.push_back(p);
  }
  return timed(*cat, specs);
}

// Disaggregated serving under load: gb200-nvl72 DeepSeek-R1 1k/1k, one tp8-ep8-dpa prefill replica
// beside one decode replica, at 1,024 and 4,096 clients, with the catalog's calibrated efficiencies
// and the system's multi-node batch. Each prompt's KV crosses the fabric as a SimGrid
// communication, shared with the prompts of its instant (docs/simulation.md section 3.7).
struct Disagg {
  Figures f;
  double prompts_per_transfer = 0;
};
Disagg disaggregated() {
  auto cat = load_catalog_dir(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/catalog");
  if (!cat) std::abort();
  const System& s = *cat->find_system("gb200-nvl72");
  const Model& m = *cat->find_model("deepseek-r1");
  std::vector<sim::PointSpec> specs;
  for (int c : {1024, 4096}) {
    sim::PointSpec p = closed_loop(*cat, s, m, "tp8-ep8-dpa", 1024, 1024, c);
    p.prefill_replicas = 1;
    // Both pools batch as the system's multi-node benchmarks did (catalog serving.multinode).
    if (auto seqs = sim::multinode_max_seqs(s, p.layout)) p.engine.max_seqs = *seqs;
    p.efficiency = cat->efficiency_for("gb200-nvl72")->values;
    specs.push_back(p);
  }
  Disagg out;
  out.f = timed(*cat, specs, &out.prompts_per_transfer);
  return out;
}

// A full 2,048-XPU Jalapeno domain (256 replicas of tp8-ep8-dpa) serving agentic sessions: 2,500
// clients x 4 sessions, about 10^5 requests.
Figures domain() {
  auto cat = load_catalog_dir(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/catalog");
  if (!cat) std::abort();
  const System& s = *cat->find_system("jalapeno-a0");
  const Model& m = *cat->find_model("deepseek-r1");
  sim::PointSpec p;
  p.system = &s;
  p.model = &m;
  p.layout = *parse_layout("tp8-ep8-dpa");
  p.precision = perf::best_precision(m, s, *cat);
  sim::Agentic agentic;
  agentic.clients = 2500;
  agentic.workload.max_context = 131072;
  p.arrivals = agentic;
  p.replicas = 256;
  p.router = RouterPolicy::session_affinity;
  p.seed = 3;
  p.efficiency = cat->efficiency_prior_for("jalapeno-a0")->values;
  return timed(*cat, {p});
}

// Runs `fn` in a child process and returns what it measured (a trivially copyable value).
template <class F>
auto in_child(F fn) -> decltype(fn()) {
  using T = decltype(fn());
  int fd[2];
  std::fflush(stdout);
  if (pipe(fd) != 0) std::abort();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    const T f = fn();
    if (write(fd[1], &f, sizeof f) != static_cast<ssize_t>(sizeof f)) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  T f{};
  if (read(fd[0], &f, sizeof f) != static_cast<ssize_t>(sizeof f))
    std::fprintf(stderr, "child failed\n");
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return f;
}

}  // namespace

int main() {
  std::printf(
      "InferenceX sweep C = 1..1024 (11 points, 20,470 requests), one system x model x layout\n");
  for (const auto& [system, model, layout] :
       {std::tuple{"gb200-nvl72", "gpt-oss-120b", "tp4-ep4"},
        std::tuple{"jalapeno-a0", "deepseek-r1", "tp8-ep8-dpa"},
        std::tuple{"gb300-nvl72", "kimi-k2.5", "tp4-dpa"}}) {
    const Figures f = in_child([&] { return sweep(system, model, layout, 8192, 1024, 1024); });
    std::printf(
        "  %-12s %-13s %-12s 8k/1k: %6.2f s wall, %7.1f MB peak RSS, %.1f plans and %.0f "
        "iterations per request\n",
        system, model, layout, f.wall_s, f.peak_rss_mb, f.plans / f.requests,
        f.iterations / f.requests);
  }
  std::printf(
      "\nEvents per request when OSL doubles (gb200-nvl72, gpt-oss-120b, tp4-ep4, C = 1..1024)\n");
  const Figures a =
      in_child([] { return sweep("gb200-nvl72", "gpt-oss-120b", "tp4-ep4", 8192, 1024, 1024); });
  const Figures b =
      in_child([] { return sweep("gb200-nvl72", "gpt-oss-120b", "tp4-ep4", 8192, 2048, 1024); });
  std::printf("  OSL 1k: %.2f plans/request, %.0f iterations/request, %.2f s\n",
              a.plans / a.requests, a.iterations / a.requests, a.wall_s);
  std::printf("  OSL 2k: %.2f plans/request, %.0f iterations/request, %.2f s\n",
              b.plans / b.requests, b.iterations / b.requests, b.wall_s);
  std::printf("  plans per request grow x%.2f while iterations per request grow x%.2f\n",
              (b.plans / b.requests) / (a.plans / a.requests),
              (b.iterations / b.requests) / (a.iterations / a.requests));
  std::printf(
      "\nDisaggregated: gb200-nvl72 deepseek-r1 1k/1k, tp8-ep8-dpa 1p1d, C = 1024 and 4096\n");
  const Disagg g = in_child(disaggregated);
  std::printf("  %.0f requests in %.2f s wall, %.2f prompts per KV transfer, %.0f MB peak RSS\n",
              g.f.requests, g.f.wall_s, g.prompts_per_transfer, g.f.peak_rss_mb);
  std::printf(
      "\nA 2,048-XPU jalapeno-a0 domain (256 x tp8-ep8-dpa) serving agentic sessions of "
      "deepseek-r1\n");
  const Figures d = in_child(domain);
  std::printf(
      "  %.0f requests in %.2f s wall, %.0f MB peak RSS (targets: 10^5 requests, under 60 s and 4 "
      "GB)\n",
      d.requests, d.wall_s, d.peak_rss_mb);
  return 0;
}
