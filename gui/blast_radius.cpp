#include "gui/blast_radius.hpp"
#include "gui/widgets.hpp"

#include <QColor>
#include <QPalette>

namespace racktwin::gui {
namespace {

}  // namespace

QString blast_radius_html(const app::FailureAssessment& a, const QString& failed, int replica_xpus,
                          const std::string& note) {
  const int before = a.placement_before ? static_cast<int>(a.placement_before->replicas.size()) : 0;
  const int after = a.placement_after ? static_cast<int>(a.placement_after->replicas.size()) : 0;
  QString t = "<b>" + failed.toHtmlEscaped() + "</b> failed, in one domain of " + QString::number(a.xpus) +
              " XPUs:<br>";
  t += QString("lost %1 XPUs, cut off %2, slowed %3; %4 in service<br>")
           .arg(a.lost).arg(a.cut_off).arg(a.slowed).arg(a.in_service);
  t += QString("scale-up bandwidth left %1%<br>").arg(a.scale_up_left * 100, 0, 'f', 2);
  t += QString("replicas of %1 XPUs: %2 before, %3 after (%4 lost)<br>")
           .arg(replica_xpus).arg(before).arg(after).arg(before - after);
  t += QString("capacity left: %1% of the XPUs, %2% of the replicas<br>")
           .arg(a.xpus > 0 ? 100.0 * a.in_service / a.xpus : 0.0, 0, 'f', 2)
           .arg(before > 0 ? 100.0 * after / before : 0.0, 0, 'f', 2);
  for (const auto& g : a.affected)
    t += QString("<br>%1 %2 XPUs: %3").arg(q(topology::to_string(g.effect))).arg(g.xpus.size())
             .arg(q(g.how).toHtmlEscaped());
  t += "<p><span style='color:#d64541'>■</span> lost &nbsp;<span style='color:#9b59b6'>■</span> cut "
       "off &nbsp;<span style='color:#f39c12'>■</span> slowed</p><p><i>" +
       q(note).toHtmlEscaped() + "</i></p>";
  return t;
}

QColor slot_fill(topology::PartKind kind, topology::Effect effect, const QPalette& pal) {
  switch (effect) {
    case topology::Effect::lost: return QColor(214, 69, 65);
    case topology::Effect::cut_off: return QColor(155, 89, 182);
    case topology::Effect::slowed: return QColor(243, 156, 18);
    case topology::Effect::none: break;
  }
  switch (kind) {
    case topology::PartKind::switch_tray:
    case topology::PartKind::onboard_switch:
    case topology::PartKind::spine: return pal.color(QPalette::AlternateBase).darker(115);
    case topology::PartKind::host: return pal.color(QPalette::Base).darker(108);
    default: return pal.color(QPalette::Base);
  }
}

}  // namespace racktwin::gui
