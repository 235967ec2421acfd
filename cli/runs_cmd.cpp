// racktwin runs list | show | compare | export | delete: the results database.

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "app/describe.hpp"
#include "app/plots.hpp"
#include "cli/commands.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "app/runs.hpp"
#include "db/compare.hpp"
#include "db/export.hpp"

namespace racktwin::cli {
namespace {

using json = nlohmann::ordered_json;

struct RunsArgs {
  std::string db;
  std::vector<std::string> ids;
  bool json = false;
  std::string csv_dir;
  bool force = false;
  std::int64_t plan = 0;  // runs plans ID
  bool write = false;     // the command changes the database
};

// The database and the runs named on the command line; prints what is wrong otherwise.
struct Opened {
  db::Store store;
  std::vector<std::int64_t> ids;
};
std::expected<Opened, int> open_runs(const RunsArgs& a) {
  // Only delete writes; everything else reads, also a database this user may not write.
  auto store = open_store(resolve_db_path(a.db),
                          a.write ? db::Store::Mode::existing : db::Store::Mode::read);
  if (!store) return std::unexpected(store.error());
  Opened o{std::move(*store), {}};
  for (const auto& text : a.ids) {
    const auto id = resolve_run(o.store, text);
    if (!id) return std::unexpected(kExitInput);
    o.ids.push_back(*id);
  }
  return o;
}

int list_runs(const RunsArgs& a) {
  auto o = open_runs(a);
  if (!o) return o.error();
  const db::Store& store = o->store;
  const auto runs = store.list();
  if (a.json) {
    json out = json::array();
    for (const auto& r : runs) out.push_back(db::run_info_json(r));
    print_json(json{{"db", store.path()}, {"runs", out}});
    return kExitOk;
  }
  if (runs.empty()) {
    fmt::print("No runs in {} yet.\n", store.path());
    return kExitOk;
  }
  fmt::print("{} runs in {}\n{}", runs.size(), store.path(),
             render_rows(app::run_list_table(runs), {0, 3, 4, 5, 7}));
  return kExitOk;
}

// The stored plans, newest first; with an id, one plan's whole `racktwin plan --json` document.
int list_plans(const RunsArgs& a) {
  auto o = open_runs(a);
  if (!o) return o.error();
  if (a.plan > 0) {
    const auto p = o->store.plan(a.plan);
    if (!p) return input_error("no plan " + std::to_string(a.plan) + " in " + o->store.path(),
                               "racktwin runs plans lists the stored plans");
    fmt::print("{}\n", json::parse(p->document).dump(2));
    return kExitOk;
  }
  const auto plans = o->store.plans();
  if (a.json) {
    json out = json::array();
    for (const auto& p : plans)
      out.push_back({{"id", p.id}, {"name", p.name}, {"file", p.file}, {"hash", p.hash},
                     {"created_at", p.created_at}, {"racktwin", p.version}, {"commit", p.commit},
                     {"throughput_runs", p.throughput_runs}});
    fmt::print("{}\n", json{{"db", o->store.path()}, {"plans", out}}.dump(2));
    return kExitOk;
  }
  fmt::print("{} plans in {}\n{}", plans.size(), o->store.path(),
             render_rows(app::plan_list_table(plans), {0}));
  return kExitOk;
}

int show_run(const RunsArgs& a) {
  auto o = open_runs(a);
  if (!o) return o.error();
  const auto run = o->store.load(o->ids[0], {.percentiles = false, .timeseries = false});
  if (a.json) {
    print_json(db::run_json(*run, {.percentiles = false, .timeseries = false}));
    return kExitOk;
  }
  print_sections(app::describe(*run));
  return kExitOk;
}

int compare_runs(const RunsArgs& a) {
  auto o = open_runs(a);
  if (!o) return o.error();
  const auto ra = o->store.load(o->ids[0], {.percentiles = false}),
             rb = o->store.load(o->ids[1], {.percentiles = false});
  const db::Comparison c = db::compare(*ra, *rb);
  if (a.json) {
    print_json(db::comparison_json(c));
    return kExitOk;
  }
  for (const auto& line : app::comparison_lines(c)) fmt::print("{}\n", line);
  const auto rows = app::comparison_table(c);
  fmt::print("{}", render_rows(rows, numbers_from(1, rows.front().size())));
  return kExitOk;
}

int export_run(const RunsArgs& a) {
  if (a.csv_dir.empty() == !a.json) {
    fmt::print(stderr, "racktwin runs export: give one of --csv DIR or --json\n");
    return kExitInput;
  }
  auto o = open_runs(a);
  if (!o) return o.error();
  const std::int64_t id = o->ids[0];
  const auto run = o->store.load(id, {.percentiles = true, .timeseries = true});
  if (a.json) {
    print_json(db::run_json(*run));
    return kExitOk;
  }
  const auto files = app::export_csv(*run, a.csv_dir);
  if (!files) {
    fmt::print(stderr, "racktwin: {}\n", files.error());
    return kExitRuntime;
  }
  fmt::print("Run {} exported to {}:", id, a.csv_dir);
  for (const auto& f : *files) fmt::print(" {}", f);
  fmt::print("\n");
  return kExitOk;
}

int delete_run(const RunsArgs& a) {
  auto o = open_runs(a);
  if (!o) return o.error();
  const std::int64_t id = o->ids[0];
  const db::RunInfo info = *o->store.info(id);
  if (info.state() == "running" && !a.force) {
    fmt::print(stderr,
               "racktwin: run {} is still running (process {}); stop it first, or give --force\n",
               id, info.pid);
    return kExitInput;
  }
  o->store.remove(id);
  fmt::print("Deleted run {} from {}\n", id, o->store.path());
  return kExitOk;
}

}  // namespace

void add_runs_commands(CLI::App& app, Commands& out) {
  auto* runs = app.add_subcommand("runs",
                                  "The results database: list, show, compare, export, "
                                  "delete stored runs");
  runs->require_subcommand(1);
  auto add = [&](const char* name, const char* help, int ids, auto fn,
                 const std::function<void(CLI::App*, RunsArgs&)>& extra = {}) {
    auto a = std::make_shared<RunsArgs>();
    auto* c = runs->add_subcommand(name, help);
    if (ids > 0)
      c->add_option("ID", a->ids, ids == 1 ? "Run id (or latest)" : "Two run ids (or latest)")
          ->required()
          ->expected(ids);
    add_db_option(c, a->db);
    if (extra) extra(c, *a);
    out.push_back({c, [a, fn](const Catalog&) { return fn(*a); }});
  };
  add("list", "List the stored runs, newest first", 0, list_runs,
      [](CLI::App* c, RunsArgs& a) { c->add_flag("--json", a.json, "Machine-readable"); });
  add("show", "One run: its record, the assumptions it rests on, and every point", 1, show_run,
      [](CLI::App* c, RunsArgs& a) { c->add_flag("--json", a.json, "Machine-readable"); });
  add("compare", "Two runs side by side: scenario, record and result differences", 2, compare_runs,
      [](CLI::App* c, RunsArgs& a) {
        c->add_flag("--json", a.json, "Every metric of every point");
      });
  add("export", "Write a run as CSV files (--csv DIR) or print it as JSON (--json)", 1, export_run,
      [](CLI::App* c, RunsArgs& a) {
        auto* csv = c->add_option("--csv", a.csv_dir, "Directory for the CSV files");
        c->add_flag("--json", a.json, "The whole run as JSON on standard output")->excludes(csv);
      });
  add("plans", "List the stored fleet plans (racktwin plan), or print one as JSON: plans ID", 0,
      list_plans, [](CLI::App* c, RunsArgs& a) {
        c->add_option("ID", a.plan, "Plan id: print its whole document")->check(CLI::PositiveNumber);
        c->add_flag("--json", a.json, "Machine-readable list");
      });
  add("delete", "Delete a run and everything stored with it", 1, delete_run,
      [](CLI::App* c, RunsArgs& a) {
        c->add_flag("--force", a.force, "Delete even a run whose process still runs");
        a.write = true;
      });
}

}  // namespace racktwin::cli
