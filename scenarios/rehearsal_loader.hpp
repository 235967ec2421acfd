#pragma once
// Reads a rehearsal file (docs/failures.md) and checks it against the catalog. All problems are
// reported at once, each with file:line:column, the key path, what was expected and a hint.
// Failure rates and repair times the file leaves out take the documented defaults
// (rehearsal_defaults()): rates derived from the Llama 3 16,384-H100 54-day breakdown with the
// arithmetic in their source, repair times from the field figures of reference specs section 6.

#include <expected>
#include <string>
#include <vector>

#include "core/catalog.hpp"
#include "core/error.hpp"
#include "core/rehearsal.hpp"

namespace racktwin {

std::expected<Rehearsal, Diagnostics> load_rehearsal_file(const std::string& path,
                                                          const Catalog& catalog);

// `name` is used in messages in place of a file name; scenario paths resolve against `base_dir`.
std::expected<Rehearsal, Diagnostics> load_rehearsal_string(const std::string& text,
                                                            const std::string& name,
                                                            const std::string& base_dir,
                                                            const Catalog& catalog);

struct RehearsalDefaults {
  std::vector<FailureClass> classes;  // in kAllPartClasses order
  RepairModel repair;
};
const RehearsalDefaults& rehearsal_defaults();

}  // namespace racktwin
