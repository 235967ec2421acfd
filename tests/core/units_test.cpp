#include "core/units.hpp"

#include <gtest/gtest.h>

#include <type_traits>

namespace racktwin {
namespace {

double si(std::string_view s, const Dimension& d) {
  auto v = parse_si(s, d);
  EXPECT_TRUE(v.has_value()) << s << ": " << (v ? "" : v.error());
  return v.value_or(-1.0);
}

TEST(Units_Parse, PowerStrings_AreWatts) {
  EXPECT_DOUBLE_EQ(parse<Watts>("700 W")->value(), 700.0);
  EXPECT_DOUBLE_EQ(parse<Watts>("1.2 kW")->value(), 1200.0);
  EXPECT_DOUBLE_EQ(parse<Watts>("130 kW")->value(), 130e3);
  EXPECT_DOUBLE_EQ(parse<Watts>("100 MW")->value(), 100e6);
  EXPECT_DOUBLE_EQ(parse<Watts>("700W")->value(), 700.0);  // the space is optional
}

TEST(Units_Parse, BandwidthStrings_DistinguishBitsFromBytes) {
  EXPECT_DOUBLE_EQ(parse<BytesPerSecond>("15.4 TB/s")->value(), 15.4e12);
  EXPECT_DOUBLE_EQ(parse<BytesPerSecond>("800 Gb/s")->value(), 100e9);  // 800 gigabits = 100 GB
  EXPECT_DOUBLE_EQ(parse<BytesPerSecond>("800 Gbps")->value(), 100e9);
  EXPECT_DOUBLE_EQ(parse<BytesPerSecond>("102.4 Tb/s")->value(), 12.8e12);
  EXPECT_DOUBLE_EQ(parse<BytesPerSecond>("1 GiB/s")->value(), 1073741824.0);
}

TEST(Units_Parse, SizeStrings_SiPowersOfTenBinaryPowersOfTwo) {
  EXPECT_DOUBLE_EQ(parse<Bytes>("288 GB")->value(), 288e9);
  EXPECT_DOUBLE_EQ(parse<Bytes>("1.5 TB")->value(), 1.5e12);
  EXPECT_DOUBLE_EQ(parse<Bytes>("36 GiB")->value(), 36.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse<Bytes>("2 TiB")->value(), 2.0 * 1099511627776.0);
  EXPECT_DOUBLE_EQ(parse<Bytes>("8 b")->value(), 1.0);
  EXPECT_DOUBLE_EQ(parse<Bytes>("1 KiB")->value(), 1024.0);
}

TEST(Units_Parse, ComputeTimeAndMoneyStrings) {
  EXPECT_DOUBLE_EQ(parse<FlopsPerSecond>("13.4 PFLOPS")->value(), 13.4e15);
  EXPECT_DOUBLE_EQ(parse<FlopsPerSecond>("2250 TFLOP/s")->value(), 2250e12);
  EXPECT_DOUBLE_EQ(parse<Flops>("2 TFLOP")->value(), 2e12);
  EXPECT_DOUBLE_EQ(parse<Seconds>("2 us")->value(), 2e-6);
  EXPECT_DOUBLE_EQ(parse<Seconds>("0.75 us")->value(), 0.75e-6);
  EXPECT_DOUBLE_EQ(parse<Seconds>("5 ms")->value(), 5e-3);
  EXPECT_DOUBLE_EQ(parse<Seconds>("3 min")->value(), 180.0);
  EXPECT_DOUBLE_EQ(parse<Seconds>("2 h")->value(), 7200.0);
  EXPECT_NEAR(parse<UsdPerJoule>("$0.08/kWh")->value(), 0.08 / 3.6e6, 1e-20);
  EXPECT_DOUBLE_EQ(parse<Usd>("$3.5M")->value(), 3.5e6);
  EXPECT_NEAR(parse<UsdPerSecond>("$2.21/h")->value(), 2.21 / 3600.0, 1e-15);
  EXPECT_DOUBLE_EQ(parse<Joules>("1 kWh")->value(), 3.6e6);
  EXPECT_DOUBLE_EQ(parse<TokensPerSecond>("5000 tok/s")->value(), 5000.0);
  EXPECT_DOUBLE_EQ(si("80%", Dimension{}), 0.8);
  EXPECT_DOUBLE_EQ(si("1e3", Dimension{}), 1000.0);
}

TEST(Units_Parse, UnknownUnit_IsErrorNamingUnitAndExpectation) {
  auto v = parse<Watts>("700 Q");
  ASSERT_FALSE(v.has_value());
  EXPECT_NE(v.error().find("unknown unit 'Q'"), std::string::npos) << v.error();
  EXPECT_NE(v.error().find("expected a power"), std::string::npos) << v.error();
}

TEST(Units_Parse, WrongDimension_IsErrorNamingBoth) {
  auto v = parse<Watts>("15.4 TB/s");
  ASSERT_FALSE(v.has_value());
  EXPECT_NE(v.error().find("expected a power"), std::string::npos) << v.error();
  EXPECT_NE(v.error().find("is a bandwidth"), std::string::npos) << v.error();
  auto b = parse<Bytes>("800 Gb/s");
  ASSERT_FALSE(b.has_value());
  EXPECT_NE(b.error().find("data size"), std::string::npos) << b.error();
}

TEST(Units_Parse, MalformedStrings_AreErrors) {
  for (const char* s : {"", "W", "fast", "7OO W", "700 W W", "1.2 kkW", "5 Mh", "$", "$x/kWh",
                        "12 GB/", "12 GB/s/s", "inf W", "nan W", "1.5 GiW"}) {
    EXPECT_FALSE(parse_quantity(s).has_value() && parse<Watts>(s).has_value()) << s;
  }
  EXPECT_FALSE(parse<Watts>("700").has_value());  // no unit where one is required
  EXPECT_NE(parse<Watts>("700").error().find("has no unit"), std::string::npos);
  EXPECT_FALSE(parse<Seconds>("2 mins").has_value());
  EXPECT_FALSE(parse<Bytes>("1 mB").has_value());  // no milli-bytes
}

TEST(Units_Algebra, PhysicalOperators_ProduceTheRightTypes) {
  static_assert(std::is_same_v<decltype(Watts(1) * Seconds(1)), Joules>);
  static_assert(std::is_same_v<decltype(Bytes(1) / BytesPerSecond(1)), Seconds>);
  static_assert(std::is_same_v<decltype(Flops(1) / FlopsPerSecond(1)), Seconds>);
  static_assert(std::is_same_v<decltype(Joules(1) / Seconds(1)), Watts>);
  static_assert(std::is_same_v<decltype(Watts(1) / Watts(1)), double>);
  static_assert(std::is_same_v<decltype(UsdPerJoule(1) * Joules(1)), Usd>);
  EXPECT_DOUBLE_EQ((kilowatts(130) * seconds(3600)).value(), 130e3 * 3600);
  EXPECT_DOUBLE_EQ((Bytes(15.4e12) / BytesPerSecond(15.4e12)).value(), 1.0);
  EXPECT_DOUBLE_EQ((usd_per_kwh(0.08) * Joules(3.6e6)).value(), 0.08);
  EXPECT_LT(Watts(550), Watts(700));
}

TEST(Units_Format, RoundTripsThroughTheParser) {
  for (const char* s :
       {"700 W", "130 kW", "15.4 TB/s", "288 GB", "2 us", "13.4 PFLOP/s", "$0.08/kWh"}) {
    auto q = parse_quantity(s);
    ASSERT_TRUE(q.has_value()) << s;
    const std::string out = format_quantity(q->base_value, q->dimension);
    auto back = parse_quantity(out);
    ASSERT_TRUE(back.has_value()) << out;
    EXPECT_NEAR(back->base_value / q->base_value, 1.0, 1e-9) << s << " -> " << out;
    EXPECT_EQ(back->dimension, q->dimension) << s;
  }
  EXPECT_EQ(format(Watts(700)), "700 W");
  EXPECT_EQ(format(BytesPerSecond(15.4e12)), "15.4 TB/s");
  EXPECT_EQ(format(Seconds(0.75e-6)), "750 ns");
}

}  // namespace
}  // namespace racktwin

namespace racktwin {
namespace {

TEST(Units_Parse, ValueOverflowingToInfinity_IsRejectedAsTooLarge) {
  for (const char* text : {"1e308 PW", "$1e308M/kWh", "$1e308B", "1e308 PB/ns"}) {
    auto q = parse_quantity(text);
    ASSERT_FALSE(q.has_value()) << text << " read as " << q->base_value;
    EXPECT_NE(q.error().find("too large"), std::string::npos) << q.error();
  }
  EXPECT_TRUE(parse_quantity("1e300 W").has_value());
}

}  // namespace
}  // namespace racktwin
