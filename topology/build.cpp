// Builders: from a catalog system to the graph of its parts and links (docs/topology.md).

#include <algorithm>
#include <cctype>
#include <string>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "topology/topology.hpp"

namespace racktwin::topology {

namespace {
constexpr EnumWords<PartKind, 11> kPartKinds{
    "xpu,compute_tray,switch_tray,onboard_switch,host,compute_rack,host_rack,rack_pair,power_feed,"
    "spine,scale_out"};
constexpr EnumWords<LinkKind, 7> kLinkKinds{
    "contains,powers,hosts,scale_up,uplink,scale_out,host_link"};
}  // namespace

std::string to_string(PartKind k) {
  return std::string(kPartKinds.name(k));
}

std::string to_string(LinkKind k) {
  return std::string(kLinkKinds.name(k));
}

bool is_support(LinkKind k) {
  return k == LinkKind::contains || k == LinkKind::powers || k == LinkKind::hosts;
}
bool is_network(LinkKind k) {
  return !is_support(k);
}

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
bool one_word(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalpha(static_cast<unsigned char>(c));
  });
}
bool mentions(const std::string& s, const char* word) {
  return lower(s).find(word) != std::string::npos;
}

Part make_part(PartKind k, std::string name, int domain = -1, int rack = -1, int tray = -1,
               int index = 0, bool uplink = false) {
  Part p;
  p.kind = k;
  p.name = std::move(name);
  p.domain = domain;
  p.rack = rack;
  p.tray = tray;
  p.index = index;
  p.uplink = uplink;
  return p;
}

[[noreturn]] void cannot_build(const System& s, const std::string& message,
                               const std::string& hint = {}) {
  throw InputError({Diagnostic{{}, s.id, message, hint}});
}

}  // namespace

std::string stem(const System& s, PartKind k) {
  switch (k) {
    case PartKind::xpu:
      return "xpu";
    case PartKind::compute_tray:
      if (one_word(s.compute_tray.name)) return lower(s.compute_tray.name);
      return mentions(s.compute_tray.name, "server") ? "server" : "tray";
    case PartKind::switch_tray:
      if (one_word(s.switches.name)) return lower(s.switches.name);
      return mentions(s.switches.name, "nvlink") ? "nvswitch" : "switch";
    case PartKind::onboard_switch:
      return "switch";
    case PartKind::host:
      return one_word(s.host.name) ? lower(s.host.name) : "host";
    case PartKind::compute_rack:
      return "rack";
    case PartKind::host_rack:
      return "hostrack";
    case PartKind::rack_pair:
      return "pair";
    case PartKind::power_feed:
      return "feed";
    case PartKind::spine:
      return "spine";
    case PartKind::scale_out:
      return "scaleout";
  }
  return "part";
}

// Builds one deployment; a friend of Topology.
class Builder {
 public:
  Builder(const System& s, int domains) : s_(s) {
    t_.system_ = &s;
    t_.domains_ = domains;
  }

  Topology run() {
    check();
    scale_out_ = add(make_part(PartKind::scale_out, stem(s_, PartKind::scale_out)));
    if (multi_rack())
      build_multi_rack_domains();
    else
      build_small_domains();
    return std::move(t_);
  }

 private:
  // --- shape --------------------------------------------------------------------------------

  int tray_xpus() const { return s_.compute_tray.xpus; }
  int rack_xpus() const { return s_.xpus_per_rack(); }
  bool multi_rack() const { return s_.domain_xpus >= rack_xpus(); }
  const NetworkTier& inner_tier() const { return s_.scale_up.front(); }

