#include "db/provenance.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace racktwin::db {

std::string content_hash(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

std::string catalog_hash(const Catalog& catalog) {
  std::vector<std::string> files = catalog.files;
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    return std::filesystem::path(a).filename() < std::filesystem::path(b).filename();
  });
  std::string all;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) return "unknown";
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    all += std::filesystem::path(f).filename().string() + '\0' + std::to_string(text.size()) +
           '\0' + text;
  }
  return content_hash(all);
}

std::string calibration_hash(const std::vector<sim::PointSpec>& points) {
  std::set<std::string> lines;  // ordered, each system once
  for (const auto& p : points) {
    const perf::Efficiency& e = p.efficiency;
    lines.insert(
        fmt::format("{} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} "
                    "{:.17g} {:.17g} {:.17g}",
                    p.system->id, e.mfu, e.mbu, e.attn_eff, e.comm_eff, e.alpha.value(), e.overlap,
                    e.layer_overhead.value(), e.step_overhead.value(), e.seq_overhead.value(),
                    e.moe_imbalance, e.dequant_eff, e.request_latency.value()));
  }
  std::string all;
  for (const auto& l : lines) all += l + '\n';
  return content_hash(all);
}

std::vector<Assumption> assumptions_of(const Catalog& catalog,
                                       const std::vector<sim::PointSpec>& points) {
  std::vector<Assumption> out;
  std::set<std::pair<std::string, std::string>> seen;
  auto add = [&](const std::string& kind, const std::string& id, const FieldRecords& fields) {
    if (!seen.emplace(kind, id).second) return;
    for (const auto& f : fields)
      if (f.provenance.assumption) out.push_back({kind, id, f.path, f.text, f.provenance.reason});
  };
  for (const auto& p : points) {
    add("system", p.system->id, p.system->fields);
    if (auto it = catalog.chips.find(p.system->chip_id); it != catalog.chips.end())
      add("chip", it->first, it->second->fields);
  }
  for (const auto& p : points) add("model", p.model->id, p.model->fields);
  for (const auto& p : points)
    if (const EfficiencyPrior* prior = catalog.efficiency_prior_for(p.system->id))
      add("efficiency", prior->id, prior->fields);
  return out;
}

}  // namespace racktwin::db
