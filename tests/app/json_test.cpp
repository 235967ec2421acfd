#include <gtest/gtest.h>

#include "app/json.hpp"

namespace racktwin::app {
namespace {

TEST(DiagnosticsJson, EveryDiagnostic_KeepsItsLocationAndHint) {
  Diagnostics d;
  d.push_back({{"a.yaml", 3, 7}, "systems[0]", "unknown system 'x'", "see racktwin catalog list"});
  d.push_back({{"a.yaml", 9, 1}, "seed", "expected an integer", ""});
  const Json j = diagnostics_json(d);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["line"], 3);
  EXPECT_EQ(j[0]["column"], 7);
  EXPECT_EQ(j[0]["path"], "systems[0]");
  EXPECT_EQ(j[0]["hint"], "see racktwin catalog list");
  EXPECT_EQ(j[1]["message"], "expected an integer");
}

}  // namespace
}  // namespace racktwin::app
