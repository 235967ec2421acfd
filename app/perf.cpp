#include "app/perf.hpp"

#include <map>

#include "sim/sweep.hpp"

namespace racktwin::app {
namespace {

struct Target {
  const System* system = nullptr;
  const Model* model = nullptr;
  std::string precision;
  const EfficiencyPrior* prior = nullptr;
  EfficiencyChoice efficiency;  // what `run` uses: calibrated, family or prior
};

Result<Target> resolve(const Catalog& cat, const std::string& system, const std::string& model,
                       const std::string& precision) {
  Target t;
  t.system = cat.find_system(system);
  if (t.system == nullptr)
    return std::unexpected(
        Problem{Problem::Input::system,
                "unknown system '" + system + "'" + did_you_mean(system, cat.system_ids())});
  t.model = cat.find_model(model);
  if (t.model == nullptr)
    return std::unexpected(
        Problem{Problem::Input::model,
                "unknown model '" + model + "'" + did_you_mean(model, cat.model_ids())});
  t.precision = precision.empty() ? perf::best_precision(*t.model, *t.system, cat) : precision;
  if (!t.model->variants.contains(t.precision)) {
    std::vector<std::string> names;
    std::string all;
    for (const auto& [k, _] : t.model->variants) {
      names.push_back(k);
      all += (all.empty() ? "" : ", ") + k;
    }
    return std::unexpected(Problem{Problem::Input::precision,
                                   model + " has no '" + t.precision + "' weight variant" +
                                       did_you_mean(t.precision, names) + "; it has: " + all});
  }
  t.prior = cat.efficiency_prior_for(t.system->id);
  if (t.prior == nullptr)
    return std::unexpected(
        Problem{Problem::Input::efficiency,
                "the catalog has no efficiency prior for " + system + " and no 'default' prior"});
  t.efficiency = *cat.efficiency_for(t.system->id);  // a prior exists, so a choice does
  return t;
}

std::string weights_text(const Model& m, const std::string& precision) {
  const auto& v = m.variants.at(precision);
  std::string s = "attention " + v.attention;
  if (!v.dense_ffn.empty()) s += ", dense FFN " + v.dense_ffn;
  if (!v.routed_experts.empty()) s += ", experts " + v.routed_experts;
  s += ", KV " + v.kv_cache;
  return s;
}

Json efficiency_json(const perf::Efficiency& e) {
  return {{"mfu", e.mfu},
          {"mbu", e.mbu},
          {"attn_eff", e.attn_eff},
          {"comm_eff", e.comm_eff},
          {"alpha_s", e.alpha.value()},
          {"overlap", e.overlap},
          {"layer_overhead_s", e.layer_overhead.value()},
          {"step_overhead_s", e.step_overhead.value()},
          {"seq_overhead_s", e.seq_overhead.value()},
          {"moe_imbalance", e.moe_imbalance},
          {"dequant_eff", e.dequant_eff},
          {"request_latency_s", e.request_latency.value()},
          {"gemm_half_rows", perf::kGemmHalfRows}};  // a constant of the step model, not fitted
}

// The group label of a rejection: memory and divisibility reasons each form one group; any other
// reason is its own, by its detail.
std::string group_label(const perf::LayoutOption& o) {
  if (perf::is_memory(o.rejection)) return "does not fit in HBM";
  if (perf::is_divisibility(o.rejection)) return "not divisible";
  return o.reason;
}

}  // namespace

Json to_json(const IterationTime& t) {
  const perf::Breakdown& b = t.breakdown;
  Json parts = Json::object();
  for (std::size_t i = 0; i < perf::kPartCount; ++i) {
    const auto& p = b.parts[i];
    parts[perf::kPartNames[i]] = {{"compute_s", p.compute.value()},
                                  {"memory_s", p.memory.value()},
                                  {"flops", p.flops.value()},
                                  {"hbm_bytes", p.bytes.value()}};
  }
  const PerfRequest& r = t.request;
  return {{"system", r.system},
          {"model", r.model},
          {"layout", t.layout.label()},
          {"xpus", t.xpus},
          {"precision", t.precision},
          {"efficiency_prior", t.prior},
          {"efficiency_origin", t.efficiency_origin},
          {"efficiency", efficiency_json(t.efficiency)},
          {"shape",
           {{"decode_seqs", r.batch},
            {"context", r.context},
            {"prefill_tokens", r.prefill},
            {"prefill_context", r.prefill_context}}},
          {"total_s", b.total.value()},
          {"compute_s", b.compute.value()},
          {"memory_s", b.memory.value()},
          {"communication_s", b.communication.value()},
          {"communication_raw_s", b.comm_raw.value()},
          {"overhead_s", b.overhead.value()},
          {"bound", perf::to_string(b.bound)},
          {"roofline_s", b.roofline.value()},
          {"roofline_ratio", b.roofline.value() > 0 ? b.total / b.roofline : 0.0},
          {"flops_per_xpu", b.flops.value()},
          {"hbm_bytes_per_xpu", b.hbm_bytes.value()},
          {"comm_bytes_per_xpu", b.comm_bytes.value()},
          {"tokens_per_decode_seq", b.tokens_per_decode_seq},
          {"decode_tokens_per_s_per_xpu", t.output_tokens_per_s_per_xpu},
          {"parts", parts}};
}

Result<IterationTime> iteration_time(const Catalog& cat, const PerfRequest& req) {
  auto target = resolve(cat, req.system, req.model, req.precision);
  if (!target) return std::unexpected(target.error());
  const Target& t = *target;
  auto layout = parse_layout(req.layout);
  if (!layout) return std::unexpected(Problem{Problem::Input::layout, layout.error()});
  const perf::Speculation spec{req.draft, req.acceptance};
  const EfficiencyChoice used =
      req.prior ? EfficiencyChoice{t.prior->values, "prior " + t.prior->id} : t.efficiency;
  auto sm = perf::StepModel::create(*t.model, *t.system, cat, *layout, t.precision, used.values,
                                    spec);
  if (!sm)
    return std::unexpected(Problem{Problem::Input::layout_run,
                                   "layout " + layout->label() + " cannot run " + req.model +
                                       " on " + req.system + ": " + sm.error()});
  perf::IterationShape shape = perf::IterationShape::decode(req.batch, req.batch * req.context);
  if (req.prefill > 0)
    shape.add_prefill_chunk(req.prefill, req.prefill_context, true,
                            t.model->attention.sliding_window.value_or(0));
  IterationTime r;
  r.request = req;
  r.layout = *layout;
  r.xpus = layout->xpus();
  r.precision = t.precision;
  r.weights = weights_text(*t.model, t.precision);
  r.prior = t.prior->id;
  r.efficiency_origin = used.origin;
  r.efficiency = used.values;
  r.breakdown = sm->step(shape);
  const double total = r.breakdown.total.value();
  r.output_tokens = req.batch * r.breakdown.tokens_per_decode_seq;
  if (total > 0) {
    r.output_tokens_per_s = r.output_tokens / total;
    r.output_tokens_per_s_per_xpu = r.output_tokens / total / r.xpus;
  }
  r.time_per_output_token = Seconds(total / r.breakdown.tokens_per_decode_seq);
  return r;
}

Json to_json(const LayoutList& l) {
  Json arr = Json::array();
  for (const auto& row : l.layouts) {
    const auto& o = row.option;
    arr.push_back({{"layout", o.layout.label()},
                   {"xpus", o.layout.xpus()},
                   {"tp", o.layout.tp},
                   {"ep", o.layout.ep},
                   {"pp", o.layout.pp},
                   {"dp_attention", o.layout.dp_attention},
                   {"valid", o.valid},
                   {"reason", o.reason},
                   {"weights_per_xpu_bytes", o.memory.weights.value()},
                   {"kv_bytes_per_token_per_xpu", o.memory.kv_per_token.value()},
                   {"kv_capacity_tokens", o.memory.kv_tokens}});
  }
  return {{"system", l.request.system},
          {"model", l.request.model},
          {"precision", l.precision},
          {"min_context", l.request.min_context},
          {"layouts", arr}};
}

Result<LayoutList> layout_list(const Catalog& cat, const LayoutsRequest& req) {
  auto target = resolve(cat, req.system, req.model, req.precision);
  if (!target) return std::unexpected(target.error());
  const Target& t = *target;
  perf::LayoutQuery q;
  q.replica_xpus = req.xpus;
  q.max_pp = req.max_pp;
  q.precision = t.precision;
  q.min_tokens = req.min_context;
  q.memory = sim::memory_of(Scenario{}, t.system);  // the system's engine defaults, as run uses
  LayoutList l;
  l.request = req;
  l.precision = t.precision;
  l.weights = weights_text(*t.model, t.precision);
  l.hbm = t.system->chip->hbm_capacity;
  l.memory_utilization = q.memory.memory_utilization;
  l.runtime_reserve = q.memory.runtime_reserve;
  std::map<std::string, RejectionGroup> groups;
  for (auto& o : perf::enumerate_layouts(*t.model, *t.system, cat, q)) {
    if (o.valid) {
      ++l.valid;
    } else {
      const std::string label = group_label(o);
      auto [it, fresh] = groups.try_emplace(label);
      if (fresh) it->second = {o.rejection, label, 0, o.layout.label() + ": " + o.reason};
      it->second.count += 1;
    }
    const double seqs = o.memory.kv_tokens / req.min_context;
    l.layouts.push_back({std::move(o), seqs});
  }
  for (auto& [label, g] : groups) l.rejections.push_back(std::move(g));
  return l;
}

}  // namespace racktwin::app
