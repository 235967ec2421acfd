// The shipped catalog: it loads, has exactly the ids the rest of racktwin relies on, every number
// has provenance, and the figures agree with the reference facts they were taken from.

#include <gtest/gtest.h>

#include <set>

#include "test_support.hpp"

namespace racktwin {
namespace {

using test::shipped_catalog;

TEST(Catalog_Shipped, Loads_WithExactlyTheExpectedIds) {
  const Catalog& cat = shipped_catalog();
  const auto system_ids = cat.system_ids();
  const std::set<std::string> systems(system_ids.begin(), system_ids.end());
  EXPECT_EQ(systems,
            (std::set<std::string>{"jalapeno-a0", "jalapeno-b0", "gb200-nvl72", "gb300-nvl72",
                                   "vr200-nvl72", "b200-hgx", "b300-hgx", "h100-hgx", "h200-hgx",
                                   "mi300x-8", "mi325x-8", "mi355x-8"}));
  const auto model_ids = cat.model_ids();
  const std::set<std::string> models(model_ids.begin(), model_ids.end());
  EXPECT_EQ(models,
            (std::set<std::string>{"gpt-oss-120b", "deepseek-r1", "kimi-k2.5", "llama-3.3-70b"}));
}

TEST(Catalog_Shipped, EveryValue_HasProvenance_AndEveryAssumptionAReason) {
  const Catalog& cat = shipped_catalog();
  auto check = [&](const std::string& who, const FieldRecords& fields) {
    EXPECT_FALSE(fields.empty()) << who;
    for (const auto& f : fields) {
      const auto& p = f.provenance;
      if (p.assumption) {
        EXPECT_FALSE(p.reason.empty()) << who << " " << f.path;
      } else {
        EXPECT_FALSE(p.sources.empty()) << who << " " << f.path;
      }
      for (const auto& s : p.sources)
        EXPECT_TRUE(cat.sources.contains(s)) << who << " " << f.path << " " << s;
    }
  };
  for (const auto& [id, s] : cat.systems) check("system " + id, s->fields);
  for (const auto& [id, c] : cat.chips) check("chip " + id, c->fields);
  for (const auto& [id, m] : cat.models) check("model " + id, m->fields);
  for (const auto& [id, f] : cat.formats) check("format " + id, f.fields);
}

TEST(Catalog_Jalapeno, AsicRack_Has128XpusIn16VindalooTraysOf8) {
  for (const char* id : {"jalapeno-a0", "jalapeno-b0"}) {
    const System* s = shipped_catalog().find_system(id);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->compute_tray.name, "Vindaloo");
    EXPECT_EQ(s->compute_tray.xpus, 8);
    EXPECT_EQ(s->compute_trays_per_rack, 16);
    EXPECT_EQ(s->xpus_per_rack(), 128);
    EXPECT_EQ(s->switches.name, "Chana");
    EXPECT_EQ(s->switches.per_rack, 8);
    EXPECT_EQ(s->switches.local_domain_trays + s->switches.uplink_trays, 8);
    EXPECT_EQ(s->host.name, "Katsu");
    EXPECT_EQ(s->host.placement, HostPlacement::separate_rack);
    EXPECT_EQ(s->host.per_compute_tray, 1);
    EXPECT_EQ(s->host.trays_per_rack, 16);
    EXPECT_EQ(s->host.cpus, 2);
    EXPECT_DOUBLE_EQ(s->host.dram.value(), 1.5e12);
    EXPECT_EQ(s->domain_xpus, 2048);
    EXPECT_EQ(s->racks_per_domain(), 16);
    EXPECT_EQ(s->scale_up.back().xpus, 2048);
    EXPECT_FALSE(s->serving.mtp);
    EXPECT_FALSE(s->serving.disaggregation);
  }
}

TEST(Catalog_Jalapeno, PublishedPowerFigures_ArePresentAndSourced) {
  const System* s = shipped_catalog().find_system("jalapeno-a0");
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->power.compute_rack && s->power.host_rack_provisioned &&
              s->power.host_rack_production && s->power.rack_pair);
  EXPECT_DOUBLE_EQ(s->power.compute_rack->value(), 130e3);
  EXPECT_DOUBLE_EQ(s->power.host_rack_provisioned->value(), 50e3);
  EXPECT_DOUBLE_EQ(s->power.host_rack_production->value(), 31e3);
  EXPECT_DOUBLE_EQ(s->power.rack_pair->value(), 160e3);
  EXPECT_DOUBLE_EQ(s->chip->tdp.value(), 700.0);
  ASSERT_TRUE(s->chip->sustained_power);
  EXPECT_DOUBLE_EQ(s->chip->sustained_power->value(), 550.0);
  EXPECT_DOUBLE_EQ(s->chip->hbm_bandwidth.value(), 15.4e12);
  // The published rack figures are sourced, and so is the busy share the calibration fitted to the
  // measured sustained power (docs/model.md section 13.3); the component figures beside them are
  // assumptions.
  for (const auto& f : s->fields)
    if (f.path.rfind("power.", 0) == 0) {
      const bool published = f.path == "power.compute_rack" ||
                             f.path.rfind("power.host_rack_", 0) == 0 ||
                             f.path == "power.rack_pair" || f.path == "power.xpu_busy_share";
      EXPECT_EQ(f.provenance.assumption, !published) << f.path;
      if (f.path == "power.xpu_busy_share") {
        EXPECT_FALSE(f.provenance.sources.empty());
        EXPECT_NE(f.provenance.note.find("fitted by racktwin calibrate"), std::string::npos);
      }
    }
  // The rack pair is the ASIC rack plus the host rack in production, to within the "about".
  EXPECT_NEAR(s->power.compute_rack->value() + s->power.host_rack_production->value(),
              s->power.rack_pair->value(), 0.05 * s->power.rack_pair->value());
}

