#include "scenarios/rehearsal_loader.hpp"

#include <cmath>
#include <filesystem>

#include "scenarios/figure_reader.hpp"
#include "scenarios/yaml_reader.hpp"

namespace racktwin {
namespace {

namespace fs = std::filesystem;
using yaml::assumed;
using yaml::Context;
using yaml::FigureReader;
using yaml::MapReader;
using yaml::sourced;

constexpr int kMaxDomains = 4096;
constexpr double kMaxHorizon = 10 * 366 * 86400.0;
constexpr double kMaxSamples = 200000;

// The Llama 3 405B pre-training breakdown (reference specs section 6): 419 unexpected
// interruptions of a 16,384-H100 job over 54 days, on 2,048 HGX servers of 8 GPUs.
constexpr double kLlamaGpus = 16384, kLlamaServers = 2048, kLlamaHours = 54 * 24.0;
const std::string kLlama =
    "Llama 3 405B pre-training, 16,384 H100 on 2,048 servers, 54 days = 1,296 h "
    "(reference specs section 6; The Llama 3 Herd of Models, table 5)";

// A rate per part-hour from interruptions counted over `units` parts of the field cluster.
Figure field_rate(double interruptions, double units, const std::string& unit_name,
                  const std::string& categories, bool assumption, std::string reason = {}) {
  const double rate = interruptions / (units * kLlamaHours);
  char arithmetic[160];
  std::snprintf(arithmetic, sizeof arithmetic, "%g / (%g %s x 1,296 h) = %.3g per %s-hour",
                interruptions, units, unit_name.c_str(), rate, unit_name.c_str());
  const std::string source = kLlama + ": " + categories + "; " + arithmetic;
  return assumption ? assumed(rate, std::move(reason), source) : sourced(rate, source);
}

FailureClass make_class(PartClass c, Figure rate, RepairTier tier, std::string category) {
  return FailureClass{c, std::move(rate),
                      sourced(1.0, "exponential time to failure, as ExaDigiT/RAPS and OpenDC model "
                                   "node failures (reference specs section 6)"),
                      tier, std::move(category)};
}

RehearsalDefaults make_defaults() {
  RehearsalDefaults d;
  const std::string per_xpu = "scaled to a part per XPU: the same rate for every system's XPU is an "
                              "assumption";
  d.classes = {
      make_class(PartClass::xpu,
                 field_rate(196, kLlamaGpus, "GPU",
                            "faulty GPU 148, GPU SRAM 19, GPU system processor 17, silent data "
                            "corruption 6, thermal interface and sensor 6",
                            true, per_xpu),
                 RepairTier::swap, "GPU"),
      make_class(PartClass::hbm, field_rate(72, kLlamaGpus, "GPU", "GPU HBM3 memory 72", true, per_xpu),
                 RepairTier::swap, "HBM"),
      make_class(PartClass::software,
                 field_rate(63, kLlamaGpus, "GPU", "software bug 54, NCCL watchdog 7, dependency 2", true,
                            "charged per XPU: a serving replica's software fails as often per XPU "
                            "as the training job's did"),
                 RepairTier::restart, "software"),
      make_class(PartClass::link,
                 field_rate(35, kLlamaGpus, "GPU", "network switch/cable 35", true,
                            "charged per XPU's fabric attachment: the breakdown does not split "
                            "switches from cables"),
                 RepairTier::swap, "network"),
      make_class(PartClass::compute_tray,
                 field_rate(4, kLlamaServers, "server", "server chassis 2, IO expansion board 2", true,
                            "an HGX server's chassis and boards charged per compute tray"),
                 RepairTier::swap, "chassis"),
      make_class(PartClass::psu, field_rate(3, kLlamaServers, "server", "power supply 3", true,
                                            "an HGX server's supplies charged per compute tray"),
                 RepairTier::swap, "power supply"),
      make_class(PartClass::switch_tray,
                 assumed(4 / (kLlamaServers * kLlamaHours),
                         "not in the breakdown (no NVSwitch category): a switch tray is taken to "
                         "fail as often as a compute tray's chassis and boards",
                         kLlama),
                 RepairTier::swap, "switch tray"),
      make_class(PartClass::host,
                 field_rate(42, kLlamaServers, "server", "host maintenance 32, NIC 7, SSD 3", true,
                            "an HGX server's host charged per host tray or host CPU"),
                 RepairTier::swap, "host"),
      make_class(PartClass::cpu_dram, field_rate(4, kLlamaServers, "server", "CPU 2, system memory 2",
                                                 true, "an HGX server's CPUs and memory per host"),
                 RepairTier::swap, "CPU/DRAM"),
      make_class(PartClass::power_feed,
                 assumed(1.0 / (10 * kHoursPerYear),
                         "not in the breakdown (no feed was lost): one loss of a rack feed per ten "
                         "years"),
                 RepairTier::facility, "power feed"),
  };
  auto& r = d.repair;
  r.restart = sourced(5 * 60.0, "reference specs section 6: automatic reschedule with spares in the "
                                "cluster under 5 min (Crusoe AutoClusters)");
  r.reschedule = assumed(10 * 60.0, "not in the reference: replicas re-formed on the survivors "
                                    "after a drain, weights reloaded, in 10 min");
  r.swap = sourced(3 * 3600.0, "reference specs section 6: technician swap 2-4 h (central 3 h)");
  r.vendor_return = sourced(7 * 86400.0, "reference specs section 6: return to vendor next business "
                                         "day to 3-14 business days (central 7 days)");
  r.feed_repair = assumed(8 * 3600.0, "not in the reference: a rack feed restored by the site's "
                                      "electricians within a shift");
  r.technicians = 4;
  r.technicians_origin = assumed(4, "not in the reference: four technicians on shift per site").origin;
  for (auto& s : r.spares)
    s = {0.01, true, assumed(0.01, "not in the reference: spares for 1% of each unit on site").origin};
  return d;
}

class RehearsalReader {
 public:
  RehearsalReader(Context& ctx, const Catalog& cat, std::string base_dir)
      : ctx_(ctx), cat_(cat), figures_(ctx), base_dir_(std::move(base_dir)) {}

