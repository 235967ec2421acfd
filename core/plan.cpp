#include "core/plan.hpp"

#include <charconv>

#include "core/enum_names.hpp"

namespace racktwin {

namespace {
constexpr EnumWords<PowerBasis, 4> kBases{"provisioned,production,measured,all_in"};
}  // namespace

std::string to_string(PowerBasis b) {
  return std::string(kBases.name(b));
}

std::optional<PowerBasis> power_basis_from_string(std::string_view s) {
  return kBases.parse(s);
}

std::vector<std::string> power_basis_names() {
  return kBases.all();
}

std::string to_string(Quarter q) {
  return std::to_string(q.year) + "Q" + std::to_string(q.q);
}

std::optional<Quarter> quarter_from_string(std::string_view s) {
  if (s.size() != 6 && s.size() != 7) return std::nullopt;
  int year = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + 4, year);
  if (ec != std::errc() || p != s.data() + 4 || year < 1900 || year > 2200) return std::nullopt;
  std::string_view rest = s.substr(4);
  if (rest.front() == '-') rest.remove_prefix(1);
  if (rest.size() != 2 || (rest[0] != 'Q' && rest[0] != 'q') || rest[1] < '1' || rest[1] > '4')
    return std::nullopt;
  return Quarter{year, rest[1] - '0'};
}

}  // namespace racktwin
