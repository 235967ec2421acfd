#include "core/scenario.hpp"

#include <charconv>

#include "core/enum_names.hpp"

namespace racktwin {

namespace {
constexpr EnumWords<RouterPolicy, 4> kRouters{
    "least_outstanding,round_robin,session_affinity,prefix_aware"};
}  // namespace

std::string router_name(RouterPolicy p) {
  return std::string(kRouters.name(p));
}

std::optional<RouterPolicy> router_from_name(std::string_view s) {
  return kRouters.parse(s);
}

std::vector<std::string> router_names() {
  return kRouters.all();
}

double default_mtp_acceptance(int draft_tokens) {
  double sum = 1.0, term = 1.0;
  for (int i = 0; i < draft_tokens; ++i) {
    term *= kMtpTokenAcceptance;
    sum += term;
  }
  return sum;
}

std::expected<ServingMode, std::string> parse_serving_mode(std::string_view label) {
  if (label == "aggregated") return ServingMode{};
  ServingMode m;
  const std::string full(label);
  if (const auto slash = label.find('/'); slash != std::string_view::npos) {
    auto l = parse_layout(label.substr(slash + 1));
    if (!l)
      return std::unexpected("the prefill layout after '/' in '" + std::string(label) +
                             "': " + l.error());
    m.prefill_layout = *l;
    label = label.substr(0, slash);
  }
  const char* p = label.data();
  const char* end = p + label.size();
  auto number = [&](int& out, char tag) {
    const auto r = std::from_chars(p, end, out);
    if (r.ec != std::errc{} || r.ptr == end || *r.ptr != tag || out < 1) return false;
    p = r.ptr + 1;
    return true;
  };
  if (!number(m.prefill, 'p') || !number(m.decode, 'd') || p != end || m.prefill > 4096 ||
      m.decode > 4096)
    return std::unexpected(
        "expected 'aggregated', '<P>p<D>d' (P prefill and D decode "
        "replicas, 1 to 4096 each, e.g. 1p3d) or '<P>p<D>d/<prefill layout>' (e.g. 3p1d/tp2), "
        "found '" +
        full + "'");
  return m;
}

std::expected<Layout, std::string> parse_layout(std::string_view label) {
  Layout l;
  const std::string expected =
      "expected a layout such as 'tp8', 'tp8-ep8', 'tp8-ep8-dpa' or 'tp4-pp2'";
  if (label.empty()) return std::unexpected("empty layout; " + expected);
  bool seen_tp = false, seen_ep = false, seen_pp = false;
  std::size_t pos = 0;
  while (pos <= label.size()) {
    const std::size_t dash = label.find('-', pos);
    const std::string_view part =
        label.substr(pos, dash == std::string_view::npos ? std::string_view::npos : dash - pos);
    pos = dash == std::string_view::npos ? label.size() + 1 : dash + 1;
    if (part == "dpa") {
      if (l.dp_attention)
        return std::unexpected("'dpa' given twice in '" + std::string(label) + "'");
      l.dp_attention = true;
      continue;
    }
    if (part.size() < 3)
      return std::unexpected("cannot read '" + std::string(part) + "' in '" + std::string(label) +
                             "'; " + expected);
    const std::string_view key = part.substr(0, 2);
    int v = 0;
    auto [ptr, ec] = std::from_chars(part.data() + 2, part.data() + part.size(), v);
    if (ec != std::errc{} || ptr != part.data() + part.size() || v < 1)
      return std::unexpected("cannot read '" + std::string(part) + "' in '" + std::string(label) +
                             "'; " + expected);
    bool* seen = key == "tp" ? &seen_tp : key == "ep" ? &seen_ep : key == "pp" ? &seen_pp : nullptr;
    if (seen == nullptr)
      return std::unexpected("unknown part '" + std::string(part) + "' in '" + std::string(label) +
                             "'; " + expected);
    if (*seen)
      return std::unexpected("'" + std::string(key) + "' given twice in '" + std::string(label) +
                             "'");
    *seen = true;
    (key == "tp" ? l.tp : key == "ep" ? l.ep : l.pp) = v;
  }
  l.name = l.label();
  return l;
}

}  // namespace racktwin
