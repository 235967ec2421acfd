// Inputs a hostile or careless user may give the loaders: each is a located error, never a crash,
// a raw library exception or a value silently ignored.

#include <gtest/gtest.h>

#include <string>

#include "scenarios/points_loader.hpp"
#include "scenarios/scenario_loader.hpp"
#include "scenarios/trace_loader.hpp"
#include "test_support.hpp"

namespace racktwin {
namespace {

using test::dump;
using test::find_diag;
using test::shipped_catalog;
using test::TempFile;

const std::string kHead = "name: h\nsystems: [h100-hgx]\nmodels: [llama-3.3-70b]\n";
const std::string kWorkload = "workloads:\n  - {kind: inferencex, isl: 1024, osl: 1024}\n";

Diagnostics scenario_errors(const std::string& text) {
  auto sc = load_scenario_string(text, "inline.yaml", shipped_catalog());
  EXPECT_FALSE(sc.has_value()) << text;
  return sc ? Diagnostics{} : sc.error();
}

// The diagnostic at `line` whose text contains `needle`, or nullptr.
const Diagnostic* at_line(const Diagnostics& d, int line, const std::string& needle) {
  for (const auto& x : d)
    if (x.where.line == line && x.to_string().find(needle) != std::string::npos) return &x;
  return nullptr;
}

std::string trace_line(const std::string& timestamp, const std::string& input = "10") {
  return "{\"timestamp\": " + timestamp + ", \"input_length\": " + input +
         ", \"output_length\": 5}\n";
}

TEST(TraceLoader_Hostile, DeeplyNestedValueInAKnownField_IsAShortLineError) {
  constexpr int kDepth = 100'000;
  const std::string nested = std::string(kDepth, '[') + std::string(kDepth, ']');
  TempFile f("t.jsonl", trace_line("0") + trace_line(nested));
  auto t = load_mooncake_trace(f.path());
  ASSERT_FALSE(t.has_value());
  const Diagnostic* d = at_line(t.error(), 2, "found a list");
  ASSERT_NE(d, nullptr) << dump(t.error()).substr(0, 500);
  EXPECT_EQ(d->path, "timestamp");
  EXPECT_LT(d->to_string().size(), 300u);
}

TEST(TraceLoader_Hostile, NumberBeyondADouble_IsALineError_AndLaterLinesAreStillChecked) {
  TempFile f("t.jsonl", trace_line("0") + trace_line("1e400") + trace_line("5", "-1"));
  auto t = load_mooncake_trace(f.path());
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(at_line(t.error(), 2, "invalid JSON"), nullptr) << dump(t.error());
  EXPECT_NE(at_line(t.error(), 3, "input_length"), nullptr) << dump(t.error());
}

TEST(TraceLoader_Hostile, FileOfAnotherKind_ErrorsDoNotEchoItsText) {
  TempFile f("t.jsonl", "\"secret-first-line-of-some-file\n{\"secret2\": [\"x\"\n");
  auto t = load_mooncake_trace(f.path());
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(at_line(t.error(), 1, "invalid JSON"), nullptr) << dump(t.error());
  EXPECT_NE(at_line(t.error(), 2, "invalid JSON"), nullptr) << dump(t.error());
  EXPECT_EQ(dump(t.error()).find("secret"), std::string::npos) << dump(t.error());
}

TEST(TraceLoader_Hostile, BlankTrace_IsAnErrorAtItsFirstLine) {
  for (const std::string text : {"", "\n  \n\t\n"}) {
    auto t = load_mooncake_trace_string(text, "t.jsonl");
    ASSERT_FALSE(t.has_value());
    EXPECT_NE(at_line(t.error(), 1, "the trace holds no request"), nullptr) << dump(t.error());
  }
}

TEST(PointsLoader_Hostile, FileOfAnotherKind_ErrorsDoNotEchoItsText) {
  auto p = load_points_string("root:x:0:0:secret-text\nsecond line, also secret\n", "passwd",
                              shipped_catalog());
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(find_diag(p.error(), "expected a mapping of keys to values, found a text value"),
            nullptr)
      << dump(p.error());
  EXPECT_EQ(dump(p.error()).find("secret"), std::string::npos) << dump(p.error());
}

TEST(ScenarioLoader_Hostile, InvalidUtf8InNameAndId_IsRejectedAtEachField) {
  auto d = scenario_errors(
      "name: caf\xE9\nsystems: [h100-hgx]\nmodels: [llama-3.3-70b]\n"
      "workloads:\n  - {id: w\xC3(, kind: inferencex, isl: 1024, osl: 1024}\n"
      "concurrency: [1]\n");
  const Diagnostic* name = find_diag(d, "name: the text is not valid UTF-8");
  ASSERT_NE(name, nullptr) << dump(d);
  EXPECT_EQ(name->where.line, 1);
  EXPECT_NE(name->message.find("byte 4"), std::string::npos) << name->message;
  EXPECT_NE(find_diag(d, "workloads[0].id: the text is not valid UTF-8"), nullptr) << dump(d);
}

TEST(ScenarioLoader_Hostile, ValidUtf8Text_IsAccepted) {
  auto sc = load_scenario_string("name: \"café 東京 🚀\"\n" + kHead.substr(kHead.find('\n') + 1) +
                                     kWorkload + "concurrency: [1]\n",
                                 "inline.yaml", shipped_catalog());
  ASSERT_TRUE(sc.has_value()) << dump(sc.error());
  EXPECT_EQ(sc->name, "café 東京 🚀");
}

TEST(ScenarioLoader_Hostile, QuantityOverflowingToInfinity_IsRejected) {
  auto d = scenario_errors(kHead + kWorkload +
                           "concurrency: [1]\nfacility:\n  electricity_price: '$1e308M/kWh'\n"
                           "  power_budget: '1e308 PW'\n");
  const Diagnostic* price = find_diag(d, "facility.electricity_price");
  ASSERT_NE(price, nullptr) << dump(d);
  EXPECT_NE(price->message.find("too large"), std::string::npos) << price->message;
  EXPECT_EQ(price->where.line, 8);
  EXPECT_NE(find_diag(d, "facility.power_budget"), nullptr) << dump(d);
}

TEST(ScenarioLoader_Hostile, SecondYamlDocument_IsAnErrorWhereItStarts) {
  auto d = scenario_errors(kHead + kWorkload + "concurrency: [1]\n---\nconcurrency: [2, 4]\n");
  ASSERT_EQ(d.size(), 1u) << dump(d);
  EXPECT_EQ(d[0].where.line, 8);
  EXPECT_NE(d[0].message.find("a second YAML document"), std::string::npos) << d[0].message;
  EXPECT_NE(d[0].hint.find("---"), std::string::npos) << d[0].hint;
}

// yaml-cpp 0.7's YAML::LoadAll returns empty documents without end on a ',' outside a list or a
// mapping, taking memory until the machine has none.
TEST(ScenarioLoader_Hostile, StrayCommaAtTheTop_IsALocatedSyntaxError) {
  for (const std::string& text : std::vector<std::string>{",", kHead + ",\n", "[a], b\n",
                                                          kHead + kWorkload + "concurrency: [1]\n---\n, x\n"}) {
    auto d = scenario_errors(text);
    ASSERT_EQ(d.size(), 1u) << text << "\n" << dump(d);
    EXPECT_GE(d[0].where.line, 1) << dump(d);
    EXPECT_NE(d[0].message.find("invalid YAML"), std::string::npos) << dump(d);
  }
  const auto d = scenario_errors(kHead + "  , x\n");
  ASSERT_EQ(d.size(), 1u) << dump(d);
  EXPECT_EQ(d[0].where.line, 4) << dump(d);
}

TEST(ScenarioLoader_Hostile, LeadingDocumentMarker_IsStillOneDocument) {
  auto sc = load_scenario_string("---\n" + kHead + kWorkload + "concurrency: [1]\n---\n",
                                 "inline.yaml", shipped_catalog());
  EXPECT_TRUE(sc.has_value()) << dump(sc.error());
}

TEST(ScenarioLoader_Hostile, ReferenceThatIsNotAPointsFile_IsAnErrorAtTheKey) {
  const std::string other = std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/inferencex-8k1k.yaml";
  auto d = scenario_errors(kHead + kWorkload + "concurrency: [1]\nreference: " + other + "\n");
  ASSERT_EQ(d.size(), 1u) << dump(d);
  EXPECT_EQ(d[0].path, "reference");
  EXPECT_EQ(d[0].where.line, 7);
  EXPECT_NE(d[0].message.find("is not a points file"), std::string::npos) << d[0].message;
  EXPECT_NE(d[0].message.find("points"), std::string::npos) << d[0].message;
}

TEST(ScenarioLoader_Hostile, ShippedReference_IsAccepted) {
  const std::string ref =
      std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/reference/published.yaml";
  auto sc = load_scenario_string(kHead + kWorkload + "concurrency: [1]\nreference: " + ref + "\n",
                                 "inline.yaml", shipped_catalog());
  ASSERT_TRUE(sc.has_value()) << dump(sc.error());
  EXPECT_TRUE(sc->reference.has_value());
}

// 400,000 entries: a duplicate check that searches the list for each entry takes tens of seconds
// here; one that keeps a set takes a fraction of one.
TEST(ScenarioLoader_Scale, LongRateAndConcurrencyLists_EveryDuplicateIsReported) {
  constexpr int kEntries = 400'000;
  std::string rates = "[";
  std::string conc = "[";
  for (int i = 1; i <= kEntries; ++i) {
    rates += std::to_string(i) + ", ";
    conc += std::to_string(i) + ", ";
  }
  rates += "7]";
  conc += "9]";
  auto d = scenario_errors(kHead +
                           "workloads:\n  - {kind: poisson, isl: 1024, osl: 256, rate: " + rates +
                           "}\nconcurrency: " + conc + "\n");
  EXPECT_NE(find_diag(d, "rate 7 is listed twice"), nullptr) << dump(d).substr(0, 500);
  EXPECT_NE(find_diag(d, "concurrency 9 is listed twice"), nullptr) << dump(d).substr(0, 500);
  EXPECT_EQ(d.size(), 2u);
}

}  // namespace
}  // namespace racktwin

