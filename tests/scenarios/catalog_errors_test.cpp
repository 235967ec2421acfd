// Catalog loader errors: each names the file, the line, the key path and what was expected.

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace racktwin {
namespace {

using test::dump;
using test::find_diag;
using test::TempFile;

// A small valid catalog; tests replace one line to break it. Line numbers are fixed by this text.
const std::string kValid = R"(sources:
  - id: src
    citation: "a datasheet"
formats:
  - id: bf16
    bits_per_element: 16
    compute: bf16
    source: src
chips:
  - id: chip-a
    name: "Chip A"
    source: src
    hbm_capacity: 80 GB
    hbm_bandwidth: 3.35 TB/s
    dense_peak: {bf16: 989 TFLOPS}
    tdp: 700 W
systems:
  - id: sys-a
    name: "System A"
    chip: chip-a
    source: src
    compute_tray: {name: board, xpus: 8}
    compute_trays_per_rack: 4
    host: {name: host, placement: in_server, cpus: 2, dram: 2 TB, link_bandwidth_per_xpu: 64 GB/s}
    scale_up:
      domain_xpus: 8
      topology: switched
      tiers:
        - {name: server, xpus: 8, switch_hops: 1, bandwidth_per_xpu: 450 GB/s, latency: 1 us}
    scale_out: {bandwidth_per_xpu: 400 Gb/s, latency: 5 us}
models:
  - id: dense-a
    name: "Dense A"
    source: src
    params_total: 8B
    params_active: 8B
    layers: 32
    hidden: 4096
    vocab: 128256
    dense_ffn: 14336
    attention: {kind: gqa, q_heads: 32, kv_heads: 8, head_dim: 128}
    default_precision: bf16
    variants:
      bf16: {attention: bf16, dense_ffn: bf16, embeddings: bf16, lm_head: bf16, kv_cache: bf16}
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

Diagnostics load_errors(const std::string& text) {
  TempFile f("catalog.yaml", text);
  auto c = load_catalog_files({f.path()});
  EXPECT_FALSE(c.has_value()) << "expected the catalog to be rejected";
  return c ? Diagnostics{} : c.error();
}

TEST(CatalogErrors_Valid, SmallCatalog_Loads) {
  TempFile f("catalog.yaml", kValid);
  auto c = load_catalog_files({f.path()});
  ASSERT_TRUE(c.has_value()) << dump(c.error());
  EXPECT_EQ(c->systems.at("sys-a")->chip->id, "chip-a");
  EXPECT_EQ(c->models.at("dense-a")->fields.front().provenance.sources.front(), "src");
}

// A default efficiency prior with every required field and none of the optional ones
// (attn_eff, seq_overhead, request_latency), at `mfu`.
std::string prior_without_optional_fields(const std::string& mfu) {
  return R"(efficiency_priors:
  - id: default
    description: "test prior"
    mfu: {value: )" +
         mfu + R"(, assumption: true, reason: r}
    mbu: {value: 0.75, assumption: true, reason: r}
    comm_eff: {value: 0.7, assumption: true, reason: r}
    alpha: {value: 2 us, assumption: true, reason: r}
    overlap: {value: 0.0, assumption: true, reason: r}
    layer_overhead: {value: 4 us, assumption: true, reason: r}
    step_overhead: {value: 150 us, assumption: true, reason: r}
    moe_imbalance: {value: 1.25, assumption: true, reason: r}
)";
}

TEST(CatalogErrors_Efficiency, SeqOverheadIsOptional_AbsentMeansNoPerSequenceCost) {
  // Priors and calibrations written before the per-sequence host cost existed were fitted without
  // it, so an absent seq_overhead loads as 0; a present one loads with its unit.
  const std::string prior = prior_without_optional_fields("0.5");
  for (const std::string extra :
       {"", "    seq_overhead: {value: 25 us, assumption: true, reason: r}\n"}) {
    TempFile f("catalog.yaml", kValid + prior + extra);
    auto c = load_catalog_files({f.path()});
    ASSERT_TRUE(c.has_value()) << dump(c.error());
    const auto* p = c->efficiency_prior_for("sys-a");
    ASSERT_NE(p, nullptr);
    EXPECT_DOUBLE_EQ(p->values.seq_overhead.value(), extra.empty() ? 0.0 : 25e-6) << extra;
  }
  const auto bad = load_errors(kValid + prior +
                               "    seq_overhead: {value: 25 GB, assumption: true, reason: r}\n");
  EXPECT_NE(dump(bad).find("seq_overhead"), std::string::npos) << dump(bad);
}

TEST(CatalogErrors_Efficiency, AttnEffIsOptional_AbsentMeansTheAttentionCoreAtMfu) {
  // Priors and calibrations written before the attention core had its own efficiency ran it at
  // mfu, so an absent attn_eff loads as the prior's mfu; a present one loads as given, and one
  // outside (0, 1] is an error naming the field.
  const std::string prior = prior_without_optional_fields("0.45");
  for (const std::string extra :
       {"", "    attn_eff: {value: 0.65, assumption: true, reason: r}\n"}) {
    TempFile f("catalog.yaml", kValid + prior + extra);
    auto c = load_catalog_files({f.path()});
    ASSERT_TRUE(c.has_value()) << dump(c.error());
    const auto* p = c->efficiency_prior_for("sys-a");
    ASSERT_NE(p, nullptr);
    EXPECT_DOUBLE_EQ(p->values.attn_eff, extra.empty() ? 0.45 : 0.65) << extra;
  }
  const auto bad =
      load_errors(kValid + prior + "    attn_eff: {value: 1.5, assumption: true, reason: r}\n");
  EXPECT_NE(dump(bad).find("attn_eff"), std::string::npos) << dump(bad);
}

// kValid with a measured sustained power, the system's power shares and a calibration of sys-a
// whose power entry is `power` (empty: none).
std::string with_calibrated_power(const std::string& power,
                                  const std::string& system = "system: sys-a") {
  std::string text =
      replace(kValid, "    tdp: 700 W\n", "    tdp: 700 W\n    sustained_power: 550 W\n");
  text = replace(
      text, "    scale_out: {bandwidth_per_xpu: 400 Gb/s, latency: 5 us}\n",
      "    scale_out: {bandwidth_per_xpu: 400 Gb/s, latency: 5 us}\n"
      "    power: {xpu_idle: 105 W, xpu_busy_share: {value: 0.6, assumption: true, reason: r}, "
      "xpu_memory_share: 0.3, xpu_link_share: 0.1}\n");
  return text + R"(calibration:
  points_file: "p.yaml"
  points_hash: "fnv1a64:0"
  date: "2026-12-05"
  )" + (system.starts_with("system") ? "systems" : "families") +
         R"(:
    - )" +
         system + R"(
      fitted: [mfu]
      values: {mfu: 0.5, mbu: 0.75, comm_eff: 0.7, alpha: 2 us, overlap: 0, layer_overhead: 4 us, step_overhead: 150 us, moe_imbalance: 1.25, request_latency: 0 ms}
)" + power;
}

