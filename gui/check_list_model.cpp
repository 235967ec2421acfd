#include "gui/check_list_model.hpp"

#include <algorithm>

namespace racktwin::gui {

void CheckListModel::set_items(std::vector<std::pair<std::string, std::string>> items) {
  beginResetModel();
  items_.clear();
  for (auto& [id, tip] : items) items_.push_back({std::move(id), std::move(tip), true});
  endResetModel();
  set_checked(checked_);
}

void CheckListModel::set_checked(const std::vector<std::string>& ids) {
  beginResetModel();
  std::erase_if(items_, [](const Item& i) { return !i.known; });
  for (const auto& id : ids)
    if (std::none_of(items_.begin(), items_.end(), [&](const Item& i) { return i.id == id; }))
      items_.push_back({id, "not in the catalog", false});
  checked_ = ids;
  endResetModel();
}

std::vector<std::string> CheckListModel::checked() const {
  return checked_;
}

int CheckListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(items_.size());
}

QVariant CheckListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Item& it = items_[static_cast<std::size_t>(index.row())];
  const bool on = std::find(checked_.begin(), checked_.end(), it.id) != checked_.end();
  switch (role) {
    case Qt::DisplayRole:
      return QString::fromStdString(it.id);
    case Qt::ToolTipRole:
      return QString::fromStdString(it.tip);
    case Qt::CheckStateRole:
      return on ? Qt::Checked : Qt::Unchecked;
    default:
      return {};
  }
}

bool CheckListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || index.row() >= rowCount() || role != Qt::CheckStateRole) return false;
  const std::string& id = items_[static_cast<std::size_t>(index.row())].id;
  const bool on = value.toInt() == Qt::Checked;
  std::erase(checked_, id);
  if (on) checked_.push_back(id);  // the first id stays first: a scenario's baseline
  emit dataChanged(index, index, {Qt::CheckStateRole});
  emit toggled();
  return true;
}

Qt::ItemFlags CheckListModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable;
}

}  // namespace racktwin::gui
