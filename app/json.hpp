#pragma once
// The JSON type every use case's to_json returns, and the JSON form of loader diagnostics.
//
// Contract: ordered keys (insertion order), so the same value gives the same bytes.

#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.hpp"

namespace racktwin::app {

using Json = nlohmann::ordered_json;

// The value, or null when unset.
template <class T>
Json optional_json(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

// [{file, line, column, path, message, hint}, ...] in the diagnostics' order.
Json diagnostics_json(const Diagnostics& d);

}  // namespace racktwin::app
