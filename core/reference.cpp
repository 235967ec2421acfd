#include "core/reference.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "core/enum_names.hpp"

namespace racktwin {
namespace {

constexpr EnumWords<Metric, 8> kMetrics{
    "peak_mixed_tps_per_kw_rated,min_e2e_latency_s,min_tbt_ms,max_interactivity_tok_s_user,"
    "total_tps_per_allin_mw_at,total_tps_per_xpu_at,output_tps_per_xpu_at,peak_total_tps_per_xpu"};

}  // namespace

std::string to_string(Metric m) {
  return std::string(kMetrics.name(m));
}

std::optional<Metric> metric_from_string(std::string_view s) {
  return kMetrics.parse(s);
}

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = kMetrics.all();
  return names;
}

bool metric_needs_at(Metric m) {
  return m == Metric::total_tps_per_allin_mw_at || m == Metric::total_tps_per_xpu_at ||
         m == Metric::output_tps_per_xpu_at;
}

}  // namespace racktwin
