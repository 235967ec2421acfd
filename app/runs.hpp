#pragma once
// Two stored runs side by side, as `racktwin runs compare` and the GUI's Runs view show them: the
// run record's differences, the scenario diff, the assumptions only one run rests on, and a table
// of the headline metrics of every matched point (with the failure metrics when either run
// rehearsed failures).

#include <string>
#include <vector>

#include "db/compare.hpp"

namespace racktwin::app {

// Lines of text: the record, the scenario text and the assumptions that differ, and the count of
// points matched (the table follows them).
std::vector<std::string> comparison_lines(const db::Comparison& c);
// The headline table, first row the header: per metric, run a, run b and the change.
std::vector<std::vector<std::string>> comparison_table(const db::Comparison& c);

}  // namespace racktwin::app