  void read(MapReader& top, Rehearsal& r) {
    if (auto v = top.string("name", true)) r.name = *v;
    if (auto v = top.string("description", false)) r.description = *v;
    read_system(top, r);
    if (auto v = top.integer("seed", false, 0, std::numeric_limits<std::int64_t>::max()))
      r.seed = static_cast<std::uint64_t>(*v);
    if (auto f = figures_.read(top, "horizon", Seconds::kDimension, 60, kMaxHorizon))
      r.horizon = Seconds(f->value);
    else if (!top.has("horizon"))
      top.missing("horizon", "the time to rehearse, e.g. '30 days'");
    if (auto f = figures_.read(top, "sample_every", Seconds::kDimension, 1, kMaxHorizon))
      r.sample_every = Seconds(f->value);
    if (r.horizon.value() / r.sample_every.value() > kMaxSamples)
      ctx_.error(top.get("sample_every"), top.child("sample_every"),
                 "the time series would hold more than 200,000 samples",
                 "sample less often, e.g. sample_every: 1 h");
    if (top.has("serving")) r.serving = read_serving(top);
    if (top.has("jobs")) r.jobs = read_jobs(top);
    if (r.serving && r.jobs)
      ctx_.error(top.get("jobs"), top.child("jobs"), "a rehearsal is of serving or of jobs, not both",
                 "keep serving: for a service, jobs: for training-like jobs");
    if (!r.serving && !r.jobs && ctx_.ok())
      top.missing("serving", "what the deployment serves (or jobs: for training-like jobs)");
    read_spares(top, r);
    read_failures(top, r);
    read_repair(top, r.repair);
  }

 private:
  void read_system(MapReader& top, Rehearsal& r) {
    if (auto v = top.string("system", true)) {
      r.system = *v;
      if (cat_.find_system(*v) == nullptr)
        ctx_.error(top.get("system"), top.child("system"),
                   "unknown system '" + *v + "'" + did_you_mean(*v, cat_.system_ids()),
                   "racktwin catalog list shows the catalog's systems");
    }
    if (auto v = top.integer("domains", true, 1, kMaxDomains)) r.domains = static_cast<int>(*v);
  }

  std::optional<Seconds> seconds(MapReader& m, std::string_view key) {
    auto f = figures_.read(m, key, Seconds::kDimension, 1e-6, 3600);
    return f ? std::optional<Seconds>(Seconds(f->value)) : std::nullopt;
  }

