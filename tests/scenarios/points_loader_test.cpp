// Reading published-points files: the shipped file, and one bad point not spoiling the others.

#include "scenarios/points_loader.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

using namespace racktwin;
using racktwin::test::shipped_catalog;

TEST(PointsFile, ShippedReference_LoadsEveryPoint) {
  auto pf = load_points_file(
      std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/reference/published.yaml", shipped_catalog());
  ASSERT_TRUE(pf.has_value()) << racktwin::test::dump(pf.error());
  EXPECT_TRUE(pf->rejected.empty());
  EXPECT_GE(pf->points.size(), 17u);
  EXPECT_EQ(pf->hash.rfind("fnv1a64:", 0), 0u);
  for (const auto& p : pf->points) {
    EXPECT_GT(p.value, 0) << p.id;
    EXPECT_GT(p.workload.isl, 0) << p.id;
  }
}

TEST(PointsFiles, SeveralFiles_ReadAsOne_IdsUniqueAcrossThem) {
  const std::string dir = std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/reference/";
  const auto& cat = shipped_catalog();
  auto a = load_points_file(dir + "published.yaml", cat);
  auto b = load_points_file(dir + "published-extra.yaml", cat);
  ASSERT_TRUE(a && b);
  auto both = load_points_files({dir + "published.yaml", dir + "published-extra.yaml"}, cat);
  ASSERT_TRUE(both.has_value()) << racktwin::test::dump(both.error());
  EXPECT_TRUE(both->rejected.empty());
  EXPECT_EQ(both->points.size(), a->points.size() + b->points.size());
  EXPECT_EQ(both->points.front().id, a->points.front().id);
  EXPECT_EQ(both->points.back().id, b->points.back().id);
  EXPECT_EQ(both->file, dir + "published.yaml + " + dir + "published-extra.yaml");
  EXPECT_NE(both->hash, a->hash);
  EXPECT_EQ(both->hash.rfind("fnv1a64:", 0), 0u);
  // One file: its own hash. The same file twice: every point of the second is a duplicate.
  EXPECT_EQ(load_points_files({dir + "published.yaml"}, cat)->hash, a->hash);
  auto twice = load_points_files({dir + "published.yaml", dir + "published.yaml"}, cat);
  ASSERT_TRUE(twice.has_value());
  EXPECT_EQ(twice->points.size(), a->points.size());
  ASSERT_EQ(twice->rejected.size(), a->points.size());
  EXPECT_NE(twice->rejected[0].problems[0].to_string().find("earlier file"), std::string::npos);
  // An unreadable file fails the load, named.
  auto missing = load_points_files({dir + "published.yaml", dir + "no-such.yaml"}, cat);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(racktwin::test::dump(missing.error()).find("no-such.yaml"), std::string::npos);
}

TEST(PointsFile, BadPoints_AreRejectedByIdAndTheOthersKept) {
  const std::string text = R"(points:
  - id: good
    system: jalapeno-a0
    model: gpt-oss-120b
    workload: {isl: 1024, osl: 128, range_ratio: 0.8, mtp: false, precision: fp4}
    metric: total_tps_per_xpu_at
    at: 100
    value: 1000
  - id: unknown-system
    system: gb900-nvl576
    model: gpt-oss-120b
    workload: {isl: 1024, osl: 128}
    metric: min_tbt_ms
    value: 1
  - id: malformed
    system: jalapeno-a0
    model: gpt-oss-120b
    workload: {isl: 1024}
    metric: fastest_tokens
    value: -3
  - system: jalapeno-a0
    model: gpt-oss-120b
    workload: {isl: 1024, osl: 128}
    metric: total_tps_per_xpu_at
    value: 1
  - id: good
    system: jalapeno-a0
    model: gpt-oss-120b
    workload: {isl: 1024, osl: 128, precision: fp2}
    metric: min_tbt_ms
    value: 1
    colour: red
)";
  auto pf = load_points_string(text, "t.yaml", shipped_catalog());
  ASSERT_TRUE(pf.has_value()) << racktwin::test::dump(pf.error());
  ASSERT_EQ(pf->points.size(), 1u);
  EXPECT_EQ(pf->points[0].id, "good");
  EXPECT_EQ(pf->points[0].at, 100);
  EXPECT_EQ(pf->points[0].workload.precision, "fp4");
  EXPECT_EQ(pf->points[0].where.line, 2);
  ASSERT_EQ(pf->rejected.size(), 4u);
  auto all = [](const RejectedPoint& r) { return racktwin::test::dump(r.problems); };
  EXPECT_EQ(pf->rejected[0].id, "unknown-system");
  EXPECT_NE(all(pf->rejected[0]).find("unknown system 'gb900-nvl576'"), std::string::npos)
      << all(pf->rejected[0]);
  EXPECT_EQ(pf->rejected[1].id, "malformed");
  for (const char* needle : {"osl", "unknown metric 'fastest_tokens'", "value must be above 0"})
    EXPECT_NE(all(pf->rejected[1]).find(needle), std::string::npos) << all(pf->rejected[1]);
  EXPECT_NE(all(pf->rejected[1]).find("t.yaml:18"), std::string::npos) << all(pf->rejected[1]);
  EXPECT_EQ(pf->rejected[2].id, "points[3]");
  EXPECT_NE(all(pf->rejected[2]).find("'id'"), std::string::npos) << all(pf->rejected[2]);
  EXPECT_NE(all(pf->rejected[2]).find("'at'"), std::string::npos) << all(pf->rejected[2]);
  for (const char* needle : {"used by an earlier point", "'fp2'", "unknown key 'colour'"})
    EXPECT_NE(all(pf->rejected[3]).find(needle), std::string::npos) << all(pf->rejected[3]);
}

TEST(PointsFile, NotAPointsFile_FailsWithWhereAndWhat) {
  auto a = load_points_string("points: {id: x}\n", "t.yaml", shipped_catalog());
  ASSERT_FALSE(a.has_value());
  EXPECT_NE(racktwin::test::dump(a.error()).find("expected a list of points"), std::string::npos);
  auto b = load_points_string("systems: []\n", "t.yaml", shipped_catalog());
  ASSERT_FALSE(b.has_value());
  EXPECT_NE(racktwin::test::dump(b.error()).find("points"), std::string::npos);
  auto c = load_points_file("/nonexistent/points.yaml", shipped_catalog());
  ASSERT_FALSE(c.has_value());
}

}  // namespace
