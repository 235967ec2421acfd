#include "app/catalog_views.hpp"

#include <gtest/gtest.h>

#include <set>

#include "test_support.hpp"

namespace racktwin::app {
namespace {

using racktwin::test::shipped_catalog;

int assumptions_in(const FieldRecords& fields) {
  int n = 0;
  for (const auto& f : fields) n += f.provenance.assumption ? 1 : 0;
  return n;
}

TEST(CatalogList, EverySystem_CountsTheAssumptionsOfItAndItsChip) {
  const Catalog& cat = shipped_catalog();
  const CatalogList l = catalog_list(cat);
  ASSERT_EQ(l.systems.size(), cat.systems.size());
  EXPECT_EQ(l.models.size(), cat.models.size());
  EXPECT_EQ(l.chips.size(), cat.chips.size());
  EXPECT_EQ(l.sources.size(), cat.sources.size());
  for (const auto& [s, n] : l.systems)
    EXPECT_EQ(n, assumptions_in(s->fields) + assumptions_in(s->chip->fields)) << s->id;
  for (const auto& s : l.sources) EXPECT_TRUE(cat.sources.contains(s.id)) << s.id;
}

TEST(CatalogList, ToJson_HoldsEveryEntryWithItsFields) {
  const Catalog& cat = shipped_catalog();
  const Json j = to_json(catalog_list(cat));
  for (const char* key : {"systems", "models", "chips", "sources", "formats"})
    ASSERT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["systems"].size(), cat.systems.size());
  EXPECT_EQ(j["formats"].size(), cat.formats.size());
  const Json& first = j["systems"][0];
  EXPECT_EQ(first["id"], cat.systems.begin()->first);
  EXPECT_TRUE(first.contains("chip_detail"));
  EXPECT_EQ(first["fields"].size(), cat.systems.begin()->second->fields.size());
}

TEST(CatalogEntry, SystemSharingItsIdWithAChip_IsTheSystemUnlessAskedForTheChip) {
  const Catalog& cat = shipped_catalog();
  const auto sys = catalog_entry(cat, "jalapeno-a0");
  ASSERT_TRUE(sys) << sys.error().message;
  EXPECT_EQ(sys->kind, EntryKind::system);
  EXPECT_TRUE(sys->chip_has_same_id);
  ASSERT_TRUE(sys->chip);
  const auto chip = catalog_entry(cat, "jalapeno-a0", EntryKind::chip);
  ASSERT_TRUE(chip);
  EXPECT_EQ(chip->kind, EntryKind::chip);
  EXPECT_FALSE(chip->system);
  EXPECT_EQ(to_json(*chip)["kind"], "chip");
  EXPECT_FALSE(catalog_entry(cat, "jalapeno-a0", EntryKind::model));
}

TEST(CatalogEntry, System_ListsItsAndItsChipsAssumptionsAndEveryCitedSource) {
  const Catalog& cat = shipped_catalog();
  const auto e = catalog_entry(cat, "jalapeno-a0");
  ASSERT_TRUE(e);
  const System& s = *e->system;
  EXPECT_EQ(static_cast<int>(e->assumptions.size()),
            assumptions_in(s.fields) + assumptions_in(s.chip->fields));
  for (const auto& a : e->assumptions) {
    EXPECT_TRUE(a.entry_kind == "system" || a.entry_kind == "chip") << a.entry_kind;
    EXPECT_FALSE(a.reason.empty()) << a.field;
  }
  std::set<std::string> cited;
  for (const auto* fields : {&s.fields, &s.chip->fields})
    for (const auto& f : *fields)
      cited.insert(f.provenance.sources.begin(), f.provenance.sources.end());
  EXPECT_EQ(e->sources.size(), cited.size());
  for (std::size_t i = 1; i < e->sources.size(); ++i)
    EXPECT_LT(e->sources[i - 1].id, e->sources[i].id);
}

TEST(CatalogEntry, SystemSections_DescribeCompositionNetworkXpuAndPower) {
  const auto e = catalog_entry(shipped_catalog(), "jalapeno-a0");
  ASSERT_TRUE(e);
  const System& s = *e->system;
  std::vector<std::string> titles;
  for (const auto& x : e->sections) titles.push_back(x.title);
  ASSERT_GE(titles.size(), 5u);
  EXPECT_EQ(titles[0], "Composition");
  EXPECT_EQ(titles[2], "XPU");
  EXPECT_EQ(titles[3], "Power");
  // The network table: a header, one row per scale-up tier, and the scale-out row.
  EXPECT_EQ(e->sections[1].table.size(), s.scale_up.size() + 2);
  bool rack = false;
  for (const auto& f : e->sections[0].facts)
    rack |= f.label == "compute rack" &&
            f.text.ends_with(std::to_string(s.xpus_per_rack()) + " XPUs per rack");
  EXPECT_TRUE(rack);
  ASSERT_EQ(e->figures.size(), 2u);
  EXPECT_EQ(e->figures[1].fields.size(), s.chip->fields.size());
}

TEST(CatalogEntry, Model_ToJsonCarriesArchitectureAndKind) {
  const auto e = catalog_entry(shipped_catalog(), "deepseek-r1");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, EntryKind::model);
  const Json j = to_json(*e);
  EXPECT_EQ(j["kind"], "model");
  EXPECT_EQ(j["attention"]["kv_lora_rank"], 512);
  EXPECT_TRUE(j.contains("moe"));
  for (const auto& f : j["fields"]) {
    ASSERT_TRUE(f.contains("provenance"));
    if (f["provenance"]["assumption"].get<bool>()) {
      EXPECT_TRUE(f["provenance"].contains("reason"));
    }
  }
}

TEST(CatalogEntry, UnknownId_IsAnEntryProblemWithASuggestion) {
  const auto e = catalog_entry(shipped_catalog(), "jalapeno-a1");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().input, Problem::Input::entry);
  EXPECT_NE(e.error().message.find("did you mean 'jalapeno-a0'"), std::string::npos);
}

}  // namespace
}  // namespace racktwin::app
