#pragma once
// How a view says that a use case failed: the message, then each located diagnostic.

#include <string>

#include "app/run.hpp"

namespace racktwin::gui {

inline std::string failure_text(const app::Failure& f) {
  std::string why = f.message;
  for (const auto& d : f.diagnostics) why += (why.empty() ? "" : "\n") + d.to_string();
  return why;
}

}  // namespace racktwin::gui