TEST(Catalog_Jalapeno, UnpublishedFigures_AreFlaggedAsAssumptions) {
  const System* s = shipped_catalog().find_system("jalapeno-a0");
  ASSERT_NE(s, nullptr);
  auto assumed = [](const FieldRecords& f, const std::string& path) {
    for (const auto& x : f)
      if (x.path == path) return x.provenance.assumption;
    ADD_FAILURE() << "no field " << path;
    return false;
  };
  EXPECT_TRUE(assumed(s->chip->fields, "hbm_capacity"));
  EXPECT_TRUE(assumed(s->chip->fields, "dense_peak.fp4"));
  EXPECT_TRUE(assumed(s->fields, "switch_trays.local_domain_trays"));
  EXPECT_TRUE(assumed(s->fields, "scale_up.tiers[0].bandwidth_per_xpu"));
  EXPECT_FALSE(assumed(s->chip->fields, "tdp"));
  // A0 compute is B0's published 13.4 PFLOPS divided by the published ~25% perf/W gain.
  const System* b0 = shipped_catalog().find_system("jalapeno-b0");
  ASSERT_NE(b0, nullptr);
  EXPECT_NEAR(b0->chip->dense_peak.at(ComputeClass::fp4).value() /
                  s->chip->dense_peak.at(ComputeClass::fp4).value(),
              1.25, 0.01);
}

struct ChipRow {
  const char* system;
  double hbm_gb, hbm_tbs, tdp_w, scale_up_gbs;
  int domain;
  double fp8_tflops;  // 0 = not listed
};

