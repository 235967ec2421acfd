#include "sim/sweep.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "core/perf/memory.hpp"

namespace racktwin::sim {

std::vector<Layout> sweep_layouts(const Catalog& cat, const Scenario& sc, const System& s,
                                  const Model& m, const std::string& precision, double min_tokens) {
  std::vector<Layout> out = sc.layouts.named;
  std::vector<int> sizes = sc.layouts.replica_xpus;
  if (sc.layouts.all_valid()) {
    for (int n : {s.compute_tray.xpus, 8})
      if (n <= s.domain_xpus && std::find(sizes.begin(), sizes.end(), n) == sizes.end())
        sizes.push_back(n);
  }
  if (!sizes.empty()) {
    perf::LayoutQuery q;
    q.replica_xpus = sizes;
    q.max_pp = 1;
    q.precision = precision;
    q.min_tokens = min_tokens;
    for (const auto& o : perf::enumerate_layouts(m, s, cat, q))
      if (o.valid) out.push_back(o.layout);
  }
  // A named layout may also come out of the enumeration: keep the first of each.
  std::vector<Layout> unique;
  for (const auto& l : out) {
    const bool seen = std::any_of(unique.begin(), unique.end(), [&](const Layout& u) {
      return u.tp == l.tp && u.ep == l.ep && u.pp == l.pp && u.dp_attention == l.dp_attention;
    });
    if (!seen) unique.push_back(l);
  }
  return unique;
}

namespace {

// KV tokens the longest request of a workload needs.
double longest_request(const Workload& w) {
  if (w.kind == WorkloadKind::agentic) return w.agentic.max_context;
  if (w.kind == WorkloadKind::trace) {
    double n = 0;
    for (const auto& q : *w.trace.requests)
      n = std::max<double>(n, q.input_length + q.output_length);
    return n;
  }
  return w.inferencex.isl + w.inferencex.osl;
}

// Closed loop: one point per concurrency; open loop: one per rate; a trace sets its own arrivals.
std::vector<std::pair<int, double>> loads_of(const Scenario& sc, const Workload& w) {
  std::vector<std::pair<int, double>> loads;
  if (w.kind == WorkloadKind::poisson) {
    for (double r : w.inferencex.rates) loads.emplace_back(0, r);
  } else if (w.kind == WorkloadKind::trace) {
    loads.emplace_back(0, 0.0);
  } else {
    for (int c : sc.concurrency) loads.emplace_back(c, 0.0);
  }
  return loads;
}

}  // namespace

std::expected<std::vector<PointSpec>, std::string> build_sweep(const Catalog& cat,
                                                               const Scenario& sc,
                                                               const SweepOptions& options) {
  const std::vector<ServingMode>& modes = options.modes ? *options.modes : sc.serving;
  std::vector<PointSpec> specs;
  for (const auto& sid : sc.systems) {
    const System* s = cat.find_system(sid);
    if (s == nullptr) return std::unexpected("unknown system '" + sid + "'");
    std::optional<perf::Efficiency> eff;
    if (options.efficiency) eff = options.efficiency(*s);
    if (!eff) {
      auto choice = cat.efficiency_for(sid);
      if (!choice)
        return std::unexpected("no efficiency prior for " + sid +
                               " and no 'default' prior in the catalog");
      eff = choice->values;
    }
    for (const auto& mid : sc.models) {
      const Model* m = cat.find_model(mid);
      if (m == nullptr) return std::unexpected("unknown model '" + mid + "'");
      for (const auto& w : sc.workloads) {
        const std::string precision =
            w.inferencex.precision.value_or(perf::best_precision(*m, *s, cat));
        const auto loads = loads_of(sc, w);
        const auto layouts = sweep_layouts(cat, sc, *s, *m, precision, longest_request(w));
        for (const Layout& l : layouts) {
          for (const ServingMode& mode : modes) {
            for (const auto& [c, rate] : loads) {
              PointSpec p;
              p.system = s;
              p.model = m;
              p.layout = l;
              p.precision = precision;
              p.workload = w.inferencex;
              p.workload_id = w.id;
              p.kind = w.kind;
              p.trace = w.trace;
              if (w.kind == WorkloadKind::trace) p.engine.block_tokens = w.trace.block_tokens;
              if (w.kind == WorkloadKind::agentic) p.engine.block_tokens = w.agentic.block_tokens;
              p.agentic = w.agentic;
              p.concurrency = c;
              p.rate = rate;
              p.replicas = mode.disaggregated() ? mode.decode : sc.replicas;
              p.prefill_replicas = mode.prefill;
              p.host_offload = sc.host_offload;
              p.failures = sc.failures;
              p.router = sc.router;
              std::string load = std::to_string(c);
              if (w.kind == WorkloadKind::poisson) {
                char buf[40];
                std::snprintf(buf, sizeof buf, "rate%.17g", rate);
                load = buf;
              }
              // Aggregated points keep the stream names they had before serving modes existed.
              const std::string served = mode.disaggregated() ? "/" + mode.label() : "";
              p.seed = stream_seed(options.seed, sid + "/" + mid + "/" + w.id + "/" + l.label() +
                                                     served + "/" + load);
              p.efficiency = *eff;
              p.facility = sc.facility;
              specs.push_back(p);
            }
          }
        }
      }
    }
  }
  return specs;
}

std::map<SummaryKey, SweepSummary> summarise(const std::vector<PointResult>& results) {
  std::map<SummaryKey, SweepSummary> rows;
  for (const auto& r : results) {
    SweepSummary& row = rows[{r.spec.workload_id, r.spec.model->id, r.spec.system->id}];
    if (!r.error.empty()) {
      row.failed += 1;
      continue;
    }
    row.points += 1;
    if (r.total_tps_per_xpu > row.peak_tps) {
      row.peak_tps = r.total_tps_per_xpu;
      row.best_layout = r.spec.layout.label();
      if (r.spec.prefill_replicas > 0)
        row.best_layout += " " + ServingMode{r.spec.prefill_replicas, r.spec.replicas}.label();
    }
    row.peak_rated_kw = std::max(row.peak_rated_kw, r.tps_per_rated_kw);
    row.peak_allin_mw = std::max(row.peak_allin_mw, r.tps_per_allin_mw);
    row.allin_computed = row.allin_computed || r.all_in_computed;
    if (r.tpot.median > 0) row.min_tbt = std::min(row.min_tbt, r.tpot.median);
    if (r.e2e.median < row.min_e2e) {
      row.min_e2e = r.e2e.median;
      row.ttft_at_min_e2e = r.ttft.median;
    }
  }
  return rows;
}

std::map<CurveKey, std::vector<CurvePoint>> envelopes(const std::vector<PointResult>& results,
                                                      CurveValue value) {
  std::map<CurveKey, std::vector<CurvePoint>> curves;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (!r.error.empty()) continue;
    const double y = value == CurveValue::total_tps_per_xpu    ? r.total_tps_per_xpu
                     : value == CurveValue::output_tps_per_xpu ? r.output_tps_per_xpu
                                                               : r.tps_per_allin_mw;
    curves[{r.spec.system->id, r.spec.model->id, r.spec.workload_id}].push_back(
        {r.interactivity, y, i});
  }
  for (auto& [key, pts] : curves) pts = pareto_envelope(std::move(pts));
  return curves;
}

