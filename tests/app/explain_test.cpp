// racktwin explain as a use case: the derivation of stored metrics down to the catalog, the
// scenario's facility and the simulation's outputs, against runs written to a real results
// database.

#include "app/explain.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "db/provenance.hpp"
#include "db/store.hpp"
#include "power/power_model.hpp"
#include "sim/evaluate.hpp"
#include "test_support.hpp"

namespace racktwin::app {
namespace {

namespace fs = std::filesystem;

constexpr double kScenarioPue = 1.2;  // not the default, so a test sees where the PUE comes from

// A point as the simulation returns it: its outputs made up, its power figures computed as
// sim::simulate computes them.
sim::PointResult simulated_point(const std::string& system, int concurrency, double tps) {
  sim::PointResult r;
  r.spec.system = &test::shipped_system(system);
  r.spec.model = test::shipped_catalog().find_model("gpt-oss-120b");
  r.spec.layout.tp = 8;
  r.spec.precision = "fp4";
  r.spec.workload.isl = 8192;
  r.spec.workload.osl = 1024;
  r.spec.workload_id = "8k1k";
  r.spec.arrivals = sim::ClosedLoop{concurrency};
  r.spec.facility.pue = kScenarioPue;
  r.spec.facility.pue_given = true;
  r.xpus = 8;
  r.requests = 100;
  r.completed = 110;
  r.duration_s = 50.0;
  r.input_tokens = tps * 8 * 50.0 * 8.0 / 9.0;
  r.output_tokens = tps * 8 * 50.0 / 9.0;
  r.total_tps_per_xpu = (r.input_tokens + r.output_tokens) / r.duration_s / r.xpus;
  r.output_tps_per_xpu = r.output_tokens / r.duration_s / r.xpus;
  r.input_tps_per_xpu = r.input_tokens / r.duration_s / r.xpus;
  std::vector<double> lat;
  for (int i = 0; i < 100; ++i) lat.push_back(0.01 * (i + 1) + 1e-3 * concurrency);
  r.ttft = sim::Stats::of(lat);
  r.tpot = sim::Stats::of(lat);
  r.e2e = sim::Stats::of(lat);
  r.interactivity = 1.0 / r.tpot.median;
  r.compute_activity = 0.55;
  r.memory_activity = 0.8;
  sim::evaluate(r, *power::PowerModel::of(*r.spec.system, power::Facility::from(r.spec.facility)));
  return r;
}

// A run of four points (two Jalapeno A0, one GB200 NVL72, one HGX B200) stored in a fresh database
// and read back.
class Explain : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("racktwin-explain-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = db::Store::open((dir_ / "r.db").string(), db::Store::Mode::create);
    ASSERT_TRUE(store) << store.error();
    db::RunInfo info;
    info.scenario_name = "explain-test";
    info.scenario_file = "explain-test.yaml";
    info.scenario_text =
        "name: explain-test\nsystems: [jalapeno-a0, gb200-nvl72]\nfacility:\n  pue: 1.2\n";
    info.catalog_hash = db::catalog_hash(test::shipped_catalog());
    info.options = "{}";
    const auto id = store->begin_run(info, {});
    store->add_points(
        id, {simulated_point("jalapeno-a0", 64, 1200), simulated_point("jalapeno-a0", 256, 2500),
             simulated_point("gb200-nvl72", 64, 1800), simulated_point("b200-hgx", 64, 900)});
    store->finish_run(id, 1.0);
    run_ = *store->load(id, {.percentiles = false});
  }
  void TearDown() override { fs::remove_all(dir_); }

  Explanation explain_at(const std::string& metric, std::optional<std::int64_t> point) const {
    return explain(test::shipped_catalog(), run_, {metric, point});
  }

