#include "core/error.hpp"

#include <algorithm>
#include <numeric>

namespace racktwin {
namespace {
std::string join_diagnostics(const Diagnostics& d) {
  std::string out;
  for (const auto& x : d) {
    if (!out.empty()) out += '\n';
    out += x.to_string();
  }
  return out;
}
}  // namespace

std::string Diagnostic::to_string() const {
  std::string out;
  if (!where.file.empty()) {
    out += where.file;
    if (where.line > 0) {
      out += ':' + std::to_string(where.line);
      if (where.column > 0) out += ':' + std::to_string(where.column);
    }
    out += ": ";
  }
  if (!path.empty()) out += path + ": ";
  out += message;
  if (!hint.empty()) out += " (" + hint + ")";
  return out;
}

InputError::InputError(Diagnostics diagnostics)
    : std::runtime_error(join_diagnostics(diagnostics)), diagnostics_(std::move(diagnostics)) {}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance, O(|a| * |b|).
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    const std::size_t dist = edit_distance(word, c);
    if (dist < best_d) {
      best_d = dist;
      best = c;
    }
  }
  // Plausible typo: at most a third of the longer word changed (and at least one edit allowed);
  // a candidate that contains the word (or the reverse) also counts ("gb200" -> "gb200-nvl72").
  const std::size_t limit = std::max<std::size_t>(2, std::max(word.size(), best.size()) / 3);
  if (!best.empty() && best_d <= limit) return best;
  for (const auto& c : candidates)
    if (!word.empty() &&
        (c.find(word) != std::string::npos || word.find(c) != std::string_view::npos))
      return c;
  return {};
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string n = nearest(word, candidates);
  return n.empty() ? std::string{} : " (did you mean '" + n + "'?)";
}

}  // namespace racktwin
