// The failure model against the field: the Llama 3 405B pre-training job on 16,384 H100 GPUs saw
// 419 unexpected interruptions in 54 days (reference specs section 6). The default part rates,
// placed on the h100-hgx topology and run through the engine with one failure interrupting the job,
// give that count within 10% (mean of 10 replications) and the breakdown by category within a few
// points. The job MTTF of the series model falls as 1 / job size. Meta's research clusters (the
// shipped rehearsal scenarios/rehearsals/meta-rsc-mttf.yaml, every rate scaled to RSC's 8-GPU job
// MTTF of 47.7 days): the 1,024-GPU job MTTF within 15% of RSC's 7.9 h.

#include <gtest/gtest.h>

#include <map>

#include "../scenarios/test_support.hpp"
#include "core/rehearsal.hpp"
#include "rehearse/engine.hpp"
#include "scenarios/rehearsal_loader.hpp"
#include "sim/serving.hpp"
#include "topology/topology.hpp"

namespace {

using namespace racktwin;
using racktwin::test::shipped_catalog;
using racktwin::test::shipped_system;

struct Field : ::testing::Test {
  topology::Topology server = topology::build(shipped_system("h100-hgx"), 1);

  rehearse::EngineInput job(int xpus, std::uint64_t seed) {
    rehearse::EngineInput in;
    in.domain = &server;
    in.domains = 2048;
    in.horizon = Seconds(54 * 86400.0);
    in.sample_every = Seconds(86400);
    in.seed = seed;
    in.classes = rehearsal_defaults().classes;
    for (auto& c : in.classes)
      if (c.part == PartClass::power_feed) c.rate.value = 0;  // none in the breakdown
    in.repair = rehearsal_defaults().repair;
    in.serving = false;
    in.job_xpus = xpus;
    return in;
  }
};

TEST_F(Field, Llama3_419InterruptionsIn54Days_Within10Percent_WithTheCategoryShares) {
  constexpr int kReps = 10;
  double total = 0;
  std::map<PartClass, double> by;
  for (int r = 0; r < kReps; ++r) {
    const auto o = rehearse::run_engine(job(16384, sim::stream_seed(405, "replication/" + std::to_string(r))));
    ASSERT_EQ(o.jobs.jobs, 1);
    total += static_cast<double>(o.jobs.interruptions);
    for (std::size_t c = 0; c < kAllPartClasses.size(); ++c) by[kAllPartClasses[c]] += o.classes[c].interruptions;
  }
  const double mean = total / kReps;
  EXPECT_NEAR(mean, 419, 41.9);
  // Published shares (Llama 3 table 5): GPU-side 196, HBM 72, software 63, network 35, host 53.
  auto share = [&](std::initializer_list<PartClass> cs) {
    double n = 0;
    for (auto c : cs) n += by[c];
    return n / total;
  };
  EXPECT_NEAR(share({PartClass::xpu}), 196.0 / 419, 0.04);
  EXPECT_NEAR(share({PartClass::hbm}), 72.0 / 419, 0.03);
  EXPECT_NEAR(share({PartClass::software}), 63.0 / 419, 0.03);
  EXPECT_NEAR(share({PartClass::link}), 35.0 / 419, 0.02);
  EXPECT_NEAR(share({PartClass::host, PartClass::cpu_dram, PartClass::psu, PartClass::compute_tray}),
              53.0 / 419, 0.03);
}

TEST_F(Field, SeriesModel_JobMttfFallsAsOneOverSize) {
  const auto small = rehearse::run_engine(job(8, 1));
  const auto large = rehearse::run_engine(job(1024, 1));
  ASSERT_GT(small.jobs.interruptions, 100);
  const double ratio = small.jobs.mttf_s / large.jobs.mttf_s;
  EXPECT_NEAR(ratio, 128, 0.15 * 128);
}

// The job MTTF in hours of `size`-GPU jobs on the shipped RSC rehearsal (its rates, repairs,
// domains and horizon; one replication: thousands of interruptions each).
double rsc_mttf_h(int size) {
  const auto r = load_rehearsal_file(
      std::string(RACKTWIN_SOURCE_DIR) + "/scenarios/rehearsals/meta-rsc-mttf.yaml", shipped_catalog());
  EXPECT_TRUE(r.has_value());
  if (!r) return 0;
  const auto server = topology::build(shipped_system(r->system), 1);
  rehearse::EngineInput in;
  in.domain = &server;
  in.domains = r->domains;
  in.horizon = r->horizon;
  in.sample_every = r->sample_every;
  in.seed = r->seed;
  in.classes = r->classes;
  in.repair = r->repair;
  in.serving = false;
  in.job_xpus = size;
  const auto o = rehearse::run_engine(in);
  EXPECT_GT(o.jobs.interruptions, 1000);
  return o.jobs.mttf_s / 3600;
}

TEST(FieldRsc, JobMttf_47_7DaysAt8Gpus_7_9HoursAt1024_Within15Percent) {
  EXPECT_NEAR(rsc_mttf_h(8) / 24, 47.7, 0.15 * 47.7);  // the figure the scale was set to
  EXPECT_NEAR(rsc_mttf_h(1024), 7.9, 0.15 * 7.9);      // predicted
}

}  // namespace
