#include "core/error.hpp"

#include <gtest/gtest.h>

namespace racktwin {
namespace {

TEST(Error_Diagnostic, Format_HasFileLineColumnPathMessageHint) {
  Diagnostic d{{"a.yaml", 12, 5}, "systems[0].chip", "unknown chip id 'x'", "use a known id"};
  EXPECT_EQ(d.to_string(), "a.yaml:12:5: systems[0].chip: unknown chip id 'x' (use a known id)");
  Diagnostic whole{{"b.yaml", 0, 0}, "", "cannot open the file", ""};
  EXPECT_EQ(whole.to_string(), "b.yaml: cannot open the file");
}

TEST(Error_InputError, CarriesEveryDiagnostic) {
  InputError e({Diagnostic{{"f", 1, 1}, "", "one", ""}, Diagnostic{{"f", 2, 1}, "", "two", ""}});
  EXPECT_EQ(e.diagnostics().size(), 2u);
  EXPECT_NE(std::string(e.what()).find("f:2:1: two"), std::string::npos);
}

TEST(Error_Nearest, SuggestsTyposAndPrefixesOnly) {
  const std::vector<std::string> ids{"jalapeno-a0", "jalapeno-b0", "gb200-nvl72", "gb300-nvl72",
                                     "h100-hgx"};
  EXPECT_EQ(nearest("jalapeno-a1", ids), "jalapeno-a0");
  EXPECT_EQ(nearest("gb300-nvl27", ids), "gb300-nvl72");
  EXPECT_EQ(nearest("h100", ids), "h100-hgx");
  EXPECT_EQ(nearest("tpu-v7", ids), "");
  EXPECT_EQ(edit_distance("abc", "acb"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

}  // namespace
}  // namespace racktwin