namespace {

// Every scalar field of a PointResult, in a fixed order, for the trip through a pipe (the
// percentile vectors and time series stay behind: predictions do not read them).
template <class R, class F>
void each_scalar(R& r, F&& f) {
  auto stats = [&](auto& s) { f(s.mean), f(s.median), f(s.p90), f(s.p99), f(s.min), f(s.max); };
  f(r.xpus), f(r.kv_capacity_tokens), f(r.requests), f(r.completed), f(r.duration_s);
  f(r.input_tokens), f(r.output_tokens), f(r.total_tps_per_xpu), f(r.output_tps_per_xpu);
  f(r.input_tps_per_xpu);
  stats(r.ttft), stats(r.tpot), stats(r.e2e);
  f(r.interactivity), f(r.e2e_norm_interactivity), f(r.prefix_hit_rate), f(r.mean_concurrency);
  f(r.domains), f(r.offload_hit_rate), f(r.offloaded_bytes), f(r.host_tier_blocks);
  f(r.kv_transfer_bytes), f(r.kv_transfer_s);
  f(r.retried_requests), f(r.replica_down_s), f(r.recovery_s);
  f(r.iteration_compute_s), f(r.iteration_memory_s), f(r.iteration_communication_s);
  f(r.iteration_overhead_s);
  f(r.compute_activity), f(r.memory_activity), f(r.xpu_power_w), f(r.energy_per_token_j);
  f(r.tps_per_rated_kw), f(r.tps_per_measured_kw), f(r.tps_per_it_kw), f(r.tps_per_allin_mw);
  f(r.all_in_computed), f(r.iterations), f(r.plans), f(r.preemptions), f(r.max_kv_used);
}

void put(std::string& out, const void* p, std::size_t n) {
  out.append(static_cast<const char*>(p), n);
}

std::string encode(const std::vector<PointResult>& results) {
  std::string out;
  for (const auto& r : results) {
    each_scalar(r, [&](const auto& v) { put(out, &v, sizeof v); });
    const std::uint64_t n = r.error.size();
    put(out, &n, sizeof n);
    out += r.error;
  }
  return out;
}

bool decode(const std::string& in, std::vector<PointResult>& results) {
  std::size_t at = 0;
  auto get = [&](void* p, std::size_t n) {
    if (at + n > in.size()) return false;
    std::memcpy(p, in.data() + at, n);
    at += n;
    return true;
  };
  for (auto& r : results) {
    bool ok = true;
    each_scalar(r, [&](auto& v) { ok = ok && get(&v, sizeof v); });
    std::uint64_t n = 0;
    if (!ok || !get(&n, sizeof n) || at + n > in.size()) return false;
    r.error.assign(in.data() + at, n);
    at += n;
  }
  return at == in.size();
}

bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<std::size_t>(w);
  }
  return true;
}

