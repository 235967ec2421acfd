#include "gui/rows_model.hpp"

#include <cctype>

namespace racktwin::gui {
namespace {

bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
          c == ',' || c == 'e' || c == '%'))
      return false;
  return std::isdigit(static_cast<unsigned char>(s.back())) || s.back() == '%';
}

}  // namespace

void RowsModel::set_rows(std::vector<std::vector<std::string>> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

int RowsModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || rows_.empty()) return 0;
  return static_cast<int>(rows_.size()) - 1;
}

int RowsModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid() || rows_.empty()) return 0;
  return static_cast<int>(rows_.front().size());
}

QVariant RowsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() + 1 >= static_cast<int>(rows_.size())) return {};
  const auto& row = rows_[static_cast<std::size_t>(index.row()) + 1];
  if (index.column() >= static_cast<int>(row.size())) return {};
  const std::string& cell = row[static_cast<std::size_t>(index.column())];
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) return QString::fromStdString(cell);
  if (role == Qt::TextAlignmentRole)
    return QVariant::fromValue(Qt::Alignment(looks_numeric(cell) ? Qt::AlignRight | Qt::AlignVCenter
                                                                 : Qt::AlignLeft | Qt::AlignVCenter));
  return {};
}

QVariant RowsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || rows_.empty()) return {};
  if (orientation == Qt::Vertical) return section + 1;
  if (section < 0 || section >= static_cast<int>(rows_.front().size())) return {};
  return QString::fromStdString(rows_.front()[static_cast<std::size_t>(section)]);
}

}  // namespace racktwin::gui
