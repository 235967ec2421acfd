#include "core/perf/efficiency.hpp"

namespace racktwin::perf {
namespace {

// The member a name refers to: a plain fraction or ratio, or a time.
struct Member {
  double* number = nullptr;
  Seconds* time = nullptr;
};

Member member(Efficiency& e, std::string_view name) {
  if (name == "mfu") return {&e.mfu, nullptr};
  if (name == "mbu") return {&e.mbu, nullptr};
  if (name == "attn_eff") return {&e.attn_eff, nullptr};
  if (name == "comm_eff") return {&e.comm_eff, nullptr};
  if (name == "alpha") return {nullptr, &e.alpha};
  if (name == "overlap") return {&e.overlap, nullptr};
  if (name == "layer_overhead") return {nullptr, &e.layer_overhead};
  if (name == "step_overhead") return {nullptr, &e.step_overhead};
  if (name == "seq_overhead") return {nullptr, &e.seq_overhead};
  if (name == "moe_imbalance") return {&e.moe_imbalance, nullptr};
  if (name == "dequant_eff") return {&e.dequant_eff, nullptr};
  if (name == "request_latency") return {nullptr, &e.request_latency};
  return {};
}

}  // namespace

const std::vector<std::string>& efficiency_parameter_names() {
  static const std::vector<std::string> names{
      "mfu",          "mbu",           "attn_eff",       "comm_eff",
      "alpha",        "overlap",       "layer_overhead", "step_overhead",
      "seq_overhead", "moe_imbalance", "dequant_eff",    "request_latency"};
  return names;
}

std::optional<double> efficiency_parameter(const Efficiency& e, std::string_view name) {
  Efficiency copy = e;
  const Member m = member(copy, name);
  if (m.number != nullptr) return *m.number;
  if (m.time != nullptr) return m.time->value();
  return std::nullopt;
}

bool set_efficiency_parameter(Efficiency& e, std::string_view name, double value) {
  const Member m = member(e, name);
  if (m.number != nullptr) *m.number = value;
  if (m.time != nullptr) *m.time = Seconds(value);
  return m.number != nullptr || m.time != nullptr;
}

}  // namespace racktwin::perf
