#pragma once
// What the catalog holds, as `racktwin catalog list` and `catalog show` and the GUI present it:
// every system, model and chip with each figure's source or assumption, and the citations.
//
// Contract: pure functions of the catalog. The to_json functions here are the only JSON form of
// catalog entries; keys come in a fixed order.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/json.hpp"
#include "app/problem.hpp"
#include "app/text.hpp"
#include "core/catalog.hpp"
#include "db/store.hpp"

namespace racktwin::app {

Json to_json(const Provenance& p);   // {sources, assumption, reason?, note?}
Json to_json(const FieldRecord& f);  // {path, value, provenance}
Json to_json(const Chip& c);
Json to_json(const System& s);  // with the chip's entry as chip_detail
Json to_json(const Model& m);

struct CatalogList {
  struct SystemEntry {
    std::shared_ptr<const System> system;
    int assumptions = 0;  // figures of the system and its chip flagged as assumptions
  };
  std::vector<SystemEntry> systems;  // by id
  std::vector<std::shared_ptr<const Model>> models;
  std::vector<std::shared_ptr<const Chip>> chips;
  std::vector<Source> sources;
  std::vector<NumberFormat> formats;
  // One row per system (XPU, tray, rack, domain, memory, power, scale-up, assumptions) and per
  // model (parameters, layers, attention, experts, default weights); the first row is the header.
  std::vector<std::vector<std::string>> system_table, model_table;
};
Json to_json(const CatalogList& l);
CatalogList catalog_list(const Catalog& cat);

enum class EntryKind { system, model, chip };
std::string to_string(EntryKind k);

// One entry with every figure's provenance.
struct CatalogEntry {
  EntryKind kind = EntryKind::system;
  std::shared_ptr<const System> system;  // kind system
  std::shared_ptr<const Model> model;    // kind model
  std::shared_ptr<const Chip> chip;      // kind chip, and the chip of a system
  bool chip_has_same_id = false;         // a system whose id a chip has too
  std::string heading;                   // "id - name"
  std::string description;               // may be empty
  // What the entry is: composition, network, XPU and power of a system; architecture and weight
  // variants of a model; memory, peak and power of a chip.
  std::vector<Section> sections;
  struct Figures {
    std::string title;  // "System figures", "Chip figures (ID)", "Figures"
    FieldRecords fields;
  };
  std::vector<Figures> figures;  // every figure with its provenance
  // The figures flagged as assumptions: the system's then its chip's, or the entry's own.
  std::vector<db::Assumption> assumptions;
  std::vector<Source> sources;  // every source the figures cite, by id
  Json recipes = Json::array();  // a system's published multi-node deployments
};
Json to_json(const CatalogEntry& e);  // the entry's JSON with its "kind"

// The system, model or chip with this id; ids are unique per kind, and `kind` chooses when a chip
// shares its id with a system. Problem::Input::entry when there is none.
Result<CatalogEntry> catalog_entry(const Catalog& cat, const std::string& id,
                                   std::optional<EntryKind> kind = std::nullopt);

}  // namespace racktwin::app
