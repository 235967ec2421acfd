#pragma once
// Immutable catalog types: sources, number formats, chips, systems and models.
//
// The typed fields are what the models compute with. Beside them every entry keeps `fields`, the
// record of each value as it was written in the catalog with its provenance (the source it cites,
// or the flag that it is an assumption and why), so that reports can list the assumptions a result
// rests on and `racktwin catalog show` can print every figure with its source.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/perf/efficiency.hpp"
#include "core/scenario.hpp"
#include "core/units.hpp"

namespace racktwin {

// Where a catalog value comes from.
struct Provenance {
  std::vector<std::string> sources;  // ids into Catalog::sources
  bool assumption = false;           // true when the value is not published
  std::string reason;                // why the assumed value was chosen (required if assumption)
  std::string note;                  // optional remark (a published range, a rounding, ...)
};

// One value of an entry as written in the catalog, with its provenance.
struct FieldRecord {
  std::string path;  // relative to the entry, e.g. "scale_up.tiers[0].bandwidth_per_xpu"
  std::string text;  // the value as written, e.g. "15.4 TB/s"
  Provenance provenance;
};

using FieldRecords = std::vector<FieldRecord>;

struct Source {
  std::string id;
  std::string citation;  // full reference: title, publisher or repository/path, date
  std::string url;       // may be empty
};

// Numeric precision of tensor-core arithmetic (the peak-throughput classes a chip lists).
enum class ComputeClass { fp4, fp8, bf16 };
std::string to_string(ComputeClass c);
std::optional<ComputeClass> compute_class_from_string(std::string_view s);

// How weights or KV entries are stored, e.g. mxfp4 = 4-bit elements + one 8-bit scale per 32.
struct NumberFormat {
  std::string id;
  std::string description;
  double bits_per_element = 0;  // storage including scales
  ComputeClass compute;         // the tensor-core class it computes in when the chip supports it
  FieldRecords fields;
};

struct Chip {
  std::string id;
  std::string name;
  std::string vendor;
  std::string description;
  int compute_dies = 1;
  std::string memory_kind;  // "HBM3", "HBM3e", "HBM4"
  Bytes hbm_capacity;
  BytesPerSecond hbm_bandwidth;
  std::map<ComputeClass, FlopsPerSecond> dense_peak;  // absent class = not supported natively
  Watts tdp;                                          // rated package power
  std::optional<Watts> sustained_power;               // measured sustained, where published
  FieldRecords fields;
};

// One tier of the scale-up network, from the innermost (e.g. within a rack) to the whole domain.
struct NetworkTier {
  std::string name;                  // "tray", "rack", "domain"
  int xpus = 0;                      // XPUs reachable within this tier
  int switch_hops = 0;               // switch traversals between two XPUs of this tier (0 = direct)
  BytesPerSecond bandwidth_per_xpu;  // per direction, per XPU, to peers in this tier
  Seconds latency;                   // one-way latency of a small message between two XPUs
};

enum class ScaleUpTopology { switched, full_mesh };
std::string to_string(ScaleUpTopology t);

enum class HostPlacement { separate_rack, in_compute_tray, in_server };
std::string to_string(HostPlacement p);

struct ComputeTray {
  std::string name;  // "Vindaloo", "GB200 compute tray", "HGX B200 baseboard"
  int xpus = 0;
  int cpus = 0;  // CPUs inside the compute tray (Grace on NVL72); 0 if hosts are separate
};

struct SwitchTrays {
  std::string name;  // "Chana", "NVLink switch tray"; empty when there are none
  int per_rack = 0;  // 0 for a direct mesh or an on-board switch
  std::string asic;  // "Broadcom Tomahawk 6"
  int asics_per_tray = 0;
  BytesPerSecond asic_bandwidth;  // switching capacity per ASIC
  int local_domain_trays = 0;     // trays serving the rack-local domain
  int uplink_trays = 0;           // trays joining racks into the larger domain
};

struct HostSpec {
  std::string name;  // "Katsu", "Grace", "x86 host"
  HostPlacement placement = HostPlacement::in_server;
  int per_compute_tray = 1;  // host trays per compute tray (separate_rack)
  int trays_per_rack = 0;    // host trays per host rack (separate_rack)
  int cpus = 0;              // CPUs per host tray / server
  std::string cpu_model;
  Bytes dram;                             // per host tray / server
  BytesPerSecond link_bandwidth_per_xpu;  // host <-> XPU, per direction
};

struct PowerFigures {
  // Published figures, at the input of the rack or server (after conversion losses).
  std::optional<Watts> compute_rack;           // budget of one compute (ASIC/GPU) rack
  std::optional<Watts> host_rack_provisioned;  // separate host rack: provisioned
  std::optional<Watts> host_rack_production;   // separate host rack: drawn in production
  std::optional<Watts> rack_pair;              // compute rack + host rack
  std::optional<Watts> server;                 // one 8-XPU server (HGX, MI)
  std::optional<Watts> all_in_per_xpu;         // provisioned utility power per XPU, where published

