#include "app/catalog_views.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <set>

namespace racktwin::app {
namespace {

Json fields_json(const FieldRecords& fields) {
  Json arr = Json::array();
  for (const auto& f : fields) arr.push_back(to_json(f));
  return arr;
}

int assumption_count(const FieldRecords& f) {
  int n = 0;
  for (const auto& x : f) n += x.provenance.assumption ? 1 : 0;
  return n;
}

Json opt(const std::optional<Watts>& w) {
  return w ? Json(w->value()) : Json(nullptr);
}

// The engine limits a system's points default to (docs/scenarios.md, "Engine").
std::string engine_limits_text(const EngineLimits& l) {
  if (!l.any())
    return "engine limits: none in the catalog; points run with the simulation's defaults unless "
           "the scenario sets them";
  std::vector<std::string> parts;
  if (l.max_seqs) parts.push_back(fmt::format("{} sequences", *l.max_seqs));
  if (l.max_batched_tokens)
    parts.push_back(fmt::format("{} tokens per iteration", *l.max_batched_tokens));
  if (l.memory_utilization)
    parts.push_back(fmt::format("{:g}% of HBM", *l.memory_utilization * 100));
  if (l.reserve_output)
    parts.push_back(fmt::format("reserves {:g} of each output at admission", *l.reserve_output));
  if (l.dp_attention)
    parts.push_back(*l.dp_attention ? "DP attention"
                                    : "attention tensor-parallel (no DP-attention layouts within "
                                      "one scale-up domain unless named)");
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return "engine limits, as its published benchmarks ran (a scenario's engine keys override "
         "them): " + s;
}

// The settings of a system's published multi-node benchmarks (ServingStack::MultiNode).
std::string multinode_text(const ServingStack::MultiNode& m) {
  if (!m.any())
    return "multi-node benchmarks: none in the catalog; disaggregated points run with the "
           "simulation's defaults and validate sweeps them over the usual clients";
  std::vector<std::string> parts;
  if (m.concurrency)
    parts.push_back(fmt::format("up to {} clients (validate and calibrate run each "
                                "disaggregated configuration also at the clients that fill its "
                                "decode pool, up to that)",
                                *m.concurrency));
  if (m.max_seqs_per_rank)
    parts.push_back(fmt::format("{} sequences per attention rank of a decode worker",
                                *m.max_seqs_per_rank));
  return fmt::format(
      "multi-node benchmarks (disaggregated pools; a scenario's engine keys override them): {}",
      fmt::join(parts, ", "));
}

std::string count_text(double n) {
  if (n >= 1e12) return fmt::format("{:.3g}T", n / 1e12);
  if (n >= 1e9) return fmt::format("{:.4g}B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.4g}M", n / 1e6);
  return fmt::format("{:.0f}", n);
}

std::string opt_power(const std::optional<Watts>& w) {
  return w ? format(*w) : "not published";
}

std::vector<Fact> chip_facts(const Chip& c) {
  std::string peaks;
  for (const auto& [cls, v] : c.dense_peak)
    peaks += (peaks.empty() ? "" : ", ") + to_string(cls) + " " + format(v);
  return {{"HBM", format(c.hbm_capacity) + " " + c.memory_kind + " at " + format(c.hbm_bandwidth)},
          {"dense peak", peaks},
          {"rated TDP", format(c.tdp)},
          {"sustained power", opt_power(c.sustained_power)}};
}

std::vector<Section> system_sections(const System& s) {
  const Chip& c = *s.chip;
  Section comp{"Composition", {}, {}, {}, {}};
  auto add = [&](std::string label, std::string text) {
    comp.facts.push_back({std::move(label), std::move(text)});
  };
  add("chip", c.id + " (" + c.name + ")");
  add("compute rack",
      fmt::format("{} {} trays x {} XPUs = {} XPUs per rack", s.compute_trays_per_rack,
                  s.compute_tray.name, s.compute_tray.xpus, s.xpus_per_rack()));
  if (s.compute_tray.cpus > 0) add("CPUs per tray", std::to_string(s.compute_tray.cpus));
  const auto& sw = s.switches;
  if (sw.per_rack > 0)
    add("switch trays",
        fmt::format(
            "{} {} trays per rack ({}{}){}", sw.per_rack, sw.name, sw.asic,
            sw.asic_bandwidth.value() > 0 ? ", " + format(sw.asic_bandwidth) + " per ASIC" : "",
            sw.local_domain_trays + sw.uplink_trays > 0
                ? fmt::format(": {} rack-local, {} uplink", sw.local_domain_trays, sw.uplink_trays)
                : ""));
  else
    add("switch trays",
        fmt::format("none ({})",
                    to_string(s.topology) == "full_mesh" ? "direct full mesh" : "on-board switch"));
  const auto& h = s.host;
  if (h.placement == HostPlacement::separate_rack)
    add("host trays", fmt::format("{} {} per compute tray; {} {} trays per host rack",
                                  h.per_compute_tray, h.name, h.trays_per_rack, h.name));
  else
    add("host", h.name + " (" + to_string(h.placement) + ")");
  add("host contents", fmt::format("{} x {}, {} DRAM, {} per XPU host link", h.cpus, h.cpu_model,
                                   format(h.dram), format(h.link_bandwidth_per_xpu)));
  add("scale-up domain", fmt::format("{} XPUs = {} compute rack(s), {}", s.domain_xpus,
                                     s.racks_per_domain(), to_string(s.topology)));

  Section net{"Network (per XPU, per direction)", {}, {}, {1, 2}, {}};
  net.table.push_back({"tier", "XPUs", "switch hops", "bandwidth", "latency"});
  for (const auto& tier : s.scale_up)
    net.table.push_back({tier.name, std::to_string(tier.xpus), std::to_string(tier.switch_hops),
                         format(tier.bandwidth_per_xpu), format(tier.latency)});
  net.table.push_back(
      {"scale-out", "-", "-", format(s.scale_out_bandwidth_per_xpu), format(s.scale_out_latency)});

  Section power{"Power", {}, {}, {}, {}};
  const auto& p = s.power;
  if (p.compute_rack) power.facts.push_back({"compute rack", format(*p.compute_rack)});
  if (p.host_rack_provisioned)
    power.facts.push_back({"host rack", format(*p.host_rack_provisioned) + " provisioned, " +
                                            opt_power(p.host_rack_production) + " in production"});
  if (p.rack_pair) power.facts.push_back({"rack pair", format(*p.rack_pair)});
  if (p.server) power.facts.push_back({"server", format(*p.server)});
  power.facts.push_back({"all-in per XPU", p.all_in_per_xpu
                                               ? format(*p.all_in_per_xpu)
                                               : "not published (the power model computes it)"});
  power.facts.push_back({"TCO per XPU", s.tco_per_xpu ? format(*s.tco_per_xpu) : "not published"});

  std::vector<Section> out{comp, net, {"XPU", chip_facts(c), {}, {}, {}}, power};
  out.push_back({"Serving stack",
                 {},
                 {},
                 {},
                 {fmt::format("{}; MTP/speculative decoding {}; prefill/decode disaggregation {}",
                              s.serving.engine, s.serving.mtp ? "yes" : "no",
                              s.serving.disaggregation ? "yes" : "no"),
                  engine_limits_text(s.serving.engine_limits),
                  multinode_text(s.serving.multinode)}});
  if (!s.status.empty()) out.push_back({"Status", {}, {}, {}, {s.status}});
  return out;
}

std::vector<Section> model_sections(const Model& m) {
  Section arch{"Architecture", {}, {}, {}, {}};
  auto add = [&](std::string label, std::string text) {
    arch.facts.push_back({std::move(label), std::move(text)});
  };
  add("parameters",
      count_text(m.params_total) + " total, " + count_text(m.params_active) + " active per token");
  add("layers",
      std::to_string(m.layers) + (m.is_moe() ? fmt::format(" ({} dense, {} MoE)", m.dense_layers,
                                                           m.layers - m.dense_layers)
                                             : ""));
  add("hidden size", std::to_string(m.hidden));
  add("vocabulary", std::to_string(m.vocab));
  const auto& a = m.attention;
  if (a.kind == AttentionKind::gqa)
    add("attention", fmt::format("GQA: {} query heads, {} KV heads, head_dim {}", a.q_heads,
                                 a.kv_heads, a.head_dim));
  else
    add("attention",
        fmt::format("MLA: {} heads, q_lora {}, kv_lora {}, qk_nope {}, qk_rope {}, v_head {}",
                    a.q_heads, a.q_lora_rank, a.kv_lora_rank, a.qk_nope_head_dim,
                    a.qk_rope_head_dim, a.v_head_dim));
  if (a.sliding_window)
    add("sliding window", fmt::format("{} tokens on alternate layers", *a.sliding_window));
  if (a.attention_sinks) add("attention sinks", "yes");
  if (m.dense_ffn) add("dense FFN", fmt::format("{} ({})", *m.dense_ffn, m.activation));
  if (m.moe)
    add("experts",
        fmt::format("{} routed + {} shared, top-{}, expert FFN {} ({})", m.moe->routed_experts,
                    m.moe->shared_experts, m.moe->top_k, m.moe->expert_ffn, m.activation));
  if (m.mtp_layers > 0) add("MTP modules", std::to_string(m.mtp_layers));

  Section weights{"Weight variants (default: " + m.default_precision + ")", {}, {}, {}, {}};
  weights.table.push_back({"precision", "attention", "dense FFN", "routed experts",
                           "shared experts", "embeddings", "LM head", "KV cache"});
  auto dash = [](const std::string& x) { return x.empty() ? std::string("-") : x; };
  for (const auto& [p, v] : m.variants) {
    weights.table.push_back({p, v.attention, dash(v.dense_ffn), dash(v.routed_experts),
                             dash(v.shared_experts), v.embeddings, v.lm_head, v.kv_cache});
    if (!v.description.empty()) weights.notes.push_back(p + ": " + v.description);
  }
  return {arch, weights};
}

}  // namespace

Json to_json(const Provenance& p) {
  Json j;
  j["sources"] = p.sources;
  j["assumption"] = p.assumption;
  if (!p.reason.empty()) j["reason"] = p.reason;
  if (!p.note.empty()) j["note"] = p.note;
  return j;
}

Json to_json(const FieldRecord& f) {
  Json j;
  j["path"] = f.path;
  j["value"] = f.text;
  j["provenance"] = to_json(f.provenance);
  return j;
}

Json to_json(const Chip& c) {
  Json j;
  j["id"] = c.id;
  j["name"] = c.name;
  j["vendor"] = c.vendor;
  j["compute_dies"] = c.compute_dies;
  j["memory_kind"] = c.memory_kind;
  j["hbm_capacity_bytes"] = c.hbm_capacity.value();
  j["hbm_bandwidth_bytes_per_s"] = c.hbm_bandwidth.value();
  Json peak;
  for (const auto& [cls, v] : c.dense_peak) peak[to_string(cls)] = v.value();
  j["dense_peak_flops_per_s"] = peak;
  j["tdp_w"] = c.tdp.value();
  j["sustained_power_w"] = opt(c.sustained_power);
  j["fields"] = fields_json(c.fields);
  return j;
}

Json to_json(const System& s) {
  Json j;
  j["id"] = s.id;
  j["name"] = s.name;
  j["description"] = s.description;
  j["chip"] = s.chip_id;
  j["compute_tray"] = {
      {"name", s.compute_tray.name}, {"xpus", s.compute_tray.xpus}, {"cpus", s.compute_tray.cpus}};
  j["compute_trays_per_rack"] = s.compute_trays_per_rack;
  j["xpus_per_rack"] = s.xpus_per_rack();
  j["switch_trays"] = {{"name", s.switches.name},
                       {"per_rack", s.switches.per_rack},
                       {"asic", s.switches.asic},
                       {"asics_per_tray", s.switches.asics_per_tray},
                       {"asic_bandwidth_bytes_per_s", s.switches.asic_bandwidth.value()},
                       {"local_domain_trays", s.switches.local_domain_trays},
                       {"uplink_trays", s.switches.uplink_trays}};
  j["host"] = {{"name", s.host.name},
               {"placement", to_string(s.host.placement)},
               {"per_compute_tray", s.host.per_compute_tray},
               {"trays_per_rack", s.host.trays_per_rack},
               {"cpus", s.host.cpus},
               {"cpu_model", s.host.cpu_model},
               {"dram_bytes", s.host.dram.value()},
               {"link_bandwidth_per_xpu_bytes_per_s", s.host.link_bandwidth_per_xpu.value()}};
  j["domain_xpus"] = s.domain_xpus;
  j["racks_per_domain"] = s.racks_per_domain();
  j["topology"] = to_string(s.topology);
  Json tiers = Json::array();
  for (const auto& t : s.scale_up)
    tiers.push_back({{"name", t.name},
                     {"xpus", t.xpus},
                     {"switch_hops", t.switch_hops},
                     {"bandwidth_per_xpu_bytes_per_s", t.bandwidth_per_xpu.value()},
                     {"latency_s", t.latency.value()}});
  j["scale_up_tiers"] = tiers;
  j["scale_out"] = {{"bandwidth_per_xpu_bytes_per_s", s.scale_out_bandwidth_per_xpu.value()},
                    {"latency_s", s.scale_out_latency.value()}};
  j["power_w"] = {{"compute_rack", opt(s.power.compute_rack)},
                  {"host_rack_provisioned", opt(s.power.host_rack_provisioned)},
                  {"host_rack_production", opt(s.power.host_rack_production)},
                  {"rack_pair", opt(s.power.rack_pair)},
                  {"server", opt(s.power.server)},
                  {"all_in_per_xpu", opt(s.power.all_in_per_xpu)},
                  {"xpu_idle", opt(s.power.xpu_idle)},
                  {"compute_tray_overhead", opt(s.power.compute_tray_overhead)},
                  {"switch_tray", opt(s.power.switch_tray)},
                  {"host", opt(s.power.host)},
                  {"host_production", opt(s.power.host_production)}};
  for (const auto& [key, share] : {std::pair{"xpu_busy_share", s.power.xpu_busy_share},
                                   std::pair{"xpu_memory_share", s.power.xpu_memory_share},
                                   std::pair{"xpu_link_share", s.power.xpu_link_share}})
    j[key] = optional_json(share);
  j["tco_usd_per_xpu_hour"] = s.tco_per_xpu ? Json(s.tco_per_xpu->value() * 3600.0) : Json(nullptr);
  const EngineLimits& el = s.serving.engine_limits;
  j["serving"] = {{"engine", s.serving.engine},
                  {"mtp", s.serving.mtp},
                  {"disaggregation", s.serving.disaggregation},
                  {"engine_limits",
                   {{"max_seqs", optional_json(el.max_seqs)},
                    {"max_batched_tokens", optional_json(el.max_batched_tokens)},
                    {"memory_utilization", optional_json(el.memory_utilization)},
                    {"reserve_output", optional_json(el.reserve_output)},
                    {"dp_attention", optional_json(el.dp_attention)}}},
                  {"multinode",
                   {{"concurrency", optional_json(s.serving.multinode.concurrency)},
                    {"max_seqs_per_rank", optional_json(s.serving.multinode.max_seqs_per_rank)}}}};
  j["status"] = s.status;
  j["fields"] = fields_json(s.fields);
  if (s.chip) j["chip_detail"] = to_json(*s.chip);
  return j;
}

Json to_json(const Model& m) {
  Json j;
  j["id"] = m.id;
  j["name"] = m.name;
  j["params_total"] = m.params_total;
  j["params_active"] = m.params_active;
  j["layers"] = m.layers;
  j["dense_layers"] = m.dense_layers;
  j["hidden"] = m.hidden;
  j["vocab"] = m.vocab;
  const auto& a = m.attention;
  j["attention"] = {{"kind", to_string(a.kind)},
                    {"q_heads", a.q_heads},
                    {"kv_heads", a.kv_heads},
                    {"head_dim", a.head_dim},
                    {"q_lora_rank", a.q_lora_rank},
                    {"kv_lora_rank", a.kv_lora_rank},
                    {"qk_nope_head_dim", a.qk_nope_head_dim},
                    {"qk_rope_head_dim", a.qk_rope_head_dim},
                    {"v_head_dim", a.v_head_dim},
                    {"sliding_window", optional_json(a.sliding_window)},
                    {"attention_sinks", a.attention_sinks}};
  j["dense_ffn"] = optional_json(m.dense_ffn);
  if (m.moe)
    j["moe"] = {{"routed_experts", m.moe->routed_experts},
                {"shared_experts", m.moe->shared_experts},
                {"top_k", m.moe->top_k},
                {"expert_ffn", m.moe->expert_ffn}};
  j["mtp_layers"] = m.mtp_layers;
  j["default_precision"] = m.default_precision;
  Json vs;
  for (const auto& [p, v] : m.variants)
    vs[p] = {{"attention", v.attention},
             {"dense_ffn", v.dense_ffn},
             {"routed_experts", v.routed_experts},
             {"shared_experts", v.shared_experts},
             {"embeddings", v.embeddings},
             {"lm_head", v.lm_head},
             {"kv_cache", v.kv_cache},
             {"description", v.description}};
  j["variants"] = vs;
  j["fields"] = fields_json(m.fields);
  return j;
}

Json to_json(const CatalogList& l) {
  Json j;
  Json systems = Json::array(), models = Json::array(), chips = Json::array();
  for (const auto& s : l.systems) systems.push_back(to_json(*s.system));
  for (const auto& m : l.models) models.push_back(to_json(*m));
  for (const auto& c : l.chips) chips.push_back(to_json(*c));
  j["systems"] = systems;
  j["models"] = models;
  j["chips"] = chips;
  Json src = Json::array();
  for (const auto& s : l.sources)
    src.push_back({{"id", s.id}, {"citation", s.citation}, {"url", s.url}});
  j["sources"] = src;
  Json formats = Json::array();
  for (const auto& f : l.formats)
    formats.push_back({{"id", f.id},
                       {"description", f.description},
                       {"bits_per_element", f.bits_per_element},
                       {"compute", to_string(f.compute)}});
  j["formats"] = formats;
  return j;
}

CatalogList catalog_list(const Catalog& cat) {
  CatalogList l;
  for (const auto& [id, s] : cat.systems)
    l.systems.push_back({s, assumption_count(s->fields) + assumption_count(s->chip->fields)});
  for (const auto& [id, m] : cat.models) l.models.push_back(m);
  for (const auto& [id, c] : cat.chips) l.chips.push_back(c);
  for (const auto& [id, s] : cat.sources) {
    l.sources.push_back(s);
    l.sources.back().id = id;
  }
  for (const auto& [id, f] : cat.formats) {
    l.formats.push_back(f);
    l.formats.back().id = id;
  }
  l.system_table.push_back({"system", "XPU", "XPUs/tray", "trays/rack", "domain", "HBM", "HBM BW",
                            "TDP", "scale-up/XPU", "assumed"});
  for (const auto& [s, assumed] : l.systems) {
    const Chip& c = *s->chip;
    l.system_table.push_back(
        {s->id, c.id, std::to_string(s->compute_tray.xpus),
         std::to_string(s->compute_trays_per_rack), std::to_string(s->domain_xpus),
         format(c.hbm_capacity), format(c.hbm_bandwidth), format(c.tdp),
         format(s->scale_up.front().bandwidth_per_xpu), std::to_string(assumed)});
  }
  l.model_table.push_back(
      {"model", "params", "active", "layers", "attention", "experts", "default weights"});
  for (const auto& m : l.models)
    l.model_table.push_back({m->id, count_text(m->params_total), count_text(m->params_active),
                             std::to_string(m->layers), to_string(m->attention.kind),
                             m->moe ? fmt::format("{}+{} top-{}", m->moe->routed_experts,
                                                  m->moe->shared_experts, m->moe->top_k)
                                    : "dense",
                             m->default_precision});
  return l;
}

std::string to_string(EntryKind k) {
  switch (k) {
    case EntryKind::system:
      return "system";
    case EntryKind::model:
      return "model";
    case EntryKind::chip:
      return "chip";
  }
  return "?";
}

Json to_json(const CatalogEntry& e) {
  Json j = e.kind == EntryKind::system  ? to_json(*e.system)
           : e.kind == EntryKind::model ? to_json(*e.model)
                                        : to_json(*e.chip);
  j["kind"] = to_string(e.kind);
  if (e.kind == EntryKind::system) j["multinode_recipes"] = e.recipes;
  return j;
}

// The multi-node deployments published for a system (Catalog::multinode_recipes), one row each.
Section recipes_section(const Catalog& cat, const std::string& system) {
  Section out{"Published multi-node deployments (scenarios/catalog/multinode.yaml)"};
  out.table.push_back(
      {"model", "precision", "isl/osl", "serving", "decode", "batch/rank", "clients", "recipe"});
  for (const auto& r : cat.multinode_recipes)
    if (r.system == system)
      out.table.push_back({r.model, r.precision, fmt::format("{}/{}", r.isl, r.osl),
                           r.serving.label(), r.decode.label(),
                           r.max_seqs_per_rank ? std::to_string(*r.max_seqs_per_rank) : "-",
                           fmt::format("{}", fmt::join(r.concurrency, ", ")), r.provenance.note});
  if (out.table.size() == 1) {
    out.table.clear();
    out.notes.push_back(
        "none: validate and calibrate run the generic 1p1d and 2p1d pools for this system");
  } else {
    out.right = {5};
    out.notes.push_back(
        "validate and calibrate run these, at their clients, in place of the generic 1p1d and "
        "2p1d pools for a published point of the same model, precision and shape");
  }
  return out;
}

Json recipes_json(const Catalog& cat, const std::string& system) {
  Json list = Json::array();
  for (const auto& r : cat.multinode_recipes)
    if (r.system == system)
      list.push_back({{"model", r.model},
                      {"precision", r.precision},
                      {"isl", r.isl},
                      {"osl", r.osl},
                      {"serving", r.serving.label()},
                      {"decode", r.decode.label()},
                      {"max_seqs_per_rank", optional_json(r.max_seqs_per_rank)},
                      {"concurrency", r.concurrency},
                      {"sources", r.provenance.sources},
                      {"note", r.provenance.note}});
  return list;
}

Result<CatalogEntry> catalog_entry(const Catalog& cat, const std::string& id,
                                   std::optional<EntryKind> kind) {
  auto wanted = [&](EntryKind k) { return !kind || *kind == k; };
  const auto sys = wanted(EntryKind::system) ? cat.systems.find(id) : cat.systems.end();
  const auto mod = wanted(EntryKind::model) ? cat.models.find(id) : cat.models.end();
  const auto chip = wanted(EntryKind::chip) ? cat.chips.find(id) : cat.chips.end();
  CatalogEntry e;
  std::vector<std::pair<std::string, const FieldRecords*>> groups;
  if (sys != cat.systems.end()) {
    e.kind = EntryKind::system;
    e.system = sys->second;
    e.chip = sys->second->chip;
    e.chip_has_same_id = cat.chips.contains(id);
    e.heading = id + " - " + e.system->name;
    e.description = e.system->description;
    e.sections = system_sections(*e.system);
    if (e.system->serving.disaggregation) e.sections.push_back(recipes_section(cat, id));
    e.recipes = recipes_json(cat, id);
    e.figures = {{"System figures", e.system->fields},
                 {"Chip figures (" + e.chip->id + ")", e.chip->fields}};
    groups = {{"system", &e.system->fields}, {"chip", &e.chip->fields}};
  } else if (mod != cat.models.end()) {
    e.kind = EntryKind::model;
    e.model = mod->second;
    e.heading = id + " - " + e.model->name;
    e.sections = model_sections(*e.model);
    e.figures = {{"Figures", e.model->fields}};
    groups = {{"model", &e.model->fields}};
  } else if (chip != cat.chips.end()) {
    e.kind = EntryKind::chip;
    e.chip = chip->second;
    e.heading = id + " - " + e.chip->name + " (" + e.chip->vendor + ")";
    e.description = e.chip->description;
    e.sections = {{"", chip_facts(*e.chip), {}, {}, {}}};
    e.figures = {{"Figures", e.chip->fields}};
    groups = {{"chip", &e.chip->fields}};
  } else {
    std::vector<std::string> all = cat.system_ids();
    for (const auto& m : cat.model_ids()) all.push_back(m);
    for (const auto& [c, _] : cat.chips) all.push_back(c);
    return std::unexpected(
        Problem{Problem::Input::entry,
                "no system, model or chip '" + id + "' in the catalog" + did_you_mean(id, all)});
  }
  std::set<std::string> ids;
  for (const auto& [who, fields] : groups) {
    const std::string& owner = who == "chip" ? e.chip->id : id;
    for (const auto& f : *fields) {
      if (f.provenance.assumption)
        e.assumptions.push_back({who, owner, f.path, f.text, f.provenance.reason});
      ids.insert(f.provenance.sources.begin(), f.provenance.sources.end());
    }
  }
  for (const auto& s : ids)
    if (auto it = cat.sources.find(s); it != cat.sources.end()) {
      e.sources.push_back(it->second);
      e.sources.back().id = s;
    }
  return e;
}

}  // namespace racktwin::app
