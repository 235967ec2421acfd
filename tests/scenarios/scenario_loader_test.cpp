// The scenario loader: shipped scenarios load; each kind of mistake is reported with its line.

#include "scenarios/scenario_loader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <tuple>

#include "test_support.hpp"

namespace racktwin {
namespace {

using test::dump;
using test::find_diag;
using test::shipped_catalog;

std::string data(const std::string& name) {
  return std::string(RACKTWIN_TEST_DATA) + "/data/" + name;
}

Diagnostics errors_of(const std::string& name) {
  auto sc = load_scenario_file(data(name), shipped_catalog());
  EXPECT_FALSE(sc.has_value()) << name << " should be rejected";
  return sc ? Diagnostics{} : sc.error();
}

TEST(ScenarioLoader_Shipped, EveryShippedScenario_Loads) {
  int n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios")) {
    if (!e.is_regular_file() || e.path().extension() != ".yaml") continue;
    auto sc = load_scenario_file(e.path().string(), shipped_catalog());
    EXPECT_TRUE(sc.has_value()) << e.path() << "\n" << (sc ? "" : dump(sc.error()));
    ++n;
  }
  EXPECT_GE(n, 1);
}

TEST(ScenarioLoader_Shipped, Inferencex8k1k_IsThePublishedComparison) {
  auto sc = load_scenario_file(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/inferencex-8k1k.yaml",
                               shipped_catalog());
  ASSERT_TRUE(sc.has_value()) << dump(sc.error());
  EXPECT_EQ(sc->systems, (std::vector<std::string>{"jalapeno-a0", "gb200-nvl72", "gb300-nvl72"}));
  EXPECT_EQ(sc->models, (std::vector<std::string>{"gpt-oss-120b", "deepseek-r1", "kimi-k2.5"}));
  ASSERT_EQ(sc->workloads.size(), 1u);
  EXPECT_EQ(sc->workloads[0].inferencex.isl, 8192);
  EXPECT_EQ(sc->workloads[0].inferencex.osl, 1024);
  EXPECT_DOUBLE_EQ(sc->workloads[0].inferencex.range_ratio, 0.8);
  EXPECT_FALSE(sc->workloads[0].inferencex.mtp);
  EXPECT_EQ(sc->concurrency.front(), 1);
  EXPECT_EQ(sc->concurrency.back(), 1024);
  EXPECT_EQ(sc->concurrency.size(), 11u);
  EXPECT_FALSE(sc->text.empty());
}

TEST(ScenarioLoader_Valid, Defaults_AreApplied) {
  auto sc = load_scenario_file(data("valid-minimal.yaml"), shipped_catalog());
  ASSERT_TRUE(sc.has_value()) << dump(sc.error());
  const auto& w = sc->workloads.at(0);
  EXPECT_EQ(w.id, "isl1024-osl1024");
  EXPECT_DOUBLE_EQ(w.inferencex.range_ratio, 0.8);
  EXPECT_EQ(w.inferencex.prompts_per_client, 10);
  EXPECT_EQ(w.inferencex.warmup_per_client, 2);
  EXPECT_FALSE(w.inferencex.precision.has_value());
  EXPECT_TRUE(sc->layouts.all_valid());
  EXPECT_DOUBLE_EQ(sc->facility.pue, 1.10);
  EXPECT_NEAR(sc->facility.electricity_price.value() * kJoulesPerKwh, 0.08, 1e-12);
  EXPECT_FALSE(sc->facility.pue_given);
}

TEST(ScenarioLoader_Errors, UnknownKey_SuggestsTheKnownOne) {
  auto d = errors_of("unknown-key.yaml");
  const Diagnostic* e = find_diag(d, "unknown key 'concurency'");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_EQ(e->where.line, 6);
  EXPECT_EQ(e->where.column, 1);
  EXPECT_NE(e->hint.find("did you mean 'concurrency'"), std::string::npos);
  // The misspelt key leaves the real one missing; that is reported too.
  EXPECT_NE(find_diag(d, "missing required field 'concurrency'"), nullptr) << dump(d);
}

TEST(ScenarioLoader_Errors, BadUnit_SaysWhatWasExpected) {
  auto d = errors_of("bad-unit.yaml");
  ASSERT_EQ(d.size(), 1u) << dump(d);
  EXPECT_EQ(d[0].where.line, 8);
  EXPECT_EQ(d[0].path, "facility.power_budget");
  EXPECT_NE(d[0].message.find("unknown unit 'Q'"), std::string::npos) << d[0].message;
  EXPECT_NE(d[0].message.find("expected a power such as '700 W'"), std::string::npos)
      << d[0].message;
}

TEST(ScenarioLoader_Errors, MissingField_NamesTheKeyAndWhere) {
  auto d = errors_of("missing-field.yaml");
  ASSERT_EQ(d.size(), 1u) << dump(d);
  EXPECT_EQ(d[0].path, "workloads[0].osl");
  EXPECT_EQ(d[0].where.line, 5);
  EXPECT_NE(d[0].message.find("missing required field 'osl'"), std::string::npos);
}

TEST(ScenarioLoader_Errors, StringWhereNumberBelongs) {
  auto d = errors_of("string-for-number.yaml");
  ASSERT_EQ(d.size(), 1u) << dump(d);
  EXPECT_EQ(d[0].where.line, 6);
  EXPECT_EQ(d[0].path, "workloads[0].isl");
  EXPECT_NE(d[0].message.find("expected an integer"), std::string::npos);
  EXPECT_NE(d[0].message.find("'eight thousand'"), std::string::npos);
}

TEST(ScenarioLoader_Errors, UnknownSystem_SuggestsNearestId) {
  auto d = errors_of("unknown-system.yaml");
  ASSERT_EQ(d.size(), 1u) << dump(d);
  EXPECT_EQ(d[0].where.line, 2);
  EXPECT_EQ(d[0].path, "systems[1]");
  EXPECT_NE(d[0].message.find("unknown system id 'gb300-nvl27'"), std::string::npos);
  EXPECT_NE(d[0].hint.find("did you mean 'gb300-nvl72'"), std::string::npos);
}

TEST(ScenarioLoader_Errors, InvalidSyntax_ReportsLine) {
  auto d = errors_of("invalid-syntax.yaml");
  ASSERT_EQ(d.size(), 1u) << dump(d);
  EXPECT_NE(d[0].message.find("invalid YAML"), std::string::npos);
  EXPECT_GE(d[0].where.line, 2);
  EXPECT_LE(d[0].where.line, 3);
}

TEST(ScenarioLoader_Errors, ManyErrors_AreAllReportedAtOnce) {
  auto d = errors_of("many-errors.yaml");
  for (const char* needle :
       {"unknown system id 'jalapeno-a1'", "unknown model id 'deepseek-r2'", "found 'chatbot'",
        "workloads[1].isl", "workloads[1].range_ratio", "does not divide",
        "concurrency 1 is listed twice", "concurrency[2]", "facility.pue",
        "facility.electricity_price", "unknown key 'colour'"}) {
    EXPECT_NE(find_diag(d, needle), nullptr) << needle << "\n" << dump(d);
  }
  for (const auto& x : d) EXPECT_GT(x.where.line, 0) << x.to_string();
}

TEST(ScenarioLoader_Precision, UnknownVariant_IsRejected_KnownAccepted) {
  const std::string base =
      "name: p\nsystems: [h200-hgx]\nmodels: [gpt-oss-120b, deepseek-r1]\n"
      "workloads:\n  - {kind: inferencex, isl: 8192, osl: 1024, precision: PREC}\nconcurrency: "
      "[1]\n";
  auto with = [&](const std::string& p) {
    std::string t = base;
    t.replace(t.find("PREC"), 4, p);
    return load_scenario_string(t, "inline.yaml", shipped_catalog());
  };
  EXPECT_TRUE(with("fp4").has_value());  // both models have an fp4 variant
  auto bad = with("fp8");                // gpt-oss-120b has none
  ASSERT_FALSE(bad.has_value());
  ASSERT_NE(find_diag(bad.error(), "no 'fp8' weight variant for gpt-oss-120b"), nullptr)
      << dump(bad.error());
  EXPECT_EQ(bad.error()[0].where.line, 5);
}

TEST(ScenarioLoader_Concurrency, RangeForm_DoublesFromTo) {
  auto sc = load_scenario_string(
      "name: c\nsystems: [h100-hgx]\nmodels: [llama-3.3-70b]\nworkloads: [{isl: 1024, osl: 1024}]\n"
      "concurrency: {from: 4, to: 64}\n",
      "inline.yaml", shipped_catalog());
  ASSERT_TRUE(sc.has_value()) << dump(sc.error());
  EXPECT_EQ(sc->concurrency, (std::vector<int>{4, 8, 16, 32, 64}));
}

TEST(ScenarioLoader_Layouts, NamedLayouts_GetNamesAndReplicaSize) {
  auto sc = load_scenario_string(
      "name: l\nsystems: [gb200-nvl72]\nmodels: [deepseek-r1]\nworkloads: [{isl: 8192, osl: "
      "1024}]\n"
      "layouts:\n  replica_xpus: [8, 16]\n  named:\n    - {tp: 8, ep: 8, dp_attention: true}\n"
      "    - {name: wide, tp: 4, pp: 2, ep: 8}\nconcurrency: [1]\n",
      "inline.yaml", shipped_catalog());
  ASSERT_TRUE(sc.has_value()) << dump(sc.error());
  ASSERT_EQ(sc->layouts.named.size(), 2u);
  EXPECT_EQ(sc->layouts.named[0].name, "tp8-ep8-dpa");
  EXPECT_EQ(sc->layouts.named[1].xpus(), 8);
  EXPECT_EQ(sc->layouts.replica_xpus, (std::vector<int>{8, 16}));
}

TEST(ScenarioLoader_Files, MissingFile_IsAnError) {
  auto sc = load_scenario_file("/nonexistent/scenario.yaml", shipped_catalog());
  ASSERT_FALSE(sc.has_value());
  EXPECT_NE(sc.error()[0].message.find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace racktwin

namespace racktwin {
namespace {

Diagnostics inline_errors(const std::string& text) {
  auto sc = load_scenario_string(text, "inline.yaml", test::shipped_catalog());
  EXPECT_FALSE(sc.has_value());
  return sc ? Diagnostics{} : sc.error();
}

const std::string kHead =
    "name: x\nsystems: [gb200-nvl72]\nmodels: [deepseek-r1]\nworkloads: [{isl: 8192, osl: 1024}]\n";

TEST(ScenarioLoader_Layouts, LabelStrings_AreAccepted) {
  auto sc =
      load_scenario_string(kHead + "layouts: {named: [tp8-ep8-dpa, tp4-pp2]}\nconcurrency: 8\n",
                           "inline.yaml", test::shipped_catalog());
  ASSERT_TRUE(sc.has_value()) << test::dump(sc.error());
  ASSERT_EQ(sc->layouts.named.size(), 2u);
  EXPECT_TRUE(sc->layouts.named[0].dp_attention);
  EXPECT_EQ(sc->layouts.named[1].pp, 2);
  EXPECT_EQ(sc->concurrency, std::vector<int>{8});
  auto bad = inline_errors(kHead + "layouts: {named: [tp8-xx2]}\nconcurrency: 8\n");
  ASSERT_EQ(bad.size(), 1u) << test::dump(bad);
  EXPECT_NE(bad[0].message.find("unknown part 'xx2'"), std::string::npos);
}

TEST(ScenarioLoader_Errors, NegativeQuantity_WarmupAndDuplicateSizes_AreRejected) {
  auto d = inline_errors(kHead + "concurrency: [1]\nfacility: {electricity_price: -$0.08/kWh}\n");
  ASSERT_FALSE(d.empty());
  auto w = inline_errors(
      "name: x\nsystems: [gb200-nvl72]\nmodels: [deepseek-r1]\n"
      "workloads: [{isl: 8192, osl: 1024, prompts_per_client: 2, warmup_per_client: "
      "2}]\nconcurrency: [1]\n");
  ASSERT_NE(test::find_diag(w, "warm-up"), nullptr) << test::dump(w);
  auto r = inline_errors(kHead + "layouts: {replica_xpus: [8, 8]}\nconcurrency: [1]\n");
  ASSERT_NE(test::find_diag(r, "replica size 8 is listed twice"), nullptr) << test::dump(r);
  auto n = inline_errors(kHead + "concurrency: [1]\nfacility: {power_budget: -5 MW}\n");
  ASSERT_NE(test::find_diag(n, "of zero or more"), nullptr) << test::dump(n);
}

TEST(ScenarioLoader_Errors, UnknownKind_ReportsOnlyThat) {
  auto d = inline_errors(
      "name: x\nsystems: [gb200-nvl72]\nmodels: [deepseek-r1]\nworkloads: [{kind: agentik, isl: "
      "8192, "
      "osl: 1024}]\nconcurrency: [1]\n");
  ASSERT_FALSE(d.empty());
  EXPECT_NE(d[0].message.find("did you mean 'agentic'"), std::string::npos) << test::dump(d);
}

TEST(ScenarioLoader_Errors, Diagnostics_AreInLineOrder) {
  auto d = errors_of("many-errors.yaml");
  for (std::size_t i = 1; i < d.size(); ++i)
    EXPECT_LE(std::tie(d[i - 1].where.line, d[i - 1].where.column),
              std::tie(d[i].where.line, d[i].where.column))
        << test::dump(d);
}

}  // namespace
}  // namespace racktwin

namespace racktwin {
namespace {

TEST(ScenarioLoader_Poisson, RatesRequestsAndWarmup) {
  auto sc = load_scenario_string(
      "name: p\nsystems: [gb200-nvl72]\nmodels: [llama-3.3-70b]\n"
      "workloads: [{kind: poisson, isl: 1024, osl: 256, rate: [1, 4.5], requests: 200, "
      "warmup_requests: 20}]\n"
      "replicas: 3\nrouter: round_robin\n",
      "inline.yaml", test::shipped_catalog());
  ASSERT_TRUE(sc.has_value()) << test::dump(sc.error());  // no concurrency needed for an open loop
  const auto& w = sc->workloads.at(0);
  EXPECT_EQ(w.kind, WorkloadKind::poisson);
  EXPECT_EQ(w.inferencex.rates, (std::vector<double>{1, 4.5}));
  EXPECT_EQ(w.inferencex.requests, 200);
  EXPECT_EQ(sc->replicas, 3);
  EXPECT_EQ(sc->router, RouterPolicy::round_robin);
  auto bad = load_scenario_string(
      "name: p\nsystems: [gb200-nvl72]\nmodels: [llama-3.3-70b]\n"
      "workloads: [{kind: poisson, isl: 1024, osl: 256, requests: 10, warmup_requests: "
      "10}]\nrouter: sticky\n",
      "inline.yaml", test::shipped_catalog());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(test::find_diag(bad.error(), "missing required field 'rate'"), nullptr)
      << test::dump(bad.error());
  EXPECT_NE(test::find_diag(bad.error(), "warm-up must be fewer"), nullptr)
      << test::dump(bad.error());
  EXPECT_NE(test::find_diag(bad.error(), "found 'sticky'"), nullptr) << test::dump(bad.error());
}

}  // namespace
}  // namespace racktwin

namespace racktwin {
namespace {

TEST(ScenarioLoader_Errors, KeysOfTheOtherArrivalKind_AndDuplicateRates_AreRejected) {
  auto d = load_scenario_string(
      "name: p\nsystems: [gb200-nvl72]\nmodels: [llama-3.3-70b]\n"
      "workloads:\n  - {kind: poisson, isl: 1024, osl: 256, rate: [2, 2], prompts_per_client: 5}\n"
      "  - {isl: 1024, osl: 256, requests: 10}\nconcurrency: [1]\n",
      "inline.yaml", test::shipped_catalog());
  ASSERT_FALSE(d.has_value());
  EXPECT_NE(test::find_diag(d.error(), "rate 2 is listed twice"), nullptr) << test::dump(d.error());
  EXPECT_NE(test::find_diag(d.error(), "'prompts_per_client' applies to kind: inferencex only"),
            nullptr)
      << test::dump(d.error());
  EXPECT_NE(test::find_diag(d.error(), "'requests' applies to kind: poisson only"), nullptr)
      << test::dump(d.error());
}

}  // namespace
}  // namespace racktwin

#include "scenarios/trace_loader.hpp"

namespace racktwin {
namespace {

TEST(TraceLoader_Mooncake, ShippedExample_LoadsWithSessionsAndBlocks) {
  auto t = load_mooncake_trace(std::string(RACKTWIN_SOURCE_DIR) +
                               "/scenarios/traces/example-multiturn.jsonl");
  ASSERT_TRUE(t.has_value()) << test::dump(t.error());
  ASSERT_EQ(t->size(), 18u);
  int with_session = 0;
  for (const auto& r : *t) {
    with_session += r.session_id.empty() ? 0 : 1;
    EXPECT_EQ(static_cast<int>(r.hash_ids.size()) * 512, r.input_length);
  }
  EXPECT_EQ(with_session, 12);
  EXPECT_DOUBLE_EQ((*t)[0].timestamp_s, 0.0);
}

TEST(TraceLoader_Mooncake, EpochTimestamps_CountFromTheFirstRequest) {
  test::TempFile f("t.jsonl",
                   "{\"timestamp\": 1733100000500, \"input_length\": 10, \"output_length\": 5}\n"
                   "{\"timestamp\": 1733100000000, \"input_length\": 10, \"output_length\": 5}\n");
  auto t = load_mooncake_trace(f.path());
  ASSERT_TRUE(t.has_value()) << test::dump(t.error());
  EXPECT_DOUBLE_EQ((*t)[0].timestamp_s, 0.5);
  EXPECT_DOUBLE_EQ((*t)[1].timestamp_s, 0.0);
}

TEST(TraceLoader_Mooncake, BadLines_ReportFileLineAndField) {
  test::TempFile f(
      "t.jsonl",
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [1]}\n"
      "{\"timestamp\": -3, \"input_length\": 10, \"output_length\": 5}\n"
      "not json\n"
      "{\"timestamp\": 5, \"output_length\": 5}\n"
      "{\"timestamp\": 6, \"input_length\": 1.5, \"output_length\": 5, \"hash_ids\": [\"x\"]}\n");
  auto t = load_mooncake_trace(f.path());
  ASSERT_FALSE(t.has_value());
  const auto& d = t.error();
  auto at = [&](int line, const std::string& needle) {
    for (const auto& x : d)
      if (x.where.line == line && x.to_string().find(needle) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(at(2, "timestamp")) << test::dump(d);
  EXPECT_TRUE(at(3, "invalid JSON")) << test::dump(d);
  EXPECT_TRUE(at(4, "missing required field 'input_length'")) << test::dump(d);
  EXPECT_TRUE(at(5, "input_length")) << test::dump(d);
  EXPECT_TRUE(at(5, "hash_ids")) << test::dump(d);
}

TEST(ScenarioLoader_Trace, RelativeFile_ResolvesBesideTheScenario_AndMissingFileIsAnError) {
  auto sc =
      load_scenario_file(std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/trace-replay-example.yaml",
                         test::shipped_catalog());
  ASSERT_TRUE(sc.has_value()) << test::dump(sc.error());
  EXPECT_EQ(sc->workloads[0].kind, WorkloadKind::trace);
  EXPECT_EQ(sc->router, RouterPolicy::session_affinity);
  EXPECT_EQ(sc->workloads[0].trace.requests->size(), 18u);
  auto bad = load_scenario_string(
      "name: t\nsystems: [gb300-nvl72]\nmodels: [llama-3.3-70b]\n"
      "workloads: [{kind: trace, file: /nonexistent/trace.jsonl}]\n",
      "inline.yaml", test::shipped_catalog());
  ASSERT_FALSE(bad.has_value());
  const Diagnostic* d = test::find_diag(bad.error(), "cannot open the trace file");
  ASSERT_NE(d, nullptr) << test::dump(bad.error());
  // At the key that names the file, with the path resolved.
  EXPECT_EQ(d->where.file, "inline.yaml");
  EXPECT_EQ(d->where.line, 4);
  EXPECT_EQ(d->path, "workloads[0].file");
  EXPECT_NE(d->message.find("/nonexistent/trace.jsonl"), std::string::npos) << d->message;
}

}  // namespace
}  // namespace racktwin

namespace racktwin {
namespace {

const char* kEngineHead =
    "name: e\nsystems: [h100-hgx]\nmodels: [llama-3.3-70b]\n"
    "workloads: [{isl: 1024, osl: 128}]\nconcurrency: [1]\n";

TEST(ScenarioLoader_Engine, KeysAreRead_AbsentOnesStayUnset) {
  auto sc = load_scenario_string(
      std::string(kEngineHead) +
          "engine: {max_seqs: 256, max_batched_tokens: 8192, reserve_output: 0, prefix_cache: false}\n",
      "engine.yaml", test::shipped_catalog());
  ASSERT_TRUE(sc) << test::dump(sc.error());
  EXPECT_EQ(sc->engine.max_seqs, 256);
  EXPECT_EQ(sc->engine.max_batched_tokens, 8192);
  EXPECT_EQ(sc->engine.reserve_output, 0.0);
  EXPECT_EQ(sc->engine.prefix_cache, false);
  EXPECT_FALSE(sc->engine.memory_utilization.has_value());
}

TEST(ScenarioLoader_Engine, OutOfRangeAndUnknownKeys_AreLocatedErrors_AllAtOnce) {
  auto sc = load_scenario_string(std::string(kEngineHead) +
                                     "engine:\n  reserve_output: 1.5\n  max_seqs: 0\n"
                                     "  memory_utilisation: 0.8\n",
                                 "engine.yaml", test::shipped_catalog());
  ASSERT_FALSE(sc);
  const Diagnostics& d = sc.error();
  ASSERT_EQ(d.size(), 3u) << test::dump(d);
  EXPECT_EQ(d[0].path, "engine.reserve_output");
  EXPECT_EQ(d[0].where.line, 7);
  EXPECT_EQ(d[1].path, "engine.max_seqs");
  EXPECT_EQ(d[1].where.line, 8);
  EXPECT_NE(d[2].hint.find("did you mean 'memory_utilization'"), std::string::npos) << test::dump(d);
}

// A disaggregated serving mode may give the prefill pool a layout of its own after '/'; the
// label round-trips, and a bad layout names the part after '/'.
TEST(ServingMode, PrefillLayoutOfItsOwn_ParsesAndRoundTrips) {
  auto m = parse_serving_mode("3p1d/tp2-ep2-dpa");
  ASSERT_TRUE(m.has_value()) << m.error();
  EXPECT_EQ(m->prefill, 3);
  EXPECT_EQ(m->decode, 1);
  ASSERT_TRUE(m->prefill_layout.has_value());
  EXPECT_EQ(m->prefill_layout->tp, 2);
  EXPECT_EQ(m->prefill_layout->ep, 2);
  EXPECT_TRUE(m->prefill_layout->dp_attention);
  EXPECT_EQ(m->label(), "3p1d/tp2-ep2-dpa");
  EXPECT_EQ(parse_serving_mode("1p3d")->label(), "1p3d");
  EXPECT_FALSE(parse_serving_mode("1p3d")->prefill_layout.has_value());

  auto bad = parse_serving_mode("3p1d/tq2");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().find("prefill layout after '/'"), std::string::npos) << bad.error();
  auto empty = parse_serving_mode("3p1d/");
  ASSERT_FALSE(empty.has_value());
  auto zero = parse_serving_mode("3p0d/tp2");
  ASSERT_FALSE(zero.has_value());
  EXPECT_NE(zero.error().find("'3p0d/tp2'"), std::string::npos) << zero.error();
}

}  // namespace
}  // namespace racktwin
