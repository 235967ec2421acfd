#pragma once
// Strong value types for the physical quantities that cross module boundaries, and the one parser
// for unit strings ("700 W", "15.4 TB/s", "800 Gb/s", "36 GiB", "$0.08/kWh").
//
// Contract:
// - Every quantity is stored as a double in SI base units: seconds, joules, bytes, floating-point
//   operations, tokens, US dollars. Watts are joules per second; a bandwidth is bytes per second.
// - The dimension is part of the type: Watts * Seconds is Joules, Bytes / BytesPerSecond is
// Seconds,
//   and adding Watts to Joules does not compile. A ratio of equal dimensions is a plain double.
// - Parsing never throws: it returns std::expected with a message that says what was expected.
// - SI prefixes (k or K, M, G, T, P, E; m, u or \u00b5, n, p) are powers of ten; Ki, Mi, Gi, Ti,
// Pi,
//   Ei are powers of two (bytes and bits only). "B" is a byte and "b" a bit (8 bits = 1 byte).
//   Negative values parse; callers that need a non-negative quantity check it.

#include <compare>
#include <expected>
#include <string>
#include <string_view>

namespace racktwin {

// Exponents of the base dimensions of a quantity.
struct Dimension {
  int time = 0;    // second
  int energy = 0;  // joule
  int data = 0;    // byte
  int flop = 0;    // floating-point operation
  int tokens = 0;  // token
  int money = 0;   // US dollar

  constexpr bool operator==(const Dimension&) const = default;
  constexpr Dimension operator+(const Dimension& o) const {
    return {time + o.time, energy + o.energy, data + o.data,
            flop + o.flop, tokens + o.tokens, money + o.money};
  }
  constexpr Dimension operator-(const Dimension& o) const {
    return {time - o.time, energy - o.energy, data - o.data,
            flop - o.flop, tokens - o.tokens, money - o.money};
  }
  constexpr bool dimensionless() const { return *this == Dimension{}; }
};

// What a dimension is called in messages ("power", "bandwidth", ...), and an example of a valid
// string.
std::string dimension_name(const Dimension& d);
// The name with its indefinite article: "a power", "an energy price".
std::string a_dimension(const Dimension& d);
std::string dimension_example(const Dimension& d);

template <int T, int E, int D, int F, int K, int M>
class Quantity {
 public:
  static constexpr Dimension kDimension{T, E, D, F, K, M};

  constexpr Quantity() = default;
  constexpr explicit Quantity(double base_value) : value_(base_value) {}

