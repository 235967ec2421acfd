#include "core/reference.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "core/enum_names.hpp"

namespace racktwin {
namespace {

constexpr EnumNames<Metric, 8> kMetrics{{
    {Metric::peak_mixed_tps_per_kw_rated, "peak_mixed_tps_per_kw_rated"},
    {Metric::min_e2e_latency_s, "min_e2e_latency_s"},
    {Metric::min_tbt_ms, "min_tbt_ms"},
    {Metric::max_interactivity_tok_s_user, "max_interactivity_tok_s_user"},
    {Metric::total_tps_per_allin_mw_at, "total_tps_per_allin_mw_at"},
    {Metric::total_tps_per_xpu_at, "total_tps_per_xpu_at"},
    {Metric::output_tps_per_xpu_at, "output_tps_per_xpu_at"},
    {Metric::peak_total_tps_per_xpu, "peak_total_tps_per_xpu"},
}};

}  // namespace

std::string to_string(Metric m) {
  return std::string(enum_name(m, kMetrics));
}

std::optional<Metric> metric_from_string(std::string_view s) {
  return enum_from_name(s, kMetrics);
}

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = enum_words(kMetrics);
  return names;
}

bool metric_needs_at(Metric m) {
  return m == Metric::total_tps_per_allin_mw_at || m == Metric::total_tps_per_xpu_at ||
         m == Metric::output_tps_per_xpu_at;
}

}  // namespace racktwin
