#pragma once
// A list of ids with a check box each (the catalog's systems or models a scenario selects), in a
// fixed order; ids checked that the list does not hold are kept and shown after it, so that a
// selection the catalog does not know (a typo the check reports) is not lost.

#include <QAbstractListModel>
#include <string>
#include <vector>

namespace racktwin::gui {

class CheckListModel : public QAbstractListModel {
  Q_OBJECT
 public:
  explicit CheckListModel(QObject* parent = nullptr) : QAbstractListModel(parent) {}

  // The ids offered, with a tooltip each.
  void set_items(std::vector<std::pair<std::string, std::string>> items);
  // Checks exactly `ids`, in their order; emits nothing.
  void set_checked(const std::vector<std::string>& ids);
  // The checked ids: in the order they were set, then the ones checked since, in that order.
  std::vector<std::string> checked() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

 signals:
  // A user checked or unchecked an id.
  void toggled();

 private:
  struct Item {
    std::string id, tip;
    bool known = true;  // offered, not only checked
  };
  std::vector<Item> items_;
  std::vector<std::string> checked_;  // in order
};

}  // namespace racktwin::gui
