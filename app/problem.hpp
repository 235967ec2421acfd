#pragma once
// Why a use case cannot answer a request: which input is wrong and what is wrong with it. Front
// ends add their own advice (a command that lists the ids, a list to pick from).

#include <expected>
#include <string>

namespace racktwin::app {

struct Problem {
  enum class Input {
    system,         // no such system
    model,          // no such model
    precision,      // the model has no such weight variant
    efficiency,     // no efficiency prior for the system
    entry,          // no catalog entry (system, model or chip) with this id
    part,           // no part with this name in the deployment
    layout,         // the layout text does not parse
    layout_run,     // the layout cannot run the model on the system
    power_figures,  // the catalog lacks power figures the power model needs
  };
  Input input = Input::system;
  std::string message;  // e.g. "no system 'x' in the catalog (did you mean 'y'?)"
};

template <class T>
using Result = std::expected<T, Problem>;

}  // namespace racktwin::app
