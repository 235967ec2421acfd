#include "gui/scenario_form.hpp"
#include "gui/widgets.hpp"

#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QRegularExpressionValidator>
#include <QTextCursor>

namespace racktwin::gui {
namespace {

// Replaces only the part of the editor's text that differs, as one undo step.
void replace_changed(QPlainTextEdit* editor, const QString& before, const QString& after) {
  qsizetype head = 0;
  while (head < before.size() && head < after.size() && before[head] == after[head]) ++head;
  qsizetype tail = 0;
  while (tail < before.size() - head && tail < after.size() - head &&
         before[before.size() - 1 - tail] == after[after.size() - 1 - tail])
    ++tail;
  QTextCursor c(editor->document());
  c.beginEditBlock();
  c.setPosition(static_cast<int>(head));
  c.setPosition(static_cast<int>(before.size() - tail), QTextCursor::KeepAnchor);
  c.insertText(after.mid(head, after.size() - head - tail));
  c.endEditBlock();
}

QListView* check_list(CheckListModel* model, QWidget* parent) {
  auto* v = new QListView(parent);
  v->setModel(model);
  v->setMinimumHeight(90);
  return v;
}

}  // namespace

const std::vector<std::string>& ScenarioForm::paths() {
  static const std::vector<std::string> p{"name",
                                          "seed",
                                          "systems",
                                          "models",
                                          "workloads[0].id",
                                          "workloads[0].kind",
                                          "workloads[0].isl",
                                          "workloads[0].osl",
                                          "concurrency",
                                          "serving",
                                          "engine"};
  return p;
}

ScenarioForm::ScenarioForm(const Catalog& catalog, QPlainTextEdit* editor, QWidget* parent)
    : QWidget(parent), editor_(editor) {
  auto* form = new QFormLayout(this);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->addRow("name", line_field("name", "The scenario's name in reports and results"));
  auto* seed = line_field("seed", "The master seed (digits)");
  seed->setValidator(new QRegularExpressionValidator(QRegularExpression("[0-9]{1,19}"), seed));
  form->addRow("seed", seed);
  systems_ = new CheckListModel(this);
  models_ = new CheckListModel(this);
  std::vector<std::pair<std::string, std::string>> items;
  for (const auto& [id, s] : catalog.systems) items.emplace_back(id, s->name);
  systems_->set_items(std::move(items));
  items.clear();
  for (const auto& [id, m] : catalog.models) items.emplace_back(id, m->name);
  models_->set_items(std::move(items));
  form->addRow("systems", check_list(systems_, this));
  form->addRow("models", check_list(models_, this));
  connect(systems_, &CheckListModel::toggled, this,
          [this] { apply("systems", yaml_flow_list(systems_->checked())); });
  connect(models_, &CheckListModel::toggled, this,
          [this] { apply("models", yaml_flow_list(models_->checked())); });
  workload_ = new QLabel(this);
  workload_->setWordWrap(true);
  form->addRow("first workload", workload_);
  auto* digits = new QRegularExpressionValidator(QRegularExpression("[0-9]{1,8}"), this);
  form->addRow("ISL", line_field("workloads[0].isl", "Input tokens per request (the most drawn)"));
  form->addRow("OSL", line_field("workloads[0].osl", "Output tokens per request (the most drawn)"));
  field("workloads[0].isl")->setValidator(digits);
  field("workloads[0].osl")->setValidator(digits);
  form->addRow("concurrency", line_field("concurrency",
                                         "Clients per point: 8, [1, 4, 16] or {from: 1, to: 1024, "
                                         "factor: 2}"));
  form->addRow("serving", line_field("serving",
                                     "Serving modes, each a point of every layout: aggregated, "
                                     "1p3d (1 prefill, 3 decode replicas) or 3p1d/tp2 (the "
                                     "prefill replicas on tp2), e.g. [aggregated, 1p1d]; empty: "
                                     "aggregated"));
  form->addRow("engine", line_field("engine",
                                    "The serving engine's limits and admission, e.g. "
                                    "{reserve_output: 0, max_seqs: 256} (docs/scenarios.md, "
                                    "Engine); empty: the defaults"));
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  form->addRow(status_);
}

QLineEdit* ScenarioForm::line_field(const std::string& path, const QString& tip) {
  auto* e = new QLineEdit(this);
  e->setToolTip(tip);
  fields_[path] = e;
  connect(e, &QLineEdit::editingFinished, this, [this, path, e] { commit(path, e); });
  return e;
}

QLineEdit* ScenarioForm::field(const std::string& path) const {
  const auto it = fields_.find(path);
  return it == fields_.end() ? nullptr : it->second;
}

void ScenarioForm::commit(const std::string& path, QLineEdit* edit) {
  if (!edit->isModified()) return;
  edit->setModified(false);
  const std::string text = edit->text().trimmed().toStdString();
  if (text.empty()) {
    status_->setText(q("An empty " + path + " is not set by the form; edit the text."));
    return;
  }
  // Names are text; the other fields are YAML values (numbers, lists, mappings).
  apply(path, path == "name" ? yaml_scalar(text) : text);
}

bool ScenarioForm::apply(const std::string& path, const std::string& value) {
  const QString before = editor_->toPlainText();
  auto edited = set_yaml_value(before.toStdString(), path, value);
  if (!edited) {
    status_->setText(q(edited.error()));
    return false;
  }
  status_->setText(q("Set " + path + " to " + value + " in the text."));
  replace_changed(editor_, before, q(*edited));
  return true;
}

QString ScenarioForm::status() const {
  return status_->text();
}

void ScenarioForm::show_values(const std::optional<std::map<std::string, YamlValue>>& values) {
  setEnabled(values.has_value());
  if (!values) return;
  auto get = [&](const std::string& p) -> const YamlValue* {
    const auto it = values->find(p);
    return it == values->end() ? nullptr : &it->second;
  };
  for (auto& [path, edit] : fields_) {
    if (edit->hasFocus() && edit->isModified()) continue;
    const YamlValue* v = get(path);
    edit->setText(v == nullptr ? QString() : q(v->scalar ? *v->scalar : v->flow));
    edit->setModified(false);
  }
  const YamlValue* s = get("systems");
  const YamlValue* m = get("models");
  systems_->set_checked(s != nullptr && s->items ? *s->items : std::vector<std::string>{});
  models_->set_checked(m != nullptr && m->items ? *m->items : std::vector<std::string>{});
  const YamlValue* kind = get("workloads[0].kind");
  const YamlValue* id = get("workloads[0].id");
  const std::string k = kind != nullptr && kind->scalar ? *kind->scalar : "inferencex";
  const bool lengths = k == "inferencex" || k == "poisson";
  workload_->setText(id == nullptr && kind == nullptr && get("workloads[0].isl") == nullptr
                         ? "none"
                         : q((id != nullptr ? id->flow + ", " : std::string()) + "kind " + k +
                             (lengths ? "" : " (no fixed lengths)")));
  field("workloads[0].isl")->setEnabled(lengths);
  field("workloads[0].osl")->setEnabled(lengths);
}

}  // namespace racktwin::gui
