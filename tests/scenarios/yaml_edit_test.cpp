// Editing single values of a YAML text in place: the value changes, every other byte stays.

#include "scenarios/yaml_edit.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace racktwin {
namespace {

const std::string kText =
    "# A scenario.\n"
    "name: golden  # the name\n"
    "seed:\n"
    "description: >-\n"
    "  two lines\n"
    "  of text\n"
    "systems:\n"
    "  - jalapeno-a0   # first\n"
    "  - gb200-nvl72\n"
    "models: [gpt-oss-120b]  # one model\n"
    "workloads:\n"
    "  - id: a\n"
    "    isl: 2048   # tokens\n"
    "    osl: 512\n"
    "  - {id: b, kind: poisson, isl: 1024, osl: 256, rate: [2, 8]}\n"
    "concurrency: {from: 1, to: 64, factor: 2}\n"
    "\n"
    "# the end\n";

std::string edited(const std::string& path, const std::string& value,
                   const std::string& text = kText) {
  auto e = set_yaml_value(text, path, value);
  EXPECT_TRUE(e.has_value()) << path << ": " << (e ? "" : e.error());
  return e.value_or(text);
}

// `text` with `from` replaced by `to` once.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(YamlEdit, AScalar_ChangesAlone_KeepingItsComment) {
  EXPECT_EQ(edited("name", "other"), replaced(kText, "name: golden", "name: other"));
  EXPECT_EQ(edited("workloads[0].isl", "8192"), replaced(kText, "isl: 2048", "isl: 8192"));
}

TEST(YamlEdit, AValueInAFlowMapping_ChangesAlone) {
  EXPECT_EQ(edited("workloads[1].isl", "4096"), replaced(kText, "isl: 1024,", "isl: 4096,"));
  EXPECT_EQ(edited("workloads[1].rate", "[1, 2, 3]"),
            replaced(kText, "rate: [2, 8]}", "rate: [1, 2, 3]}"));
}

TEST(YamlEdit, AFlowCollection_IsReplacedWhole) {
  EXPECT_EQ(edited("models", "[a, b]"),
            replaced(kText, "models: [gpt-oss-120b]", "models: [a, b]"));
  EXPECT_EQ(
      edited("concurrency", "[1, 4, 16]"),
      replaced(kText, "concurrency: {from: 1, to: 64, factor: 2}", "concurrency: [1, 4, 16]"));
}

TEST(YamlEdit, ABlockList_BecomesAFlowListOnTheKeysLine) {
  EXPECT_EQ(edited("systems", "[gb300-nvl72]"),
            replaced(kText, "systems:\n  - jalapeno-a0   # first\n  - gb200-nvl72\n",
                     "systems: [gb300-nvl72]\n"));
}

TEST(YamlEdit, ABlockScalarAndAnEmptyValue_AreReplaced) {
  EXPECT_EQ(edited("description", "short"),
            replaced(kText, "description: >-\n  two lines\n  of text\n", "description: short\n"));
  EXPECT_EQ(edited("seed", "7"), replaced(kText, "seed:\n", "seed: 7\n"));
}

TEST(YamlEdit, AMissingKey_IsAddedAtTheEndOfItsMapping) {
  EXPECT_EQ(edited("replicas", "2"), replaced(kText, "factor: 2}\n", "factor: 2}\nreplicas: 2\n"));
  EXPECT_EQ(edited("workloads[0].range_ratio", "1"),
            replaced(kText, "    osl: 512\n", "    osl: 512\n    range_ratio: 1\n"));
  EXPECT_EQ(edited("workloads[1].requests", "60"),
            replaced(kText, "rate: [2, 8]}", "rate: [2, 8], requests: 60}"));
}

TEST(YamlEdit, ValuesAreReadInOneParse) {
  const auto v = yaml_values(
      kText, {"name", "systems", "models", "concurrency", "seed", "workloads[0].isl", "nothing"});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->at("name").scalar, "golden");
  EXPECT_EQ(v->at("systems").items, (std::vector<std::string>{"jalapeno-a0", "gb200-nvl72"}));
  EXPECT_EQ(v->at("systems").flow, "[jalapeno-a0, gb200-nvl72]");
  EXPECT_EQ(v->at("concurrency").flow, "{from: 1, to: 64, factor: 2}");
  EXPECT_EQ(v->at("workloads[0].isl").scalar, "2048");
  EXPECT_FALSE(v->contains("seed"));  // empty: not given
  EXPECT_FALSE(v->contains("nothing"));
  EXPECT_FALSE(yaml_values("a: [1,\n", {"a"}).has_value());
}

TEST(YamlEdit, BadEdits_AreRefusedWithTheReason) {
  EXPECT_FALSE(set_yaml_value("a: [1,\n", "a", "2").has_value());        // text does not parse
  EXPECT_FALSE(set_yaml_value(kText, "name", "[unclosed").has_value());  // value does not parse
  EXPECT_FALSE(set_yaml_value(kText, "name", "a\nb").has_value());       // not one line
  EXPECT_FALSE(set_yaml_value(kText, "workloads[5].isl", "1").has_value());
  EXPECT_FALSE(set_yaml_value(kText, "name.x", "1").has_value());  // a scalar holds no key
  const auto e = set_yaml_value(kText, "workloads[9].isl", "1");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().find("workloads[9].isl"), std::string::npos) << e.error();
}

TEST(YamlEdit, Scalars_AreQuotedWhenTheyWouldNotReadBack) {
  EXPECT_EQ(yaml_scalar("gb200-nvl72"), "gb200-nvl72");
  EXPECT_EQ(edited("name", yaml_scalar("a: b # c")), replaced(kText, "golden", "\"a: b # c\""));
  EXPECT_EQ(yaml_flow_list({"a", "b c"}), "[a, b c]");
}

TEST(YamlEdit, EveryShippedScenario_TakesAnEditOfEachCommonKey) {
  for (const char* f :
       {"inferencex-8k1k.yaml", "agentic-multiturn.yaml", "trace-replay-example.yaml"}) {
    std::ifstream in(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/" + f);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    for (const auto& [path, value] :
         std::vector<std::pair<std::string, std::string>>{{"name", "x"},
                                                          {"seed", "5"},
                                                          {"systems", "[gb200-nvl72]"},
                                                          {"models", "[gpt-oss-120b]"},
                                                          {"concurrency", "[1, 2]"}}) {
      auto e = set_yaml_value(text, path, value);
      ASSERT_TRUE(e.has_value()) << f << " " << path << ": " << e.error();
      text = *e;
      EXPECT_EQ(yaml_values(text, {path})->at(path).flow, value) << f << " " << path;
    }
  }
}

}  // namespace
}  // namespace racktwin