TEST(CatalogErrors_CalibratedPower, FittedShare_ReplacesTheAssumptionWithItsRecord) {
  TempFile f(
      "catalog.yaml",
      with_calibrated_power("      power: {xpu_busy_share: 0.52, measured: 550 W, highest: 550 W, "
                            "highest_at: \"m w tp8 at 64 clients\", sweep_points: 9}\n"));
  auto c = load_catalog_files({f.path()});
  ASSERT_TRUE(c.has_value()) << dump(c.error());
  const System& s = *c->systems.at("sys-a");
  EXPECT_DOUBLE_EQ(*s.power.xpu_busy_share, 0.52);
  const auto rec = std::find_if(s.fields.begin(), s.fields.end(), [](const FieldRecord& r) {
    return r.path == "power.xpu_busy_share";
  });
  ASSERT_NE(rec, s.fields.end());
  EXPECT_EQ(rec->text, "0.52");
  EXPECT_FALSE(rec->provenance.assumption);
  EXPECT_EQ(rec->provenance.sources, std::vector<std::string>{"src"});
  for (const char* part : {"fitted by racktwin calibrate", "9 calibration sweep points",
                           "m w tp8 at 64 clients", "the catalog assumed 0.6"})
    EXPECT_NE(rec->provenance.note.find(part), std::string::npos)
        << part << ": " << rec->provenance.note;
  // Without the power entry the catalog's assumption stays.
  TempFile plain("catalog.yaml", with_calibrated_power(""));
  auto p = load_catalog_files({plain.path()});
  ASSERT_TRUE(p.has_value()) << dump(p.error());
  EXPECT_DOUBLE_EQ(*p->systems.at("sys-a")->power.xpu_busy_share, 0.6);
}

