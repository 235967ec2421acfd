#include "scenarios/trace_loader.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

namespace racktwin {
namespace {

using nlohmann::json;

// A value as an error message shows it: the kind of a list or an object (never its contents,
// which may be nested without bound), a scalar cut to a few dozen characters.
std::string describe(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "a list";
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  constexpr std::size_t kShown = 40;
  if (s.size() > kShown) s = s.substr(0, kShown) + "...";
  return s;
}

// What the JSON parser found wrong, without the text it had read (the file may be anything).
std::string parse_problem(const json::exception& e) {
  std::string what = e.what();
  if (const auto b = what.find("] "); b != std::string::npos) what.erase(0, b + 2);
  if (const auto r = what.find("; last read"); r != std::string::npos) what.erase(r);
  return what;
}

// Reads the lines of one trace, collecting every problem with its line and field.
class LineReader {
 public:
  LineReader(const std::string& path, Diagnostics& errors) : path_(path), errors_(errors) {}

  // The request on `text` (line `line`), or nothing when the line has a problem.
  std::optional<TraceRequest> read(const std::string& text, int line) {
    line_ = line;
    const std::size_t before = errors_.size();
    json j;
    try {
      j = json::parse(text);
    } catch (const json::exception& e) {
      bad("", "invalid JSON (" + parse_problem(e) + ")", "write one JSON object per line");
      return std::nullopt;
    }
    if (!j.is_object()) {
      bad("", std::string("expected one JSON object per line, found a ") + j.type_name());
      return std::nullopt;
    }
    TraceRequest r = fields(j);
    if (errors_.size() != before) return std::nullopt;
    return r;
  }

 private:
  void bad(const std::string& field, const std::string& msg, const std::string& hint = {}) {
    errors_.push_back(Diagnostic{{path_, line_, 0}, field, msg, hint});
  }

  TraceRequest fields(const json& j) {
    TraceRequest r;
    r.line = line_;
    if (auto ts = number(j, "timestamp", true)) r.timestamp_s = *ts / 1000.0;
    r.input_length = length(j, "input_length");
    r.output_length = length(j, "output_length");
    if (j.contains("hash_ids")) r.hash_ids = hash_ids(j["hash_ids"]);
    if (j.contains("session_id")) r.session_id = session(j["session_id"]);
    if (auto d = number(j, "delay", false)) r.delay_s = *d / 1000.0;
    return r;
  }

  std::optional<double> number(const json& j, const char* key, bool required) {
    if (!j.contains(key)) {
      if (required) bad(key, std::string("missing required field '") + key + "'");
      return std::nullopt;
    }
    const json& v = j[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      bad(key, "expected a non-negative number of milliseconds, found " + describe(v));
      return std::nullopt;
    }
    return v.get<double>();
  }

  int length(const json& j, const char* key) {
    if (!j.contains(key)) {
      bad(key, std::string("missing required field '") + key + "'");
      return 0;
    }
    const json& v = j[key];
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > (1 << 24)) {
      bad(key, "expected a token count from 1 to 16777216, found " + describe(v));
      return 0;
    }
    return static_cast<int>(v.get<long long>());
  }

  std::vector<std::uint64_t> hash_ids(const json& h) {
    std::vector<std::uint64_t> ids;
    if (!h.is_array()) {
      bad("hash_ids", "expected a list of block ids, found " + describe(h));
      return ids;
    }
    for (const auto& id : h) {
      if (!id.is_number_integer() || id.get<long long>() < 0) {
        bad("hash_ids", "expected non-negative integer block ids, found " + describe(id));
        return ids;
      }
      ids.push_back(static_cast<std::uint64_t>(id.get<long long>()));
    }
    return ids;
  }

  std::string session(const json& s) {
    if (s.is_string()) return s.get<std::string>();
    if (s.is_number_integer()) return std::to_string(s.get<long long>());
    bad("session_id", "expected a string or an integer, found " + describe(s));
    return {};
  }

  const std::string& path_;
  Diagnostics& errors_;
  int line_ = 0;
};

}  // namespace

std::expected<std::vector<TraceRequest>, Diagnostics> load_mooncake_trace_string(
    const std::string& text, const std::string& name, int max_requests) {
  std::vector<TraceRequest> out;
  Diagnostics errors;
  LineReader reader(name, errors);
  std::istringstream in(text);
  std::string line_text;
  for (int line = 1; std::getline(in, line_text); ++line) {
    if (line_text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (max_requests > 0 && static_cast<int>(out.size()) >= max_requests) break;
    if (auto r = reader.read(line_text, line)) out.push_back(std::move(*r));
  }
  if (!errors.empty()) return std::unexpected(std::move(errors));
  if (out.empty())
    return std::unexpected(
        Diagnostics{Diagnostic{{name, 1, 0}, "", "the trace holds no request", ""}});
  // Times count from the first request, whatever the trace's origin (epoch milliseconds included).
  double origin = out.front().timestamp_s;
  for (const auto& r : out) origin = std::min(origin, r.timestamp_s);
  for (auto& r : out) r.timestamp_s -= origin;
  return out;
}

std::expected<std::vector<TraceRequest>, Diagnostics> load_mooncake_trace(const std::string& path,
                                                                          int max_requests) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::unexpected(Diagnostics{Diagnostic{
        {path, 0, 0}, "", "cannot open the trace file", "check the workload's 'file' path"}});
  std::ostringstream text;
  text << in.rdbuf();
  return load_mooncake_trace_string(text.str(), path, max_requests);
}

}  // namespace racktwin
