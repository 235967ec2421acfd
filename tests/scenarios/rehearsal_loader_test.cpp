// Reading rehearsal files: the shipped ones, default rates with the arithmetic of their source, and
// every error at once with its line.

#include "scenarios/rehearsal_loader.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

using namespace racktwin;
using racktwin::test::shipped_catalog;

const std::string kDir = std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/rehearsals/";

std::expected<Rehearsal, Diagnostics> load(const std::string& text) {
  return load_rehearsal_string(text, "r.yaml", kDir, shipped_catalog());
}

TEST(RehearsalFile, ShippedFiles_Load) {
  for (const char* f : {"jalapeno-100mw-month.yaml", "llama3-16k-h100.yaml"}) {
    auto r = load_rehearsal_file(kDir + f, shipped_catalog());
    ASSERT_TRUE(r.has_value()) << f << "\n" << racktwin::test::dump(r.error());
  }
  auto site = load_rehearsal_file(kDir + "jalapeno-100mw-month.yaml", shipped_catalog());
  EXPECT_EQ(site->domains, 35);
  EXPECT_DOUBLE_EQ(site->horizon.value(), 30 * 86400.0);
  ASSERT_TRUE(site->serving.has_value());
  EXPECT_EQ(site->spare_racks, 4);
  EXPECT_DOUBLE_EQ(site->attainment_goal, 0.999);
}

TEST(RehearsalFile, DefaultRates_CarryTheirFieldArithmetic) {
  auto r = load("name: x\nsystem: jalapeno-a0\ndomains: 1\nhorizon: 1 day\n"
                "serving: {tps_per_replica: {value: 1000 tok/s, assumption: true, reason: a test}, "
                "replica_xpus: 8}\n");
  ASSERT_TRUE(r.has_value()) << racktwin::test::dump(r.error());
  ASSERT_EQ(r->classes.size(), kAllPartClasses.size());
  const auto& xpu = r->classes[0];
  EXPECT_EQ(xpu.part, PartClass::xpu);
  EXPECT_NEAR(xpu.rate.value, 196.0 / (16384 * 1296.0), 1e-12);
  EXPECT_NE(xpu.rate.origin.source.find("196 / (16384 GPU x 1,296 h)"), std::string::npos)
      << xpu.rate.origin.source;
  EXPECT_TRUE(xpu.rate.origin.assumption);
  EXPECT_EQ(r->classes[2].tier, RepairTier::restart);  // software
  EXPECT_EQ(r->classes[9].tier, RepairTier::facility);  // power feed
  double per_gpu = 0, per_server = 0;
  for (const auto& c : r->classes) {
    if (c.part == PartClass::xpu || c.part == PartClass::hbm || c.part == PartClass::software ||
        c.part == PartClass::link)
      per_gpu += c.rate.value;
    else if (c.part != PartClass::switch_tray && c.part != PartClass::power_feed)
      per_server += c.rate.value;
  }
  // The classes split Llama 3's 419 interruptions without loss.
  EXPECT_NEAR(per_gpu * 16384 * 1296 + per_server * 2048 * 1296, 419, 1e-6);
}

TEST(RehearsalFile, EveryError_ReportedAtOnceWithItsLine) {
  auto r = load(R"(name: x
system: jalapeno-a1
domains: 0
horizon: 3 parsecs
serving: {scenario: nowhere.yaml, workload: w, model: llama-3.3-70b, target: {}}
jobs: {sizes: [8]}
repair:
  spares: {compute_tray: 140%}
  technicans: 4
)");
  ASSERT_FALSE(r.has_value());
  const auto& d = r.error();
  auto has = [&](int line, const std::string& text) {
    for (const auto& x : d)
      if (x.where.line == line && (x.message + x.hint).find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has(2, "jalapeno-a0")) << racktwin::test::dump(d);
  EXPECT_TRUE(has(3, "1 to 4096")) << racktwin::test::dump(d);
  EXPECT_TRUE(has(4, "parsecs")) << racktwin::test::dump(d);
  EXPECT_TRUE(has(5, "no scenario file")) << racktwin::test::dump(d);
  EXPECT_TRUE(has(6, "not both")) << racktwin::test::dump(d);
  EXPECT_TRUE(has(8, "100%")) << racktwin::test::dump(d);
  EXPECT_TRUE(has(9, "technicians")) << racktwin::test::dump(d);
}

TEST(RehearsalFile, EmptyFile_SaysSo) {
  auto r = load("");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().front().message.find("empty"), std::string::npos);
}

}  // namespace
