#pragma once
// A read-only table of display rows (the first row is the header), for the views whose numbers
// come formatted from app/ (catalog tables) or from the view's own formatting of a use case's
// value (runs, plan quarters). Numbers are right-aligned; the raw row strings are the display role.

#include <QAbstractTableModel>
#include <string>
#include <vector>

namespace racktwin::gui {

class RowsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  explicit RowsModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}

  // Replaces every row; `rows[0]` is the header.
  void set_rows(std::vector<std::vector<std::string>> rows);
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace racktwin::gui
