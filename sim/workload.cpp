#include <cmath>
#include <random>

#include "sim/serving.hpp"

namespace racktwin::sim {

std::uint64_t stream_seed(std::uint64_t master, const std::string& name) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  std::uint64_t z = master ^ h;  // SplitMix64 finaliser
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

namespace {
std::vector<Request> fixed_length(const InferenceXWorkload& w, int n, int warmup,
                                  std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Integers uniform in [lo, hi], drawn from the raw 64-bit stream so that the sequence does not
  // depend on the standard library's distribution code.
  auto uniform = [&](int length) {
    const int lo = shortest_length(w, length);
    const std::uint64_t span = static_cast<std::uint64_t>(length - lo + 1);
    return lo + static_cast<int>(rng() % span);
  };
  std::vector<Request> out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Request& r = out[static_cast<std::size_t>(i)];
    r.id = i;
    r.isl = uniform(w.isl);
    r.osl = uniform(w.osl);
    r.warmup = i < warmup;
  }
  return out;
}
}  // namespace

std::vector<Request> inferencex_requests(const InferenceXWorkload& w, int concurrency,
                                         std::uint64_t seed) {
  return fixed_length(w, w.prompts_per_client * concurrency, w.warmup_per_client * concurrency,
                      seed);
}

std::vector<Request> poisson_requests(const InferenceXWorkload& w, double rate,
                                      std::uint64_t seed) {
  std::vector<Request> out = fixed_length(w, w.requests, w.warmup_requests, seed);
  std::mt19937_64 rng(stream_seed(seed, "arrivals"));
  double t = 0;
  for (Request& r : out) {
    // Exponential gaps by inversion of a uniform in (0, 1] built from the raw 53 high bits.
    const double u = (static_cast<double>(rng() >> 11) + 1.0) * 0x1.0p-53;
    t += -std::log(u) / rate;
    r.arrival = t;
  }
  return out;
}

}  // namespace racktwin::sim
