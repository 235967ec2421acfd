#include "core/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

namespace racktwin {
namespace {

struct NamedDimension {
  Dimension dim;
  const char* name;
  const char* example;
  const char* symbol;  // base symbol used when formatting
};

// Dimensions with a name; order matters only for lookups.
constexpr std::array<NamedDimension, 15> kNamed{{
    {Dimension{}, "plain number", "'0.8' or '80%'", ""},
    {Dimension{.time = -1, .energy = 1}, "power", "'700 W' or '1.2 kW'", "W"},
    {Dimension{.energy = 1}, "energy", "'3.6 MJ' or '1 kWh'", "J"},
    {Dimension{.time = 1}, "time", "'2 us' or '1.5 s'", "s"},
    {Dimension{.time = -1}, "frequency", "'2 GHz'", "Hz"},
    {Dimension{.data = 1}, "data size", "'288 GB' or '36 GiB'", "B"},
    {Dimension{.time = -1, .data = 1}, "bandwidth", "'15.4 TB/s' or '800 Gb/s'", "B/s"},
    {Dimension{.flop = 1}, "operation count", "'2 TFLOP'", "FLOP"},
    {Dimension{.time = -1, .flop = 1}, "compute rate", "'13.4 PFLOPS' or '2250 TFLOP/s'", "FLOP/s"},
    {Dimension{.tokens = 1}, "token count", "'1000 tok'", "tok"},
    {Dimension{.time = -1, .tokens = 1}, "token rate", "'5000 tok/s'", "tok/s"},
    {Dimension{.money = 1}, "money amount", "'$3.5M' or '$1200'", "$"},
    {Dimension{.energy = -1, .money = 1}, "energy price", "'$0.08/kWh'", "$/J"},
    {Dimension{.time = -1, .money = 1}, "cost rate", "'$2.21/h'", "$/s"},
    {Dimension{.time = 1, .energy = -1, .money = 1}, "cost per power", "'$10.7M/MW'", "$/W"},
}};

const NamedDimension* find_named(const Dimension& d) {
  for (const auto& n : kNamed)
    if (n.dim == d) return &n;
  return nullptr;
}

struct Prefix {
  std::string_view symbol;
  double factor;
};
constexpr std::array<Prefix, 7> kBigPrefixes{
    {{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18}}};
constexpr std::array<Prefix, 5> kSmallPrefixes{
    {{"m", 1e-3}, {"u", 1e-6}, {"\xC2\xB5", 1e-6}, {"n", 1e-9}, {"p", 1e-12}}};
constexpr std::array<Prefix, 6> kBinaryPrefixes{{{"Ki", 1024.0},
                                                 {"Mi", 1048576.0},
                                                 {"Gi", 1073741824.0},
                                                 {"Ti", 1099511627776.0},
                                                 {"Pi", 1125899906842624.0},
                                                 {"Ei", 1152921504606846976.0}}};

enum PrefixSet : unsigned { kNone = 0, kBig = 1, kSmall = 2, kBinary = 4 };

struct BaseUnit {
  std::string_view symbol;
  double factor;
  Dimension dim;
  unsigned prefixes;
};

// Longest symbols first so that "FLOPS" wins over "s" and "Wh" over "h".
const std::vector<BaseUnit>& base_units() {
  static const std::vector<BaseUnit> units = {
      {"FLOPS", 1.0, {.time = -1, .flop = 1}, kBig},
      {"FLOP", 1.0, {.flop = 1}, kBig},
      {"tokens", 1.0, {.tokens = 1}, kBig},
      {"token", 1.0, {.tokens = 1}, kBig},
      {"weeks", 604800.0, {.time = 1}, kNone},
      {"week", 604800.0, {.time = 1}, kNone},
      {"hours", 3600.0, {.time = 1}, kNone},
      {"hour", 3600.0, {.time = 1}, kNone},
      {"OPS", 1.0, {.time = -1, .flop = 1}, kBig},
      {"bps", 0.125, {.time = -1, .data = 1}, kBig},
      {"bit", 0.125, {.data = 1}, kBig | kBinary},
      {"min", 60.0, {.time = 1}, kNone},
      {"sec", 1.0, {.time = 1}, kSmall},
      {"tok", 1.0, {.tokens = 1}, kBig},
      {"days", 86400.0, {.time = 1}, kNone},
      {"day", 86400.0, {.time = 1}, kNone},
      {"Wh", 3600.0, {.energy = 1}, kBig},
      {"Hz", 1.0, {.time = -1}, kBig},
      {"W", 1.0, {.time = -1, .energy = 1}, kBig | kSmall},
      {"J", 1.0, {.energy = 1}, kBig | kSmall},
      {"s", 1.0, {.time = 1}, kSmall},
      {"h", 3600.0, {.time = 1}, kNone},
      {"B", 1.0, {.data = 1}, kBig | kBinary},
      {"b", 0.125, {.data = 1}, kBig | kBinary},
      {"$", 1.0, {.money = 1}, kNone},
  };
  return units;
}

struct UnitValue {
  double factor;
  Dimension dim;
};

template <std::size_t N>
std::optional<double> match_prefix(std::string_view p, const std::array<Prefix, N>& set) {
  for (const auto& x : set)
    if (x.symbol == p) return x.factor;
  return std::nullopt;
}

std::optional<UnitValue> parse_unit_term(std::string_view s) {
  for (const auto& u : base_units()) {
    if (s.size() < u.symbol.size() || s.substr(s.size() - u.symbol.size()) != u.symbol) continue;
    std::string_view prefix = s.substr(0, s.size() - u.symbol.size());
    if (prefix.empty()) return UnitValue{u.factor, u.dim};
    std::optional<double> f;
    if (u.prefixes & kBig) f = match_prefix(prefix, kBigPrefixes);
    if (!f && (u.prefixes & kSmall)) f = match_prefix(prefix, kSmallPrefixes);
    if (!f && (u.prefixes & kBinary)) f = match_prefix(prefix, kBinaryPrefixes);
    if (f) return UnitValue{*f * u.factor, u.dim};
  }
  return std::nullopt;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Reads a leading decimal number; returns it and the rest of the string.
std::optional<std::pair<double, std::string_view>> read_number(std::string_view s) {
  std::string_view body = s;
  if (!body.empty() && body.front() == '+') body.remove_prefix(1);
  double v = 0.0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (ec != std::errc{} || ptr == body.data()) return std::nullopt;
  if (!std::isfinite(v)) return std::nullopt;
  return std::make_pair(v, body.substr(static_cast<std::size_t>(ptr - body.data())));
}

std::string quote(std::string_view s) {
  return "'" + std::string(s) + "'";
}

}  // namespace

std::string dimension_name(const Dimension& d) {
  if (const auto* n = find_named(d)) return n->name;
  char buf[160];
  std::snprintf(buf, sizeof buf, "quantity of dimension [s^%d J^%d B^%d FLOP^%d tok^%d $^%d]",
                d.time, d.energy, d.data, d.flop, d.tokens, d.money);
  return buf;
}

std::string a_dimension(const Dimension& d) {
  const std::string n = dimension_name(d);
  const bool vowel =
      !n.empty() && std::string_view("aeiou").find(n.front()) != std::string_view::npos;
  return (vowel ? "an " : "a ") + n;
}

std::string dimension_example(const Dimension& d) {
  if (const auto* n = find_named(d)) return n->example;
  return "a number with a unit";
}

namespace {

std::expected<ParsedQuantity, std::string> parse_parts(std::string_view s) {
  if (s.empty()) return std::unexpected(std::string("empty value; expected a number with a unit"));

  // Money: "$3.5M", "$0.08/kWh", "$2.21/h".
  if (s.front() == '$') {
    auto num = read_number(trim(s.substr(1)));
    if (!num) return std::unexpected("cannot read a number after '$' in " + quote(s));
    auto [v, rest] = *num;
    rest = trim(rest);
    if (!rest.empty() && rest.front() != '/') {
      const std::size_t slash = rest.find('/');
      const std::string_view scale = trim(rest.substr(0, slash));
      static constexpr std::array<Prefix, 4> kMoney{
          {{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"B", 1e9}}};
      auto f = match_prefix(scale, kMoney);
      if (!f)
        return std::unexpected("unknown money scale " + quote(scale) + " in " + quote(s) +
                               "; use k, M or B, e.g. '$3.5M'");
      v *= *f;
      rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    }
    ParsedQuantity q{v, Dimension{.money = 1}};
    if (!rest.empty()) {
      auto den = parse_unit_term(trim(rest.substr(1)));
      if (!den)
        return std::unexpected("unknown unit " + quote(trim(rest.substr(1))) + " after '/' in " +
                               quote(s));
      q.base_value /= den->factor;
      q.dimension = q.dimension - den->dim;
    }
    return q;
  }

  auto num = read_number(s);
  if (!num)
    return std::unexpected("cannot read a number in " + quote(s) +
                           "; expected a number with a unit such as '700 W'");
  auto [v, rest] = *num;
  const std::string_view unit = trim(rest);
  if (unit.empty()) return ParsedQuantity{v, Dimension{}};
  if (unit == "%") return ParsedQuantity{v / 100.0, Dimension{}};

  const std::size_t slash = unit.find('/');
  const std::string_view num_unit = trim(unit.substr(0, slash));
  auto n = parse_unit_term(num_unit);
  if (!n) return std::unexpected("unknown unit " + quote(num_unit) + " in " + quote(s));
  ParsedQuantity q{v * n->factor, n->dim};
  if (slash != std::string_view::npos) {
    const std::string_view den_unit = trim(unit.substr(slash + 1));
    auto d = parse_unit_term(den_unit);
    if (!d || den_unit.find('/') != std::string_view::npos)
      return std::unexpected("unknown unit " + quote(den_unit) + " after '/' in " + quote(s));
    q.base_value /= d->factor;
    q.dimension = q.dimension - d->dim;
  }
  return q;
}

}  // namespace

std::expected<ParsedQuantity, std::string> parse_quantity(std::string_view text) {
  const std::string_view s = trim(text);
  auto q = parse_parts(s);
  // A number that fits a double can still overflow once scaled to base units ('1e308 PW').
  if (q && !std::isfinite(q->base_value))
    return std::unexpected(quote(s) + " is too large: it exceeds 1.8e308 in base units");
  return q;
}

std::expected<double, std::string> parse_si(std::string_view text, const Dimension& expected) {
  auto q = parse_quantity(text);
  const std::string want =
      "expected " + a_dimension(expected) + " such as " + dimension_example(expected);
  if (!q) return std::unexpected(q.error() + "; " + want);
  if (!(q->dimension == expected)) {
    if (q->dimension.dimensionless())
      return std::unexpected(want + ", but " + quote(trim(text)) + " has no unit");
    return std::unexpected(want + ", but " + quote(trim(text)) + " is " +
                           a_dimension(q->dimension));
  }
  return q->base_value;
}

std::string format_quantity(double base_value, const Dimension& d, int significant) {
  const NamedDimension* n = find_named(d);
  char buf[64];
  if (n == nullptr) {
    std::snprintf(buf, sizeof buf, "%.*g", significant, base_value);
    return std::string(buf) + " [" + dimension_name(d) + "]";
  }
  if (d == Dimension{.energy = -1, .money = 1}) {
    std::snprintf(buf, sizeof buf, "$%.*g/kWh", significant, base_value * kJoulesPerKwh);
    return buf;
  }
  if (d == Dimension{.time = -1, .money = 1}) {
    std::snprintf(buf, sizeof buf, "$%.*g/h", significant, base_value * 3600.0);
    return buf;
  }
  if (d == Dimension{.time = 1, .energy = -1, .money = 1}) {
    std::snprintf(buf, sizeof buf, "$%.*gM/MW", significant, base_value);
    return buf;
  }
  if (d == Dimension{.money = 1}) {
    const double mag = std::fabs(base_value);
    if (mag >= 1e9)
      std::snprintf(buf, sizeof buf, "$%.*gB", significant, base_value / 1e9);
    else if (mag >= 1e6)
      std::snprintf(buf, sizeof buf, "$%.*gM", significant, base_value / 1e6);
    else
      std::snprintf(buf, sizeof buf, "$%.*f", 2, base_value);
    return buf;
  }
  const std::string symbol = n->symbol;
  if (symbol.empty()) {
    std::snprintf(buf, sizeof buf, "%.*g", significant, base_value);
    return buf;
  }
  struct Scale {
    double f;
    const char* p;
  };
  static constexpr std::array<Scale, 11> kScales{{{1e18, "E"},
                                                  {1e15, "P"},
                                                  {1e12, "T"},
                                                  {1e9, "G"},
                                                  {1e6, "M"},
                                                  {1e3, "k"},
                                                  {1.0, ""},
                                                  {1e-3, "m"},
                                                  {1e-6, "u"},
                                                  {1e-9, "n"},
                                                  {1e-12, "p"}}};
  const bool allow_small = (d == Dimension{.time = 1}) || (d == Dimension{.time = -1, .energy = 1});
  const double mag = std::fabs(base_value);
  const Scale* chosen = &kScales[6];
  if (mag != 0.0) {
    for (const auto& sc : kScales) {
      if (sc.f < 1.0 && !allow_small) break;
      if (mag >= sc.f * 0.9995) {
        chosen = &sc;
        break;
      }
    }
  }
  std::snprintf(buf, sizeof buf, "%.*g %s%s", significant, base_value / chosen->f, chosen->p,
                symbol.c_str());
  return buf;
}

}  // namespace racktwin
