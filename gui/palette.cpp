#include "gui/palette.hpp"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace racktwin::gui {
namespace {

bool g_dark = false;

QPalette dark() {
  QPalette p;
  const QColor window(45, 45, 48), base(30, 30, 32), text(220, 220, 220), mid(90, 90, 96);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, window);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::Mid, mid);
  p.setColor(QPalette::Highlight, QColor(42, 130, 218));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Link, QColor(95, 170, 240));
  p.setColor(QPalette::Disabled, QPalette::Text, mid.lighter(130));
  p.setColor(QPalette::Disabled, QPalette::ButtonText, mid.lighter(130));
  return p;
}

}  // namespace

void apply_palette(bool is_dark) {
  g_dark = is_dark;
  QApplication::setStyle(QStyleFactory::create("Fusion"));
  QApplication::setPalette(is_dark ? dark() : QApplication::style()->standardPalette());
}

bool dark_palette() { return g_dark; }

void match_palette(QChart* chart) {
  if (chart == nullptr || !g_dark) return;
  QList<QColor> colours;
  for (auto* s : chart->series()) {
    const QVariant c = s->property("color");
    colours << (c.isValid() ? c.value<QColor>() : QColor());
  }
  chart->setTheme(QChart::ChartThemeDark);
  // The theme recolours the series; keep the project's colours (they mean the same in both).
  for (int i = 0; i < chart->series().size(); ++i)
    if (colours[i].isValid()) chart->series()[i]->setProperty("color", colours[i]);
}

}  // namespace racktwin::gui