  // Component figures: DC loads at the point of use, before conversion losses. Mostly catalog
  // assumptions chosen so that the parts add up to the published figures above (docs/power.md).
  std::optional<Watts> xpu_idle;  // XPU package power with no activity
  // How the XPU's dynamic power divides (power/xpu_power.hpp): the share drawn for running a step
  // at all, and of the rest the shares memory and link activity drive (compute drives the
  // remainder); each in [0, 1], memory + link <= 1.
  std::optional<double> xpu_busy_share;
  std::optional<double> xpu_memory_share;
  std::optional<double> xpu_link_share;
  std::optional<Watts> compute_tray_overhead;  // per compute tray beyond its XPUs and hosts (NICs,
                                               // DPUs, on-board switches, fans, management), rated
  std::optional<Watts> switch_tray;            // per scale-up switch tray, rated
  std::optional<Watts> host;                   // per host part as the topology builds it (a host
                              // tray, a CPU in a compute tray, a server's host), rated
  std::optional<Watts> host_production;  // the same as drawn in production, where known
};

// The limits and admission policy of the engine a system's published results ran with (the
// scenario's `engine:` keys, docs/scenarios.md "Engine"); unset: the simulation's defaults.
struct EngineLimits {
  std::optional<int> max_seqs;
  std::optional<int> max_batched_tokens;
  std::optional<double> memory_utilization;
  std::optional<double> reserve_output;
  // Whether the engine ran attention data-parallel (SGLang --enable-dp-attention, TensorRT-LLM
  // attention DP); false: the sweeps leave DP-attention layouts out of the system's aggregated
  // replicas within one scale-up domain unless a scenario names them.
  std::optional<bool> dp_attention;
  bool any() const {
    return max_seqs || max_batched_tokens || memory_utilization || reserve_output || dp_attention;
  }
};

struct ServingStack {
  std::string engine;          // "Teacup", "TensorRT-LLM / Dynamo", "SGLang", ...
  bool mtp = true;             // multi-token prediction / speculative decoding available
  bool disaggregation = true;  // prefill/decode disaggregation available
  // The highest client concurrency the published benchmark sweeps ran on one aggregated
  // configuration within a scale-up domain of this system (InferenceX search spaces); unset: no
  // bound. `validate` and `calibrate` sweep such configurations up to it, as the measurements did.
  std::optional<int> benchmark_concurrency;
  // The same bound for one model where its search spaces ended elsewhere (by model id).
  std::map<std::string, int> benchmark_concurrency_by_model;
  // The bound for one model: its own, else the system's; unset: no bound.
  std::optional<int> benchmark_concurrency_for(const std::string& model) const {
    if (auto it = benchmark_concurrency_by_model.find(model);
        it != benchmark_concurrency_by_model.end())
      return it->second;
    return benchmark_concurrency;
  }
  // Defaults for the points of this system where a scenario does not set them: the engine
  // settings of its published single-server benchmarks, each with its source.
  EngineLimits engine_limits;
  // The published multi-node benchmarks: disaggregated prefill and decode pools, each worker an
  // engine of its own (InferenceX multi-node search spaces, Dynamo with TensorRT-LLM or SGLang).
  struct MultiNode {
    // The highest client concurrency they ran; `validate` and `calibrate` sweep disaggregated
    // points beyond their list up to it, where the decode pool holds that many. Unset: no farther.
    std::optional<int> concurrency;
    // Sequences a decode worker batches per attention rank (TensorRT-LLM max_batch_size, which
    // counts per DP-attention rank); a disaggregated replica's max_seqs where a scenario does not
    // set it: this x its TP ranks under DP attention, else this. Unset: the simulation's default.
    std::optional<int> max_seqs_per_rank;
    bool any() const { return concurrency || max_seqs_per_rank; }
  } multinode;
};

struct System {
  std::string id;
  std::string name;
  std::string description;
  std::string chip_id;
  std::shared_ptr<const Chip> chip;
  ComputeTray compute_tray;
  int compute_trays_per_rack = 0;
  SwitchTrays switches;
  HostSpec host;
  int domain_xpus = 0;  // XPUs of one scale-up domain
  ScaleUpTopology topology = ScaleUpTopology::switched;
  std::vector<NetworkTier> scale_up;  // innermost first; the last one spans the domain
  BytesPerSecond scale_out_bandwidth_per_xpu;
  Seconds scale_out_latency;
  PowerFigures power;
  std::optional<UsdPerSecond>
      tco_per_xpu;  // all-in cost of ownership per XPU-hour, where published
  ServingStack serving;
  std::string status;  // availability / schedule, free text
  FieldRecords fields;

