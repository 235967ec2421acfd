#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/commands.hpp"
#include "cli/table.hpp"

namespace racktwin::cli {
namespace {

using json = nlohmann::ordered_json;

std::string count_text(double n) {
  if (n >= 1e12) return fmt::format("{:.3g}T", n / 1e12);
  if (n >= 1e9) return fmt::format("{:.4g}B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.4g}M", n / 1e6);
  return fmt::format("{:.0f}", n);
}

std::string provenance_text(const Provenance& p) {
  std::string s;
  if (p.assumption) {
    s = "ASSUMPTION";
  } else {
    for (const auto& id : p.sources) s += (s.empty() ? "" : ", ") + id;
  }
  if (!p.note.empty()) s += " (" + p.note + ")";
  return s;
}

json provenance_json(const Provenance& p) {
  json j;
  j["sources"] = p.sources;
  j["assumption"] = p.assumption;
  if (!p.reason.empty()) j["reason"] = p.reason;
  if (!p.note.empty()) j["note"] = p.note;
  return j;
}

json fields_json(const FieldRecords& fields) {
  json arr = json::array();
  for (const auto& f : fields) {
    json j;
    j["path"] = f.path;
    j["value"] = f.text;
    j["provenance"] = provenance_json(f.provenance);
    arr.push_back(j);
  }
  return arr;
}

void print_fields(const std::string& title, const FieldRecords& fields) {
  Table t({"field", "value", "source"});
  for (const auto& f : fields) t.add({f.path, f.text, provenance_text(f.provenance)});
  fmt::print("\n{}\n{}", title, t.render());
}

void collect_sources(const FieldRecords& fields, std::set<std::string>& ids) {
  for (const auto& f : fields)
    for (const auto& s : f.provenance.sources) ids.insert(s);
}

// Prints the assumptions of one or more entries; returns how many there were.
int print_assumptions(const std::vector<std::pair<std::string, const FieldRecords*>>& groups) {
  int n = 0;
  std::string body;
  for (const auto& [who, fields] : groups) {
    for (const auto& f : *fields) {
      if (!f.provenance.assumption) continue;
      ++n;
      body += fmt::format("  - {} {} = {}: {}\n", who, f.path, f.text, f.provenance.reason);
    }
  }
  fmt::print("\nAssumptions ({}; not published, change them in the catalog YAML)\n{}", n,
             n == 0 ? "  none\n" : body);
  return n;
}

void print_sources(const Catalog& cat, const std::set<std::string>& ids) {
  fmt::print("\nSources\n");
  for (const auto& id : ids) {
    auto it = cat.sources.find(id);
    if (it == cat.sources.end()) continue;
    fmt::print("  {}: {}{}\n", id, it->second.citation,
               it->second.url.empty() ? "" : " <" + it->second.url + ">");
  }
}

std::string peaks_text(const Chip& c) {
  std::string s;
  for (const auto& [cls, v] : c.dense_peak)
    s += (s.empty() ? "" : ", ") + to_string(cls) + " " + format(v);
  return s;
}

int assumption_count(const FieldRecords& f) {
  int n = 0;
  for (const auto& x : f) n += x.provenance.assumption ? 1 : 0;
  return n;
}

std::string opt_power(const std::optional<Watts>& w) {
  return w ? format(*w) : "not published";
}

json chip_json(const Chip& c) {
  json j;
  j["id"] = c.id;
  j["name"] = c.name;
  j["vendor"] = c.vendor;
  j["compute_dies"] = c.compute_dies;
  j["memory_kind"] = c.memory_kind;
  j["hbm_capacity_bytes"] = c.hbm_capacity.value();
  j["hbm_bandwidth_bytes_per_s"] = c.hbm_bandwidth.value();
  json peak;
  for (const auto& [cls, v] : c.dense_peak) peak[to_string(cls)] = v.value();
  j["dense_peak_flops_per_s"] = peak;
  j["tdp_w"] = c.tdp.value();
  j["sustained_power_w"] = c.sustained_power ? json(c.sustained_power->value()) : json(nullptr);
  j["fields"] = fields_json(c.fields);
  return j;
}

json system_json(const System& s) {
  json j;
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
  json tiers = json::array();
  for (const auto& t : s.scale_up)
    tiers.push_back({{"name", t.name},
                     {"xpus", t.xpus},
                     {"switch_hops", t.switch_hops},
                     {"bandwidth_per_xpu_bytes_per_s", t.bandwidth_per_xpu.value()},
                     {"latency_s", t.latency.value()}});
  j["scale_up_tiers"] = tiers;
  j["scale_out"] = {{"bandwidth_per_xpu_bytes_per_s", s.scale_out_bandwidth_per_xpu.value()},
                    {"latency_s", s.scale_out_latency.value()}};
  auto opt = [](const std::optional<Watts>& w) { return w ? json(w->value()) : json(nullptr); };
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
  j["xpu_memory_share"] =
      s.power.xpu_memory_share ? json(*s.power.xpu_memory_share) : json(nullptr);
  j["tco_usd_per_xpu_hour"] = s.tco_per_xpu ? json(s.tco_per_xpu->value() * 3600.0) : json(nullptr);
  j["serving"] = {{"engine", s.serving.engine},
                  {"mtp", s.serving.mtp},
                  {"disaggregation", s.serving.disaggregation}};
  j["status"] = s.status;
  j["fields"] = fields_json(s.fields);
  if (s.chip) j["chip_detail"] = chip_json(*s.chip);
  return j;
}

json model_json(const Model& m) {
  json j;
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
                    {"sliding_window", a.sliding_window ? json(*a.sliding_window) : json(nullptr)},
                    {"attention_sinks", a.attention_sinks}};
  j["dense_ffn"] = m.dense_ffn ? json(*m.dense_ffn) : json(nullptr);
  if (m.moe)
    j["moe"] = {{"routed_experts", m.moe->routed_experts},
                {"shared_experts", m.moe->shared_experts},
                {"top_k", m.moe->top_k},
                {"expert_ffn", m.moe->expert_ffn}};
  j["mtp_layers"] = m.mtp_layers;
  j["default_precision"] = m.default_precision;
  json vs;
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

void show_system(const Catalog& cat, const System& s) {
  const Chip& c = *s.chip;
  fmt::print("{} - {}\n", s.id, s.name);
  if (!s.description.empty()) fmt::print("  {}\n", s.description);

  fmt::print("\nComposition\n");
  fmt::print("  chip              {} ({})\n", c.id, c.name);
  fmt::print("  compute rack      {} {} trays x {} XPUs = {} XPUs per rack\n",
             s.compute_trays_per_rack, s.compute_tray.name, s.compute_tray.xpus, s.xpus_per_rack());
  if (s.compute_tray.cpus > 0) fmt::print("  CPUs per tray     {}\n", s.compute_tray.cpus);
  if (s.switches.per_rack > 0) {
    std::string split;
    if (s.switches.local_domain_trays + s.switches.uplink_trays > 0)
      split = fmt::format(": {} rack-local, {} uplink", s.switches.local_domain_trays,
                          s.switches.uplink_trays);
    fmt::print("  switch trays      {} {} trays per rack ({}{}){}\n", s.switches.per_rack,
               s.switches.name, s.switches.asic,
               s.switches.asic_bandwidth.value() > 0
                   ? ", " + format(s.switches.asic_bandwidth) + " per ASIC"
                   : "",
               split);
  } else {
    fmt::print("  switch trays      none ({})\n",
               to_string(s.topology) == "full_mesh" ? "direct full mesh" : "on-board switch");
  }
  const auto& h = s.host;
  if (h.placement == HostPlacement::separate_rack) {
    fmt::print("  host trays        {} {} per compute tray; {} {} trays per host rack\n",
               h.per_compute_tray, h.name, h.trays_per_rack, h.name);
  } else {
    fmt::print("  host              {} ({})\n", h.name, to_string(h.placement));
  }
  fmt::print("  host contents     {} x {}, {} DRAM, {} per XPU host link\n", h.cpus, h.cpu_model,
             format(h.dram), format(h.link_bandwidth_per_xpu));
  fmt::print("  scale-up domain   {} XPUs = {} compute rack(s), {}\n", s.domain_xpus,
             s.racks_per_domain(), to_string(s.topology));

  fmt::print("\nNetwork (per XPU, per direction)\n");
  Table t({"tier", "XPUs", "switch hops", "bandwidth", "latency"});
  for (const auto& tier : s.scale_up)
    t.add({tier.name, std::to_string(tier.xpus), std::to_string(tier.switch_hops),
           format(tier.bandwidth_per_xpu), format(tier.latency)});
  t.add(
      {"scale-out", "-", "-", format(s.scale_out_bandwidth_per_xpu), format(s.scale_out_latency)});
  fmt::print("{}", t.render({1, 2}));

  fmt::print("\nXPU\n");
  fmt::print("  HBM               {} {} at {}\n", format(c.hbm_capacity), c.memory_kind,
             format(c.hbm_bandwidth));
  fmt::print("  dense peak        {}\n", peaks_text(c));
  fmt::print("  rated TDP         {}\n", format(c.tdp));
  fmt::print("  sustained power   {}\n", opt_power(c.sustained_power));

  fmt::print("\nPower\n");
  if (s.power.compute_rack) fmt::print("  compute rack      {}\n", format(*s.power.compute_rack));
  if (s.power.host_rack_provisioned)
    fmt::print("  host rack         {} provisioned, {} in production\n",
               format(*s.power.host_rack_provisioned), opt_power(s.power.host_rack_production));
  if (s.power.rack_pair) fmt::print("  rack pair         {}\n", format(*s.power.rack_pair));
  if (s.power.server) fmt::print("  server            {}\n", format(*s.power.server));
  fmt::print("  all-in per XPU    {}\n", s.power.all_in_per_xpu
                                             ? format(*s.power.all_in_per_xpu)
                                             : "not published (the power model computes it)");
  fmt::print("  TCO per XPU       {}\n", s.tco_per_xpu ? format(*s.tco_per_xpu) : "not published");

  fmt::print(
      "\nServing stack\n  {}; MTP/speculative decoding {}; prefill/decode disaggregation {}\n",
      s.serving.engine, s.serving.mtp ? "yes" : "no", s.serving.disaggregation ? "yes" : "no");
  if (!s.status.empty()) fmt::print("\nStatus\n  {}\n", s.status);

  print_fields("System figures", s.fields);
  print_fields("Chip figures (" + c.id + ")", c.fields);
  print_assumptions({{"system", &s.fields}, {"chip", &c.fields}});
  std::set<std::string> ids;
  collect_sources(s.fields, ids);
  collect_sources(c.fields, ids);
  print_sources(cat, ids);
}

void show_model(const Catalog& cat, const Model& m) {
  fmt::print("{} - {}\n", m.id, m.name);
  fmt::print("\nArchitecture\n");
  fmt::print("  parameters        {} total, {} active per token\n", count_text(m.params_total),
             count_text(m.params_active));
  fmt::print("  layers            {}{}\n", m.layers,
             m.is_moe()
                 ? fmt::format(" ({} dense, {} MoE)", m.dense_layers, m.layers - m.dense_layers)
                 : "");
  fmt::print("  hidden size       {}\n", m.hidden);
  fmt::print("  vocabulary        {}\n", m.vocab);
  const auto& a = m.attention;
  if (a.kind == AttentionKind::gqa) {
    fmt::print("  attention         GQA: {} query heads, {} KV heads, head_dim {}\n", a.q_heads,
               a.kv_heads, a.head_dim);
  } else {
    fmt::print(
        "  attention         MLA: {} heads, q_lora {}, kv_lora {}, qk_nope {}, qk_rope {}, v_head "
        "{}\n",
        a.q_heads, a.q_lora_rank, a.kv_lora_rank, a.qk_nope_head_dim, a.qk_rope_head_dim,
        a.v_head_dim);
  }
  if (a.sliding_window)
    fmt::print("  sliding window    {} tokens on alternate layers\n", *a.sliding_window);
  if (a.attention_sinks) fmt::print("  attention sinks   yes\n");
  if (m.dense_ffn) fmt::print("  dense FFN         {} ({})\n", *m.dense_ffn, m.activation);
  if (m.moe)
    fmt::print("  experts           {} routed + {} shared, top-{}, expert FFN {} ({})\n",
               m.moe->routed_experts, m.moe->shared_experts, m.moe->top_k, m.moe->expert_ffn,
               m.activation);
  if (m.mtp_layers > 0) fmt::print("  MTP modules       {}\n", m.mtp_layers);

  fmt::print("\nWeight variants (default: {})\n", m.default_precision);
  Table t({"precision", "attention", "dense FFN", "routed experts", "shared experts", "embeddings",
           "LM head", "KV cache"});
  auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  for (const auto& [p, v] : m.variants)
    t.add({p, v.attention, dash(v.dense_ffn), dash(v.routed_experts), dash(v.shared_experts),
           v.embeddings, v.lm_head, v.kv_cache});
  fmt::print("{}", t.render());
  for (const auto& [p, v] : m.variants)
    if (!v.description.empty()) fmt::print("  {}: {}\n", p, v.description);

  print_fields("Figures", m.fields);
  print_assumptions({{"model", &m.fields}});
  std::set<std::string> ids;
  collect_sources(m.fields, ids);
  print_sources(cat, ids);
}

void show_chip(const Catalog& cat, const Chip& c) {
  fmt::print("{} - {} ({})\n", c.id, c.name, c.vendor);
  if (!c.description.empty()) fmt::print("  {}\n", c.description);
  fmt::print("\n  HBM               {} {} at {}\n", format(c.hbm_capacity), c.memory_kind,
             format(c.hbm_bandwidth));
  fmt::print("  dense peak        {}\n", peaks_text(c));
  fmt::print("  rated TDP         {}\n", format(c.tdp));
  fmt::print("  sustained power   {}\n", opt_power(c.sustained_power));
  print_fields("Figures", c.fields);
  print_assumptions({{"chip", &c.fields}});
  std::set<std::string> ids;
  collect_sources(c.fields, ids);
  print_sources(cat, ids);
}

}  // namespace

namespace {
int catalog_list(const Catalog& cat, bool as_json) {
  if (as_json) {
    json j;
    json systems = json::array(), models = json::array(), chips = json::array();
    for (const auto& [id, s] : cat.systems) systems.push_back(system_json(*s));
    for (const auto& [id, m] : cat.models) models.push_back(model_json(*m));
    for (const auto& [id, c] : cat.chips) chips.push_back(chip_json(*c));
    j["systems"] = systems;
    j["models"] = models;
    j["chips"] = chips;
    json src = json::array();
    for (const auto& [id, s] : cat.sources)
      src.push_back({{"id", id}, {"citation", s.citation}, {"url", s.url}});
    j["sources"] = src;
    json formats = json::array();
    for (const auto& [id, f] : cat.formats)
      formats.push_back({{"id", id},
                         {"description", f.description},
                         {"bits_per_element", f.bits_per_element},
                         {"compute", to_string(f.compute)}});
    j["formats"] = formats;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  Table st({"system", "XPU", "XPUs/tray", "trays/rack", "domain", "HBM", "HBM BW", "TDP",
            "scale-up/XPU", "assumed"});
  for (const auto& [id, s] : cat.systems) {
    const Chip& c = *s->chip;
    st.add({id, c.id, std::to_string(s->compute_tray.xpus),
            std::to_string(s->compute_trays_per_rack), std::to_string(s->domain_xpus),
            format(c.hbm_capacity), format(c.hbm_bandwidth), format(c.tdp),
            format(s->scale_up.front().bandwidth_per_xpu),
            std::to_string(assumption_count(s->fields) + assumption_count(c.fields))});
  }
  fmt::print("Systems ({})\n{}", cat.systems.size(), st.render({2, 3, 4, 9}));
  Table mt({"model", "params", "active", "layers", "attention", "experts", "default weights"});
  for (const auto& [id, m] : cat.models) {
    mt.add({id, count_text(m->params_total), count_text(m->params_active),
            std::to_string(m->layers), to_string(m->attention.kind),
            m->moe ? fmt::format("{}+{} top-{}", m->moe->routed_experts, m->moe->shared_experts,
                                 m->moe->top_k)
                   : "dense",
            m->default_precision});
  }
  fmt::print("\nModels ({})\n{}", cat.models.size(), mt.render({1, 2, 3}));
  fmt::print(
      "\n{} chips, {} number formats, {} sources. 'racktwin catalog show ID' prints every figure "
      "with its source.\n",
      cat.chips.size(), cat.formats.size(), cat.sources.size());
  return 0;
}

int catalog_show(const Catalog& cat, const std::string& id, const std::string& kind, bool as_json) {
  // Ids are unique per kind; a chip may share its id with a system (jalapeno-a0): --kind chooses.
  const auto sys = kind.empty() || kind == "system" ? cat.systems.find(id) : cat.systems.end();
  const auto mod = kind.empty() || kind == "model" ? cat.models.find(id) : cat.models.end();
  const auto chip = kind.empty() || kind == "chip" ? cat.chips.find(id) : cat.chips.end();
  if (sys == cat.systems.end() && mod == cat.models.end() && chip == cat.chips.end()) {
    std::vector<std::string> all = cat.system_ids();
    for (const auto& m : cat.model_ids()) all.push_back(m);
    for (const auto& [c, _] : cat.chips) all.push_back(c);
    fmt::print(stderr, "racktwin: no system, model or chip '{}' in the catalog{}\n", id,
               did_you_mean(id, all));
    fmt::print(stderr, "  'racktwin catalog list' shows every id\n");
    return kExitInput;
  }
  if (as_json) {
    json j = sys != cat.systems.end()  ? system_json(*sys->second)
             : mod != cat.models.end() ? model_json(*mod->second)
                                       : chip_json(*chip->second);
    j["kind"] = sys != cat.systems.end() ? "system" : mod != cat.models.end() ? "model" : "chip";
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  if (sys != cat.systems.end() && cat.chips.contains(id))
    fmt::print("(a chip has this id too: racktwin catalog show --kind chip {})\n\n", id);
  if (sys != cat.systems.end())
    show_system(cat, *sys->second);
  else if (mod != cat.models.end())
    show_model(cat, *mod->second);
  else
    show_chip(cat, *chip->second);
  return 0;
}

}  // namespace

void add_catalog_commands(CLI::App& app, Commands& out) {
  auto* catalog =
      app.add_subcommand("catalog", "List and show the systems, chips and models of the catalog");
  catalog->require_subcommand(1);
  auto list_json = std::make_shared<bool>(false);
  auto* list = catalog->add_subcommand("list", "List every system and model");
  list->add_flag("--json", *list_json, "Machine-readable output");
  out.push_back({list, [list_json](const Catalog& cat) { return catalog_list(cat, *list_json); }});

  auto show_json = std::make_shared<bool>(false);
  auto show_id = std::make_shared<std::string>();
  auto show_kind = std::make_shared<std::string>();
  auto* show = catalog->add_subcommand(
      "show", "Show one system, model or chip: every figure with its source, and every assumption");
  show->add_option("ID", *show_id, "Catalog id (see 'racktwin catalog list')")->required();
  show->add_option("--kind", *show_kind, "Which kind of entry when ids coincide")
      ->check(CLI::IsMember({"system", "model", "chip"}));
  show->add_flag("--json", *show_json, "Machine-readable output");
  out.push_back({show, [show_id, show_kind, show_json](const Catalog& cat) {
                   return catalog_show(cat, *show_id, *show_kind, *show_json);
                 }});
}

}  // namespace racktwin::cli