TEST(CatalogErrors_CalibratedPower,
     FittedToAnotherMeasurement_IsStale_TheAssumptionStaysAndSaysWhy) {
  // A stale fit must not stop the catalog loading: racktwin calibrate has to run to refit it.
  TempFile f("catalog.yaml",
             with_calibrated_power(
                 "      power: {xpu_busy_share: 0.52, measured: 500 W, highest: 500 W}\n"));
  auto c = load_catalog_files({f.path()});
  ASSERT_TRUE(c.has_value()) << dump(c.error());
  const System& s = *c->systems.at("sys-a");
  EXPECT_DOUBLE_EQ(*s.power.xpu_busy_share, 0.6);
  const auto rec = std::find_if(s.fields.begin(), s.fields.end(), [](const FieldRecord& r) {
    return r.path == "power.xpu_busy_share";
  });
  ASSERT_NE(rec, s.fields.end());
  EXPECT_TRUE(rec->provenance.assumption);
  for (const char* part : {"catalog.yaml:55", "measured sustained power of 500 W", "has 550 W",
                           "rerun racktwin calibrate"})
    EXPECT_NE(rec->provenance.note.find(part), std::string::npos)
        << part << ": " << rec->provenance.note;
  EXPECT_FALSE(c->calibrated.at("sys-a").power->stale.empty());
  // Within the file's 6 significant digits the fit is current.
  TempFile close("catalog.yaml",
                 with_calibrated_power(
                     "      power: {xpu_busy_share: 0.52, measured: 550.001 W, highest: 550 W}\n"));
  auto k = load_catalog_files({close.path()});
  ASSERT_TRUE(k.has_value()) << dump(k.error());
  EXPECT_DOUBLE_EQ(*k->systems.at("sys-a")->power.xpu_busy_share, 0.52);
}

TEST(CatalogErrors_CalibratedPower, BadOrMisplacedEntries_AreErrors) {
  EXPECT_NE(find_diag(load_errors(with_calibrated_power(
                          "      power: {xpu_busy_share: 1.5, measured: 550 W, highest: 550 W}\n")),
                      "xpu_busy_share"),
            nullptr);
  EXPECT_NE(find_diag(load_errors(with_calibrated_power("      power: {xpu_busy_share: 0.5}\n")),
                      "measured"),
            nullptr);
  // A family pools efficiencies only; a power fit belongs to a system with a measurement.
  const auto d = load_errors(with_calibrated_power(
      "      power: {xpu_busy_share: 0.52, measured: 550 W, highest: 550 W}\n", "prior: default"));
  EXPECT_NE(find_diag(d, "families[0].power"), nullptr) << dump(d);
}

TEST(CatalogErrors_Units, BadUnit_ReportsLineAndExpectedDimension) {
  auto d = load_errors(replace(kValid, "tdp: 700 W", "tdp: 700 Q"));
  const Diagnostic* e = find_diag(d, "unknown unit 'Q'");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_EQ(e->where.line, 16);
  EXPECT_EQ(e->path, "chips[0].tdp");
  EXPECT_NE(e->message.find("expected a power"), std::string::npos);
}

TEST(CatalogErrors_Units, WrongDimension_IsReported) {
  auto d = load_errors(replace(kValid, "hbm_bandwidth: 3.35 TB/s", "hbm_bandwidth: 3.35 TB"));
  const Diagnostic* e = find_diag(d, "is a data size");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_EQ(e->where.line, 14);
}

TEST(CatalogErrors_Provenance, PlainValueWithoutEntrySource_IsError) {
  auto d = load_errors(
      replace(kValid, "    name: \"Chip A\"\n    source: src\n", "    name: \"Chip A\"\n"));
  const Diagnostic* e = find_diag(d, "value has no source");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_EQ(e->where.file.substr(e->where.file.size() - 12), "catalog.yaml");
}

TEST(CatalogErrors_Provenance, AssumptionWithoutReason_IsError) {
  auto d = load_errors(replace(kValid, "tdp: 700 W", "tdp: {value: 700 W, assumption: true}"));
  const Diagnostic* e = find_diag(d, "an assumption needs a 'reason'");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_EQ(e->where.line, 16);
}