  int xpus_per_rack() const { return compute_tray.xpus * compute_trays_per_rack; }
  int racks_per_domain() const;
  // Host parts serving one compute tray, as the topology and the power model count them: the host
  // trays of a separate host rack, one part per CPU inside a compute tray (each CPU feeds its share
  // of the tray's XPUs), or one host per server.
  int host_parts_per_compute_tray() const;
};

enum class AttentionKind { gqa, mla };
std::string to_string(AttentionKind k);

struct Attention {
  AttentionKind kind = AttentionKind::gqa;
  int q_heads = 0;
  // GQA
  int kv_heads = 0;
  int head_dim = 0;
  // MLA
  int q_lora_rank = 0;  // 0 = no low-rank query projection
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  // Sliding window (gpt-oss): every other layer, starting with layer 0, attends to at most
  // `sliding_window` previous tokens.
  std::optional<int> sliding_window;
  bool attention_sinks = false;
};

struct MoE {
  int routed_experts = 0;
  int shared_experts = 0;
  int top_k = 0;
  int expert_ffn = 0;  // intermediate size of one expert
};

// The storage format of each part of a model's weights in one precision variant.
struct WeightVariant {
  std::string precision;  // "fp4", "fp8", "bf16": the name points in published.yaml use
  std::string attention;  // format ids into Catalog::formats
  std::string dense_ffn;
  std::string routed_experts;
  std::string shared_experts;
  std::string embeddings;
  std::string lm_head;
  std::string kv_cache;
  std::string description;
};

struct Model {
  std::string id;
  std::string name;
  double params_total = 0;   // parameters, all of them
  double params_active = 0;  // parameters touched per token
  int layers = 0;
  int dense_layers = 0;  // leading layers with a dense FFN (MoE models); = layers for dense models
  int hidden = 0;
  int vocab = 0;
  std::string activation;  // "swiglu"
  Attention attention;
  std::optional<int> dense_ffn;  // intermediate size of dense FFN layers
  std::optional<MoE> moe;
  int mtp_layers = 0;  // multi-token-prediction modules shipped with the model
  bool tied_embeddings = false;
  std::string default_precision;
  std::map<std::string, WeightVariant> variants;  // by precision
  FieldRecords fields;