  void check() {
    const int n = t_.domains_;
    if (n < 1)
      cannot_build(s_, "the number of domains must be at least 1, not " + std::to_string(n));
    if (static_cast<long long>(n) * s_.domain_xpus > kMaxDeploymentXpus)
      cannot_build(
          s_,
          std::to_string(n) + " domains of " + std::to_string(s_.domain_xpus) + " XPUs exceed " +
              std::to_string(kMaxDeploymentXpus) + " XPUs",
          "model fewer domains; a fleet is composed from simulated domains by the planner");
    if (s_.scale_up.empty()) cannot_build(s_, "the system has no scale-up tiers");
    if (multi_rack()) {
      if (s_.domain_xpus % rack_xpus() != 0)
        cannot_build(s_, "a domain of " + std::to_string(s_.domain_xpus) +
                             " XPUs is not a whole number of " + std::to_string(rack_xpus()) +
                             "-XPU racks");
      if (s_.topology != ScaleUpTopology::switched || s_.switches.per_rack == 0)
        cannot_build(s_,
                     "a rack-sized or larger domain needs scale-up switch trays in the catalog");
      if (s_.domain_xpus > rack_xpus() && (s_.switches.uplink_trays == 0 || s_.scale_up.size() < 2))
        cannot_build(s_, "a domain of several racks needs uplink switch trays and a domain tier",
                     "set switch_trays.uplink_trays and a second scale_up tier in the catalog");
    } else if (s_.domain_xpus != tray_xpus()) {
      cannot_build(s_, "a domain smaller than a rack must be exactly one compute tray or server");
    }
  }

  // --- parts and edges ------------------------------------------------------------------------

  PartId add(Part p) {
    const PartId v = boost::add_vertex(p, t_.graph_);
    t_.by_name_.emplace(t_.graph_[v].name, v);
    return v;
  }
  void support(PartId from, PartId to, LinkKind k) {
    boost::add_edge(from, to, Link{k, {}, false}, t_.graph_);
  }
  void network(PartId a, PartId b, LinkKind k, BytesPerSecond bw) {
    boost::add_edge(a, b, Link{k, bw, false}, t_.graph_);
    boost::add_edge(b, a, Link{k, bw, true}, t_.graph_);
  }
  std::string named(const std::string& parent, PartKind k, int i) const {
    return (parent.empty() ? "" : parent + "/") + stem(s_, k) + std::to_string(i);
  }

  PartId add_rack(int r, int domain) {
    Part p = make_part(PartKind::compute_rack, named("", PartKind::compute_rack, r), domain, r);
    const PartId rack = add(p);
    const PartId feed = add(make_part(PartKind::power_feed, p.name + "/feed", domain, r));
    support(feed, rack, LinkKind::powers);
    racks_.push_back(rack);
    return rack;
  }

  // A compute tray with its XPUs, its on-board switch or mesh, and the hosts inside it.
  // Returns the tray's XPUs.
  std::vector<PartId> add_tray(PartId rack, int t, int domain) {
    const Part& rp = t_.graph_[rack];
    const int r = rp.rack;
    const std::string rack_name = rp.name;
    const PartId tray = add(make_part(
        PartKind::compute_tray, named(rack_name, PartKind::compute_tray, t), domain, r, t, t));
    support(rack, tray, LinkKind::contains);
    const std::string tray_name = t_.graph_[tray].name;
    std::vector<PartId> xs;
    for (int i = 0; i < tray_xpus(); ++i) {
      const PartId x =
          add(make_part(PartKind::xpu, named(tray_name, PartKind::xpu, i), domain, r, t, i));
      support(tray, x, LinkKind::contains);
      network(x, scale_out_, LinkKind::scale_out, s_.scale_out_bandwidth_per_xpu);
      t_.ordinal_.emplace(x, static_cast<int>(t_.xpus_.size()));
      t_.xpus_.push_back(x);
      xs.push_back(x);
    }
    if (!multi_rack()) {
      if (s_.topology == ScaleUpTopology::full_mesh) {
        const BytesPerSecond per_peer =
            inner_tier().bandwidth_per_xpu / static_cast<double>(tray_xpus() - 1);
        for (std::size_t a = 0; a < xs.size(); ++a)
          for (std::size_t b = a + 1; b < xs.size(); ++b)
            network(xs[a], xs[b], LinkKind::scale_up, per_peer);
      } else {
        const PartId sw =
            add(make_part(PartKind::onboard_switch,
                          tray_name + "/" + stem(s_, PartKind::onboard_switch), domain, r, t, 0));
        support(tray, sw, LinkKind::contains);
        for (PartId x : xs) network(x, sw, LinkKind::scale_up, inner_tier().bandwidth_per_xpu);
      }
    }
    if (s_.host.placement != HostPlacement::separate_rack) {
      const int n = s_.host_parts_per_compute_tray();
      for (int h = 0; h < n; ++h) {
        const PartId host =
            add(make_part(PartKind::host, named(tray_name, PartKind::host, h), domain, r, t, h));
        support(tray, host, LinkKind::contains);
        serve(host, xs, h, n);
      }
    }
    return xs;
  }