  RehearsalServing read_serving(MapReader& top) {
    RehearsalServing s;
    MapReader m(ctx_, top.get("serving"), top.child("serving"));
    s.where = ctx_.location(m.node());
    if (!m.ok()) return s;
    if (m.has("tps_per_replica")) {
      s.tps_per_replica = figures_.read(m, "tps_per_replica", TokensPerSecond::kDimension, 1e-6, 1e12);
      if (auto v = m.integer("replica_xpus", true, 1, 1 << 17)) s.replica_xpus = static_cast<int>(*v);
      if (s.tps_per_replica && !s.tps_per_replica->origin.assumption &&
          s.tps_per_replica->origin.source.empty())
        ctx_.error(m.get("tps_per_replica"), m.child("tps_per_replica"),
                   "a given throughput needs its source or the flag of an assumption",
                   "write {value: 12000 tok/s, source: \"...\"}");
    } else {
      read_simulated(m, s);
    }
    m.finish();
    return s;
  }

  void read_simulated(MapReader& m, RehearsalServing& s) {
    if (auto v = m.string("scenario", true)) {
      s.scenario = fs::path(*v).is_absolute() ? *v
                                               : (fs::path(base_dir_) / *v).lexically_normal().string();
      std::error_code ec;  // a name too long for the file system is a file that is not there
      if (!fs::exists(s.scenario, ec))
        ctx_.error(m.get("scenario"), m.child("scenario"), "no scenario file " + s.scenario,
                   "the path is relative to the rehearsal file");
    }
    if (auto v = m.string("workload", true)) s.workload = *v;
    if (auto v = m.string("model", true)) {
      s.model = *v;
      if (cat_.find_model(*v) == nullptr)
        ctx_.error(m.get("model"), m.child("model"),
                   "unknown model '" + *v + "'" + did_you_mean(*v, cat_.model_ids()),
                   "racktwin catalog list shows the catalog's ids");
    }
    if (!m.has("target")) {
      m.missing("target", "a service target such as {tpot_p99: 50 ms, ttft_p99: 5 s}");
      return;
    }
    MapReader t(ctx_, m.get("target"), m.child("target"));
    if (!t.ok()) return;
    s.tpot_p50 = seconds(t, "tpot_p50");
    s.tpot_p99 = seconds(t, "tpot_p99");
    s.ttft_p99 = seconds(t, "ttft_p99");
    if (!s.tpot_p50 && !s.tpot_p99 && !s.ttft_p99 && ctx_.ok())
      ctx_.error(m.get("target"), m.child("target"), "the target sets no limit",
                 "give tpot_p50, tpot_p99 or ttft_p99, e.g. {tpot_p99: 50 ms, ttft_p99: 5 s}");
    t.finish();
  }

  RehearsalJobs read_jobs(MapReader& top) {
    RehearsalJobs j;
    MapReader m(ctx_, top.get("jobs"), top.child("jobs"));
    j.where = ctx_.location(m.node());
    if (!m.ok()) return j;
    if (!m.has("sizes")) {
      m.missing("sizes", "the XPUs per job, e.g. [8, 1024, 16384]");
    } else {
      const YAML::Node list = m.get("sizes");
      if (!list.IsSequence() || list.size() == 0 || list.size() > 64)
        ctx_.error(list, m.child("sizes"), "expected a list of 1 to 64 job sizes, e.g. [8, 1024]");
      else
        for (std::size_t i = 0; i < list.size(); ++i)
          if (auto v = yaml::read_integer(ctx_, list[i], yaml::index_path(m.child("sizes"), i), 1,
                                          1 << 17))
            j.sizes.push_back(static_cast<int>(*v));
    }
    if (auto v = m.integer("replications", false, 1, 1000)) j.replications = static_cast<int>(*v);
    m.finish();
    return j;
  }

  void read_spares(MapReader& top, Rehearsal& r) {
    if (!top.has("spare_capacity")) return;
    MapReader m(ctx_, top.get("spare_capacity"), top.child("spare_capacity"));
    if (!m.ok()) return;
    if (auto v = m.integer("racks", false, 0, 1 << 20)) r.spare_racks = static_cast<int>(*v);
    if (auto f = figures_.read(m, "attainment_goal", Dimension{}, 0.5, 1.0)) r.attainment_goal = f->value;
    m.finish();
  }