  // The value in SI base units (see the header comment).
  constexpr double value() const { return value_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(value_ + o.value_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value_ - o.value_); }
  constexpr Quantity operator-() const { return Quantity(-value_); }
  constexpr Quantity& operator+=(Quantity o) {
    value_ += o.value_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    value_ -= o.value_;
    return *this;
  }
  constexpr Quantity operator*(double k) const { return Quantity(value_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value_ / k); }
  friend constexpr Quantity operator*(double k, Quantity q) { return Quantity(k * q.value_); }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double value_ = 0.0;
};

namespace detail {
template <int T, int E, int D, int F, int K, int M>
constexpr auto make_quantity(double v) {
  if constexpr (T == 0 && E == 0 && D == 0 && F == 0 && K == 0 && M == 0) {
    return v;
  } else {
    return Quantity<T, E, D, F, K, M>(v);
  }
}
}  // namespace detail

template <int T1, int E1, int D1, int F1, int K1, int M1, int T2, int E2, int D2, int F2, int K2,
          int M2>
constexpr auto operator*(Quantity<T1, E1, D1, F1, K1, M1> a, Quantity<T2, E2, D2, F2, K2, M2> b) {
  return detail::make_quantity<T1 + T2, E1 + E2, D1 + D2, F1 + F2, K1 + K2, M1 + M2>(a.value() *
                                                                                     b.value());
}

template <int T1, int E1, int D1, int F1, int K1, int M1, int T2, int E2, int D2, int F2, int K2,
          int M2>
constexpr auto operator/(Quantity<T1, E1, D1, F1, K1, M1> a, Quantity<T2, E2, D2, F2, K2, M2> b) {
  return detail::make_quantity<T1 - T2, E1 - E2, D1 - D2, F1 - F2, K1 - K2, M1 - M2>(a.value() /
                                                                                     b.value());
}

template <int T, int E, int D, int F, int K, int M>
constexpr auto operator/(double a, Quantity<T, E, D, F, K, M> b) {
  return Quantity<-T, -E, -D, -F, -K, -M>(a / b.value());
}

using Seconds = Quantity<1, 0, 0, 0, 0, 0>;
using Hertz = Quantity<-1, 0, 0, 0, 0, 0>;
using Joules = Quantity<0, 1, 0, 0, 0, 0>;
using Watts = Quantity<-1, 1, 0, 0, 0, 0>;
using Bytes = Quantity<0, 0, 1, 0, 0, 0>;
using BytesPerSecond = Quantity<-1, 0, 1, 0, 0, 0>;
using Flops = Quantity<0, 0, 0, 1, 0, 0>;
using FlopsPerSecond = Quantity<-1, 0, 0, 1, 0, 0>;
using Tokens = Quantity<0, 0, 0, 0, 1, 0>;
using TokensPerSecond = Quantity<-1, 0, 0, 0, 1, 0>;
using Usd = Quantity<0, 0, 0, 0, 0, 1>;
using UsdPerJoule = Quantity<0, -1, 0, 0, 0, 1>;  // an energy price; see usd_per_kwh()
using UsdPerSecond = Quantity<-1, 0, 0, 0, 0, 1>;
using UsdPerWatt = Quantity<1, -1, 0, 0, 0, 1>;  // a cost per unit of power, e.g. '$10.7M/MW'


// Convenience constructors in the units people write.
constexpr Watts watts(double w) {
  return Watts(w);
}
constexpr Watts kilowatts(double kw) {
  return Watts(kw * 1e3);
}
constexpr Seconds seconds(double s) {
  return Seconds(s);
}
constexpr Bytes bytes(double b) {
  return Bytes(b);
}
constexpr double kJoulesPerKwh = 3.6e6;
constexpr UsdPerJoule usd_per_kwh(double p) {
  return UsdPerJoule(p / kJoulesPerKwh);
}

// A parsed string whose dimension is known only at run time.
struct ParsedQuantity {
  double base_value = 0.0;
  Dimension dimension;
};

// Parses "<number> <unit>" (the space is optional), "$<number>[/<unit>]", "<number>%" or a bare
// number (dimensionless). Accepted units: W, J, Wh, s, sec, min, h, hour(s), day(s), week(s), Hz, B, b, bit,
// FLOP, FLOPS (= FLOP/s), OPS (= FLOP/s), tok, token(s), bps (= b/s), with prefixes, and any
// "<unit>/<unit>" ratio; money as "$<n>[k|M|B][/<unit>]".
std::expected<ParsedQuantity, std::string> parse_quantity(std::string_view text);

// Parses and checks the dimension; the error says what was expected, e.g.
// "expected a power such as '700 W' or '1.2 kW', but '15.4 TB/s' is a bandwidth".
std::expected<double, std::string> parse_si(std::string_view text, const Dimension& expected);

template <class Q>
std::expected<Q, std::string> parse(std::string_view text) {
  auto v = parse_si(text, Q::kDimension);
  if (!v) return std::unexpected(v.error());
  return Q(*v);
}

// Human-readable rendering with an SI prefix chosen for the magnitude ("15.4 TB/s", "700 W").
std::string format_quantity(double base_value, const Dimension& d, int significant = 4);
template <class Q>
std::string format(Q q, int significant = 4) {
  return format_quantity(q.value(), Q::kDimension, significant);
}

}  // namespace racktwin