  // Host `h` of `n` serves its even share of `xs`: it hosts them and links to each.
  void serve(PartId host, const std::vector<PartId>& xs, int h, int n) {
    const std::size_t per = std::max<std::size_t>(1, xs.size() / static_cast<std::size_t>(n));
    const std::size_t from = std::min(xs.size(), static_cast<std::size_t>(h) * per);
    const std::size_t to = h + 1 == n ? xs.size() : std::min(xs.size(), from + per);
    for (std::size_t i = from; i < to; ++i) {
      support(host, xs[i], LinkKind::hosts);
      network(host, xs[i], LinkKind::host_link, s_.host.link_bandwidth_per_xpu);
    }
  }

  // The switch trays of a rack, each linked to every XPU of the rack. Uplink trays sit at both
  // ends of the rack ("six Chana switches in the middle are for the local domain").
  std::vector<PartId> add_switch_trays(PartId rack, const std::vector<PartId>& rack_xpus,
                                       int domain) {
    const int n = s_.switches.per_rack;
    const int up = s_.switches.uplink_trays;
    const BytesPerSecond per_tray = inner_tier().bandwidth_per_xpu / static_cast<double>(n);
    const std::string rack_name = t_.graph_[rack].name;
    std::vector<PartId> uplinks;
    for (int i = 0; i < n; ++i) {
      const bool is_up = i < up / 2 || i >= n - (up - up / 2);
      Part p = make_part(PartKind::switch_tray, named(rack_name, PartKind::switch_tray, i), domain,
                         t_.graph_[rack].rack, -1, i, is_up);
      const PartId sw = add(p);
      support(rack, sw, LinkKind::contains);
      for (PartId x : rack_xpus) network(x, sw, LinkKind::scale_up, per_tray);
      if (is_up) uplinks.push_back(sw);
    }
    return uplinks;
  }

  // Host racks of separate host trays: host tray k of compute tray (r, t) is global host tray
  // h = (r x trays per rack + t) x per_compute_tray + k, in host rack h / trays_per_rack.
  void add_separate_hosts(int r, const std::vector<std::vector<PartId>>& trays, int domain) {
    const int per_tray = s_.host.per_compute_tray;
    const int per_rack = s_.host.trays_per_rack;
    for (int t = 0; t < static_cast<int>(trays.size()); ++t) {
      for (int k = 0; k < per_tray; ++k) {
        const long long h =
            (static_cast<long long>(r) * s_.compute_trays_per_rack + t) * per_tray + k;
        const PartId hrack = host_rack(static_cast<int>(h / per_rack), domain);
        const std::string name =
            named(t_.graph_[hrack].name, PartKind::host, static_cast<int>(h % per_rack));
        const PartId host = add(make_part(PartKind::host, name, domain, r, t, k));
        support(hrack, host, LinkKind::contains);
        serve(host, trays[t], k, per_tray);
      }
    }
  }

  PartId host_rack(int hr, int domain) {
    if (auto it = host_racks_.find(hr); it != host_racks_.end()) {
      if (t_.graph_[it->second].domain != domain) t_.graph_[it->second].domain = -1;
      return it->second;
    }
    const bool paired =
        s_.host.trays_per_rack == s_.compute_trays_per_rack * s_.host.per_compute_tray;
    Part p = make_part(PartKind::host_rack, named("", PartKind::host_rack, hr), domain,
                       paired ? hr : -1);
    const PartId rack = add(p);
    const PartId feed = add(make_part(PartKind::power_feed, p.name + "/feed", domain, p.rack));
    support(feed, rack, LinkKind::powers);
    host_racks_.emplace(hr, rack);
    if (paired) {
      const PartId pair =
          add(make_part(PartKind::rack_pair, named("", PartKind::rack_pair, hr), domain, hr));
      support(pair, racks_.at(static_cast<std::size_t>(hr)), LinkKind::contains);
      support(pair, rack, LinkKind::contains);
    }
    return rack;
  }

  // --- deployments -----------------------------------------------------------------------------

