#pragma once
// The common keys of a scenario as a form beside its text: name, seed, systems and models (the
// catalog's, checked), the first workload's lengths and the concurrency. A field edits the text in
// place (scenarios/yaml_edit.hpp): only that value changes, the rest of the text and its comments
// stay, and the edit is one undo step of the editor. The fields show the text's values after each
// check (yaml_values of the checked text).

#include <QWidget>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog.hpp"
#include "gui/check_list_model.hpp"
#include "scenarios/yaml_edit.hpp"

QT_BEGIN_NAMESPACE
class QLabel;
class QLineEdit;
class QPlainTextEdit;
QT_END_NAMESPACE

namespace racktwin::gui {

class ScenarioForm : public QWidget {
  Q_OBJECT
 public:
  ScenarioForm(const Catalog& catalog, QPlainTextEdit* editor, QWidget* parent = nullptr);

  // The key paths the form reads (for yaml_values).
  static const std::vector<std::string>& paths();
  // Shows the values read from the text; nothing: the text is not YAML (the fields keep theirs,
  // disabled). A field with the keyboard focus keeps what is being typed.
  void show_values(const std::optional<std::map<std::string, YamlValue>>& values);
  // Sets `path` to `value` (one line of YAML) in the editor's text; false, with the reason shown,
  // when it cannot be done in place.
  bool apply(const std::string& path, const std::string& value);
  QString status() const;
  CheckListModel* systems() const { return systems_; }
  CheckListModel* models() const { return models_; }
  QLineEdit* field(const std::string& path) const;

 private:
  QLineEdit* line_field(const std::string& path, const QString& tip);
  void commit(const std::string& path, QLineEdit* edit);

  QPlainTextEdit* editor_;
  CheckListModel* systems_ = nullptr;
  CheckListModel* models_ = nullptr;
  std::map<std::string, QLineEdit*> fields_;
  QLabel* workload_ = nullptr;
  QLabel* status_ = nullptr;
};

}  // namespace racktwin::gui
