#include "app/locations.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

#include "racktwin/version.hpp"

namespace racktwin::app {
namespace {

// Sets an environment variable for the scope of the object, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CatalogDir, FlagThenEnvironmentThenTheSourceCatalog) {
  ScopedEnv unset("RACKTWIN_CATALOG", nullptr);
  // The test binary has no installed share/racktwin/catalog beside it.
  EXPECT_EQ(catalog_dir(), kSourceCatalogDir);
  EXPECT_EQ(catalog_dir("/given"), "/given");
  ScopedEnv set("RACKTWIN_CATALOG", "/from/env");
  EXPECT_EQ(catalog_dir(), "/from/env");
  EXPECT_EQ(catalog_dir("/given"), "/given");
}

TEST(CatalogDir, EmptyEnvironmentValue_IsIgnored) {
  ScopedEnv empty("RACKTWIN_CATALOG", "");
  EXPECT_EQ(catalog_dir(), kSourceCatalogDir);
}

TEST(DbPath, FlagThenEnvironmentThenScenarioThenWorkingDirectory) {
  ScopedEnv unset("RACKTWIN_DB", nullptr);
  EXPECT_EQ(db_path(), "racktwin.db");
  EXPECT_EQ(db_path("", std::string("scenario.db")), "scenario.db");
  EXPECT_EQ(db_path("", std::string("")), "racktwin.db");
  EXPECT_EQ(db_path("flag.db", std::string("scenario.db")), "flag.db");
  ScopedEnv set("RACKTWIN_DB", "env.db");
  EXPECT_EQ(db_path("", std::string("scenario.db")), "env.db");
  EXPECT_EQ(db_path("flag.db"), "flag.db");
}

}  // namespace
}  // namespace racktwin::app
