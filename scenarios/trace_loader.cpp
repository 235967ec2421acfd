#include "scenarios/trace_loader.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

namespace racktwin {

std::expected<std::vector<TraceRequest>, Diagnostics> load_mooncake_trace(const std::string& path,
                                                                          int max_requests) {
  std::ifstream in(path);
  if (!in)
    return std::unexpected(Diagnostics{Diagnostic{
        {path, 0, 0}, "", "cannot open the trace file", "check the workload's 'file' path"}});
  std::vector<TraceRequest> out;
  Diagnostics errors;
  std::string text;
  int line = 0;
  auto bad = [&](const std::string& field, const std::string& msg) {
    errors.push_back(Diagnostic{{path, line, 0}, field, msg, ""});
  };
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (max_requests > 0 && static_cast<int>(out.size()) >= max_requests) break;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      bad("", std::string("invalid JSON: ") + e.what());
      continue;
    }
    if (!j.is_object()) {
      bad("", "expected one JSON object per line");
      continue;
    }
    TraceRequest r;
    r.line = line;
    auto number = [&](const char* key, bool required) -> std::optional<double> {
      if (!j.contains(key)) {
        if (required) bad(key, std::string("missing required field '") + key + "'");
        return std::nullopt;
      }
      if (!j[key].is_number() || !std::isfinite(j[key].get<double>()) || j[key].get<double>() < 0) {
        bad(key, "expected a non-negative number, found " + j[key].dump());
        return std::nullopt;
      }
      return j[key].get<double>();
    };
    auto length = [&](const char* key) -> int {
      if (!j.contains(key)) {
        bad(key, std::string("missing required field '") + key + "'");
        return 0;
      }
      if (!j[key].is_number_integer() || j[key].get<long long>() < 1 ||
          j[key].get<long long>() > (1 << 24)) {
        bad(key, "expected a positive integer token count, found " + j[key].dump());
        return 0;
      }
      return static_cast<int>(j[key].get<long long>());
    };
    const auto ts = number("timestamp", true);
    r.input_length = length("input_length");
    r.output_length = length("output_length");
    if (ts) r.timestamp_s = *ts / 1000.0;
    if (j.contains("hash_ids")) {
      const auto& h = j["hash_ids"];
      if (!h.is_array()) {
        bad("hash_ids", "expected a list of block ids");
      } else {
        for (const auto& id : h) {
          if (!id.is_number_integer() || id.get<long long>() < 0) {
            bad("hash_ids", "expected non-negative integer block ids, found " + id.dump());
            break;
          }
          r.hash_ids.push_back(static_cast<std::uint64_t>(id.get<long long>()));
        }
      }
    }
    if (j.contains("session_id")) {
      const auto& s = j["session_id"];
      if (s.is_string())
        r.session_id = s.get<std::string>();
      else if (s.is_number_integer())
        r.session_id = std::to_string(s.get<long long>());
      else
        bad("session_id", "expected a string or an integer, found " + s.dump());
    }
    if (auto d = number("delay", false)) r.delay_s = *d / 1000.0;
    out.push_back(std::move(r));
  }
  if (!errors.empty()) return std::unexpected(std::move(errors));
  // Times count from the first request, whatever the trace's origin (epoch milliseconds included).
  double origin = out.empty() ? 0.0 : out.front().timestamp_s;
  for (const auto& r : out) origin = std::min(origin, r.timestamp_s);
  for (auto& r : out) r.timestamp_s -= origin;
  if (out.empty())
    return std::unexpected(
        Diagnostics{Diagnostic{{path, 0, 0}, "", "the trace holds no request", ""}});
  return out;
}

}  // namespace racktwin