  fs::path dir_;
  db::StoredRun run_;
};

// Every term of the tree, depth first.
void each_term(const Term& t, const std::function<void(const Term&)>& f) {
  f(t);
  for (const auto& x : t.inputs) each_term(x, f);
}

const Term* find_term(const Term& root, const std::function<bool(const Term&)>& pred) {
  const Term* found = nullptr;
  each_term(root, [&](const Term& t) {
    if (found == nullptr && pred(t)) found = &t;
  });
  return found;
}

TEST_F(Explain, AllInPerMw_JalapenoChain_HoldsTheRatedTdpWithItsCatalogSource) {
  const Explanation e = explain_at("tps_per_allin_mw", 0);
  const Chip& chip = *test::shipped_system("jalapeno-a0").chip;
  const Term* tdp = find_term(e.term, [](const Term& t) {
    return t.origin && t.origin->kind == "catalog" && t.origin->where == "chip jalapeno-a0 tdp";
  });
  ASSERT_NE(tdp, nullptr) << e.to_json().dump(2);
  EXPECT_EQ(tdp->value, chip.tdp.value());
  EXPECT_EQ(tdp->value, 700.0);
  // The figure as written and its sources with their citations, as the catalog has them.
  const FieldRecord* field = nullptr;
  for (const auto& f : chip.fields)
    if (f.path == "tdp") field = &f;
  ASSERT_NE(field, nullptr);
  EXPECT_EQ(tdp->origin->text, field->text);
  ASSERT_EQ(tdp->origin->sources.size(), field->provenance.sources.size());
  ASSERT_FALSE(tdp->origin->sources.empty());
  for (std::size_t i = 0; i < field->provenance.sources.size(); ++i) {
    EXPECT_EQ(tdp->origin->sources[i].id, field->provenance.sources[i]);
    EXPECT_EQ(tdp->origin->sources[i].citation,
              test::shipped_catalog().sources.at(field->provenance.sources[i]).citation);
  }
  EXPECT_FALSE(tdp->origin->assumption);
}

TEST_F(Explain, AllInPerMw_StoredPoint_ExplainedValueEqualsTheStoredMetric) {
  for (std::int64_t point : {0, 1, 2, 3}) {
    const Explanation e = explain_at("tps_per_allin_mw", point);
    ASSERT_TRUE(e.stored);
    EXPECT_EQ(e.stored_as, "tps_per_allin_provisioned_mw");
    EXPECT_EQ(e.term.value,
              *run_.points[static_cast<std::size_t>(point)].metric("tps_per_allin_provisioned_mw"));
    EXPECT_TRUE(e.matches());
    EXPECT_TRUE(e.derived);
  }
}

TEST_F(Explain, EveryDerivedMetric_StoredPoint_EqualsTheStoredValue) {
  for (const auto& name : explained_metric_names()) {
    for (std::int64_t point : {0, 2, 3}) {
      const Explanation e = explain_at(name, point);
      if (!e.stored) continue;  // a new name the run does not store
      EXPECT_NEAR(e.term.value, *e.stored, 1e-9 * std::abs(*e.stored))
          << name << " at point " << point;
    }
  }
}

TEST_F(Explain, AllInPerMw_Jalapeno_AllInIsComputedFromItsItPowerAndTheScenarioPue) {
  const Explanation e = explain_at("tps_per_allin_mw", 0);
  ASSERT_EQ(e.term.inputs.size(), 2u);
  EXPECT_EQ(e.term.inputs[0].metric, "total_tps_per_xpu");
  const Term& all_in = e.term.inputs[1];
  EXPECT_NE(all_in.note.find("computed"), std::string::npos) << all_in.note;
  ASSERT_EQ(all_in.inputs.size(), 2u);
  const Term& it = all_in.inputs[0];
  const Term& pue = all_in.inputs[1];
  ASSERT_TRUE(pue.origin);
  EXPECT_EQ(pue.origin->kind, "scenario");
  EXPECT_EQ(pue.value, kScenarioPue);
  EXPECT_DOUBLE_EQ(all_in.value, it.value * pue.value);
  // The parts' shares over the conversion efficiency give the IT power.
  double load = 0, efficiency = 0;
  for (const auto& x : it.inputs)
    (x.label == "conversion efficiency" ? efficiency : load) += x.value;
  ASSERT_GT(efficiency, 0);
  EXPECT_NEAR(it.value, load / efficiency, 1e-9 * it.value);
  // The switch trays' and hosts' figures are catalog assumptions, with their reasons.
  for (const char* path :
       {"system jalapeno-a0 power.switch_tray", "system jalapeno-a0 power.host"}) {
    const Term* t =
        find_term(e.term, [&](const Term& x) { return x.origin && x.origin->where == path; });
    ASSERT_NE(t, nullptr) << path;
    EXPECT_TRUE(t->origin->assumption) << path;
    EXPECT_FALSE(t->origin->reason.empty()) << path;
  }
}

TEST_F(Explain, ScenarioWithoutFacility_DefaultPueIsUsedAndTheStoredValueNoLongerMatches) {
  db::StoredRun changed = run_;
  changed.info.scenario_text = "name: explain-test\nsystems: [jalapeno-a0, gb200-nvl72]\n";
  const Explanation e = explain(test::shipped_catalog(), changed, {"tps_per_allin_mw", 0});
  const Term* pue = find_term(e.term, [](const Term& t) { return t.label == "PUE"; });
  ASSERT_NE(pue, nullptr);
  EXPECT_EQ(pue->origin->kind, "default");
  EXPECT_EQ(pue->value, FacilitySpec{}.pue);
  EXPECT_FALSE(e.matches());  // the run was stored at PUE 1.2
}

TEST_F(Explain, CatalogChangedSinceTheRun_SaysSo) {
  EXPECT_TRUE(explain_at("tps_per_allin_mw", 0).notes.empty());
  db::StoredRun changed = run_;
  changed.info.catalog_hash = "0000000000000000";
  const Explanation e = explain(test::shipped_catalog(), changed, {"tps_per_allin_mw", 0});
  ASSERT_EQ(e.notes.size(), 1u);
  EXPECT_NE(e.notes[0].find("the catalog has changed since run"), std::string::npos);
}

TEST_F(Explain, AllInPerMw_Gb200_UsesThePublishedFigureWithItsSource) {
  const Explanation e = explain_at("tps_per_allin_mw", 2);
  const Term& all_in = e.term.inputs.at(1);
  ASSERT_TRUE(all_in.origin);
  EXPECT_EQ(all_in.origin->where, "system gb200-nvl72 power.all_in_per_xpu");
  EXPECT_EQ(all_in.value, test::shipped_system("gb200-nvl72").power.all_in_per_xpu->value());
  EXPECT_FALSE(all_in.origin->sources.empty());
  EXPECT_TRUE(all_in.inputs.empty());
}

TEST_F(Explain, RenamedMetrics_NewAndOldNames_ExplainTheSameStoredValue) {
  const Explanation old_name = explain_at("tps_per_allin_mw", 1);
  const Explanation new_name = explain_at("tps_per_allin_provisioned_mw", 1);
  EXPECT_EQ(new_name.stored_as, "tps_per_allin_provisioned_mw");
  EXPECT_EQ(old_name.stored_as, "tps_per_allin_provisioned_mw");
  EXPECT_EQ(new_name.term.value, old_name.term.value);
  const Explanation power_new = explain_at("power_all_in_operating_w", 1);
  EXPECT_EQ(power_new.stored_as, "power_all_in_operating_w");
  EXPECT_TRUE(power_new.matches());
}

TEST_F(Explain, AllInOperating_StoredPoint_EqualsThroughputOverTheOperatingPower) {
  const Explanation e = explain_at("tps_per_allin_operating_mw", 1);
  EXPECT_TRUE(e.stored);
  EXPECT_TRUE(e.matches());
  const auto& p = run_.points[1];
  EXPECT_NEAR(e.term.value,
              *p.metric("total_tps_per_xpu") / *p.metric("power_all_in_operating_w") * 1e6,
              1e-9 * e.term.value);
  EXPECT_EQ(e.term.inputs.at(1).metric, "power_all_in_operating_w");
}

TEST_F(Explain, NoPointGiven_ChoosesThePointWhereTheMetricPeaks) {
  const Explanation e = explain_at("total_tps_per_xpu", std::nullopt);
  EXPECT_TRUE(e.peak);
  EXPECT_EQ(e.compared, 4);
  EXPECT_EQ(e.point, 1);  // 2,500 tok/s/XPU
  EXPECT_EQ(explain_at("tps_per_allin_mw", std::nullopt).compared, 4);
}

TEST_F(Explain, MetricWithoutDerivation_SaysItIsASimulationOutput) {
  const Explanation e = explain_at("ttft_p99_s", 0);
  EXPECT_FALSE(e.derived);
  EXPECT_EQ(e.plain,
            "no derivation recorded for ttft_p99_s; it is a simulation output: docs/simulation.md "
            "§6, §6.1");
  EXPECT_EQ(e.term.value, *run_.points[0].metric("ttft_p99_s"));
}

TEST_F(Explain, UnknownMetric_ErrorListsTheCloseNames) {
  try {
    explain_at("tps_per_allin", 0);
    FAIL() << "an unknown metric was explained";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    const Diagnostic& d = e.diagnostics()[0];
    EXPECT_EQ(d.path, "METRIC");
    EXPECT_NE(d.message.find("no metric 'tps_per_allin'"), std::string::npos) << d.message;
    EXPECT_NE(d.hint.find("tps_per_allin_mw"), std::string::npos) << d.hint;
    EXPECT_NE(d.hint.find("tps_per_allin_operating_mw"), std::string::npos) << d.hint;
  }
}

TEST_F(Explain, MissingPoint_ErrorNamesTheRunsPoints) {
  try {
    explain_at("tps_per_allin_mw", 7);
    FAIL() << "a missing point was explained";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).path, "POINT");
    EXPECT_NE(e.diagnostics().at(0).hint.find("0 to 3"), std::string::npos);
  }
}

TEST_F(Explain, Json_SameExplanation_SameBytes) {
  const auto a = explain_at("tps_per_allin_mw", 0).to_json().dump();
  const auto b = explain_at("tps_per_allin_mw", 0).to_json().dump();
  EXPECT_EQ(a, b);
  const Json j = Json::parse(a);
  EXPECT_EQ(j["metric"], "tps_per_allin_mw");
  EXPECT_EQ(j["point"]["chosen"], "given");
  EXPECT_EQ(j["term"]["inputs"][1]["inputs"][1]["label"], "PUE");
}

}  // namespace
}  // namespace racktwin::app