namespace racktwin {
namespace {

using test::dump;
using test::find_diag;
using test::shipped_catalog;

const std::string kSystems = "name: l\nsystems: [h100-hgx]\nmodels: [llama-3.3-70b]\n";

std::expected<Scenario, Diagnostics> scenario(const std::string& text) {
  return load_scenario_string(text, "inline.yaml", shipped_catalog());
}

TEST(ScenarioLoader_Limits, ToolPausesBeyondTheSpan_AreAnErrorWithTheLimitAndHowToRaiseIt) {
  auto sc = scenario(kSystems +
                     "workloads:\n  - {kind: agentic, tool_pause: ['1e308 s', '1e308 s']}\n"
                     "concurrency: [1]\n");
  ASSERT_FALSE(sc.has_value());
  const Diagnostic* d = find_diag(sc.error(), "workloads[0]: this workload spans");
  ASSERT_NE(d, nullptr) << dump(sc.error());
  EXPECT_EQ(d->where.line, 5);
  EXPECT_NE(d->message.find("above the limit of 86400 s per point"), std::string::npos)
      << d->message;
  EXPECT_NE(d->hint.find("limits: {span:"), std::string::npos) << d->hint;
}

TEST(ScenarioLoader_Limits, TraceArrivingAfterTheSpan_IsAnError_UnlessTheLimitIsRaised) {
  TempFile f("t.jsonl",
             "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5}\n"
             "{\"timestamp\": 1e10, \"input_length\": 10, \"output_length\": 5}\n");
  const std::string text =
      kSystems + "workloads:\n  - {kind: trace, file: " + f.path() + "}\n";
  auto over = scenario(text);
  ASSERT_FALSE(over.has_value());
  EXPECT_NE(find_diag(over.error(), "spans 1e+07 s of simulated time"), nullptr)
      << dump(over.error());
  auto raised = scenario(text + "limits: {span: '200 day'}\n");
  EXPECT_TRUE(raised.has_value()) << dump(raised.error());
}

TEST(ScenarioLoader_Limits, RequestsPerPointAboveTheLimit_AreAnError) {
  auto sc = scenario(kSystems +
                     "workloads:\n  - {kind: poisson, isl: 64, osl: 8, rate: 1000, "
                     "requests: 2000000, warmup_requests: 0}\n");
  ASSERT_FALSE(sc.has_value());
  EXPECT_NE(find_diag(sc.error(), "issues 2e+06 requests, above the limit of 1000000"), nullptr)
      << dump(sc.error());
  EXPECT_NE(find_diag(sc.error(), "limits: {requests: 2000000}"), nullptr) << dump(sc.error());
}

TEST(ScenarioLoader_Limits, FailureAfterTheSpan_IsAnErrorAtTheFailure) {
  auto sc = scenario(kSystems + kWorkload +
                     "concurrency: [1]\nfailures: [{part: xpu, at: 1e9 s}]\n");
  ASSERT_FALSE(sc.has_value());
  const Diagnostic* d = find_diag(sc.error(), "failures[0]: this failure");
  ASSERT_NE(d, nullptr) << dump(sc.error());
  EXPECT_EQ(d->where.line, 7);
}

TEST(ScenarioLoader_Limits, LimitsKey_IsReadAndCheckedForRange) {
  auto sc = scenario(kSystems + kWorkload +
                     "concurrency: [1]\nlimits: {points: 20, requests: 50, span: '2 h'}\n");
  ASSERT_TRUE(sc.has_value()) << dump(sc.error());
  EXPECT_EQ(sc->limits.points, 20);
  EXPECT_EQ(sc->limits.requests, 50);
  EXPECT_DOUBLE_EQ(sc->limits.span_s, 7200.0);
  auto bad = scenario(kSystems + kWorkload + "concurrency: [1]\nlimits: {span: '1e300 s'}\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(find_diag(bad.error(), "limits.span: expected a span from 1 s"), nullptr)
      << dump(bad.error());
}

TEST(ScenarioLoader_Limits, SweepAboveThePointsLimit_IsADiagnosticWithTheLimit) {
  auto sc = scenario(kSystems + kWorkload + "concurrency: [1]\nlimits: {points: 3}\n");
  ASSERT_TRUE(sc.has_value()) << dump(sc.error());
  EXPECT_FALSE(sweep_limit_problem(*sc, 3).has_value());
  const auto d = sweep_limit_problem(*sc, 4);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->path, "limits.points");
  EXPECT_NE(d->message.find("4 points, above the limit of 3"), std::string::npos) << d->message;
  EXPECT_NE(d->hint.find("limits: {points: 4}"), std::string::npos) << d->hint;
}

}  // namespace
}  // namespace racktwin
