#pragma once
// The failure-rehearsal view: a rehearsal file rehearsed off the UI thread (app::rehearse_file; its
// serving sweep, when not stored, simulates in worker processes), shown as the summary, the spare
// racks that hold the goal, the failures and repairs over time with the throughput and the
// attainment beneath them, the classes and every failure.

#include <QFutureWatcher>
#include <QWidget>
#include <expected>
#include <string>

#include "app/rehearse.hpp"
#include "core/catalog.hpp"
#include "gui/rows_model.hpp"

QT_BEGIN_NAMESPACE
class QLabel;
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

 signals:
  void rehearsed();

 private:
  void show_outcome();

  const Catalog& catalog_;
  std::string db_path_;
  QLabel* status_ = nullptr;
  RowsModel* summary_ = nullptr;
  QTableView* summary_view_ = nullptr;
  RowsModel* classes_ = nullptr;
  RowsModel* events_ = nullptr;
  QChartView* charts_[3] = {nullptr, nullptr, nullptr};
  QFutureWatcher<std::expected<app::RehearsalOutcome, app::Failure>>* watcher_ = nullptr;
};

}  // namespace racktwin::gui
