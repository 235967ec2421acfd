// Request graphs: trace sessions and the synthetic agentic workload.

#include <algorithm>
#include <map>
#include <random>

#include "sim/serving.hpp"

namespace racktwin::sim {
namespace {

// Appends a request and returns its index.
int add(RequestGraph& g, int isl, int osl, std::vector<std::uint64_t> blocks, int session,
        bool warmup, double release) {
  const int k = static_cast<int>(g.requests.size());
  Request r;
  r.id = k;
  r.isl = isl;
  r.osl = osl;
  r.blocks = std::move(blocks);
  r.warmup = warmup;
  g.requests.push_back(std::move(r));
  g.dependents.emplace_back();
  g.pending.push_back(0);
  g.delay.push_back(-1.0);
  g.release.push_back(release);
  g.session.push_back(session);
  return k;
}

void depend(RequestGraph& g, int request, int on) {
  g.dependents[static_cast<std::size_t>(on)].push_back(request);
  g.pending[static_cast<std::size_t>(request)] += 1;
}

}  // namespace

RequestGraph trace_graph(const TraceWorkload& trace) {
  RequestGraph g;
  std::map<std::string, std::pair<int, int>> sessions;  // id -> (index, last request)
  const auto& tr = *trace.requests;
  for (std::size_t k = 0; k < tr.size(); ++k) {
    int session = -1;
    int previous = -1;
    if (!tr[k].session_id.empty()) {
      auto it = sessions.try_emplace(tr[k].session_id, static_cast<int>(sessions.size()), -1).first;
      session = it->second.first;
      previous = it->second.second;
      it->second.second = static_cast<int>(k);
    }
    const int r =
        add(g, tr[k].input_length, tr[k].output_length, tr[k].hash_ids, session,
            static_cast<int>(k) < trace.warmup_requests, tr[k].timestamp_s * trace.time_scale);
    if (tr[k].delay_s) g.delay[static_cast<std::size_t>(r)] = *tr[k].delay_s * trace.time_scale;
    if (previous >= 0) depend(g, r, previous);
  }
  g.sessions = static_cast<int>(sessions.size());
  return g;
}

RequestGraph agentic_graph(const AgenticWorkload& w, int clients, std::uint64_t seed) {
  RequestGraph g;
  std::mt19937_64 rng(seed);
  // Uniform integers and reals from the raw 64-bit stream (independent of the library's
  // distributions).
  auto uniform = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  auto real = [&](double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
  };
  // Each session (and sub-agent) names its blocks in its own space: nothing is shared across
  // sessions (AgentX marks every conversation's first turn as unique), all is shared within one.
  auto blocks_of = [&](int session, int context) {
    std::vector<std::uint64_t> b(static_cast<std::size_t>(context / w.block_tokens));
    for (std::size_t i = 0; i < b.size(); ++i)
      b[i] = (static_cast<std::uint64_t>(session + 1) << 32) | static_cast<std::uint64_t>(i);
    return b;
  };
  for (int c = 0; c < clients; ++c) {
    int previous_session_end = -1;
    for (int s = 0; s < w.sessions_per_client; ++s) {
      const int session = g.sessions++;
      const bool warm = s < w.warmup_sessions;
      int context = uniform(w.first_context_min, w.first_context_max);
      const int turns = uniform(w.turns_min, w.turns_max);
      int previous_turn = -1;
      std::vector<int> subagent_ends;  // the sub-agents the next turn waits for
      for (int t = 0; t < turns; ++t) {
        const int out = uniform(w.output_min, w.output_max);
        if (t > 0 && context + out > w.max_context) break;  // the session outgrew its window
        const int r = add(g, context, out, blocks_of(session, context), session, warm, 0.0);
        if (t == 0) {
          // A client starts its next session as soon as the previous one ends.
          if (previous_session_end >= 0) {
            depend(g, r, previous_session_end);
            g.delay[static_cast<std::size_t>(r)] = 0.0;
          }
        } else {
          depend(g, r, previous_turn);
          for (int e : subagent_ends) depend(g, r, e);
          g.delay[static_cast<std::size_t>(r)] = real(w.tool_pause_min_s, w.tool_pause_max_s);
        }
        subagent_ends.clear();
        previous_turn = r;
        // The next prompt holds this turn's output and the tool's result.
        context += out + uniform(w.tool_result_min, w.tool_result_max);
        if (real(0.0, 1.0) < w.subagent_probability) {
          const int fan_out = uniform(w.subagents_min, w.subagents_max);
          for (int a = 0; a < fan_out; ++a) {
            const int sub = g.sessions++;
            int sub_context = uniform(w.subagent_context_min, w.subagent_context_max);
            const int sub_turns = uniform(w.subagent_turns_min, w.subagent_turns_max);
            int prev = r;
            for (int u = 0; u < sub_turns; ++u) {
              const int sub_out = uniform(w.output_min, w.output_max);
              if (u > 0 && sub_context + sub_out > w.max_context) break;
              const int q =
                  add(g, sub_context, sub_out, blocks_of(sub, sub_context), sub, warm, 0.0);
              depend(g, q, prev);
              g.delay[static_cast<std::size_t>(q)] = real(w.tool_pause_min_s, w.tool_pause_max_s);
              sub_context += sub_out + uniform(w.tool_result_min, w.tool_result_max);
              prev = q;
            }
            subagent_ends.push_back(prev);
            context +=
                g.requests[static_cast<std::size_t>(prev)].osl;  // its answer joins the context
          }
        }
      }
      previous_session_end = previous_turn;
    }
  }
  return g;
}

}  // namespace racktwin::sim
