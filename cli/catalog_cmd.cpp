// racktwin catalog list / show: the catalog's systems, models and chips, every figure with its
// source or assumption. The views come from app/catalog_views; this file parses and renders.

#include <fmt/core.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "app/catalog_views.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"

namespace racktwin::cli {
namespace {

void print_entry(const app::CatalogEntry& e) {
  if (e.chip_has_same_id)
    fmt::print("(a chip has this id too: racktwin catalog show --kind chip {})\n\n", e.system->id);
  fmt::print("{}\n", e.heading);
  if (!e.description.empty()) fmt::print("  {}\n", e.description);
  for (const auto& s : e.sections) print_section(s, 18);
  for (const auto& [title, fields] : e.figures) {
    Table t({"field", "value", "source"});
    for (const auto& f : fields) {
      const Provenance& p = f.provenance;
      std::string src = p.assumption ? "ASSUMPTION" : fmt::format("{}", fmt::join(p.sources, ", "));
      t.add({f.path, f.text, p.note.empty() ? src : src + " (" + p.note + ")"});
    }
    fmt::print("\n{}\n{}", title, t.render());
  }
  std::string body;
  for (const auto& x : e.assumptions)
    body += fmt::format("  - {} {} = {}: {}\n", x.entry_kind, x.field, x.value, x.reason);
  fmt::print("\nAssumptions ({}; not published, change them in the catalog YAML)\n{}",
             e.assumptions.size(), e.assumptions.empty() ? "  none\n" : body);
  fmt::print("\nSources\n");
  for (const auto& s : e.sources)
    fmt::print("  {}: {}{}\n", s.id, s.citation, s.url.empty() ? "" : " <" + s.url + ">");
}

void print_list(const app::CatalogList& l) {
  fmt::print("Systems ({})\n{}", l.systems.size(), render_rows(l.system_table, {2, 3, 4, 9}));
  fmt::print("\nModels ({})\n{}", l.models.size(), render_rows(l.model_table, {1, 2, 3}));
  fmt::print(
      "\n{} chips, {} number formats, {} sources. 'racktwin catalog show ID' prints every figure "
      "with its source.\n",
      l.chips.size(), l.formats.size(), l.sources.size());
}

}  // namespace

void add_catalog_commands(CLI::App& app, Commands& out) {
  auto* catalog =
      app.add_subcommand("catalog", "List and show the systems, chips and models of the catalog");
  catalog->require_subcommand(1);
  auto list_json = std::make_shared<bool>(false);
  auto* list = catalog->add_subcommand("list", "List every system and model");
  list->add_flag("--json", *list_json, "Machine-readable output");
  out.push_back({list, [list_json](const Catalog& cat) {
                   const auto l = app::catalog_list(cat);
                   *list_json ? print_json(to_json(l)) : print_list(l);
                   return kExitOk;
                 }});

  auto show_json = std::make_shared<bool>(false);
  auto show_id = std::make_shared<std::string>();
  auto show_kind = std::make_shared<std::string>();
  auto* show = catalog->add_subcommand(
      "show", "Show one system, model or chip: every figure with its source, and every assumption");
  show->add_option("ID", *show_id, "Catalog id (see 'racktwin catalog list')")->required();
  show->add_option("--kind", *show_kind, "Which kind of entry when ids coincide")
      ->check(CLI::IsMember({"system", "model", "chip"}));
  show->add_flag("--json", *show_json, "Machine-readable output");
  out.push_back(
      {show, [show_id, show_kind, show_json](const Catalog& cat) {
         std::optional<app::EntryKind> kind;
         for (auto k : {app::EntryKind::system, app::EntryKind::model, app::EntryKind::chip})
           if (*show_kind == app::to_string(k)) kind = k;
         const auto e = app::catalog_entry(cat, *show_id, kind);
         if (!e) return input_error(e.error().message, "'racktwin catalog list' shows every id");
         *show_json ? print_json(to_json(*e)) : print_entry(*e);
         return kExitOk;
       }});
}

}  // namespace racktwin::cli
