#include "core/scenario.hpp"

#include <charconv>

namespace racktwin {

double default_mtp_acceptance(int draft_tokens) {
  double sum = 1.0, term = 1.0;
  for (int i = 0; i < draft_tokens; ++i) {
    term *= kMtpTokenAcceptance;
    sum += term;
  }
  return sum;
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
