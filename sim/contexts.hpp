#pragma once
// The SimGrid context factory the engine starts with: raw stack switching, which a sanitized
// build announces to AddressSanitizer (sim/contexts.cpp).

namespace racktwin::sim::detail {

// The command-line option that selects the factory, "--cfg=contexts/factory:raw". It lives beside
// the announcing functions so that every program that starts an engine links them.
const char* context_factory_option();

}  // namespace racktwin::sim::detail