TEST(CatalogErrors_Provenance, UnknownSourceId_SuggestsNearest) {
  auto d = load_errors(replace(kValid, "tdp: 700 W", "tdp: {value: 700 W, source: srcc}"));
  const Diagnostic* e = find_diag(d, "unknown source id 'srcc'");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_NE(e->message.find("did you mean 'src'"), std::string::npos) << e->message;
  EXPECT_EQ(e->where.line, 16);
}

TEST(CatalogErrors_References, UnknownChip_SuggestsNearest) {
  auto d = load_errors(replace(kValid, "chip: chip-a", "chip: chip-b"));
  const Diagnostic* e = find_diag(d, "unknown chip id 'chip-b'");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_NE(e->message.find("did you mean 'chip-a'"), std::string::npos);
  EXPECT_EQ(e->where.line, 20);
}

TEST(CatalogErrors_Structure, UnknownKeyAndMissingField_AreBothReported) {
  std::string text =
      replace(kValid, "    compute_trays_per_rack: 4\n", "    compute_trays_per_rak: 4\n");
  text = replace(text, "    layers: 32\n", "");
  auto d = load_errors(text);
  const Diagnostic* unknown = find_diag(d, "unknown key 'compute_trays_per_rak'");
  ASSERT_NE(unknown, nullptr) << dump(d);
  EXPECT_EQ(unknown->where.line, 23);
  EXPECT_NE(unknown->hint.find("compute_trays_per_rack"), std::string::npos);
  ASSERT_NE(find_diag(d, "missing required field 'compute_trays_per_rack'"), nullptr) << dump(d);
  ASSERT_NE(find_diag(d, "missing required field 'layers'"), nullptr) << dump(d);
}

TEST(CatalogErrors_Structure, DuplicateIdAcrossFiles_IsError) {
  TempFile a("a.yaml", kValid);
  TempFile b("b.yaml", "sources:\n  - id: src\n    citation: again\n");
  auto c = load_catalog_files({a.path(), b.path()});
  ASSERT_FALSE(c.has_value());
  const Diagnostic* e = find_diag(c.error(), "source id 'src' is defined twice");
  ASSERT_NE(e, nullptr) << dump(c.error());
  EXPECT_EQ(e->where.line, 2);
}

TEST(CatalogErrors_Structure, TextWhereNumberBelongs_IsError) {
  auto d = load_errors(replace(kValid, "layers: 32", "layers: many"));
  const Diagnostic* e = find_diag(d, "found 'many'");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_NE(e->message.find("expected an integer"), std::string::npos);
  EXPECT_EQ(e->where.line, 37);
}

TEST(CatalogErrors_Structure, TierNotSpanningDomain_IsError) {
  auto d = load_errors(replace(kValid, "domain_xpus: 8", "domain_xpus: 16"));
  ASSERT_NE(find_diag(d, "the last tier spans 8 XPUs but domain_xpus is 16"), nullptr) << dump(d);
}

// The valid catalog with a `power:` mapping added to its system (at line 31).
std::string with_power(const std::string& mapping) {
  const std::string scale_out = "    scale_out: {bandwidth_per_xpu: 400 Gb/s, latency: 5 us}\n";
  return replace(kValid, scale_out, scale_out + "    power: " + mapping + "\n");
}

TEST(CatalogErrors_Power, IdleNotBelowTheXpusMaximum_IsErrorAtItsLine) {
  auto d = load_errors(with_power("{xpu_idle: 800 W, xpu_memory_share: 0.3}"));
  const Diagnostic* e = find_diag(d, "xpu_idle 800 W is not below the chip's TDP 700 W");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_EQ(e->path, "systems[0].power.xpu_idle");
  EXPECT_EQ(e->where.line, 31);
}

TEST(CatalogErrors_Power, ShareOutOfRangeAndProductionAboveRating_AreErrors) {
  auto d = load_errors(with_power("{xpu_memory_share: 1.5, host: 1 kW, host_production: 2 kW}"));
  ASSERT_NE(find_diag(d, "power.xpu_memory_share"), nullptr) << dump(d);
  ASSERT_NE(find_diag(d, "host_production is above the rated host power"), nullptr) << dump(d);
}

