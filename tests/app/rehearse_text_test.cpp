// The sentences a rehearsal's outcome gives both front ends (app/rehearse.hpp).
#include <gtest/gtest.h>

#include "app/rehearse.hpp"

using namespace racktwin::app;

namespace {

RehearsalOutcome outcome(int domains, int racks, double goal, std::optional<int> spare) {
  RehearsalOutcome o;
  o.rehearsal.domains = domains;
  o.rehearsal.attainment_goal = goal;
  o.racks = racks;
  o.spare_needed = spare;
  return o;
}

}  // namespace

TEST(RehearsalText, SpareSentence_CountsRacksInTheirNumberAndStatesTheGoal) {
  EXPECT_EQ(outcome(16, 16, 0.999, 1).spare_sentence(),
            "1 spare rack of the site's 16 (0.06 per domain) holds 99.9% attainment.");
  EXPECT_EQ(outcome(35, 560, 0.999, 2).spare_sentence(),
            "2 spare racks of the site's 560 (0.06 per domain) hold 99.9% attainment.");
  EXPECT_EQ(outcome(4, 8, 0.9995, 0).spare_sentence(),
            "0 spare racks of the site's 8 (0.00 per domain) hold 99.95% attainment.");
  EXPECT_EQ(outcome(4, 8, 1.0, std::nullopt).spare_sentence(),
            "No spare capacity holds 100% attainment: failures outlast it even with one rack "
            "serving.");
}
