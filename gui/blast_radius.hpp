#pragma once
// What failing a part does, as the Systems tab's rack and domain views say it: the XPUs lost, cut
// off and slowed, the capacity left (XPUs in service, scale-up bandwidth, replicas of a size before
// and after) and each affected group, with the colours' key and the drawing's note.

#include <QColor>
#include <QPalette>
#include <QString>
#include <string>

#include "app/topology.hpp"

namespace racktwin::gui {

QString blast_radius_html(const app::FailureAssessment& a, const QString& failed, int replica_xpus,
                          const std::string& note);

// The fill of a drawn slot: by what the failure does to it, else by the part's kind.
QColor slot_fill(topology::PartKind kind, topology::Effect effect, const QPalette& pal);

}  // namespace racktwin::gui