TEST(CatalogErrors_Power, MemoryAndLinkSharesAboveOne_IsErrorAtTheLinkShare) {
  auto d =
      load_errors(with_power("{xpu_busy_share: 0.6, xpu_memory_share: 0.7, xpu_link_share: 0.4}"));
  const Diagnostic* e = find_diag(d, "xpu_memory_share and xpu_link_share add up to more than 1");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_EQ(e->path, "systems[0].power.xpu_link_share");
  EXPECT_EQ(e->where.line, 31);
  EXPECT_EQ(load_errors(with_power("{xpu_busy_share: 1.2}")).size(), 1u);
}

TEST(CatalogErrors_Power, UnknownPowerKey_SuggestsNearest) {
  auto d = load_errors(with_power("{switch_trays: 1 kW}"));
  const Diagnostic* e = find_diag(d, "unknown key 'switch_trays'");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_NE(e->hint.find("switch_tray"), std::string::npos) << e->hint;
}

std::string with_serving(const std::string& mapping) {
  const std::string scale_out = "    scale_out: {bandwidth_per_xpu: 400 Gb/s, latency: 5 us}\n";
  return replace(kValid, scale_out, scale_out + "    serving: " + mapping + "\n");
}

// Whether sys-a's field at `path` is flagged as an assumption with this reason.
bool flagged_assumption(const Catalog& c, const std::string& path, const std::string& reason) {
  for (const auto& r : c.systems.at("sys-a")->fields)
    if (r.path == path) return r.provenance.assumption && r.provenance.reason == reason;
  return false;
}

TEST(CatalogErrors_Serving, EngineLimits_AreReadWithTheirProvenance) {
  TempFile f("catalog.yaml",
             with_serving("{engine: SGLang, engine_limits: {max_seqs: 256, reserve_output: "
                          "{value: 0.1, assumption: true, reason: \"floor of the ratio\"}}}"));
  auto c = load_catalog_files({f.path()});
  ASSERT_TRUE(c.has_value()) << dump(c.error());
  const EngineLimits& l = c->systems.at("sys-a")->serving.engine_limits;
  EXPECT_EQ(l.max_seqs, 256);
  EXPECT_EQ(l.reserve_output, 0.1);
  EXPECT_FALSE(l.max_batched_tokens || l.memory_utilization);
  EXPECT_TRUE(flagged_assumption(*c, "serving.engine_limits.reserve_output", "floor of the ratio"));
}

TEST(CatalogErrors_Serving, DpAttentionLimit_IsAFlagWithProvenance) {
  TempFile f("catalog.yaml",
             with_serving("{engine_limits: {dp_attention: {value: false, assumption: true, "
                          "reason: \"the launch script runs plain TP\"}}}"));
  auto c = load_catalog_files({f.path()});
  ASSERT_TRUE(c.has_value()) << dump(c.error());
  const EngineLimits& l = c->systems.at("sys-a")->serving.engine_limits;
  EXPECT_EQ(l.dp_attention, false);
  EXPECT_TRUE(l.any());
  EXPECT_TRUE(flagged_assumption(*c, "serving.engine_limits.dp_attention",
                                 "the launch script runs plain TP"));
  // Not a flag: an error at its line that says what it expects.
  auto d = load_errors(with_serving("{engine_limits: {dp_attention: {value: 3, source: s1}}}"));
  const Diagnostic* e = find_diag(d, "serving.engine_limits.dp_attention");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_EQ(e->where.line, 31);
}

TEST(CatalogErrors_Serving, MultiNodeSettings_AreReadWithTheirProvenance_BadOnesAtTheirLine) {
  TempFile f("catalog.yaml",
             with_serving("{engine: Dynamo, multinode: {concurrency: {value: 8192, source: src}, "
                          "max_seqs_per_rank: {value: 512, assumption: true, reason: \"held "
                          "4,096 clients on 8 ranks\"}}}"));
  auto c = load_catalog_files({f.path()});
  ASSERT_TRUE(c.has_value()) << dump(c.error());
  const auto& m = c->systems.at("sys-a")->serving.multinode;
  EXPECT_EQ(m.concurrency, 8192);
  EXPECT_EQ(m.max_seqs_per_rank, 512);
  EXPECT_TRUE(flagged_assumption(*c, "serving.multinode.max_seqs_per_rank",
                                 "held 4,096 clients on 8 ranks"));
  auto d = load_errors(with_serving("{multinode: {concurrency: 0, max_seqs: 3}}"));
  const Diagnostic* e = find_diag(d, "serving.multinode.concurrency");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_EQ(e->where.line, 31);
  ASSERT_NE(find_diag(d, "max_seqs"), nullptr) << dump(d);
  EXPECT_EQ(d.size(), 2u) << dump(d);
}

