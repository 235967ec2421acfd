#include "app/describe.hpp"
#include "app/point_details.hpp"

#include <gtest/gtest.h>

#include <string>

#include "test_support.hpp"

namespace racktwin::app {
namespace {

using racktwin::test::shipped_catalog;

// Every cell of a section's table, joined: what a front end would show of it.
std::string cells(const Section& s) {
  std::string out;
  for (const auto& row : s.table)
    for (const auto& c : row) out += c + "|";
  return out;
}

TEST(Describe, LayoutList_RejectionsGroupedOrEach_ByTheCaller) {
  LayoutsRequest req{"h100-hgx", "llama-3.3-70b", "", {1, 3, 4}, 1, 9216};
  const auto l = layout_list(shipped_catalog(), req);
  ASSERT_TRUE(l) << l.error().message;
  const Sections grouped = describe(*l, false), each = describe(*l, true);
  ASSERT_EQ(grouped.size(), 3u);
  ASSERT_EQ(each.size(), 3u);
  const auto rejected = l->layouts.size() - static_cast<std::size_t>(l->valid);
  ASSERT_GT(rejected, 0u);
  EXPECT_EQ(grouped[2].title, "Rejected layouts (" + std::to_string(rejected) + ")");
  EXPECT_EQ(each[2].title, grouped[2].title);
  EXPECT_TRUE(grouped[2].table.empty());
  EXPECT_EQ(grouped[2].notes.size(), l->rejections.size());
  EXPECT_EQ(each[2].table.size(), rejected + 1);  // the header, then one row each
  EXPECT_NE(cells(each[2]).find("tp3|3|"), std::string::npos);
  // The valid table has one row per valid layout below its header.
  EXPECT_EQ(grouped[1].table.size(), static_cast<std::size_t>(l->valid) + 1);
  EXPECT_FALSE(grouped[0].gap);
}

TEST(Describe, Path_UnreachableSaysSoAndReachableListsItsRoute) {
  PathView p;
  p.from = "a";
  p.to = "b";
  auto s = describe(p);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].title, "a and b are not connected");
  EXPECT_TRUE(s[0].facts.empty());
  p.reachable = true;
  p.switch_hops = 2;
  p.route = {"a", "sw", "b"};
  s = describe(p);
  ASSERT_EQ(s[0].facts.size(), 5u);
  EXPECT_EQ(s[0].facts[1].text, "2");
  EXPECT_EQ(s[0].facts[4].text, "a -> sw -> b");
}

TEST(Describe, FailureAssessment_PlacementAfterTheFailuresBesideBefore) {
  const auto a = assess_failure(shipped_catalog(), {{"jalapeno-a0"}, {"rack0/vindaloo0"}, 64});
  ASSERT_TRUE(a) << a.error().message;
  const Sections s = describe(*a);
  ASSERT_EQ(s.size(), 3u);  // the counts, the affected XPUs, the placement
  EXPECT_EQ(s[0].facts[0].label, "lost");
  EXPECT_EQ(s[0].facts[0].text.substr(0, 2), "8 ");  // the tray's eight XPUs
  EXPECT_EQ(s[1].title, "Affected XPUs");
  const PlacementView& after = *a->placement_after;
  EXPECT_EQ(s[2].facts[0].text, std::to_string(after.replicas.size()) + " (" +
                                    std::to_string(after.placed_xpus()) + " XPUs)");
  EXPECT_LT(after.replicas.size(), a->placement_before->replicas.size());
  EXPECT_EQ(s[2].notes.back(), "without the failures: " +
                                   std::to_string(a->placement_before->replicas.size()) +
                                   " replicas");
}

TEST(FigureText, ThreeToFourSignificantDigits) {
  EXPECT_EQ(figure_text(25711.4), "25711");
  EXPECT_EQ(figure_text(137.24), "137.2");
  EXPECT_EQ(figure_text(3.8912), "3.89");
  EXPECT_EQ(figure_text(-0.04213), "-0.0421");
}

// A point's detail table gives one replica's XPUs from its layout, not the point's XPUs: a
// disaggregated point of a tp8-ep8-dpa decode replica beside three tp2 prefill replicas serves
// on 14 XPUs, 8 per decode replica. A layout named by the scenario gives no count.
TEST(PointDetails, Layout_GivesOneReplicasXpus) {
  db::StoredPoint p;
  p.key.layout = "tp8-ep8-dpa";
  p.key.serving = "3p1d/tp2";
  p.xpus = 14;
  auto layout_cell = [&] {
    for (const auto& row : point_detail_table(p))
      if (row[1] == "layout") return row[2];
    return std::string();
  };
  EXPECT_EQ(layout_cell(), "tp8-ep8-dpa (8 XPUs per replica)");
  p.key.layout = "my-layout";
  EXPECT_EQ(layout_cell(), "my-layout");
}


}  // namespace
}  // namespace racktwin::app
