// racktwin-gui: the desktop application over the same use cases as the racktwin CLI.
#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>
#include <QTabWidget>
#include <QTimer>

#include "app/locations.hpp"
#include "gui/main_window.hpp"
#include "scenarios/catalog_loader.hpp"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("racktwin-gui");
  QCommandLineParser cli;
  cli.setApplicationDescription("racktwin: the digital twin of rack-scale AI inference systems");
  cli.addHelpOption();
  cli.addOption({"catalog", "Catalog directory (default: $RACKTWIN_CATALOG, else the shipped one)",
                 "DIR"});
  cli.addOption({"db", "Results database (default: $RACKTWIN_DB, else racktwin.db here)", "FILE"});
  cli.addOption({"plan", "A plan file to open", "FILE"});
  cli.addOption({"rehearsal", "A rehearsal file to open (the Failures tab)", "FILE"});
  cli.addOption({"replay",
                 "With --rehearsal: replay this failure request by request once rehearsed ('worst' "
                 "or its number); --screenshot then saves the replay's window",
                 "WHICH"});
  cli.addOption({"scenario", "A scenario file to open in the editor (the Scenario tab)", "FILE"});
  cli.addOption({"run", "Run the scenario of --scenario at start (the Results tab shows it)"});
  cli.addOption({"points",
                 "Published points overlaid on the Results view's Pareto charts (default: the "
                 "reference/published.yaml beside the catalog)",
                 "FILE"});
  cli.addOption({"tab", "The tab to show first (Systems, Runs, Fleet plan, ...)", "NAME"});
  cli.addOption({"system", "A system to select in the Systems tab (its figures and rack)", "ID"});
  cli.addOption({"fail", "A part of the selected system's rack to fail (its blast radius)", "PART"});
  cli.addOption({"domain", "Show the selected system's whole scale-up domain; --fail fails a part of it"});
  cli.addOption({"runs-filter", "Filter the Runs table by this text (any column)", "TEXT"});
  cli.addOption({"screenshot",
                 "Save the window as PNG once it is shown (and the plan or rehearsal is done, or "
                 "the scenario checked or run), then quit",
                 "FILE"});
  cli.process(app);
  const std::string dir = racktwin::app::catalog_dir(cli.value("catalog").toStdString());
  auto cat = racktwin::load_catalog_dir(dir);
  if (!cat) {
    QString all;
    for (const auto& d : cat.error()) all += QString::fromStdString(d.to_string()) + "\n";
    QMessageBox::critical(nullptr, "racktwin", "The catalog " + QString::fromStdString(dir) +
                                                   " does not load:\n" + all);
    return 2;
  }
  racktwin::gui::MainWindow w(*cat, racktwin::app::db_path(cli.value("db").toStdString()));
  w.results()->set_points_file(racktwin::app::points_file(cli.value("points").toStdString(), dir));
  if (cli.isSet("scenario")) {
    w.tabs()->setCurrentWidget(w.scenario());
    w.scenario()->open_file(cli.value("scenario"));
  }
  if (cli.isSet("tab"))
    for (int i = 0; i < w.tabs()->count(); ++i)
      if (w.tabs()->tabText(i) == cli.value("tab")) w.tabs()->setCurrentIndex(i);
  if (cli.isSet("system")) w.select_system(cli.value("system"));
  if (cli.isSet("runs-filter")) w.filter_runs(cli.value("runs-filter"));
  if (cli.isSet("domain")) {
    w.show_domain();
    if (cli.isSet("fail")) w.domain()->fail_part(cli.value("fail"));
  } else if (cli.isSet("fail")) {
    w.show_rack();
    w.fail_part(cli.value("fail"));
  }
  w.show();
  const QString shot = cli.value("screenshot");
  auto save = [&w, shot] {
    const bool ok = w.grab().save(shot, "PNG");
    QApplication::exit(ok ? 0 : 1);
  };
  if (cli.isSet("rehearsal") && cli.isSet("replay")) {
    auto* f = w.failures();
    const std::string which = cli.value("replay").toStdString();
    QObject::connect(f, &racktwin::gui::FailuresView::rehearsed, f, [f, which] { f->replay(which); });
    if (!shot.isEmpty())
      QObject::connect(f, &racktwin::gui::FailuresView::replayed, f, [f, shot] {
        QTimer::singleShot(500, [f, shot] {
          const bool ok = f->replay_window()->grab().save(shot, "PNG");
          QApplication::exit(ok ? 0 : 1);
        });
      });
    w.tabs()->setCurrentWidget(f);
    f->open_rehearsal(cli.value("rehearsal"));
  } else if (cli.isSet("rehearsal")) {
    if (!shot.isEmpty())
      QObject::connect(w.failures(), &racktwin::gui::FailuresView::rehearsed, &w,
                       [save] { QTimer::singleShot(500, save); });
    w.tabs()->setCurrentWidget(w.failures());
    w.failures()->open_rehearsal(cli.value("rehearsal"));
  } else if (cli.isSet("plan")) {
    if (!shot.isEmpty())
      QObject::connect(&w, &racktwin::gui::MainWindow::planned, &w,
                       [save] { QTimer::singleShot(500, save); });
    w.open_plan(cli.value("plan"));
  } else if (cli.isSet("scenario") && cli.isSet("run")) {
    if (!shot.isEmpty())
      QObject::connect(w.scenario(), &racktwin::gui::ScenarioView::run_done, &w,
                       [save] { QTimer::singleShot(1000, save); });
    w.scenario()->run();
  } else if (cli.isSet("scenario") && !shot.isEmpty()) {
    QObject::connect(w.scenario(), &racktwin::gui::ScenarioView::checked, &w,
                     [save] { QTimer::singleShot(500, save); });
  } else if (!shot.isEmpty()) {
    QTimer::singleShot(1000, save);
  }
  return QApplication::exec();
}
