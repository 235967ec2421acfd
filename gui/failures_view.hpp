#pragma once
// The failure-rehearsal view: a rehearsal file rehearsed off the UI thread (app::rehearse_file; its
// serving sweep, when not stored, simulates in worker processes), shown as the summary, the spare
// racks that hold the goal, the failures and repairs over time with the throughput and the
// attainment beneath them, the classes and every failure. "Replay the worst failure" (or a
// double-click on a failure) simulates that failure request by request (app::replay_failure, off the
// UI thread, in worker processes) and shows the replay's table and its chart in a window of its own.

#include <QFutureWatcher>
#include <QWidget>
#include <expected>
#include <optional>
#include <string>

#include "app/rehearse.hpp"
#include "app/rehearse_replay.hpp"
#include "core/catalog.hpp"
#include "gui/rows_model.hpp"

QT_BEGIN_NAMESPACE
class QDialog;
class QLabel;
class QPushButton;
class QTableView;
QT_END_NAMESPACE
QT_FORWARD_DECLARE_CLASS(QChartView)

namespace racktwin::gui {

class FailuresView : public QWidget {
  Q_OBJECT
 public:
  FailuresView(const Catalog& catalog, std::string db_path, QWidget* parent = nullptr);
  ~FailuresView() override;

  // Rehearses the file off the UI thread; rehearsed() is emitted when it is shown (or failed).
  void open_rehearsal(const QString& file);
  QString status() const;
  RowsModel* summary_model() const { return summary_; }
  RowsModel* classes_model() const { return classes_; }
  RowsModel* events_model() const { return events_; }
  int charts_shown() const;

  // Replays a failure of the rehearsal shown ("worst" or its number); replayed() is emitted when
  // the replay is shown (or failed: replay_status() says why).
  void replay(const std::string& which);
  RowsModel* replay_model() const { return replay_rows_; }
  QString replay_status() const;
  bool replay_chart_shown() const;
  QWidget* replay_window() const;

 signals:
  void rehearsed();
  void replayed();

 private:
  void show_outcome();
  void show_replay();

  const Catalog& catalog_;
  std::string db_path_;
  QLabel* status_ = nullptr;
  RowsModel* summary_ = nullptr;
  QTableView* summary_view_ = nullptr;
  RowsModel* classes_ = nullptr;
  RowsModel* events_ = nullptr;
  QChartView* charts_[3] = {nullptr, nullptr, nullptr};
  QFutureWatcher<std::expected<app::RehearsalOutcome, app::Failure>>* watcher_ = nullptr;
  std::optional<app::RehearsalOutcome> outcome_;  // the rehearsal shown
  QPushButton* replay_button_ = nullptr;
  QDialog* replay_window_ = nullptr;
  QLabel* replay_text_ = nullptr;
  RowsModel* replay_rows_ = nullptr;
  QTableView* replay_table_ = nullptr;
  QChartView* replay_chart_ = nullptr;
  QFutureWatcher<std::expected<app::ReplayOutcome, std::string>>* replay_watcher_ = nullptr;
};

}  // namespace racktwin::gui