  bool is_moe() const { return moe.has_value(); }
};

// Efficiency parameters before calibration, shared by the systems a stated rule groups together
// (for example a chip family and software stack). The prior with id "default" applies to every
// system no other prior lists.
struct EfficiencyPrior {
  std::string id;
  std::string description;
  std::vector<std::string> systems;  // systems this prior applies to; empty for "default"
  perf::Efficiency values;
  FieldRecords fields;
};

// Efficiency parameters fitted to published points by `racktwin calibrate`, read from the
// catalog's calibration file (scenarios/catalog/calibration.yaml). docs/model.md section 13 states
// which values a system gets.
struct CalibratedEfficiency {
  std::string id;       // system id; for a family entry, the id of the prior that groups the family
  bool family = false;  // pooled from the fits of the family's systems, for members without points
  std::vector<std::string> pooled;  // family: the systems whose fits it pools
  perf::Efficiency values;
  std::vector<std::string> fitted;  // parameters the fit moved (the others keep the prior's)
  std::vector<std::string> pinned;  // fitted parameters that ended at a bound
  int points = 0;                   // points the system was fitted to
  struct Residual {
    std::string id;        // point id in the points file
    double error_pct = 0;  // 100 x (predicted - published) / published after the fit
  };
  std::vector<Residual> residuals;
  // The XPU's busy share of dynamic power fitted to the chip's measured sustained power over the
  // calibration sweeps, where the chip has one (calib/power_fit.hpp). The catalog applies it to the
  // system's power.xpu_busy_share.
  struct Power {
    double xpu_busy_share = 0;
    Watts measured;          // the chip's sustained power it was fitted to
    Watts highest;           // the most any calibration sweep point draws at that share
    std::string highest_at;  // that point
    int sweep_points = 0;
    // Set by the catalog when the chip's sustained power is no longer `measured`: why the share
    // was not applied (the system keeps its assumed share).
    std::string stale;
  };
  std::optional<Power> power;
};

// Where a calibration comes from.
struct CalibrationRecord {
  std::string file;         // the calibration file
  std::string points_file;  // the points it was fitted to, as given to racktwin calibrate
  std::string points_hash;  // their content hash ("fnv1a64:...")
  std::string date;         // YYYY-MM-DD
  std::string command;      // the command that wrote it
  double median_abs_error_pct = 0, max_abs_error_pct = 0;  // over every fitted point
};

// The efficiency parameters a computation uses for a system, and why.
struct EfficiencyChoice {
  perf::Efficiency values;
  std::string origin;  // "calibrated", "family <prior id>" or "prior <prior id>"
};

// A disaggregated deployment a system's published multi-node benchmarks ran for one model, weight
// precision and workload shape (scenarios/catalog/multinode.yaml): its prefill and decode workers
// and the client counts it ran at. `validate` and `calibrate` predict a published point of that
// group over these deployments in place of the generic disaggregated pools (calib/predict.hpp).
struct MultiNodeRecipe {
  std::string system, model, precision;
  int isl = 0, osl = 0;
  ServingMode serving;  // disaggregated; its prefill layout, when given, is the prefill workers'
  Layout decode;        // the decode workers' layout
  // Sequences a decode worker batches per attention rank (the recipe's batch); unset: the
  // system's serving.multinode.max_seqs_per_rank.
  std::optional<int> max_seqs_per_rank;
  std::vector<int> concurrency;  // the client counts it ran at, ascending
  Provenance provenance;
};

struct Catalog {
  std::map<std::string, Source> sources;
  std::map<std::string, NumberFormat> formats;
  std::map<std::string, std::shared_ptr<const Chip>> chips;
  std::map<std::string, std::shared_ptr<const System>> systems;
  std::map<std::string, std::shared_ptr<const Model>> models;
  std::map<std::string, EfficiencyPrior> efficiency_priors;
  std::optional<CalibrationRecord> calibration;
  std::map<std::string, CalibratedEfficiency> calibrated;           // by system id
  std::map<std::string, CalibratedEfficiency> calibrated_families;  // by prior id
  std::vector<MultiNodeRecipe> multinode_recipes;  // in the order the files list them
  std::vector<std::string> files;  // the YAML files it was read from

  // The prior that lists the system, else the "default" prior; nullptr when neither exists.
  const EfficiencyPrior* efficiency_prior_for(std::string_view system_id) const;
  // The system's own calibration, else its family's (the systems its prior groups), else its
  // prior; nullopt when there is none of the three.
  std::optional<EfficiencyChoice> efficiency_for(std::string_view system_id) const;

  // The multi-node deployments published for one system, model, precision and workload shape.
  std::vector<const MultiNodeRecipe*> recipes_for(std::string_view system, std::string_view model,
                                                  std::string_view precision, int isl,
                                                  int osl) const;

  const System* find_system(std::string_view id) const;
  const Model* find_model(std::string_view id) const;
  std::vector<std::string> system_ids() const;
  std::vector<std::string> model_ids() const;
};

}  // namespace racktwin