  void read_failures(MapReader& top, Rehearsal& r) {
    r.classes = rehearsal_defaults().classes;
    if (!top.has("failures")) return;
    MapReader m(ctx_, top.get("failures"), top.child("failures"));
    if (!m.ok()) return;
    r.rate_scale = figures_.read(m, "scale", Dimension{}, 0, 1000);
    for (auto& fc : r.classes) {
      const std::string key = to_string(fc.part);
      if (!m.has(key)) continue;
      MapReader c(ctx_, m.get(key), m.child(key));
      if (!c.ok()) continue;
      fc.rate = figures_.read_or(c, "rate", Dimension{}, 0, 1, fc.rate);
      fc.shape = figures_.read_or(c, "shape", Dimension{}, 0.1, 10, fc.shape);
      if (auto t = c.choice("tier", false, {"restart", "swap", "facility"}))
        fc.tier = *repair_tier_from_string(*t);
      c.finish();
    }
    if (r.rate_scale)
      for (auto& fc : r.classes) fc.rate.value *= r.rate_scale->value;
    m.finish();
  }

  void read_repair(MapReader& top, RepairModel& rep) {
    rep = rehearsal_defaults().repair;
    if (!top.has("repair")) return;
    MapReader m(ctx_, top.get("repair"), top.child("repair"));
    if (!m.ok()) return;
    constexpr double kYear = 366 * 86400.0;
    rep.restart = figures_.read_or(m, "restart", Seconds::kDimension, 0, kYear, rep.restart);
    rep.reschedule = figures_.read_or(m, "reschedule", Seconds::kDimension, 0, kYear, rep.reschedule);
    rep.swap = figures_.read_or(m, "swap", Seconds::kDimension, 0, kYear, rep.swap);
    rep.vendor_return = figures_.read_or(m, "vendor_return", Seconds::kDimension, 0, kYear, rep.vendor_return);
    rep.feed_repair = figures_.read_or(m, "feed_repair", Seconds::kDimension, 0, kYear, rep.feed_repair);
    if (auto v = m.integer("technicians", false, 0, 100000)) {
      rep.technicians = static_cast<int>(*v);
      rep.technicians_origin = FigureOrigin{FigureOrigin::Kind::plan, ctx_.location(m.get("technicians")),
                                            {}, false, {}};
    }
    if (m.has("spares")) read_spare_parts(m, rep);
    m.finish();
  }

  // spares: {compute_tray: 2%, switch_tray: 4, ...}: a share of the class's units or a count.
  void read_spare_parts(MapReader& m, RepairModel& rep) {
    MapReader s(ctx_, m.get("spares"), m.child("spares"));
    if (!s.ok()) return;
    for (std::size_t c = 0; c < kAllPartClasses.size(); ++c) {
      const std::string key = to_string(kAllPartClasses[c]);
      if (!s.has(key)) continue;
      const YAML::Node n = s.get(key);
      const std::string path = s.child(key);
      const bool share = n.IsScalar() && !n.Scalar().empty() && n.Scalar().back() == '%';
      auto v = share ? yaml::read_quantity(ctx_, n, path, Dimension{})
                     : std::optional<double>(yaml::read_integer(ctx_, n, path, 0, 10000000).value_or(-1));
      if (!v || *v < 0) continue;
      if (share && *v > 1) {
        ctx_.error(n, path, "a share of the units above 100%", "give a share such as 2% or a count");
        continue;
      }
      rep.spares[c] = {*v, share, FigureOrigin{FigureOrigin::Kind::plan, ctx_.location(n), {}, false, {}}};
    }
    s.finish();
  }

  Context& ctx_;
  const Catalog& cat_;
  FigureReader figures_;
  std::string base_dir_;
};

}  // namespace

const RehearsalDefaults& rehearsal_defaults() {
  static const RehearsalDefaults d = make_defaults();
  return d;
}

std::expected<Rehearsal, Diagnostics> load_rehearsal_string(const std::string& text,
                                                            const std::string& name,
                                                            const std::string& base_dir,
                                                            const Catalog& catalog) {
  return yaml::read_document<Rehearsal>(
      text, name, "rehearsal", "docs/failures.md", [&](Context& ctx, MapReader& top) {
        Rehearsal r;
        r.file = name;
        r.text = text;
        RehearsalReader(ctx, catalog, base_dir).read(top, r);
        return r;
      });
}

std::expected<Rehearsal, Diagnostics> load_rehearsal_file(const std::string& path,
                                                          const Catalog& catalog) {
  auto text = yaml::read_text_file(path, "the rehearsal file");
  if (!text) return std::unexpected(text.error());
  return load_rehearsal_string(*text, path, fs::path(path).parent_path().string(), catalog);
}

}  // namespace racktwin