// A model whose single-node search spaces ended elsewhere has its own bound; the others keep the
// system's. An unknown model id and a bad count are errors at their line.
TEST(CatalogErrors_Serving, BenchmarkConcurrencyByModel_OverridesTheSystemsBoundForThatModel) {
  TempFile f("catalog.yaml",
             with_serving("{benchmark_concurrency: {value: 256, source: src}, "
                          "benchmark_concurrency_by_model: {dense-a: {value: 64, source: src, "
                          "note: \"its search spaces end at 64\"}}}"));
  auto c = load_catalog_files({f.path()});
  ASSERT_TRUE(c.has_value()) << dump(c.error());
  const ServingStack& s = c->systems.at("sys-a")->serving;
  EXPECT_EQ(s.benchmark_concurrency_for("dense-a"), 64);
  EXPECT_EQ(s.benchmark_concurrency_for("other"), 256);
  auto d = load_errors(with_serving("{benchmark_concurrency_by_model: {dense-b: 64, dense-a: 0}}"));
  const Diagnostic* unknown = find_diag(d, "unknown model id 'dense-b'");
  ASSERT_NE(unknown, nullptr) << dump(d);
  EXPECT_EQ(unknown->where.line, 31);
  const Diagnostic* zero = find_diag(d, "benchmark_concurrency_by_model.dense-a");
  ASSERT_NE(zero, nullptr) << dump(d);
  EXPECT_EQ(zero->where.line, 31);  // A key that is not a model id is an error at its line, not a crash.
  auto odd = load_errors(with_serving("{benchmark_concurrency_by_model: {[a, b]: 64}}"));
  ASSERT_FALSE(odd.empty());
  EXPECT_EQ(odd.front().where.line, 31) << dump(odd);
}

TEST(CatalogErrors_Serving, EngineLimitOutOfRangeAndUnknownKey_AreErrorsAtTheirLine) {
  auto d = load_errors(with_serving("{engine_limits: {memory_utilization: 1.5, max_seq: 3}}"));
  const Diagnostic* e = find_diag(d, "serving.engine_limits.memory_utilization");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_EQ(e->where.line, 31);
  ASSERT_NE(find_diag(d, "max_seq"), nullptr) << dump(d);
  EXPECT_EQ(d.size(), 2u) << dump(d);
}

TEST(CatalogErrors_Syntax, InvalidYaml_ReportsLine) {
  auto d = load_errors(replace(kValid, "    name: \"System A\"", "    name: \"System A"));
  ASSERT_EQ(d.size(), 1u) << dump(d);
  EXPECT_NE(d[0].message.find("invalid YAML"), std::string::npos);
  EXPECT_GT(d[0].where.line, 0);
}

TEST(CatalogErrors_Files, MissingDirectory_IsError) {
  auto c = load_catalog_dir("/nonexistent/racktwin/catalog");
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error()[0].message.find("not a catalog directory"), std::string::npos);
}

// The multi-node deployments a published benchmark ran (scenarios/catalog/multinode.yaml).
TEST(CatalogErrors_Recipes, Recipe_LoadsWithItsPoolsClientsAndSource) {
  TempFile f("catalog.yaml",
             kValid + "multinode_recipes:\n"
                      "  - {system: sys-a, model: dense-a, precision: bf16, isl: 1024, osl: 1024, "
                      "serving: 2p1d/tp2, decode: tp4, max_seqs_per_rank: 64, concurrency: [512, "
                      "128], source: src, note: \"ctx2_gen1_tp4_batch64\"}\n");
  auto c = load_catalog_files({f.path()});
  ASSERT_TRUE(c.has_value()) << dump(c.error());
  ASSERT_EQ(c->multinode_recipes.size(), 1u);
  const MultiNodeRecipe& r = c->multinode_recipes.front();
  EXPECT_EQ(r.serving.label(), "2p1d/tp2");
  EXPECT_EQ(r.decode.label(), "tp4");
  EXPECT_EQ(r.max_seqs_per_rank, 64);
  EXPECT_EQ(r.concurrency, (std::vector<int>{128, 512}));
  EXPECT_EQ(r.provenance.sources, std::vector<std::string>{"src"});
  EXPECT_EQ(r.provenance.note, "ctx2_gen1_tp4_batch64");
  EXPECT_EQ(c->recipes_for("sys-a", "dense-a", "bf16", 1024, 1024).size(), 1u);
  EXPECT_TRUE(c->recipes_for("sys-a", "dense-a", "bf16", 8192, 1024).empty());
}