// A rough cost of simulating one point, in requests: it orders and groups the points so that the
// child processes finish together. Only the balance depends on it, never a result.
double cost_estimate(const PointSpec& s) {
  double requests = 0;
  switch (s.kind) {
    case WorkloadKind::inferencex:
      requests = static_cast<double>(s.concurrency) * s.workload.prompts_per_client;
      break;
    case WorkloadKind::trace:
      requests = s.trace.requests ? static_cast<double>(s.trace.requests->size()) : 0.0;
      break;
    default:
      requests = static_cast<double>(s.concurrency) * 10.0;
      break;
  }
  // Decode iterations grow with the output length; a fixed part is building the platform.
  return 20.0 + requests * (1.0 + static_cast<double>(s.workload.osl) / 1024.0);
}

}  // namespace

std::expected<std::vector<PointResult>, std::string> simulate_isolated(
    const Catalog& catalog, const std::vector<PointSpec>& specs, int jobs,
    const SimOptions& options) {
  std::vector<PointResult> results(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) results[i].spec = specs[i];
  if (specs.empty()) return results;
  const std::size_t workers = static_cast<std::size_t>(std::max(jobs, 1));

  // Tasks: the points by decreasing estimated cost, cut into groups of about a twelfth of a
  // worker's share (an expensive point alone), so that the longest go first and the short ones
  // fill in at the end.
  std::vector<std::size_t> order(specs.size());
  std::vector<double> cost(specs.size());
  double total = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    order[i] = i;
    cost[i] = cost_estimate(specs[i]);
    total += cost[i];
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  const double grain = total / static_cast<double>(workers * 12);
  std::vector<std::vector<std::size_t>> tasks;
  double in_task = 0;
  for (std::size_t i : order) {
    if (tasks.empty() || (in_task > 0 && in_task + cost[i] > grain)) {
      tasks.emplace_back();
      in_task = 0;
    }
    tasks.back().push_back(i);
    in_task += cost[i];
  }
  // One task per process (SimGrid keeps one engine per process), at most `workers` at a time.
  struct Child {
    pid_t pid = -1;
    int fd = -1;
    std::size_t task = 0;
    std::string msg;
  };
  std::vector<Child> running;
  std::fflush(nullptr);  // the children must not flush the parent's buffered output again
  std::string failure;
  std::size_t next = 0;
  auto start = [&](std::size_t t) {
    int fd[2];
    if (::pipe(fd) != 0) {
      failure = std::string("cannot create a pipe: ") + std::strerror(errno);
      return;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      failure = std::string("cannot fork: ") + std::strerror(errno);
      ::close(fd[0]);
      ::close(fd[1]);
      return;
    }
    if (pid == 0) {
      ::close(fd[0]);
      std::vector<PointSpec> part;
      for (std::size_t i : tasks[t]) part.push_back(specs[i]);
      auto r = simulate(catalog, part, options);
      std::string msg;
      if (r)
        msg = std::string(1, 'R') + encode(*r);
      else
        msg = std::string(1, 'E') + r.error();
      _exit(write_all(fd[1], msg) ? 0 : 1);
    }
    ::close(fd[1]);
    running.push_back({pid, fd[0], t, {}});
  };
  // Reads what the children send (a child blocks on a full pipe until it is read), and gathers
  // the results of each one that ends.
  auto finish = [&](Child& c) {
    ::close(c.fd);
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!failure.empty()) return;
    if (c.msg.empty()) {
      failure =
          "a simulation process ended without results (exit status " + std::to_string(status) + ")";
    } else if (c.msg[0] == 'E') {
      failure = c.msg.substr(1);
    } else {
      std::vector<PointResult> part;
      for (std::size_t i : tasks[c.task]) part.push_back(results[i]);
      if (!decode(c.msg.substr(1), part)) {
        failure = "a simulation process sent truncated results";
      } else {
        for (std::size_t k = 0; k < part.size(); ++k)
          results[tasks[c.task][k]] = std::move(part[k]);
      }
    }
  };
  while (true) {
    while (failure.empty() && running.size() < workers && next < tasks.size()) start(next++);
    if (running.empty()) break;
    std::vector<pollfd> fds;
    for (const auto& c : running) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      failure = std::string("cannot wait for the simulation processes: ") + std::strerror(errno);
      for (auto& c : running) ::kill(c.pid, SIGKILL);
    }
    for (std::size_t k = running.size(); k-- > 0;) {
      if (fds[k].revents == 0 && failure.empty()) continue;
      char buf[65536];
      const ssize_t n = ::read(running[k].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        running[k].msg.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      finish(running[k]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  if (!failure.empty()) return std::unexpected(failure);
  return results;
}

}  // namespace racktwin::sim
