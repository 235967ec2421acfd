#include "sim/deployment.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "core/error.hpp"

namespace racktwin::sim {

namespace {

using topology::LinkKind;
using topology::PartId;

int find_root(std::vector<int>& parent, int x) {
  while (parent[static_cast<std::size_t>(x)] != x) {
    parent[static_cast<std::size_t>(x)] =
        parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
    x = parent[static_cast<std::size_t>(x)];
  }
  return x;
}

// The XPUs of each replica of the groups, in order: every group's replicas packed as
// topology::place packs them, on the XPUs the groups before it left free (topology::place_free,
// the one placement routine the site rehearsals use as well).
std::expected<std::vector<std::vector<PartId>>, std::string> place_groups(
    const topology::Topology& t, const std::vector<ReplicaGroup>& groups) {
  std::vector<std::vector<PartId>> out;
  std::vector<char> taken(t.xpus().size(), 0);
  for (const ReplicaGroup& grp : groups) {
    std::vector<topology::Replica> placed;
    try {
      placed = topology::place_free(t, grp.xpus, grp.replicas, taken);
    } catch (const InputError& e) {
      return std::unexpected(std::string(e.what()));
    }
    for (auto& r : placed) out.push_back(std::move(r.xpus));
    const auto held = static_cast<int>(placed.size());
    if (held < grp.replicas)
      return std::unexpected(std::to_string(t.domains()) + " scale-up domain(s) of " +
                             t.system().id + " hold " + std::to_string(held) + " replicas of " +
                             std::to_string(grp.xpus) + " XPUs" +
                             (groups.size() > 1 ? " beside the replicas placed before them" : "") +
                             ", not " + std::to_string(grp.replicas));
  }
  return out;
}

}  // namespace

std::expected<Deployment, std::string> deploy(std::shared_ptr<const topology::Topology> shared,
                                              int replica_xpus, int replicas) {
  return deploy(std::move(shared), std::vector<ReplicaGroup>{{replica_xpus, replicas}});
}

namespace {

// The deployment of replicas placed on these XPUs (sites in this order).
Deployment deployment_of(std::shared_ptr<const topology::Topology> shared,
                         const std::vector<std::vector<PartId>>& placed, int replica_xpus);

}  // namespace

std::expected<Deployment, std::string> deploy(std::shared_ptr<const topology::Topology> shared,
                                              const std::vector<ReplicaGroup>& groups) {
  auto placed = place_groups(*shared, groups);
  if (!placed) return std::unexpected(placed.error());
  return deployment_of(std::move(shared), *placed, groups.back().xpus);
}

std::expected<Deployment, std::string> deploy_in_domains(
    std::shared_ptr<const topology::Topology> shared, const std::vector<int>& pool_xpus,
    const std::vector<std::vector<int>>& per_domain) {
  const topology::Topology& t = *shared;
  if (per_domain.size() != static_cast<std::size_t>(t.domains()))
    return std::unexpected("a replica count per domain is needed for each of the " +
                           std::to_string(t.domains()) + " domains");
  std::vector<std::vector<std::vector<PartId>>> by_pool(pool_xpus.size());
  try {
    for (int dom = 0; dom < t.domains(); ++dom) {
      std::vector<char> taken(t.xpus().size(), 0);
      for (PartId x : t.xpus())
        if (t.part(x).domain != dom) taken[static_cast<std::size_t>(t.ordinal(x))] = 1;
      const auto& want = per_domain[static_cast<std::size_t>(dom)];
      for (std::size_t p = 0; p < pool_xpus.size(); ++p) {
        const auto got = topology::place_free(t, pool_xpus[p], want[p], taken);
        if (static_cast<int>(got.size()) < want[p])
          return std::unexpected("domain " + std::to_string(dom) + " of " + t.system().id +
                                 " holds " + std::to_string(got.size()) + " replicas of " +
                                 std::to_string(pool_xpus[p]) + " XPUs beside the ones before " +
                                 "them, not " + std::to_string(want[p]));
        for (const auto& r : got) by_pool[p].push_back(r.xpus);
      }
    }
  } catch (const InputError& e) {
    return std::unexpected(std::string(e.what()));
  }
  std::vector<std::vector<PartId>> placed;
  for (auto& pool : by_pool) placed.insert(placed.end(), pool.begin(), pool.end());
  if (placed.empty()) return std::unexpected(std::string("a deployment needs at least one replica"));
  return deployment_of(std::move(shared), placed, pool_xpus.back());
}

namespace {

Deployment deployment_of(std::shared_ptr<const topology::Topology> shared,
                         const std::vector<std::vector<PartId>>& placed, int replica_xpus) {
  const topology::Topology& t = *shared;
  const System& s = t.system();
  const int replicas = static_cast<int>(placed.size());
  const auto& g = t.graph();
  Deployment d;
  d.topology = shared;
  d.domains = t.domains();
  d.replica_xpus = replica_xpus;
  if (!s.scale_up.empty()) {
    d.rack_latency_s = s.scale_up.front().latency.value();
    d.domain_latency_s = s.scale_up.back().latency.value();
  }
  d.scale_out_latency_s = s.scale_out_latency.value();

  // Host parts by vertex, and the replicas each serves.
  std::map<PartId, int> host_index;
  std::vector<PartId> host_parts;
  std::vector<std::vector<int>> host_replicas;
  for (int k = 0; k < replicas; ++k) {
    Site site;
    const auto& xs = placed[static_cast<std::size_t>(k)];
    site.domain = g[xs.front()].domain;
    site.rack = g[xs.front()].rack;
    for (PartId x : xs) {
      site.xpus.push_back(t.ordinal(x));
      for (auto e : boost::make_iterator_range(boost::out_edges(x, g))) {
        const auto& l = g[e];
        const double bw = l.bandwidth.value();
        if (l.kind == LinkKind::scale_up) site.fabric_bw += bw;
        if (l.kind == LinkKind::scale_up && g[boost::target(e, g)].uplink) site.uplink_bw += bw;
        if (l.kind == LinkKind::scale_out) site.scale_out_bw += bw;
        if (l.kind == LinkKind::host_link) site.host_link_bw += bw;
      }
      for (auto e : boost::make_iterator_range(boost::in_edges(x, g))) {
        if (g[e].kind != LinkKind::hosts) continue;
        const PartId h = boost::source(e, g);
        auto [it, added] = host_index.emplace(h, static_cast<int>(host_parts.size()));
        if (added) {
          host_parts.push_back(h);
          host_replicas.emplace_back();
        }
        auto& served = host_replicas[static_cast<std::size_t>(it->second)];
        if (served.empty() || served.back() != k) served.push_back(k);
      }
    }
    d.sites.push_back(std::move(site));
  }

  // Pools: replicas joined through the host parts they share.
  std::vector<int> parent(static_cast<std::size_t>(replicas));
  std::iota(parent.begin(), parent.end(), 0);
  for (const auto& served : host_replicas)
    for (std::size_t i = 1; i < served.size(); ++i)
      parent[static_cast<std::size_t>(find_root(parent, served[i]))] =
          find_root(parent, served.front());
  std::map<int, int> pool_of_root;
  for (int k = 0; k < replicas; ++k) {
    const int root = find_root(parent, k);
    auto [it, added] = pool_of_root.emplace(root, static_cast<int>(d.pools.size()));
    if (added) d.pools.emplace_back();
    d.sites[static_cast<std::size_t>(k)].pool = it->second;
    d.pools[static_cast<std::size_t>(it->second)].replicas.push_back(k);
  }
  for (std::size_t h = 0; h < host_parts.size(); ++h) {
    const int k = host_replicas[h].front();
    HostPool& p = d.pools[static_cast<std::size_t>(d.sites[static_cast<std::size_t>(k)].pool)];
    p.parts.push_back(g[host_parts[h]].name);
    // The catalog gives DRAM per host tray or server; CPUs inside a compute tray split the tray's.
    const bool split =
        s.host.placement == HostPlacement::in_compute_tray && s.compute_tray.cpus > 1;
    p.dram_bytes += s.host.dram.value() / (split ? s.compute_tray.cpus : 1);
  }
  return d;
}

}  // namespace

std::shared_ptr<const topology::Topology> TopologyCache::get(const System& system, int domains) {
  auto& t = built_[{&system, domains}];
  if (!t) t = std::make_shared<const topology::Topology>(topology::build(system, domains));
  return t;
}

std::expected<Deployment, std::string> deploy(const System& system, int replica_xpus,
                                              int replicas) {
  TopologyCache own;
  return deploy(system, replica_xpus, replicas, own);
}

std::expected<Deployment, std::string> deploy(const System& system,
                                              const std::vector<ReplicaGroup>& groups,
                                              TopologyCache& cache) {
  if (groups.size() == 1) return deploy(system, groups[0].xpus, groups[0].replicas, cache);
  // Groups of one replica size wider than a domain take whole domains in order, as one group does
  // (two servers each for a 16-XPU prefill and decode pair on 8-XPU servers).
  const bool one_size = std::all_of(groups.begin(), groups.end(), [&](const ReplicaGroup& g) {
    return g.xpus == groups.front().xpus;
  });
  if (one_size && groups.front().xpus > system.domain_xpus) {
    int replicas = 0;
    for (const ReplicaGroup& g : groups) replicas += g.replicas;
    return deploy(system, groups.front().xpus, replicas, cache);
  }
  try {
    // From the domains the groups' XPUs fill to those that hold each group in domains of its own.
    long long xpus = 0, most = 0;
    for (const ReplicaGroup& grp : groups) {
      if (grp.xpus < 1 || grp.replicas < 1)
        return std::unexpected("a deployment needs at least one replica of at least one XPU");
      if (grp.xpus > system.domain_xpus)
        return std::unexpected(
            "pools of different replica sizes are placed within scale-up domains; a replica of " +
            std::to_string(grp.xpus) + " XPUs does not fit a " +
            std::to_string(system.domain_xpus) + "-XPU domain of " + system.id);
      const auto per_domain =
          static_cast<long long>(topology::place(*cache.get(system, 1), grp.xpus).replicas.size());
      if (per_domain < 1)
        return std::unexpected("no replica of " + std::to_string(grp.xpus) +
                               " XPUs fits a domain of " + system.id);
      xpus += static_cast<long long>(grp.xpus) * grp.replicas;
      most += (grp.replicas + per_domain - 1) / per_domain;
    }
    if (most * system.domain_xpus > topology::kMaxDeploymentXpus)
      return std::unexpected("the pools need up to " + std::to_string(most) + " domains of " +
                             system.id + ", beyond the " +
                             std::to_string(topology::kMaxDeploymentXpus) +
                             "-XPU limit of one deployment");
    std::string why;
    for (auto domains = (xpus + system.domain_xpus - 1) / system.domain_xpus; domains <= most;
         ++domains) {
      auto d = deploy(cache.get(system, static_cast<int>(domains)), groups);
      if (d) return d;
      why = d.error();
    }
    return std::unexpected(why);
  } catch (const InputError& e) {
    return std::unexpected(std::string(e.what()));
  }
}

std::expected<Deployment, std::string> deploy(const System& system, int replica_xpus, int replicas,
                                              TopologyCache& cache) {
  if (replica_xpus < 1 || replicas < 1)
    return std::unexpected("a deployment needs at least one replica of at least one XPU");
  const bool spans = replica_xpus > system.domain_xpus;
  if (spans && replica_xpus % system.domain_xpus != 0)
    return std::unexpected("a replica of " + std::to_string(replica_xpus) +
                           " XPUs does not fit a " + std::to_string(system.domain_xpus) +
                           "-XPU scale-up domain of " + system.id +
                           " and is not a whole number of domains");
  try {
    // Replicas one domain holds, then as many domains as the replicas need; a replica larger than
    // a domain takes whole domains.
    auto one = cache.get(system, 1);
    int domains = 0;
    if (spans) {
      domains = replicas * (replica_xpus / system.domain_xpus);
    } else {
      const auto per_domain = static_cast<int>(topology::place(*one, replica_xpus).replicas.size());
      if (per_domain < 1)
        return std::unexpected("no replica of " + std::to_string(replica_xpus) +
                               " XPUs fits a domain of " + system.id);
      domains = (replicas + per_domain - 1) / per_domain;
    }
    if (domains == 1) return deploy(one, replica_xpus, replicas);
    if (static_cast<long long>(domains) * system.domain_xpus > topology::kMaxDeploymentXpus)
      return std::unexpected(
          std::to_string(replicas) + " replicas of " + std::to_string(replica_xpus) +
          " XPUs need " + std::to_string(domains) + " domains of " + system.id + ", beyond the " +
          std::to_string(topology::kMaxDeploymentXpus) + "-XPU limit of one deployment");
    return deploy(cache.get(system, domains), replica_xpus, replicas);
  } catch (const InputError& e) {
    return std::unexpected(std::string(e.what()));
  }
}

std::expected<std::vector<ReplicaImpact>, std::string> failure_impact(const Deployment& d,
                                                                      topology::PartKind kind,
                                                                      int index) {
  const topology::Topology& t = *d.topology;
  const auto& g = t.graph();
  int seen = 0;
  std::optional<PartId> part;
  for (auto v : boost::make_iterator_range(boost::vertices(g))) {
    if (g[v].kind != kind) continue;
    if (seen++ == index) {
      part = v;
      break;
    }
  }
  if (!part)
    return std::unexpected(t.system().id + " has " + std::to_string(seen) + " " +
                           topology::to_string(kind) +
                           " part(s) in this deployment, so no number " + std::to_string(index));
  const PartId failed[] = {*part};
  const topology::Impact impact = topology::assess(t, failed);
  std::vector<double> fraction(t.xpus().size(), 1.0);
  for (const auto& a : impact.affected)
    fraction[static_cast<std::size_t>(t.ordinal(a.xpu))] = a.scale_up_fraction;
  std::vector<ReplicaImpact> out(d.sites.size());
  for (std::size_t k = 0; k < d.sites.size(); ++k) {
    for (int x : d.sites[k].xpus) {
      out[k].down = out[k].down || !impact.in_service(x);
      out[k].scale_up_fraction =
          std::min(out[k].scale_up_fraction, fraction[static_cast<std::size_t>(x)]);
    }
  }
  return out;
}

}  // namespace racktwin::sim
