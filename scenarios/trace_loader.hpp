#pragma once
// Reads a request trace in the Mooncake JSONL format: one JSON object per line with "timestamp"
// (ms since the first request), "input_length", "output_length", "hash_ids" (ids of consecutive
// prompt blocks; equal ids mean a shared prefix) and, for multi-turn sessions, "session_id" and
// "delay" (ms to wait after the session's previous turn). Other fields are ignored. Every problem
// is reported with the file, line and field.

#include <expected>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/scenario.hpp"

namespace racktwin {

// `max_requests` > 0 keeps the first that many lines.
std::expected<std::vector<TraceRequest>, Diagnostics> load_mooncake_trace(const std::string& path,
                                                                          int max_requests = 0);

// The same for the text of a trace; `name` is used in messages in place of a file name.
std::expected<std::vector<TraceRequest>, Diagnostics> load_mooncake_trace_string(
    const std::string& text, const std::string& name, int max_requests = 0);

}  // namespace racktwin