TEST(CatalogErrors_Recipes, EveryBadRecipe_IsReportedAtItsLine_AllAtOnce) {
  const std::string head = "  - {system: sys-a, model: dense-a, precision: bf16, isl: 1024, osl: 1024, ";
  const std::string tail = ", source: src}\n";
  auto d = load_errors(
      kValid + "multinode_recipes:\n" +
      "  - {system: sys-b, model: dense-a, precision: bf16, isl: 1024, osl: 1024, serving: 1p1d/tp4, "
      "decode: tp4, concurrency: [8]" + tail +                                       // line 46
      "  - {system: sys-a, model: dense-a, precision: fp8, isl: 1024, osl: 1024, serving: 1p1d/tp4, "
      "decode: tp4, concurrency: [8]" + tail +                                       // line 47
      head + "serving: aggregated, decode: tp4, concurrency: [8]" + tail +         // line 48
      head + "serving: 1p1d/tp4, decode: tq4, concurrency: [8]" + tail +                // line 49
      head + "serving: 1p1d/tp4, decode: tp4, concurrency: [8, 8]" + tail +             // line 50
      head + "serving: 1p1d/tp4, decode: tp4, concurrency: [8]}\n" +                    // line 51
      "  - {system: sys-a, model: nope, precision: bf16, isl: 1024, osl: 1024, serving: 1p1d/tp4, "
      "decode: tp4, concurrency: [8]" + tail);                                       // line 52
  auto at = [&](const std::string& needle, int line) {
    const Diagnostic* e = find_diag(d, needle);
    ASSERT_NE(e, nullptr) << needle << "\n" << dump(d);
    EXPECT_EQ(e->where.line, line) << needle;
    EXPECT_FALSE(e->hint.empty()) << needle;
  };
  at("unknown system id 'sys-b'", 46);
  at("no precision 'fp8'", 47);
  at("not aggregated", 48);
  at("multinode_recipes[3].decode", 49);
  at("listed twice", 50);
  at("multinode_recipes[5]", 51);
  at("unknown model id 'nope'", 52);
  EXPECT_EQ(d.size(), 7u) << dump(d);
}

// A recipe names its prefill workers' layout, and its system must offer disaggregation.
TEST(CatalogErrors_Recipes, NoPrefillLayoutOrNoDisaggregation_AreErrorsAtTheirLine) {
  const std::string recipe =
      "multinode_recipes:\n"
      "  - {system: sys-a, model: dense-a, precision: bf16, isl: 1024, osl: 1024, serving: %s, "
      "decode: tp4, concurrency: [8], source: src}\n";
  auto with = [&](const std::string& base, const std::string& serving) {
    std::string r = recipe;
    r.replace(r.find("%s"), 2, serving);
    return base + r;
  };
  auto d = load_errors(with(kValid, "2p1d"));
  const Diagnostic* e = find_diag(d, "names its prefill workers' layout");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_EQ(e->where.line, 46);
  EXPECT_NE(e->hint.find("2p1d/"), std::string::npos) << e->hint;
  EXPECT_EQ(d.size(), 1u) << dump(d);
  auto no_disagg = load_errors(with(with_serving("{disaggregation: false}"), "2p1d/tp2"));
  e = find_diag(no_disagg, "would never run");
  ASSERT_NE(e, nullptr) << dump(no_disagg);
  EXPECT_EQ(e->where.line, 47);
  EXPECT_EQ(no_disagg.size(), 1u) << dump(no_disagg);
}

}  // namespace
}  // namespace racktwin
