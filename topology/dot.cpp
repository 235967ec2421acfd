#include "topology/dot.hpp"

#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/property_map/transform_value_property_map.hpp>
#include <sstream>

namespace racktwin::topology {
namespace {

// Each network link once: its second arc is left out.
struct FirstArcs {
  const Graph* g = nullptr;
  bool operator()(Graph::edge_descriptor e) const { return !(*g)[e].mirror; }
};

std::string shape(PartKind k) {
  switch (k) {
    case PartKind::xpu:
      return "box";
    case PartKind::compute_tray:
      return "box3d";
    case PartKind::switch_tray:
    case PartKind::onboard_switch:
    case PartKind::spine:
      return "diamond";
    case PartKind::host:
      return "component";
    case PartKind::compute_rack:
    case PartKind::host_rack:
    case PartKind::rack_pair:
      return "folder";
    case PartKind::power_feed:
      return "invtriangle";
    case PartKind::scale_out:
      return "doublecircle";
  }
  return "ellipse";
}

}  // namespace

std::string to_dot(const Topology& t) {
  const Graph& g = t.graph();
  boost::filtered_graph<Graph, FirstArcs> view(g, FirstArcs{&g});
  boost::dynamic_properties dp;
  dp.property("node_id",
              boost::make_transform_value_property_map([](const std::string& name) { return name; },
                                                       boost::get(&Part::name, g)));
  dp.property("kind", boost::make_transform_value_property_map(
                          [](PartKind k) { return to_string(k); }, boost::get(&Part::kind, g)));
  dp.property("shape", boost::make_transform_value_property_map([](PartKind k) { return shape(k); },
                                                                boost::get(&Part::kind, g)));
  dp.property("kind", boost::make_transform_value_property_map(
                          [](LinkKind k) { return to_string(k); }, boost::get(&Link::kind, g)));
  dp.property("dir", boost::make_transform_value_property_map(
                         [](LinkKind k) { return std::string(is_network(k) ? "none" : "forward"); },
                         boost::get(&Link::kind, g)));
  dp.property("bandwidth",
              boost::make_transform_value_property_map(
                  [](BytesPerSecond b) { return std::to_string(std::llround(b.value())); },
                  boost::get(&Link::bandwidth, g)));
  std::ostringstream out;
  boost::write_graphviz_dp(out, view, dp, "node_id");
  return out.str();
}

}  // namespace racktwin::topology