// Section 2 of the reference facts, row by row.
TEST(Catalog_Comparators, Rows_MatchTheReferenceTable) {
  const ChipRow rows[] = {
      {"h100-hgx", 80, 3.35, 700, 450, 8, 1979},    {"h200-hgx", 141, 4.8, 700, 450, 8, 1979},
      {"b200-hgx", 180, 8, 1000, 900, 8, 4500},     {"b300-hgx", 268, 8, 1400, 900, 8, 4500},
      {"gb200-nvl72", 186, 8, 1200, 900, 72, 5000}, {"gb300-nvl72", 288, 8, 1400, 900, 72, 5000},
      {"vr200-nvl72", 288, 22, 2000, 1800, 72, 0},  {"mi300x-8", 192, 5.3, 750, 448, 8, 2615},
      {"mi325x-8", 256, 6.0, 1000, 448, 8, 2615},   {"mi355x-8", 288, 8, 1400, 576, 8, 5033},
  };
  for (const auto& r : rows) {
    const System* s = shipped_catalog().find_system(r.system);
    ASSERT_NE(s, nullptr) << r.system;
    EXPECT_DOUBLE_EQ(s->chip->hbm_capacity.value(), r.hbm_gb * 1e9) << r.system;
    EXPECT_DOUBLE_EQ(s->chip->hbm_bandwidth.value(), r.hbm_tbs * 1e12) << r.system;
    EXPECT_DOUBLE_EQ(s->chip->tdp.value(), r.tdp_w) << r.system;
    EXPECT_DOUBLE_EQ(s->scale_up.back().bandwidth_per_xpu.value(), r.scale_up_gbs * 1e9)
        << r.system;
    EXPECT_EQ(s->domain_xpus, r.domain) << r.system;
    if (r.fp8_tflops > 0) {
      EXPECT_DOUBLE_EQ(s->chip->dense_peak.at(ComputeClass::fp8).value(), r.fp8_tflops * 1e12)
          << r.system;
    }
  }
}

TEST(Catalog_Comparators, Nvl72_Has18TraysOf4And9SwitchTraysPerRack) {
  for (const char* id : {"gb200-nvl72", "gb300-nvl72", "vr200-nvl72"}) {
    const System* s = shipped_catalog().find_system(id);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->compute_tray.xpus, 4) << id;
    EXPECT_EQ(s->compute_tray.cpus, 2) << id;
    EXPECT_EQ(s->compute_trays_per_rack, 18) << id;
    EXPECT_EQ(s->switches.per_rack, 9) << id;
    EXPECT_EQ(s->racks_per_domain(), 1) << id;
  }
}

TEST(Catalog_Comparators, AllInKwPerXpu_PresentWherePublished) {
  const std::pair<const char*, double> published[] = {
      {"h100-hgx", 1.73}, {"h200-hgx", 1.73},    {"b200-hgx", 2.17},
      {"b300-hgx", 2.17}, {"gb200-nvl72", 2.10}, {"gb300-nvl72", 2.10},
      {"mi300x-8", 1.79}, {"mi325x-8", 2.18},    {"mi355x-8", 2.65}};
  for (const auto& [id, kw] : published) {
    const System* s = shipped_catalog().find_system(id);
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->power.all_in_per_xpu) << id;
    EXPECT_DOUBLE_EQ(s->power.all_in_per_xpu->value(), kw * 1e3) << id;
  }
  // Not published: the power model will compute these.
  EXPECT_FALSE(shipped_catalog().find_system("jalapeno-a0")->power.all_in_per_xpu);
  EXPECT_FALSE(shipped_catalog().find_system("vr200-nvl72")->power.all_in_per_xpu);
}

