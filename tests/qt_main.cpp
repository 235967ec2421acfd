// The main of the test executables that draw with Qt (tests/gui, tests/charts): one offscreen
// application for every test, destroyed when the tests are done and before the process's static
// destructors run (charts::OffscreenApp).
#include <gtest/gtest.h>

#include "charts/charts.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const racktwin::charts::OffscreenApp qt([](const std::string&) {});
  return RUN_ALL_TESTS();
}