  // Domains of one or more whole racks (Jalapeno, NVL72).
  void build_multi_rack_domains() {
    const int per_domain = s_.domain_xpus / rack_xpus();
    const int up = s_.switches.uplink_trays;
    for (int d = 0; d < t_.domains_; ++d) {
      std::vector<PartId> spines;
      if (per_domain > 1)
        for (int p = 0; p < up; ++p)
          spines.push_back(add(
              make_part(PartKind::spine,
                        "domain" + std::to_string(d) + "/" + named("", PartKind::spine, p), d)));
      // Each uplink tray carries its share of the rack's domain-tier bandwidth to its plane.
      const BytesPerSecond uplink_bw = s_.scale_up.back().bandwidth_per_xpu *
                                       static_cast<double>(rack_xpus()) /
                                       static_cast<double>(std::max(up, 1));
      for (int k = 0; k < per_domain; ++k) {
        const int r = d * per_domain + k;
        const PartId rack = add_rack(r, d);
        std::vector<std::vector<PartId>> trays;
        std::vector<PartId> all;
        for (int t = 0; t < s_.compute_trays_per_rack; ++t) {
          trays.push_back(add_tray(rack, t, d));
          all.insert(all.end(), trays.back().begin(), trays.back().end());
        }
        const auto uplinks = add_switch_trays(rack, all, d);
        for (std::size_t p = 0; p < spines.size() && p < uplinks.size(); ++p)
          network(uplinks[p], spines[p], LinkKind::uplink, uplink_bw);
        if (s_.host.placement == HostPlacement::separate_rack) add_separate_hosts(r, trays, d);
      }
    }
  }

  // Domains of one compute tray or server (HGX, MI), several to a rack.
  void build_small_domains() {
    std::vector<std::vector<PartId>> trays;
    PartId rack{};
    for (int d = 0; d < t_.domains_; ++d) {
      const int r = d / s_.compute_trays_per_rack;
      const int t = d % s_.compute_trays_per_rack;
      if (t == 0) {
        if (!trays.empty() && s_.host.placement == HostPlacement::separate_rack)
          add_separate_hosts(r - 1, trays, -1);
        trays.clear();
        // A rack of several domains belongs to none.
        const int last = std::min(t_.domains_, (r + 1) * s_.compute_trays_per_rack);
        rack = add_rack(r, last - d == 1 ? d : -1);
      }
      trays.push_back(add_tray(rack, t, d));
    }
    if (!trays.empty() && s_.host.placement == HostPlacement::separate_rack)
      add_separate_hosts(static_cast<int>(racks_.size()) - 1, trays, -1);
  }

  const System& s_;
  Topology t_;
  PartId scale_out_{};
  std::vector<PartId> racks_;
  std::map<int, PartId> host_racks_;
};

Topology build(const System& system, int domains) {
  return Builder(system, domains).run();
}

// --- Topology --------------------------------------------------------------------------------

std::optional<PartId> Topology::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

PartId Topology::at(std::string_view name, std::string_view what) const {
  if (auto v = find(name)) return *v;
  throw InputError({Diagnostic{{},
                               std::string(what),
                               "no part '" + std::string(name) + "' in this " + system_->id +
                                   " deployment" + did_you_mean(name, part_names()),
                               ""}});
}

std::vector<std::string> Topology::part_names() const {
  std::vector<std::string> out;
  out.reserve(boost::num_vertices(graph_));
  for (auto v : boost::make_iterator_range(boost::vertices(graph_))) out.push_back(graph_[v].name);
  return out;
}

std::vector<PartId> Topology::domain_xpus(int domain) const {
  std::vector<PartId> out;
  for (PartId x : xpus_)
    if (graph_[x].domain == domain) out.push_back(x);
  return out;
}

std::map<PartKind, int> Topology::part_counts() const {
  std::map<PartKind, int> n;
  for (auto v : boost::make_iterator_range(boost::vertices(graph_))) ++n[graph_[v].kind];
  return n;
}

std::map<LinkKind, int> Topology::link_counts() const {
  std::map<LinkKind, int> n;
  for (auto e : boost::make_iterator_range(boost::edges(graph_)))
    if (!graph_[e].mirror) ++n[graph_[e].kind];
  return n;
}

}  // namespace racktwin::topology