TEST(Catalog_Models, Architecture_MatchesTheConfigs) {
  const Catalog& cat = shipped_catalog();
  const Model* oss = cat.find_model("gpt-oss-120b");
  ASSERT_NE(oss, nullptr);
  EXPECT_EQ(oss->layers, 36);
  EXPECT_EQ(oss->hidden, 2880);
  EXPECT_EQ(oss->attention.kind, AttentionKind::gqa);
  EXPECT_EQ(oss->attention.q_heads, 64);
  EXPECT_EQ(oss->attention.kv_heads, 8);
  EXPECT_EQ(oss->attention.head_dim, 64);
  EXPECT_EQ(oss->attention.sliding_window, 128);
  EXPECT_TRUE(oss->attention.attention_sinks);
  ASSERT_TRUE(oss->moe);
  EXPECT_EQ(oss->moe->routed_experts, 128);
  EXPECT_EQ(oss->moe->top_k, 4);
  EXPECT_EQ(oss->vocab, 201088);
  EXPECT_EQ(oss->variants.at("fp4").routed_experts, "mxfp4");
  EXPECT_EQ(oss->variants.at("fp4").attention, "bf16");
  EXPECT_DOUBLE_EQ(cat.formats.at("mxfp4").bits_per_element, 4.25);
  // KV per token per layer at BF16: 2 (K and V) x 8 heads x 64 dims x 2 bytes = 2 KiB.
  EXPECT_EQ(2 * oss->attention.kv_heads * oss->attention.head_dim * 2, 2048);

  const Model* r1 = cat.find_model("deepseek-r1");
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(r1->attention.kind, AttentionKind::mla);
  EXPECT_EQ(r1->layers, 61);
  EXPECT_EQ(r1->dense_layers, 3);
  EXPECT_EQ(r1->attention.q_heads, 128);
  EXPECT_EQ(r1->attention.kv_lora_rank + r1->attention.qk_rope_head_dim, 576);  // latent per layer
  EXPECT_EQ(r1->moe->routed_experts, 256);
  EXPECT_EQ(r1->moe->shared_experts, 1);
  EXPECT_EQ(r1->moe->top_k, 8);
  EXPECT_EQ(r1->moe->expert_ffn, 2048);
  EXPECT_EQ(r1->dense_ffn, 18432);
  EXPECT_EQ(r1->mtp_layers, 1);
  EXPECT_EQ(r1->default_precision, "fp8");
  EXPECT_TRUE(r1->variants.contains("fp4"));

  const Model* kimi = cat.find_model("kimi-k2.5");
  ASSERT_NE(kimi, nullptr);
  EXPECT_EQ(kimi->attention.q_heads, 64);
  EXPECT_EQ(kimi->moe->routed_experts, 384);
  EXPECT_EQ(kimi->dense_layers, 1);
  EXPECT_EQ(kimi->vocab, 163840);

  const Model* llama = cat.find_model("llama-3.3-70b");
  ASSERT_NE(llama, nullptr);
  EXPECT_FALSE(llama->is_moe());
  EXPECT_EQ(llama->layers, 80);
  EXPECT_EQ(llama->dense_layers, 80);
  EXPECT_EQ(llama->dense_ffn, 28672);
  EXPECT_EQ(llama->attention.head_dim, 128);
}

TEST(Catalog_Models, EveryVariantFormat_Exists) {
  const Catalog& cat = shipped_catalog();
  for (const auto& [id, m] : cat.models) {
    EXPECT_TRUE(m->variants.contains(m->default_precision)) << id;
    for (const auto& [p, v] : m->variants)
      for (const std::string* f : {&v.attention, &v.dense_ffn, &v.routed_experts, &v.shared_experts,
                                   &v.embeddings, &v.lm_head, &v.kv_cache})
        if (!f->empty()) {
          EXPECT_TRUE(cat.formats.contains(*f)) << id << " " << p << " " << *f;
        }
  }
}

TEST(Catalog_Systems, Invariants_HoldForEverySystem) {
  for (const auto& [id, s] : shipped_catalog().systems) {
    ASSERT_NE(s->chip, nullptr) << id;
    EXPECT_EQ(s->chip->id, s->chip_id) << id;
    EXPECT_GT(s->xpus_per_rack(), 0) << id;
    EXPECT_EQ(s->domain_xpus % s->compute_tray.xpus, 0) << id;
    EXPECT_EQ(s->scale_up.back().xpus, s->domain_xpus) << id;
    for (std::size_t i = 1; i < s->scale_up.size(); ++i) {
      EXPECT_GT(s->scale_up[i].xpus, s->scale_up[i - 1].xpus) << id;
      EXPECT_GE(s->scale_up[i].latency, s->scale_up[i - 1].latency) << id;
    }
    if (s->chip->sustained_power) {
      EXPECT_LE(*s->chip->sustained_power, s->chip->tdp) << id;
    }
    EXPECT_FALSE(s->chip->dense_peak.empty()) << id;
  }
}

}  // namespace
}  // namespace racktwin
